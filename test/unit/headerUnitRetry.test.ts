// A header's default unit is a guess from text (issue 39 part 3): ggml's fattn-vec instances all
// name the flash-attention cases, but each instantiates the K·Q dot product of its own type only.
// When the unit chosen builds and holds no code of the loop, `sass` tries the next unit whose text
// instantiates the function (at most three), and says so; a unit the user named is never replaced.
// Real nvcc and nvdisasm on a minimal repro in ggml's style.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../../src/cli/main';
import { useCudaTools } from './helpers';

const cuda = useCudaTools(['nvdisasm']);
let dir = '';
const saved = process.env.XDG_CACHE_HOME;

const HEADER = `#pragma once
#include <cuda_fp16.h>
template <int D>
static __device__ __forceinline__ float dot_f16(const half2 *k, const half2 *q) {
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < D / 2; ++i) sum += __low2float(k[i]) * __low2float(q[i]);
  return sum;
}
template <int D>
static __device__ __forceinline__ float dot_i8(const int *k, const int *q) {
  int sum = 0;
#pragma unroll
  for (int i = 0; i < D / 4; ++i) sum = __dp4a(k[i], q[i], sum);
  return (float)sum;
}
template <int D, bool F16>
__global__ void attn(const void *k, const void *q, float *out) {
  if constexpr (F16) out[threadIdx.x] = dot_f16<D>((const half2 *)k, (const half2 *)q);
  else out[threadIdx.x] = dot_i8<D>((const int *)k, (const int *)q);
}
#define DECL_ATTN_CASE(D, F16) template __global__ void attn<D, F16>(const void *, const void *, float *)
`;

before(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-turetry-')));
  fs.mkdirSync(path.join(dir, 'instances'));
  fs.writeFileSync(path.join(dir, 'attn.cuh'), HEADER);
  // alphabetical order ranks the int8 instance first: its text names the case, its code has no f16 loop
  fs.writeFileSync(path.join(dir, 'instances', 'attn-a-i8.cu'), '#include "../attn.cuh"\nDECL_ATTN_CASE(64, false);\n');
  fs.writeFileSync(path.join(dir, 'instances', 'attn-b-f16.cu'), '#include "../attn.cuh"\nDECL_ATTN_CASE(64, true);\n');
  const entry = (f: string) => ({ directory: dir, file: path.join(dir, 'instances', f), command: `nvcc -O3 -c instances/${f}` });
  fs.writeFileSync(path.join(dir, 'compile_commands.json'), JSON.stringify([entry('attn-a-i8.cu'), entry('attn-b-f16.cu')]));
  process.env.XDG_CACHE_HOME = path.join(dir, 'cache');
});

after(() => {
  if (saved === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = saved;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function sass(args: string[]) {
  let out = '';
  let err = '';
  const was = process.cwd();
  process.chdir(dir);
  try {
    const code = await main(['sass', 'attn.cuh', '--loop', '7', '--factors', '1,2', ...args], {
      out: s => (out += s),
      err: s => (err += s),
      isTTY: false,
    });
    return { code, out, err };
  } finally {
    process.chdir(was);
  }
}

describe("a header's unit that holds no code of the loop gives way to the next", () => {
  test('the i8 instance is tried first, then the f16 one, which holds the loop', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const r = await sass([]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /building attn\.cuh through instances\/attn-a-i8\.cu/);
    assert.match(r.err, /instances\/attn-a-i8\.cu holds no code of this loop; trying instances\/attn-b-f16\.cu/);
    assert.match(r.out, /loop at line 7 in void attn<64, true>/);
  });

  test('a unit named with --tu is never replaced: the message names the one that instantiates it', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const r = await sass(['--tu', 'instances/attn-a-i8.cu']);
    assert.equal(r.code, 1, r.err);
    assert.doesNotMatch(r.err, /trying/);
    assert.match(r.err, /does not instantiate dot_f16 .*instances\/attn-b-f16\.cu \(pass one with --tu\)/s);
  });
});
