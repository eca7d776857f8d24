// The GPU pipeline (build → check → time under ncu) against real outputs recorded on an H100
// (test/fixtures/gpu/h100, made by scripts/device/record-fixtures.sh). nvcc really compiles;
// the program runs and ncu are answered from the recordings through a replaceable runner.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, REPO_ROOT, SAMPLES } from './helpers';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { benchLoop, benchJson, BenchOptions, iqrOverlap, parseChecksums, summarize } from '../../src/engine/profile/bench';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { findCliffs, cliffPointFromRaw, icacheBudget } from '../../src/engine/profile/icache';

const REC = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100');
const rec = (f: string) => fs.readFileSync(path.join(REC, f), 'utf8');

let real: Toolchain | null = null;
/** One build cache for the file: every test reuses the same compiled variants. */
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-bench-'));
let skip: string | false = false;
before(async () => {
  try {
    real = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

function result(over: Partial<ProcessResult>): ProcessResult {
  return {
    command: '',
    args: [],
    exitCode: 0,
    signal: null,
    stdout: '',
    stderr: '',
    timedOut: false,
    cancelled: false,
    durationMs: 1,
    ...over,
  };
}

/** Real nvcc/c++filt/disassemblers; recorded answers for the program and for ncu. */
function replay(
  program: (runIndex: number, args: string[]) => Partial<ProcessResult>,
  ncu: (args: string[]) => Partial<ProcessResult>,
): { runner: ProcessRunner; calls: string[][] } {
  const calls: string[][] = [];
  let runs = 0;
  const runner: ProcessRunner = async (cmd, args, o) => {
    if (cmd === real!.nvcc.path || cmd === real!.nvdisasm?.path || cmd === real!.cuobjdump?.path || cmd === real!.cxxfilt?.path)
      return real!.runner(cmd, args, o);
    calls.push([cmd, ...args]);
    if (cmd === '/fake/ncu') return { ...result({ command: cmd, args }), ...ncu(args) };
    return { ...result({ command: cmd, args }), ...program(runs++, args) };
  };
  return { runner, calls };
}

async function options(
  runner: ProcessRunner,
  over: Partial<BenchOptions> = {},
): Promise<{ o: BenchOptions; file: string; text: string; analysis: Awaited<ReturnType<typeof analyze>>; line: number }> {
  const file = path.join(SAMPLES, 'matmul_unroll.cu');
  const text = fs.readFileSync(file, 'utf8');
  const analysis = await analyze(text, file);
  const line = analysis.kernels.find(k => k.name === 'matmul_basic')!.loops[0].line;
  const toolchain: Toolchain = {
    ...real!,
    runner,
    ncu: { name: 'ncu', path: '/fake/ncu', version: '2025.3.1', source: 'setting' },
    gpus: [],
  };
  const o: BenchOptions = {
    toolchain,
    arch: 'sm_90',
    flags: flagsFromSettings({}, SAMPLES),
    cacheDir: CACHE,
    loops: [line],
    factors: ['default', 1, 4],
    args: ['--only', 'matmul_basic', '--reps', '25'],
    samples: 20,
    warmup: 2,
    clockControl: 'none',
    timeoutMs: 60_000,
    launcher: [],
    ...over,
  };
  return { o, file, text, analysis, line };
}

const ncuOk = (args: string[]) =>
  args[0] === '--import' ? { stdout: rec('matmul_basic.raw.csv') } : { stdout: rec('matmul_basic.ncu-stdout.txt') };

describe('bench pipeline on recorded H100 outputs', () => {
  test('statistics: median, IQR, CV, overlap', () => {
    const s = summarize([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.equal(s.medianMs, 5.5);
    assert.equal(s.q1Ms, 3.25);
    assert.equal(s.q3Ms, 7.75);
    assert.equal(s.iqrMs, 4.5);
    assert.ok(Math.abs(s.cv! - 0.5504) < 1e-3);
    assert.equal(iqrOverlap({ q1Ms: 1, q3Ms: 2 }, { q1Ms: 1.5, q3Ms: 3 }), true);
    assert.equal(iqrOverlap({ q1Ms: 1, q3Ms: 2 }, { q1Ms: 2.1, q3Ms: 3 }), false);
    assert.deepEqual(
      parseChecksums(rec('matmul_unroll.stdout'))['matmul_basic n=512 block=16x16'] !== undefined ||
        Object.keys(parseChecksums(rec('matmul_unroll.stdout'))).length > 5,
      true,
    );
  });

  test('every variant: built, checked, 20 samples timed from ncu, stalls and speedup', async t => {
    if (skip) return t.skip(skip);
    const { runner, calls } = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncuOk);
    const { o, file, text, analysis } = await options(runner);
    const r = await benchLoop(file, text, analysis, o);
    assert.equal(r.kernel, '_Z12matmul_basicPKfS0_Pfi');
    assert.deepEqual(
      r.variants.map(v => [v.label, v.status, v.samples]),
      [
        ['as-written', 'ok', 20],
        ['default', 'ok', 20],
        ['1', 'ok', 20],
        ['4', 'ok', 20],
      ],
    );
    const v = r.variants[3];
    assert.ok(v.medianMs! > 0 && v.iqrMs! >= 0 && v.cv! >= 0);
    assert.equal(v.speedup, 1);
    assert.equal(v.withinNoise, true);
    assert.ok(v.stallShare && Math.abs(Object.values(v.stallShare).reduce((a, b) => a + b, 0) - 1) < 1e-6);
    assert.ok(v.kernelInstructions! > 0 && v.registers! > 0);
    // the ncu command line: mangled-name filter, warm-up skip, bounded count, clock control, export
    const prof = calls.find(c => c[0] === '/fake/ncu' && c.includes('--export'))!;
    assert.deepEqual(prof.slice(1, 11), [
      '--kernel-name-base',
      'mangled',
      '--kernel-name',
      'regex:^_Z12matmul_basicPKfS0_Pfi$',
      '--launch-skip',
      '2',
      '--launch-count',
      '20',
      '--metrics',
      prof[10],
    ]);
    assert.equal(r.instantiations.length, 1);
    assert.ok(prof.includes('--clock-control') && prof[prof.indexOf('--clock-control') + 1] === 'none');
    const j = benchJson(r);
    assert.deepEqual(Object.keys(j.variants[3]).slice(0, 13), [
      'factors',
      'label',
      'status',
      'kernelInstructions',
      'registers',
      'samples',
      'medianMs',
      'iqrMs',
      'cv',
      'speedup',
      'withinNoise',
      'stallShare',
      'achievedOccupancy',
    ]);
    assert.deepEqual(j.variants[3].factors, { [String(o.loops[0])]: 4 });
  });

  test('a loop in a template is reported per instantiation, each profiled in its own ncu runs', async t => {
    if (skip) return t.skip(skip);
    const names = [
      '_Z13matmul_pragmaILi16EEvPKfS1_Pfi',
      '_Z13matmul_pragmaILi8EEvPKfS1_Pfi',
      '_Z13matmul_pragmaILi4EEvPKfS1_Pfi',
      '_Z13matmul_pragmaILi2EEvPKfS1_Pfi',
    ];
    // Each instantiation's run is answered with the recorded 20-launch matmul page: the numbers
    // are not under test here, the per-instantiation runs and grouping are.
    const { runner, calls } = replay(
      () => ({ stdout: rec('matmul_unroll.stdout') }),
      args => (args[0] === '--import' ? { stdout: rec('matmul_basic.raw.csv') } : { stdout: '' }),
    );
    const file = path.join(SAMPLES, 'matmul_unroll.cu');
    const text = fs.readFileSync(file, 'utf8');
    const analysis = await analyze(text, file);
    const line = analysis.kernels.find(k => k.name === 'matmul_pragma')!.loops[0].line;
    const { o } = await options(runner, { loops: [line], factors: [1], args: ['--only', 'matmul_pragma', '--reps', '25'] });
    const r = await benchLoop(file, text, analysis, o);
    assert.deepEqual(r.instantiations.map(x => x.kernel).sort(), [...names].sort());
    for (const x of r.instantiations)
      assert.ok(
        x.variants.every(v => v.status === 'ok' && v.samples === 20),
        x.kernel,
      );
    assert.ok(r.instantiations.every(x => x.variants[1].kernelInstructions! > 0));
    const profiles = calls.filter(c => c[0] === '/fake/ncu' && c.includes('--export'));
    assert.equal(profiles.length, 8, 'one run per instantiation and variant');
    for (const n of names)
      assert.ok(
        profiles.some(c => c.includes(`regex:^${n}$`) && c[c.indexOf('--launch-count') + 1] === '20'),
        n,
      );
    assert.ok(benchJson(r).instantiations!.length === 4);
  });

  test('a crash is a runtime failure; the others still run', async t => {
    if (skip) return t.skip(skip);
    const { runner } = replay(
      i =>
        i === 2
          ? { exitCode: Number(rec('crash.exit')), stdout: rec('crash.stdout'), stderr: rec('crash.stderr') }
          : { stdout: rec('matmul_unroll.stdout') },
      ncuOk,
    );
    const { o, file, text, analysis } = await options(runner);
    const r = await benchLoop(file, text, analysis, o);
    assert.deepEqual(
      r.variants.map(v => v.status),
      ['ok', 'ok', 'runtime', 'ok'],
    );
    assert.match(r.variants[2].message!, /exit 3/);
  });

  test('a hang is killed by the timeout and classified', async t => {
    if (skip) return t.skip(skip);
    const { runner } = replay(
      i =>
        i === 1
          ? { exitCode: null, signal: 'SIGTERM', timedOut: true, stdout: rec('hang.stdout') }
          : { stdout: rec('matmul_unroll.stdout') },
      ncuOk,
    );
    const { o, file, text, analysis } = await options(runner);
    const r = await benchLoop(file, text, analysis, o);
    assert.deepEqual(
      r.variants.map(v => v.status),
      ['ok', 'timeout', 'ok', 'ok'],
    );
  });

  test('a different checksum is a correctness failure (recorded wrong.cu outputs)', async t => {
    if (skip) return t.skip(skip);
    const { runner } = replay(i => ({ stdout: rec(i === 3 ? 'wrong_bad.stdout' : 'wrong_ok.stdout') }), ncuOk);
    const { o, file, text, analysis } = await options(runner);
    const r = await benchLoop(file, text, analysis, o);
    assert.deepEqual(
      r.variants.map(v => v.status),
      ['ok', 'ok', 'ok', 'correctness'],
    );
    assert.match(r.variants[3].message!, /8\.796047e\+14 vs 8\.444203e\+14/);
  });

  test('ncu profiles nothing: the recorded message and the kernels it saw', async t => {
    if (skip) return t.skip(skip);
    const { runner } = replay(
      () => ({ stdout: rec('matmul_unroll.stdout') }),
      () => ({ stdout: rec('ncu-no-kernels.stdout'), stderr: rec('ncu-no-kernels.stderr'), exitCode: 0 }),
    );
    const { o, file, text, analysis } = await options(runner, { factors: [4] });
    const r = await benchLoop(file, text, analysis, o);
    assert.equal(r.variants[1].status, 'profile');
    assert.match(r.variants[1].message!, /profiled none of the kernels/i);
    assert.match(r.variants[1].message!, /_Z12scale_kernelPfi/);
  });

  test("per-line stall samples from the recorded SourceCounters page map to the sample's lines", async t => {
    if (skip) return t.skip(skip);
    const ncu = (args: string[]) => {
      if (args[0] === '--import')
        return { stdout: args.includes('source') ? rec('source-stalls/reports/matmul_unroll-source.csv') : rec('matmul_basic.raw.csv') };
      return { stdout: '' };
    };
    const { runner, calls } = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncu);
    const { o, file, text, analysis } = await options(runner, { factors: [4], sourceStalls: true });
    const r = await benchLoop(file, text, analysis, o);
    assert.equal(r.lineStallsProblem, null);
    const hottest = [...r.lineStalls!].sort((a, b) => b.samples - a.samples)[0];
    assert.equal(hottest.line, 52, 'sum += A[row * n + k] * B[k * n + col]');
    assert.ok(Object.entries(hottest.stallShare).sort((a, b) => b[1] - a[1])[0][0] === 'long_scoreboard');
    const src = calls.find(c => c.includes('SourceCounters'))!;
    assert.ok(src.includes('--import-source') && src.includes('--launch-count') && src[src.indexOf('--launch-count') + 1] === '1');
  });

  test('ncu missing: a clear error naming it', async t => {
    if (skip) return t.skip(skip);
    const { runner } = replay(
      () => ({}),
      () => ({}),
    );
    const { o, file, text, analysis } = await options(runner);
    await assert.rejects(
      benchLoop(file, text, analysis, { ...o, toolchain: { ...o.toolchain, ncu: null } }),
      /ncu \(Nsight Compute\) not found/,
    );
  });

  test('cancel mid-run: remaining variants are cancelled, none is lost', async t => {
    if (skip) return t.skip(skip);
    const ac = new AbortController();
    const { runner } = replay(i => {
      if (i === 1) ac.abort();
      return i === 1 ? { cancelled: true, exitCode: null } : { stdout: rec('matmul_unroll.stdout') };
    }, ncuOk);
    const { o, file, text, analysis } = await options(runner, { signal: ac.signal });
    const r = await benchLoop(file, text, analysis, o);
    assert.deepEqual(
      r.variants.map(v => v.status),
      ['ok', 'cancelled', 'cancelled', 'cancelled'],
    );
  });
});

describe('instruction-cache calibration from the recorded icache_cliff sweep', () => {
  const SIZES: Record<number, number> = {
    32: 4864,
    64: 8960,
    128: 17152,
    256: 33536,
    384: 49920,
    512: 66304,
    768: 99072,
    1024: 131840,
    2048: 262912,
  };
  const points = () =>
    Object.entries(SIZES).flatMap(([body, bytes]) =>
      [128, 256, 1024].map(threads => cliffPointFromRaw(rec(`icache-b${body}-t${threads}.raw.csv`), bytes, threads / 32)!),
    );

  test('no_instruction rises with body size at low occupancy; no cliff at 32 warps per SM (5-launch sweep)', () => {
    const cliffs = findCliffs(points());
    const four = cliffs.find(c => c.warpsPerSM === 4)!;
    const p = (b: number) => four.points.find(x => x.codeBytes === b)!;
    assert.ok(p(262912).noInstructionShare! > 0.5, 'more than half of the stalls at 256 KiB');
    assert.ok(p(4864).noInstructionShare! < 0.02);
    assert.ok(p(262912).slowdown > 1, 'more than 2× slower at 256 KiB');
    assert.equal(cliffs.find(c => c.warpsPerSM === 32)!.firstBadBytes, null, 'no cliff at 32 warps per SM');
  });

  test('the sm_90 budget is the 20-launch calibration: last size within 10% at 4 warps per SM', () => {
    const S: Record<number, number> = { 32: 4864, 256: 33536, 384: 49920, 512: 66304, 768: 99072, 1024: 131840 };
    const pts = [128, 256].flatMap(t =>
      Object.entries(S).map(([b, bytes]) => cliffPointFromRaw(rec(`icache20/icache20-b${b}-t${t}.raw.csv`), bytes, t / 32)!),
    );
    assert.ok(pts.every(p => p !== null));
    const cliffs = findCliffs(pts);
    const four = cliffs.find(c => c.warpsPerSM === 4)!;
    assert.equal(four.lastGoodBytes, 49920);
    assert.equal(four.firstBadBytes, 66304);
    assert.equal(cliffs.find(c => c.warpsPerSM === 8)!.firstBadBytes, null, 'within 10% up to 128.8 KiB at 8 warps per SM');
    assert.equal(icacheBudget('sm_90').bytes, four.lastGoodBytes);
    assert.equal(icacheBudget('sm_90').status, 'measured');
    assert.equal(icacheBudget('sm_80').status, 'estimate');
    assert.equal(icacheBudget('sm_90a').bytes, 49920);
  });
});
