// Sweeps without loops (issue 26): a kernel with no loop sweeps its template or macro values
// alone, and `--factors none` does the same for a kernel that has loops. The space and its ids,
// the errors, the reports with zero loop axes, and the CLI end to end with real nvcc (static) on
// test/fixtures/cuda/reduce_complete_unroll.cu: a completely unrolled reduction whose block size
// is a template parameter chosen by a switch in host code (instantiated only by its launches),
// and a kernel launched as blockSum<BS><<<n / BS, BS>>> with BS a macro.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, lineOf, REPO_ROOT, SAMPLES } from './helpers';
import { detectToolchain } from '../../src/engine/toolchain/toolchain';
import { pointId, pointLabel, resolveSpace, SweepSpaceError } from '../../src/engine/sweep/space';
import { emptyVariant } from '../../src/engine/sweep/variant';
import { sweepText } from '../../src/engine/report/sweepText';
import { sweepJson } from '../../src/engine/sweep/json';
import { sweepCsv, sweepT4 } from '../../src/engine/sweep/export';
import type { SweepResult } from '../../src/protocol';
import { main } from '../../src/cli/main';
import { UnrollFactors } from '../../src/engine/variants/factors';

const FILE = path.join(REPO_ROOT, 'test', 'fixtures', 'cuda', 'reduce_complete_unroll.cu');
const TEXT = fs.readFileSync(FILE, 'utf8');
const CLIFF = path.join(SAMPLES, 'icache_cliff.cu');

let skip: string | false = false;
before(async () => {
  // Builds go to a cache of this test's own (defaultCacheDir reads XDG_CACHE_HOME).
  process.env.XDG_CACHE_HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-sweep-noloop-'));
  try {
    await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
  return { code, out, err };
}

describe('the space of a sweep without loops', () => {
  test('a loop-less kernel: one axis per --param, one point per value, ids without a loop part', async () => {
    const a = await analyze(TEXT, FILE);
    const s = resolveSpace(a, FILE, { kernel: 'reduceCompleteUnroll', params: { iBlockSize: ['64', '128', '256', '512'] } });
    assert.deepEqual(s.loops, []);
    assert.equal(s.factors, UnrollFactors.NONE, 'no loop axis, no factors');
    assert.deepEqual(s.templateParams, ['iBlockSize']);
    assert.equal(s.size, 4);
    const ids = [...s.points()].map(pointId);
    assert.deepEqual(ids, ['iBlockSize=64', 'iBlockSize=128', 'iBlockSize=256', 'iBlockSize=512']);
    assert.equal(pointLabel([...s.points()][0]), 'iBlockSize=64');
    // a macro axis on the other kernel; the kernel found from the file's only template with that parameter
    const m = resolveSpace(a, FILE, { kernel: 'blockSum', params: { BS: ['64', '128'] } });
    assert.deepEqual(m.macroParams, ['BS']);
    assert.equal(resolveSpace(a, FILE, { params: { kBlock: ['64'] } }).kernel.name, 'blockSum');
  });

  test('--factors none (paramsOnly) on a kernel with loops: its loops are not swept', async () => {
    const text = fs.readFileSync(CLIFF, 'utf8');
    const a = await analyze(text, CLIFF);
    const s = resolveSpace(a, CLIFF, { kernel: 'hot_loop', paramsOnly: true, params: { BODY: ['32', '128'] } });
    assert.deepEqual(s.loops, []);
    assert.deepEqual([...s.points()].map(pointId), ['BODY=32', 'BODY=128']);
    const loop = lineOf(text, 'for (int u = 0; u < BODY; ++u)');
    assert.throws(
      () => resolveSpace(a, CLIFF, { kernel: 'hot_loop', paramsOnly: true, loops: [loop], params: { BODY: ['32'] } }),
      /sweeps no loop/,
    );
  });

  test('errors: no --param for a loop-less kernel, or for a sweep of parameters only; which kernel', async () => {
    const a = await analyze(TEXT, FILE);
    assert.throws(
      () => resolveSpace(a, FILE, { kernel: 'reduceCompleteUnroll' }),
      (e: Error) =>
        e instanceof SweepSpaceError &&
        e.message === 'reduceCompleteUnroll has no loops; give --param NAME=v1,v2 to sweep its template or macro values',
    );
    assert.throws(() => resolveSpace(a, FILE, {}), /which kernel\? .*reduceCompleteUnroll \(line \d+\), blockSum \(line \d+\)/);
    const cliff = await analyze(fs.readFileSync(CLIFF, 'utf8'), CLIFF);
    assert.throws(() => resolveSpace(cliff, CLIFF, { kernel: 'hot_loop', paramsOnly: true }), /parameters only needs values: give --param/);
    const one = await analyze('__global__ void k(float* a) { a[0] = 1; }\n', '/x/e.cu');
    assert.throws(() => resolveSpace(one, '/x/e.cu', {}), /k has no loops; give --param/);
  });
});

/** A static result with no loop axis, by hand: the file as written and two template values. */
function loopless(): SweepResult {
  const v = (params: Record<string, string>, instr: number, inst: string) => ({
    ...emptyVariant({ factors: {}, params }, 'ok'),
    kernelInstructions: instr,
    registers: 24,
    occupancy: 1,
    instantiation: `void reduceCompleteUnroll<${inst}u>(int const*, int*, unsigned int)`,
  });
  return {
    schema: 1,
    file: '/w/r.cu',
    kernel: 'reduceCompleteUnroll',
    kernelLine: 45,
    loops: [],
    arch: 'sm_90',
    nvcc: '13.0',
    gpu: null,
    static: true,
    strategy: 'exhaustive',
    origin: 'sweep',
    createdAt: '2026-11-23T10:00:00.000Z',
    factors: [],
    params: { iBlockSize: ['64', '512'] },
    spaceSize: 2,
    evaluations: 3,
    baseline: 'as-written',
    best: 'iBlockSize=64',
    bestBasis: 'fewest kernel instructions',
    icacheBudgetBytes: 49920,
    icacheBudgetNote: 'measured',
    variants: [v({}, 88, '64'), { ...v({ iBlockSize: '64' }, 88, '64'), identicalTo: 'as-written' }, v({ iBlockSize: '512' }, 96, '512')],
    notes: [],
    complete: true,
  };
}

describe('reports with zero loop axes', () => {
  test('table, --json, CSV and T4', () => {
    const r = loopless();
    const text = sweepText(r);
    assert.match(
      text.split('\n')[0],
      /^reduceCompleteUnroll · iBlockSize · static \(SASS only\) · exhaustive: 2 of 2 points \+ the file as written$/,
    );
    assert.doesNotMatch(text, /unroll/, 'no loop columns');
    const j = sweepJson(r);
    assert.deepEqual(
      j.variants.map(x => [x.id, x.identicalTo]),
      [
        ['as-written', null],
        ['iBlockSize=64', { factors: {}, params: {} }],
        ['iBlockSize=512', null],
      ],
    );
    const csv = sweepCsv(r).trim().split(/\r?\n/);
    assert.equal(csv.length, 4);
    assert.match(csv[0], /iBlockSize/);
    assert.doesNotMatch(csv[0], /unroll_L/);
    const t4 = sweepT4(r) as { results: { configuration: Record<string, unknown> }[] };
    assert.deepEqual(t4.results.at(-1)!.configuration, { iBlockSize: 512 });
  });
});

describe('unroll-lens sweep without loops (static, real nvcc)', () => {
  test('a template block size used only in launches: one point per value, different SASS', async t => {
    if (skip) return t.skip(skip);
    const r = await cli([
      'sweep',
      FILE,
      '--static',
      '--json',
      '--quiet',
      '--kernel',
      'reduceCompleteUnroll',
      '--param',
      'iBlockSize=64,128,256,512',
    ]);
    assert.equal(r.code, 0, r.err);
    type V = { id: string; status: string; kernelInstructions: number; identicalTo: unknown; instantiation: string; factors: object };
    const j = JSON.parse(r.out) as { variants: V[]; spaceSize: number };
    assert.equal(j.spaceSize, 4);
    assert.deepEqual(
      j.variants.map(v => [v.id, v.status]),
      [['as-written', 'ok'], ...['64', '128', '256', '512'].map(b => [`iBlockSize=${b}`, 'ok'])],
    );
    const points = j.variants.slice(1);
    points.forEach((v, i) => {
      assert.match(v.instantiation, new RegExp(`^void reduceCompleteUnroll<${[64, 128, 256, 512][i]}u>\\(`));
      assert.deepEqual(v.factors, {});
    });
    // each value is its own machine code (the file as written measures the first value: the same as it)
    assert.deepEqual(
      points.map(v => v.identicalTo),
      [{ factors: {}, params: {} }, null, null, null],
    );
    const counts = points.map(v => v.kernelInstructions);
    assert.ok(
      counts.every((c, i) => i === 0 || c >= counts[i - 1]),
      `a larger block adds tree steps: ${counts}`,
    );
    assert.ok(counts[3] > counts[0], `iBlockSize=512 has more SASS than 64: ${counts}`);
  });

  test('a macro used in the launch (blockSum<BS><<<n / BS, BS>>>); the table says no loop was swept', async t => {
    if (skip) return t.skip(skip);
    const r = await cli(['sweep', FILE, '--static', '--quiet', '--kernel', 'blockSum', '--param', 'BS=64,512']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^blockSum · BS · static \(SASS only\)/);
    const row = (id: string) => r.out.split('\n').find(l => new RegExp(`^\\*?\\s+${id}\\s`).test(l)) ?? '';
    const instr = (id: string) => Number(/\bok\s+(\d+)/.exec(row(id))?.[1]);
    assert.match(row('BS=64'), /blockSum<64>/);
    assert.match(row('BS=512'), /blockSum<512>/);
    assert.ok(instr('BS=64') < instr('BS=512'), r.out);
    assert.match(r.out, /note: no loop swept \(blockSum has none\): only the values of BS \(macro\)/);
    assert.match(r.out, /fewest kernel instructions \(no loop swept\)/);
  });

  test('--factors none on a kernel with loops; usage errors', async t => {
    const none = await cli(['sweep', FILE, '--static', '--kernel', 'reduceCompleteUnroll']);
    assert.equal(none.code, 2);
    assert.match(none.err, /reduceCompleteUnroll has no loops; give --param NAME=v1,v2 to sweep its template or macro values/);
    const both = await cli(['sweep', CLIFF, '--static', '--factors', 'none', '--loops', '70', '--param', 'BODY=32']);
    assert.equal(both.code, 2);
    assert.match(both.err, /--factors none sweeps no loop/);
    const noParam = await cli(['sweep', CLIFF, '--static', '--factors', 'none', '--kernel', 'hot_loop']);
    assert.equal(noParam.code, 2);
    assert.match(noParam.err, /give --param NAME=v1,v2/);
    if (skip) return t.skip(skip);
    const r = await cli([
      'sweep',
      CLIFF,
      '--static',
      '--json',
      '--quiet',
      '--kernel',
      'hot_loop',
      '--factors',
      'none',
      '--param',
      'BODY=32,128',
    ]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as { variants: { id: string; status: string; factors: object }[] };
    assert.deepEqual(
      j.variants.map(v => [v.id, v.status]),
      [
        ['as-written', 'ok'],
        ['BODY=32', 'ok'],
        ['BODY=128', 'ok'],
      ],
    );
    assert.ok(j.variants.every(v => !Object.keys(v.factors).length));
  });
});
