// Without nvdisasm (issue 10), a loop table's empty columns come with the reason: `unroll-lens
// sass` prints a note naming the missing tool and how to get it (text and --json), a template
// kernel still gets its kernel counts from the cubin, and the editor's hover and CodeLens say it.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT, analyze, kernel, loopAt } from './helpers';
import { loopSassLensTitle, loopSassMarkdown } from '../../src/engine/report/sassText';
import type { FileSassReport } from '../../src/engine/variants/reports';
import { sourceNameOf } from '../../src/schema/kernelNames';

const CLI = path.join(REPO_ROOT, 'bin', 'unroll-lens.js');
const SRC = `template <int N>
__global__ void hot(const float* x, float* y) {
  float acc = 0.0f;
  #pragma unroll
  for (int i = 0; i < N; ++i) acc += x[i] * 2.0f;
  y[threadIdx.x] = acc;
}
template __global__ void hot<64>(const float*, float*);
`;

let nvccPath: string | null = null;
try {
  nvccPath = execFileSync('sh', ['-c', 'command -v nvcc'], { encoding: 'utf8' }).trim() || null;
} catch {
  nvccPath = null;
}
// The standard location is searched after PATH: a full toolkit there cannot be hidden.
const toolkitDisassembler = ['nvdisasm', 'cuobjdump'].some(t => fs.existsSync(path.join('/usr/local/cuda/bin', t)));

/** A PATH with nvcc, c++filt and the shell's basics but no disassembler (plus `extra` tools). */
function strippedEnv(extra: Record<string, string> = {}) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-nodis-'));
  const bin = path.join(d, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(nvccPath!, path.join(bin, 'nvcc'));
  for (const [name, script] of Object.entries(extra)) fs.writeFileSync(path.join(bin, name), script, { mode: 0o755 });
  const file = path.join(d, 'k.cu');
  fs.writeFileSync(file, SRC);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${bin}:/usr/bin:/bin`,
    // The project's own tools (.tools/cuda-tools) would be found otherwise.
    UNROLL_LENS_TOOLS: path.join(d, 'no-tools'),
    XDG_CACHE_HOME: path.join(d, 'cache'),
  };
  delete env.CUDA_HOME;
  delete env.CUDA_PATH;
  return { file, env };
}

function sass(file: string, env: NodeJS.ProcessEnv, json = false) {
  const args = [CLI, 'sass', file, '--loop', '5', '--factors', '1,4,full', '--kernel', 'hot<64>', '--arch', 'sm_90'];
  if (json) args.push('--json');
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', env, timeout: 300_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('sass without nvdisasm', () => {
  test('no disassembler at all: kernel counts from the cubin, and a note says why the loop columns are empty', t => {
    if (!nvccPath) return t.skip('needs nvcc');
    if (toolkitDisassembler) return t.skip('/usr/local/cuda/bin has a disassembler');
    const { file, env } = strippedEnv();
    const r = sass(file, env);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /counts from elf/);
    // The template instantiation is found by name (its demangled name starts with `void `).
    const rows = r.out.split('\n').filter(l => /^(1|4|full)\s+ok\s/.test(l));
    assert.equal(rows.length, 3, r.out);
    for (const row of rows) assert.match(row, /^\S+\s+ok\s+\d+\s+-\s+\?/, row);
    assert.match(r.out, /note: nvdisasm not found: loop instructions and nvcc's unroll need its line table/);
    assert.match(r.out, /npm run setup:cuda-tools/);
    const j = JSON.parse(sass(file, env, true).out);
    assert.match(j.loop.limitation, /^nvdisasm not found/);
    assert.match(j.limitation, /^nvdisasm not found/);
    assert.ok(j.loop.variants.every((v: { kernelInstructions: number | null }) => v.kernelInstructions! > 0));
  });

  test('an nvdisasm that fails: the note names it, says it gave no listing and quotes its error', t => {
    if (!nvccPath) return t.skip('needs nvcc');
    const { file, env } = strippedEnv({
      nvdisasm: '#!/bin/sh\ncase "$1" in --version) echo "nvdisasm: release 13.0"; exit 0;; esac\necho broken >&2; exit 1\n',
    });
    const r = sass(file, env);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /note: nvdisasm \(.*\/bin\/nvdisasm\) gave no listing \(broken\)/);
  });
});

describe('the editor without nvdisasm', () => {
  test('hover and CodeLens carry the reason instead of a bare –', async () => {
    const a = await analyze(SRC, '/tmp/k.cu');
    const k = kernel(a, 'hot');
    const loop = loopAt(k, 5);
    const why =
      "nvdisasm not found: loop instructions and nvcc's unroll need its line table and are unknown here (kernel counts come from the cubin).";
    const f: FileSassReport = {
      arch: 'sm_90',
      nvcc: '13.0',
      status: 'ok',
      kernels: [],
      failure: null,
      loops: [{ line: 5, kernel: null, loopInstructions: null, effectiveUnroll: null, fullyUnrolled: false }],
      cached: false,
      disassembler: 'elf',
      limitation: why,
    };
    const sassFacts = { file: f, loops: new Map() };
    assert.match(loopSassMarkdown(sassFacts, k, loop)!, /nvdisasm not found: loop instructions/);
    assert.equal(loopSassLensTitle(sassFacts, k, loop), 'SASS: build variants (loop counts need nvdisasm: see hover)');
    assert.equal(loopSassLensTitle({ file: { ...f, limitation: null }, loops: new Map() }, k, loop), 'SASS: build variants');
  });

  test("a template's demangled name (return type first) maps back to its source name", () => {
    assert.equal(sourceNameOf('void hot_loop<2048>(unsigned long const*, unsigned long*, int)'), 'hot_loop');
    assert.equal(sourceNameOf('void ns::k<int>(float*)'), 'k');
    assert.equal(sourceNameOf('matmul_basic(float const*, float const*, float*, int)'), 'matmul_basic');
  });
});
