// A generated header library in CUTLASS's style, for `npm run bench`'s large-library scan when
// UNROLL_LENS_BENCH_LIBRARY names no real one: include/<lib>/ with a config header whose nvcc
// branch defines the qualifier and `#pragma unroll` macros, and ~800 headers in topic folders that
// include it and each other by `<lib/…>` paths (resolved from the scanned tree's include/), each
// holding templated structs with macro-qualified members and pragma-annotated loops.
import * as fs from 'fs';
import * as path from 'path';

const TOPICS = [
  'arch',
  'gemm/threadblock',
  'gemm/warp',
  'gemm/kernel',
  'epilogue/thread',
  'epilogue/warp',
  'layout',
  'transform',
  'conv',
  'reduction',
];

const CONFIG = `#pragma once
// Configuration of the generated library (CUTLASS style).
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#  define GL_HOST_DEVICE __forceinline__ __device__ __host__
#  define GL_DEVICE __forceinline__ __device__
#else
#  define GL_HOST_DEVICE inline
#  define GL_DEVICE inline
#endif
#define GL_GLOBAL __global__ static
#if defined(__CUDA_ARCH__)
#  if defined(__CUDACC_RTC__)
#    define GL_PRAGMA_UNROLL _Pragma("unroll")
#    define GL_PRAGMA_NO_UNROLL _Pragma("unroll 1")
#  else
#    define GL_PRAGMA_UNROLL #pragma unroll
#    define GL_PRAGMA_NO_UNROLL #pragma unroll 1
#  endif
#  define GL_GEMM_LOOP GL_PRAGMA_NO_UNROLL
#else
#  define GL_PRAGMA_UNROLL
#  define GL_PRAGMA_NO_UNROLL
#  define GL_GEMM_LOOP
#endif
#define GL_STR_(x) #x
#define GL_UNROLL_N(n) _Pragma(GL_STR_(unroll n))
namespace gl { using index_t = int; }
`;

/** One header's text: `accessors` small traits structs, then `structs` templated structs with device members and loops. */
function header(topic: string, i: number, includes: string[], structs: number, accessors: number): string {
  const name = `${topic.replace(/\//g, '_')}_${i}`;
  const out = [
    '/***************************************************************************************************',
    ` * Generated for the Unroll Lens benchmark: ${topic}/${name}.h`,
    ' **************************************************************************************************/',
    '#pragma once',
    '#include "gl/config.h"',
    ...includes.map(h => `#include <${h}>`),
    '',
    'namespace gl {',
    `namespace ${topic.split('/')[0]} {`,
    '',
  ];
  // Most of a real library header is not loops: documented traits and small accessors.
  for (let a = 0; a < accessors; a++) {
    out.push(
      '/// Returns the extent of a tile along one mode. The layout folds the strides of the',
      '/// thread block into the warp-level iterator so that the epilogue can walk the fragment',
      '/// in the order the accumulators are held; see the documentation of the layout concept.',
      `template <typename Shape, int kMode>`,
      `struct ${name}_extent${a} {`,
      '  static int const kValue = Shape::kM * kMode + Shape::kN;',
      '  using Index = gl::index_t;',
      '',
      '  GL_HOST_DEVICE',
      `  static Index value(Index stride) { return Index(kValue) * stride + ${a}; }`,
      '',
      '  /// The same extent for a host-side check (no device code).',
      `  static bool fits(Index m, Index n) { return m * kValue + n < (Index(1) << 30); }`,
      '};',
      '',
    );
  }
  for (let s = 0; s < structs; s++) {
    out.push(
      `/// Tile iterator ${s} of ${name}.`,
      'template <typename Element, int kCount, int kStride = 1>',
      `struct ${name}_tile${s} {`,
      '  Element data[kCount];',
      '',
      '  GL_HOST_DEVICE',
      `  ${name}_tile${s}() {`,
      '    GL_PRAGMA_UNROLL',
      '    for (int i = 0; i < kCount; ++i) {',
      '      data[i] = Element(0);',
      '    }',
      '  }',
      '',
      '  GL_DEVICE',
      '  void load(Element const* ptr, int ld) {',
      '    GL_PRAGMA_UNROLL',
      '    for (int i = 0; i < kCount; ++i) {',
      '      GL_PRAGMA_UNROLL',
      '      for (int j = 0; j < 4; ++j) {',
      '        data[i] += ptr[i * ld + j * kStride];',
      '      }',
      '    }',
      '  }',
      '',
      '  GL_DEVICE',
      '  Element reduce(int k_iterations) const {',
      '    Element acc(0);',
      '    GL_GEMM_LOOP',
      '    for (; k_iterations > 0; --k_iterations) {',
      '      GL_UNROLL_N(4)',
      '      for (int i = 0; i < kCount; ++i) acc += data[i];',
      '    }',
      '    return acc;',
      '  }',
      '};',
      '',
    );
  }
  out.push(
    `template <typename T>`,
    `GL_GLOBAL void ${name}_kernel(T* out, int n) {`,
    `  ${name}_tile0<T, 8> tile;`,
    '  tile.load(out, n);',
    '  out[0] = tile.reduce(n);',
    '}',
    '',
    `} // namespace ${topic.split('/')[0]}`,
    '} // namespace gl',
    '',
  );
  return out.join('\n');
}

/** Writes the library under `root` (root/include/gl/…); returns the number of headers. */
export function generateHeaderLibrary(root: string, files = 800, structsPerFile = 1, accessorsPerFile = 40): number {
  const inc = path.join(root, 'include', 'gl');
  fs.mkdirSync(inc, { recursive: true });
  fs.writeFileSync(path.join(inc, 'config.h'), CONFIG);
  const names: string[] = [];
  for (let i = 0; i < files - 1; i++) {
    const topic = TOPICS[i % TOPICS.length];
    const idx = Math.floor(i / TOPICS.length);
    const rel = `gl/${topic}/${topic.replace(/\//g, '_')}_${idx}.h`;
    // Each header includes up to three earlier ones (a DAG, as real libraries have).
    const includes = [names[i - 1], names[i - 7], names[Math.floor(i / 2)]].filter(
      (h, k, a): h is string => !!h && a.indexOf(h) === k && h !== rel,
    );
    fs.mkdirSync(path.dirname(path.join(root, 'include', rel)), { recursive: true });
    fs.writeFileSync(path.join(root, 'include', rel), header(topic, idx, includes, structsPerFile, accessorsPerFile));
    names.push(rel);
  }
  return files;
}
