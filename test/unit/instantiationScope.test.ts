// Template arguments are read where they are written (issue 40): the same spelling
// `impl<D, cols_per_block>` in two blocks whose `constexpr int cols_per_block` differ is two
// instantiations, not "the one instantiation" read at file scope (ggml's fattn-vec.cuh and
// fattn-tile.cuh, found false by an independent reader). Minimal repros in that style.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, documents, kernel } from './helpers';
import { MacroTables, optionsFromProject } from '../../src/engine/parse/macros';
import { computeFindings } from '../../src/engine/parse/findings';
import { evalTextConst } from '../../src/engine/parse/fileConstants';

const trips = (a: Awaited<ReturnType<typeof analyze>>, name: string) =>
  kernel(a, name).loops[0].tripCountByInstantiation?.map(b => [b.instantiation, b.tripCount]);

describe('template arguments in the scope of the call', () => {
  test('one spelling in two blocks with different block-local constants: two instantiations', async () => {
    const src = `template <int D, int ncols>
__global__ void vec(float * x) {
#pragma unroll
  for (int j = 0; j < ncols; ++j) x[j] += D;
}
template <int D, int cols_per_block>
void impl(float * x) { vec<D, cols_per_block><<<1, 1>>>(x); }
template <int D>
void pick(float * x, int n) {
  if (n == 1) {
    constexpr int cols_per_block = 1;
    impl<D, cols_per_block>(x);
    return;
  }
  constexpr int cols_per_block = 2;
  impl<D, cols_per_block>(x);
}
template void pick<64>(float *, int);
`;
    const a = await analyze(src, 'pick.cu');
    assert.deepEqual(trips(a, 'vec'), [
      [{ D: 64, ncols: 1 }, 1],
      [{ D: 64, ncols: 2 }, 2],
    ]);
    const m = computeFindings(a).map(f => f.message);
    assert.ok(
      m.some(x => /the instantiations in this file give 1, 2\./.test(x)),
      m.join('\n'),
    );
  });

  test('a local initialised from another, a template parameter, a braced initialiser', async () => {
    const src = `template <int N>
__device__ void body(float * x) {
#pragma unroll
  for (int i = 0; i < N; ++i) x[i] = 0;
}
template <int W>
__global__ void k(float * x) {
  constexpr int half = W / 2;
  {
    constexpr int quarter{half / 2};
    body<quarter>(x);
  }
  const int twice = half * 4;
  body<twice>(x);
}
template __global__ void k<32>(float *);
`;
    const a = await analyze(src, 'chain.cu');
    assert.deepEqual(
      trips(a, 'body')?.map(([, t]) => t),
      [8, 64],
    );
  });

  test('a declaration in a block that closed before the call does not reach it', async () => {
    const src = `template <int N>
__device__ void body(float * x) {
#pragma unroll
  for (int i = 0; i < N; ++i) x[i] = 0;
}
__global__ void k(float * x) {
  constexpr int m = 3;
  {
    constexpr int m = 5;
    body<m>(x);
  }
  body<m>(x);
}
`;
    const a = await analyze(src, 'closed.cu');
    assert.deepEqual(
      trips(a, 'body')?.map(([, t]) => t),
      [5, 3],
    );
  });
});

describe('template arguments in the scope of the call, through preprocessor groups', () => {
  test('a local declared in the #ifdef around the body counts; one in the other branch does not', async () => {
    const src = `template <int W, int N>
__device__ void iter(float * x) {
#pragma unroll
  for (int i = 0; i < N; i += W) x[i] = 0;
}
template <int N>
__global__ void tile(float * x) {
#ifdef FLASH_ATTN_AVAILABLE
  constexpr int warp_size = 32;
  iter<warp_size, N>(x);
#else
  iter<warp_size, N>(x);
#endif
}
template __global__ void tile<128>(float *);
`;
    const a = await analyze(src, 'tile.cu');
    const byInst = kernel(a, 'iter').loops[0].tripCountByInstantiation ?? [];
    assert.deepEqual(
      byInst.map(b => [b.instantiation.W, b.tripCount]),
      [
        [32, 4],
        [undefined, 'dependent'],
      ],
    );
  });
});

describe('bool template arguments', () => {
  test('true, false and comparisons in an argument are values (`fallback`, `DKQ == 576`)', async () => {
    const src = `template <bool fallback, int J, bool view>
__global__ void k(float * x) {
#pragma unroll
  for (int i = 0; i < (fallback ? J / 2 : J) + view; ++i) x[i] = 0;
}
template <int J>
void launch(float * x) {
  k<false, J, J == 8><<<1, 1>>>(x);
  constexpr bool fallback = true;
  k<fallback, J, !(J != 16)><<<1, 1>>>(x);
}
template void launch<8>(float *);
template void launch<16>(float *);
`;
    const a = await analyze(src, 'bools.cu');
    assert.deepEqual(
      kernel(a, 'k').loops[0].tripCountByInstantiation?.map(b => b.tripCount),
      [9, 16, 4, 9],
    );
  });
});

describe('evalTextConst: the operators a template argument or a macro body may use', () => {
  test('C precedence and results, bool literals, and nothing where C gives nothing', () => {
    const scope = {
      values: new Map([
        ['DKQ', 576],
        ['J', 8],
      ]),
      unboundTemplateParams: new Set<string>(),
    };
    const cases: [string, number | null][] = [
      ['(false)', 0],
      ['true', 1],
      ['DKQ == 576', 1],
      ['DKQ != 576', 0],
      ['J < 16 && J > 4', 1],
      ['J <= 4 || J >= 8', 1],
      ['!J', 0],
      ['1 << 3 == 8', 1],
      ['2 + 3 * 4', 14],
      ['1 | 2 == 2', 1],
      ['J / 0', null],
      ['J % 0 == 0', null],
      ['type', null],
      ['a<b>', null],
      ['J = 4', null],
    ];
    for (const [text, want] of cases) assert.equal(evalTextConst(text, scope), want, text);
  });
});

describe('a member is not the template parameter of the same name', () => {
  test('`tile_A::J` in a bound is no dependence on the function template `J` (ggml mmq-vec-dot.cuh)', async () => {
    const src = `template <int I_, int J_> struct tile { static constexpr int I = I_; static constexpr int J = J_; };
template <int J>
__device__ void vec_dot(float * x) {
  typedef tile<16, 8> tile_A;
  constexpr int nfrags = 32 / tile_A::J;
#pragma unroll
  for (int frag = 0; frag < nfrags; ++frag) x[frag] = 0;
#pragma unroll
  for (int j = 0; j < J; ++j) x[j] += 1;
}
`;
    const a = await analyze(src, 'member.cu');
    const [frags, js] = kernel(a, 'vec_dot').loops;
    assert.ok(!frags.tripDependsOn?.includes('J'), JSON.stringify(frags.tripDependsOn));
    assert.deepEqual(js.tripDependsOn, ['J']);
    const m = computeFindings(a).map(f => f.message);
    assert.ok(!m.some(x => x.includes('depends on `J`') && x.includes('frag')), m.join('\n'));
  });
});

describe('instantiations written through the file’s macros', () => {
  test('an extern list from nested macros (ggml fattn-vec.cuh) and a header macro as an argument (wkv.cu)', async () => {
    const src = `#define WKV_BLOCK 64
template <int D, int ncols>
__global__ void vec(float * x) {
#pragma unroll
  for (int j = 0; j < D / 32; ++j) x[j] += ncols;
}
template <int D>
void vec_case(float * x) { vec<D, 1><<<1, 1>>>(x); }
#define DECL_VEC_CASE(D) template void vec_case<D>(float * x)
#define EXTERN_DECL_VEC_CASES(D) extern DECL_VEC_CASE(D); extern DECL_VEC_CASE(D * 2)
EXTERN_DECL_VEC_CASES(64)
EXTERN_DECL_VEC_CASES(WKV_BLOCK * 4)
`;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-macro-inst-')), 'vec.cu');
    fs.writeFileSync(file, src);
    const { table } = new MacroTables().tableFor(file, src, optionsFromProject(path.dirname(file), null, 'sm_90', [])(file));
    const a = (await documents()).analyzeOnce(src, 'vec.cu', table);
    assert.deepEqual(
      kernel(a, 'vec')
        .loops[0].tripCountByInstantiation?.map(b => b.tripCount)
        .sort((x, y) => Number(x) - Number(y)),
      [2, 4, 8, 16],
    );
    // Without the file's macros (the built-in table) nothing is expanded: no instantiation, not a wrong one.
    const plain = await analyze(src, 'vec.cu');
    assert.equal(kernel(plain, 'vec').loops[0].tripCountByInstantiation, undefined);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  test('more than 64 distinct instantiations: the note says the first 64', async () => {
    const lines = Array.from({ length: 80 }, (_, i) => `template __global__ void k<${i + 1}>(float *);`).join('\n');
    const src = `template <int N>
__global__ void k(float * x) {
#pragma unroll
  for (int i = 0; i < N; ++i) x[i] = 0;
}
${lines}
`;
    const a = await analyze(src, 'many.cu');
    const loop = kernel(a, 'k').loops[0];
    assert.equal(loop.instantiationsCapped, 64);
    assert.equal(loop.tripCountByInstantiation?.length, 64);
    const m = computeFindings(a).map(f => f.message);
    assert.ok(
      m.some(x => /the first 64 instantiations read in this file \(it shows more\) give 1, 2, /.test(x)),
      m.join('\n'),
    );
  });
});

describe('an edit to a macro invocation that writes instantiations', () => {
  test('inside a host function: the incremental analysis equals a fresh one', async () => {
    const src = `template <int N>
__global__ void k(float * x) {
#pragma unroll
  for (int i = 0; i < N; ++i) x[i] = 0;
}
#define LAUNCH(n) k<n><<<1, 1>>>(x)
void host(float * x) {
  LAUNCH(8);
}
`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-macro-edit-'));
    const file = path.join(dir, 'k.cu');
    fs.writeFileSync(file, src);
    const { table } = new MacroTables().tableFor(file, src, optionsFromProject(dir, null, 'sm_90', [])(file));
    const docs = await documents();
    docs.open('edit', src, 'k.cu', table);
    assert.equal(kernel(docs.analysis('edit')!, 'k').loops[0].tripCount, 8);
    const at = src.indexOf('LAUNCH(8)') + 'LAUNCH('.length;
    docs.update('edit', [{ start: at, length: 1, text: '16' }]);
    const after = docs.text('edit')!;
    assert.equal(kernel(docs.analysis('edit')!, 'k').loops[0].tripCount, 16);
    assert.deepEqual(docs.analysis('edit'), docs.analyzeOnce(after, 'k.cu', table));
    docs.close('edit');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe("a header's object-like macro in a bound", () => {
  test('WARP_SIZE from an included header is its number (ggml solve_tri.cu: 32 per instantiation)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-macro-num-'));
    fs.writeFileSync(path.join(dir, 'common.cuh'), '#pragma once\n#define WARP_SIZE 32\n#define MAX_N (2 * WARP_SIZE)\n');
    const src = `#include "common.cuh"
template <int n_template>
__global__ void solve(float * x, int n_arg) {
  const int n = n_template == 0 ? n_arg : n_template;
  const int half = WARP_SIZE;
#pragma unroll
  for (int row = half; row < n; ++row) x[row] = 0;
#pragma unroll
  for (int i = 0; i < MAX_N; ++i) x[i] += 1;
}
void host(float * x, int n) {
  if (n == 64) solve<64><<<1, 32>>>(x, 0);
  else solve<0><<<1, 32>>>(x, n);
}
`;
    const file = path.join(dir, 'solve.cu');
    fs.writeFileSync(file, src);
    const { table } = new MacroTables().tableFor(file, src, optionsFromProject(dir, null, 'sm_90', [])(file));
    const a = (await documents()).analyzeOnce(src, 'solve.cu', table);
    const [rows, all] = kernel(a, 'solve').loops;
    assert.deepEqual(
      rows.tripCountByInstantiation?.map(b => b.tripCount),
      [32, 'runtime'],
    );
    assert.equal(all.tripCount, 64);
    // The built-in table knows no WARP_SIZE: not evaluated, never a guess.
    const plain = await analyze(src, 'solve.cu');
    assert.notEqual(kernel(plain, 'solve').loops[1].tripCount, 64);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
