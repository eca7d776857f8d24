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
import {
  benchLoop as benchResult,
  benchJson,
  benchLabelOfId,
  BenchOptions,
  iqrOverlap,
  parseChecksums,
  summarize,
} from '../../src/engine/sweep/bench';
import type { SweepProgress } from '../../src/schema/progress';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { findCliffs, cliffPointFromRaw, icacheBudget } from '../../src/engine/icache/budget';
import { rawPageOf } from '../../src/engine/gpu/stages/time';
import { parseRawPageStrict } from '../../src/engine/profile/rawPageStream';
import { programOutput } from '../../src/engine/profile/ncuErrors';
import { parseSourcePage } from '../../src/engine/profile/ncuCsv';
import { sassStallsOf } from '../../src/engine/profile/sassStalls';
import { runSweep, SweepOptions } from '../../src/engine/sweep/sweep';
import { sweepJson } from '../../src/engine/sweep/json';
import { checkSweepResult } from '../../src/schema/result';
import { lineStallNotes } from '../../src/server/wire';
import { instantiationLabel } from '../../src/schema/kernelNames';
import { UnrollFactors } from '../../src/engine/variants/factors';

const REC = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100');

/**
 * A bench run (a one-loop GPU sweep) as these tests read it: its documented `--json` contract,
 * plus why per-line stalls are missing, every SASS instruction's samples, the run's cost, and the
 * SweepResult itself.
 */
async function benchLoop(...a: Parameters<typeof benchResult>) {
  const result = await benchResult(...a);
  const j = benchJson(result);
  return {
    ...j,
    variants: j.variants.map(v => ({ ...v, message: v.message ?? null })),
    lineStallsProblem: result.lineStallsProblem ?? null,
    sassStalls: result.sassStalls ?? null,
    timing: result.timing!,
    result,
  };
}

/** A sweep of the bench's loop with the bench's own options (the other fields the same), on another runner. */
async function sweepOptions(runner: ProcessRunner, s: Awaited<ReturnType<typeof options>>): Promise<SweepOptions> {
  return {
    file: s.file,
    text: s.text,
    analysis: s.analysis,
    toolchain: { ...s.o.toolchain, runner },
    arch: 'sm_90',
    flags: s.o.flags,
    cacheDir: CACHE,
    kernel: 'matmul_basic',
    loops: [s.line],
    factors: UnrollFactors.of([4]),
  };
}
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

/**
 * Real nvcc/c++filt/disassemblers; recorded answers for the program and for ncu. Each profiling
 * ncu run also runs the program (its `runIndex`-th run): `ncu` gets that run's recorded answer.
 */
function replay(
  program: (runIndex: number, args: string[]) => Partial<ProcessResult>,
  ncu: (args: string[], run: Partial<ProcessResult>) => Partial<ProcessResult>,
): { runner: ProcessRunner; calls: string[][] } {
  const calls: string[][] = [];
  let runs = 0;
  const runner: ProcessRunner = async (cmd, args, o) => {
    if (cmd === real!.nvcc.path || cmd === real!.nvdisasm?.path || cmd === real!.cuobjdump?.path || cmd === real!.cxxfilt?.path)
      return real!.runner(cmd, args, o);
    calls.push([cmd, ...args]);
    if (cmd === '/fake/ncu' && args.includes('--metrics')) {
      const prof = { ...result({ command: cmd, args }), ...ncu(args, program(runs++, args)) };
      // without --export ncu prints the raw page itself after the program's output: the page an import would give
      const ok = !prof.exitCode && !prof.timedOut && !prof.cancelled;
      if (ok && args.includes('--csv') && !args.includes('--export'))
        return { ...prof, stdout: prof.stdout + (ncu(['--import', 'direct'], {}).stdout ?? '') };
      return prof;
    }
    if (cmd === '/fake/ncu') return { ...result({ command: cmd, args }), ...ncu(args, {}) };
    return { ...result({ command: cmd, args }), ...program(runs++, args) };
  };
  return { runner, calls };
}

/**
 * What ncu prints around a program run: the recorded H100 `==PROF==` lines with the run's own
 * output; a program that fails makes ncu print the recorded error line and exit with its code
 * (test/fixtures/ncu/errors/no-kernels-app-fails).
 */
function underNcu(run: Partial<ProcessResult>): Partial<ProcessResult> {
  const prof = rec('matmul_basic.ncu-stdout.txt')
    .split('\n')
    .filter(l => l.startsWith('=='))
    .join('\n');
  if (run.timedOut || run.cancelled) return run;
  if (run.exitCode) return { ...run, stdout: `${run.stdout ?? ''}==ERROR== The application returned an error code (${run.exitCode}).\n` };
  return { ...run, stdout: `${run.stdout ?? ''}${prof}\n` };
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
    factors: UnrollFactors.of(['default', 1, 4]),
    args: ['--only', 'matmul_basic', '--reps', '25'],
    samples: 20,
    warmup: 2,
    clockControl: 'none',
    timeoutMs: 60_000,
    launcher: [],
    // one ncu process at a time, so a run index names one variant; no shared measurement cache
    profilesPerGpu: 1,
    measurementCacheDir: null,
    ...over,
  };
  return { o, file, text, analysis, line };
}

const ncuOk = (args: string[], run: Partial<ProcessResult>) =>
  args[0] === '--import' ? { stdout: rec('matmul_basic.raw.csv') } : underNcu(run);

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
    const prof = calls.find(c => c[0] === '/fake/ncu' && c.includes('--metrics'))!;
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
    assert.equal(r.instantiations, undefined);
    assert.equal(r.result.variants[0].instantiations?.length, 1, 'one kernel holds the loop');
    assert.ok(prof.includes('--clock-control') && prof[prof.indexOf('--clock-control') + 1] === 'none');
    const j = benchJson(r.result);
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
    // issue 13: every row measured, so its i-cache entry shows the measurement; the prediction
    // from its real SASS stays beside it, at the warps per SM ncu measured.
    for (const v of r.variants) {
      assert.equal(v.icache?.shown, 'measured', v.label);
      assert.ok(v.icache.measured && v.icache.reference !== null, v.label);
      assert.ok(v.icache.predicted && v.icache.warpsSource === 'achieved', v.label);
    }
    assert.deepEqual(j.variants[3].icache, r.variants[3].icache);
    // the bench is a one-loop GPU sweep: what the panel, the saved file and the exports read
    const res = r.result;
    assert.equal(res.origin, 'bench');
    assert.equal(res.static, false);
    assert.equal(res.clockControl, 'none');
    assert.deepEqual(
      res.variants.map(v => v.id),
      ['as-written', `${o.loops[0]}=default`, `${o.loops[0]}=1`, `${o.loops[0]}=4`],
    );
    assert.deepEqual(
      res.loops.map(l => l.line),
      o.loops,
    );
    const fastest = res.variants.filter(v => v.status === 'ok').sort((a, b) => a.medianMs! - b.medianMs!)[0];
    assert.equal(res.variants.find(v => v.id === res.best)!.medianMs, fastest.medianMs);
    assert.equal(res.bestBasis, 'fastest median kernel time (ncu, 20 samples; clocks not locked, caches flushed before each launch)');
    assert.deepEqual(res.measurement, { tool: 'ncu', clocks: 'as-is', caches: 'flushed' });
    assert.deepEqual(checkSweepResult(JSON.parse(JSON.stringify(res))), res, 'a valid result, whole');
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
    const { o } = await options(runner, {
      loops: [line],
      factors: UnrollFactors.of([1]),
      args: ['--only', 'matmul_pragma', '--reps', '25'],
    });
    const r = await benchLoop(file, text, analysis, o);
    assert.deepEqual(r.instantiations!.map(x => x.kernel).sort(), [...names].sort());
    for (const x of r.instantiations!)
      assert.ok(
        x.variants.every(v => v.status === 'ok' && v.samples === 20),
        x.kernel,
      );
    assert.ok(r.instantiations!.every(x => x.variants[1].kernelInstructions! > 0));
    const profiles = calls.filter(c => c[0] === '/fake/ncu' && c.includes('--metrics'));
    assert.equal(profiles.length, 8, 'one run per instantiation and variant');
    for (const n of names)
      assert.ok(
        profiles.some(c => c.includes(`regex:^${n}$`) && c[c.indexOf('--launch-count') + 1] === '20'),
        n,
      );
    assert.ok(benchJson(r.result).instantiations!.length === 4);
    // the panel names the instantiation each row shows, and which of the four the view is (issue 22)
    const primary = r.result.demangled![r.kernel];
    assert.match(primary, /^void matmul_pragma<\d+>/);
    assert.ok(r.result.variants.every(v => v.instantiation === primary));
    assert.ok(
      r.result.notes.some(n =>
        new RegExp(
          `^4 instantiations hold the loop \\(matmul_pragma<\\d+>(, matmul_pragma<\\d+>){3}\\); this view shows ${instantiationLabel(primary).replace(/[<>]/g, '.')}, the one with most`,
        ).test(n),
      ),
      r.result.notes.join('\n'),
    );
  });

  test('a crash is a runtime failure; the others still run', async t => {
    if (skip) return t.skip(skip);
    const { runner } = replay(
      i =>
        // runs: as-written (default has its machine code), 1, 4
        i === 1
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
    assert.match(r.variants[2].message!, /exit code 3/);
    assert.equal(r.variants[1].identicalTo, 'as-written');
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
      ['ok', 'ok', 'timeout', 'ok'],
    );
  });

  test('a different checksum is a correctness failure (recorded wrong.cu outputs)', async t => {
    if (skip) return t.skip(skip);
    const { runner } = replay(i => ({ stdout: rec(i === 2 ? 'wrong_bad.stdout' : 'wrong_ok.stdout') }), ncuOk);
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
    const { o, file, text, analysis } = await options(runner, { factors: UnrollFactors.of([4]) });
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
    const { o, file, text, analysis } = await options(runner, { factors: UnrollFactors.of([4]), sourceStalls: true });
    const r = await benchLoop(file, text, analysis, o);
    assert.equal(r.lineStallsProblem, null);
    const hottest = [...r.lineStalls!].sort((a, b) => b.samples - a.samples)[0];
    assert.equal(hottest.line, 52, 'sum += A[row * n + k] * B[k * n + col]');
    assert.ok(Object.entries(hottest.stallShare).sort((a, b) => b[1] - a[1])[0][0] === 'long_scoreboard');
    const src = calls.find(c => c.includes('SourceCounters'))!;
    assert.ok(src.includes('--import-source') && src.includes('--launch-count') && src[src.indexOf('--launch-count') + 1] === '1');
    // the same page's samples per SASS instruction of the kernel, on the file as written
    // (216 instructions, 6814 samples: counted with Python's csv module from the recorded page)
    const s = r.sassStalls!;
    assert.equal(s.kernel, 'matmul_basic(const float *, const float *, float *, int)');
    assert.equal(s.factor, 'as-written');
    assert.equal(s.instructions.length, 216);
    assert.equal(s.totalSamples, 6814);
    assert.deepEqual(s, sassStallsOf(parseSourcePage(rec('source-stalls/reports/matmul_unroll-source.csv')), r.kernel));
    // --json: the sampled instructions only, with the kernel's instruction count
    const j = benchJson(r.result).sassStalls!;
    assert.deepEqual([j.kernel, j.factor, j.instructionCount, j.totalSamples], [s.kernel, 'as-written', 216, 6814]);
    assert.deepEqual(
      j.instructions,
      s.instructions.filter(i => i.samples > 0),
    );
    assert.equal(
      j.instructions.reduce((a, i) => a + i.samples, 0),
      6814,
    );
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
      ['ok', 'ok', 'cancelled', 'cancelled'],
    );
  });
});

describe('fast sweeps: identical code, measurement cache, several GPUs, a launcher', () => {
  const profiles = (calls: string[][]) => calls.filter(c => c.includes('/fake/ncu') && c.includes('--metrics'));

  test("ncu's own raw page after the program's output (real ncu stdout): the page and the program's lines apart", () => {
    const live = fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'ncu', 'mini', 'mini-raw-live.stdout.txt'), 'utf8');
    const page = rawPageOf(live);
    assert.equal(page.split('\n').filter(Boolean).length, 5, 'header, units, three launches');
    assert.deepEqual(
      parseRawPageStrict(page).kernels.map(k => k.kernelName.replace(/\(.*$/, '')),
      ['void scale<4>', 'void scale<16>', 'accumulate'],
    );
    assert.deepEqual(programOutput(live).split('\n').filter(Boolean), [
      'kernel=scale<4> done',
      'kernel=scale<16> done',
      'kernel=accumulate done',
    ]);
    assert.equal(rawPageOf('kernel=x checksum=1\n==PROF== Disconnected\n'), '', 'no page: nothing profiled');
  });

  test('the cubins build while the kernel search reads the file as written, which is compiled once', async t => {
    if (skip) return t.skip(skip);
    // nvcc logged: each cubin compile's source (read when it starts) and when it started and ended
    const cubins: { source: string; start: number; end: number }[] = [];
    const logged: ProcessRunner = async (cmd, args, o) => {
      if (cmd !== real!.nvcc.path || !args.includes('-cubin')) return real!.runner(cmd, args, o);
      const input = args.find(a => /\.(cu|cuh)$/.test(a) && fs.existsSync(path.resolve(o?.cwd ?? '.', a)))!;
      const c = { source: fs.readFileSync(path.resolve(o?.cwd ?? '.', input), 'utf8'), start: Date.now(), end: Infinity };
      cubins.push(c);
      try {
        return await real!.runner(cmd, args, o);
      } finally {
        c.end = Date.now();
      }
    };
    const { runner } = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncuOk);
    const both: ProcessRunner = (cmd, args, o) => (cmd === real!.nvcc.path ? logged(cmd, args, o) : runner(cmd, args, o));
    // a cache of its own: every cubin is compiled in this run
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-bench-prefetch-'));
    t.after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));
    const { o, file, text, analysis } = await options(both, { cacheDir, factors: UnrollFactors.of([2, 4]) });
    const r = await benchLoop(file, text, analysis, o);
    assert.deepEqual(
      r.variants.map(v => [v.label, v.status]),
      [
        ['as-written', 'ok'],
        ['2', 'ok'],
        ['4', 'ok'],
      ],
    );
    // the file as written, 2, 4 and the rolled baseline effective unroll is read against: each once
    // (the kernel search joins the SASS side's build of the file as written instead of its own)
    assert.equal(cubins.length, 4, 'four cubins');
    assert.equal(new Set(cubins.map(c => c.source)).size, 4, 'no source compiled twice');
    // the first two (the file as written and the rolled baseline, first in the queue) run together:
    // the baseline does not wait for the kernel search to end
    const [first, second] = [...cubins].sort((a, b) => a.start - b.start);
    assert.ok(second.start < first.end, 'the second cubin started before the first one ended');
  });

  test('the same machine code is measured once and reported with identicalTo', async t => {
    if (skip) return t.skip(skip);
    const { runner, calls } = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncuOk);
    // the loop's trip count is a runtime value: `full` is nvcc's ×4, and `default` is the file as written
    const { o, file, text, analysis } = await options(runner, { factors: UnrollFactors.of(['default', 4, 'full']) });
    const r = await benchLoop(file, text, analysis, o);
    assert.deepEqual(
      r.variants.map(v => [v.label, v.status, v.identicalTo]),
      [
        ['as-written', 'ok', null],
        ['default', 'ok', 'as-written'],
        ['4', 'ok', null],
        ['full', 'ok', '4'],
      ],
    );
    assert.equal(profiles(calls).length, 2, 'one ncu run per distinct machine code');
    assert.equal(r.variants[3].medianMs, r.variants[2].medianMs);
    assert.equal(r.variants[3].factors[String(o.loops[0])], 'full');
    assert.equal(r.timing.gpuRuns, 2);
    const j = benchJson(r.result);
    assert.equal(j.variants[3].identicalTo, '4');
    assert.equal(j.variants[1].identicalTo, 'as-written');
    assert.equal(j.timing.gpuRuns, 2);
    assert.ok(j.timing.wallS >= j.timing.gpuIdleS && j.timing.profileS >= 0);
    assert.deepEqual(j.timing.gpus, [null]);
  });

  test('an unchanged re-run comes from the measurement cache: no GPU run, the same numbers', async t => {
    if (skip) return t.skip(skip);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-measure-'));
    const first = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncuOk);
    const a = await options(first.runner, { measurementCacheDir: dir });
    const r1 = await benchLoop(a.file, a.text, a.analysis, a.o);
    assert.equal(profiles(first.calls).length, 3);
    assert.ok(r1.variants.every(v => !v.cached));

    const second = replay(
      () => assert.fail('no program may run'),
      () => assert.fail('no ncu may run'),
    );
    const b = await options(second.runner, { measurementCacheDir: dir });
    const r2 = await benchLoop(b.file, b.text, b.analysis, b.o);
    assert.equal(second.calls.length, 0);
    assert.equal(r2.timing.gpuRuns, 0);
    assert.deepEqual(
      r2.variants.map(v => [v.label, v.status, v.medianMs, v.cached]),
      r1.variants.map(v => [v.label, v.status, v.medianMs, true]),
    );
    assert.deepEqual(r2.variants[2].stallShare, r1.variants[2].stallShare);
    // the note says where the numbers came from, and (in the command line's words; the editor's
    // name unrollLens.profile.measurementCache) how to measure again
    assert.ok(
      r2.result.notes.includes(
        '4 of 4 measurements reused from earlier runs of the same programs (no GPU run; --fresh measures them again)',
      ),
      r2.result.notes.join('\n'),
    );
    assert.ok(!r1.result.notes.some(n => n.includes('measurements reused')));

    // Other arguments are another measurement.
    const third = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncuOk);
    const c = await options(third.runner, { measurementCacheDir: dir, args: ['--only', 'matmul_basic', '--reps', '30'] });
    await benchLoop(c.file, c.text, c.analysis, c.o);
    assert.equal(profiles(third.calls).length, 3);
  });

  test('sweep --source-stalls: the GPU sweep samples the file as written through the same step, with the same per-line numbers', async t => {
    if (skip) return t.skip(skip);
    const ncu = (args: string[], run: Partial<ProcessResult>) => {
      if (args[0] === '--import')
        return { stdout: args.includes('source') ? rec('source-stalls/reports/matmul_unroll-source.csv') : rec('matmul_basic.raw.csv') };
      return underNcu(run);
    };
    const benchRun = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncu);
    const b = await options(benchRun.runner, { factors: UnrollFactors.of([4]), sourceStalls: true });
    const bench = await benchLoop(b.file, b.text, b.analysis, b.o);
    const sweepRun = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncu);
    const s = await options(sweepRun.runner, { factors: UnrollFactors.of([4]), sourceStalls: true });
    const gpu = { ...s.o, sourceStalls: true };
    const r = await runSweep({ ...(await sweepOptions(sweepRun.runner, s)), gpu });
    assert.equal(r.lineStallsProblem, null);
    assert.ok(r.lineStalls && r.lineStalls.length > 0);
    assert.deepEqual(
      r.lineStalls,
      bench.lineStalls!.map(l => ({ line: l.line, samples: l.samples, stallShare: l.stallShare })),
    );
    assert.equal(sweepRun.calls.filter(c => c.includes('SourceCounters')).length, 1);
    // the editor's inline notes (SweepRunResult.lineStalls) are the bench's, line for line
    const notes = lineStallNotes(r.lineStalls!);
    assert.ok(notes.length > 0);
    assert.deepEqual(notes, lineStallNotes(bench.lineStalls!));
    // --json and the saved result carry them; the result file validates with them
    assert.deepEqual(sweepJson(r).lineStalls, r.lineStalls);
    assert.deepEqual(checkSweepResult(JSON.parse(JSON.stringify(r))).lineStalls, r.lineStalls);
    // not asked: no extra ncu run, no field
    const plainRun = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncu);
    const plain = await runSweep({ ...(await sweepOptions(plainRun.runner, s)), gpu: { ...gpu, sourceStalls: false } });
    assert.equal(plain.lineStalls, undefined);
    assert.ok(!plainRun.calls.some(c => c.includes('SourceCounters')));
  });

  test('per-line stalls come from the cache too: an editor re-run (source stalls on) runs nothing; an edited source samples again', async t => {
    if (skip) return t.skip(skip);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-measure-src-'));
    const ncu = (args: string[], run: Partial<ProcessResult>) => {
      if (args[0] === '--import')
        return { stdout: args.includes('source') ? rec('source-stalls/reports/matmul_unroll-source.csv') : rec('matmul_basic.raw.csv') };
      return underNcu(run);
    };
    const first = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncu);
    const a = await options(first.runner, { factors: UnrollFactors.of([4]), sourceStalls: true, measurementCacheDir: dir });
    const r1 = await benchLoop(a.file, a.text, a.analysis, a.o);
    assert.ok(first.calls.some(c => c.includes('SourceCounters')));
    assert.ok(r1.lineStalls?.length);

    const second = replay(
      () => assert.fail('no program may run'),
      () => assert.fail('no ncu may run'),
    );
    const b = await options(second.runner, { factors: UnrollFactors.of([4]), sourceStalls: true, measurementCacheDir: dir });
    const r2 = await benchLoop(b.file, b.text, b.analysis, b.o);
    assert.equal(second.calls.length, 0);
    assert.equal(r2.timing.gpuRuns, 0);
    assert.deepEqual(r2.lineStalls, r1.lineStalls);
    assert.ok(r1.sassStalls?.instructions.length);
    assert.deepEqual(r2.sassStalls, r1.sassStalls);

    // a comment added at the end: the same program, but the lines' text is part of the answer
    const third = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncu);
    const c = await options(third.runner, { factors: UnrollFactors.of([4]), sourceStalls: true, measurementCacheDir: dir });
    await benchLoop(c.file, `${c.text}\n// edited\n`, c.analysis, c.o);
    assert.equal(third.calls.filter(x => x.includes('SourceCounters')).length, 1);
  });

  test('a per-line stalls entry without SASS-level samples (written before they were kept) is sampled again', async t => {
    if (skip) return t.skip(skip);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-measure-src-old-'));
    const ncu = (args: string[], run: Partial<ProcessResult>) => {
      if (args[0] === '--import')
        return { stdout: args.includes('source') ? rec('source-stalls/reports/matmul_unroll-source.csv') : rec('matmul_basic.raw.csv') };
      return underNcu(run);
    };
    const first = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncu);
    const a = await options(first.runner, { factors: UnrollFactors.of([4]), sourceStalls: true, measurementCacheDir: dir });
    const r1 = await benchLoop(a.file, a.text, a.analysis, a.o);
    // the entry as the previous version wrote it: per-line samples only
    const entries = fs
      .readdirSync(dir, { recursive: true })
      .map(String)
      .filter(f => f.endsWith('.json'))
      .map(f => path.join(dir, f))
      .filter(f => JSON.parse(JSON.parse(fs.readFileSync(f, 'utf8')).body).lineStalls);
    assert.equal(entries.length, 1);
    // (entries are sealed with the installation's key now: one an earlier version wrote has no MAC)
    const measurement = JSON.parse(JSON.parse(fs.readFileSync(entries[0], 'utf8')).body);
    assert.ok(measurement.sassStalls);
    delete measurement.sassStalls;
    fs.writeFileSync(entries[0], JSON.stringify({ version: 1, key: path.basename(entries[0], '.json'), measurement }));

    const second = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncu);
    const b = await options(second.runner, { factors: UnrollFactors.of([4]), sourceStalls: true, measurementCacheDir: dir });
    const r2 = await benchLoop(b.file, b.text, b.analysis, b.o);
    assert.equal(second.calls.filter(x => x.includes('SourceCounters')).length, 1);
    assert.deepEqual(r2.sassStalls, r1.sassStalls);
    assert.deepEqual(r2.lineStalls, r1.lineStalls);
  });

  test('a damaged cache entry is a miss, never a wrong answer', async t => {
    if (skip) return t.skip(skip);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-measure-'));
    const first = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncuOk);
    const a = await options(first.runner, { measurementCacheDir: dir, factors: UnrollFactors.of([1]) });
    await benchLoop(a.file, a.text, a.analysis, a.o);
    const entries = fs
      .readdirSync(dir, { recursive: true })
      .map(String)
      .filter(f => f.endsWith('.json'));
    assert.equal(entries.length, 2);
    const victim = path.join(dir, entries[0]);
    fs.writeFileSync(victim, fs.readFileSync(victim, 'utf8').slice(0, 100));
    const again = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncuOk);
    const b = await options(again.runner, { measurementCacheDir: dir, factors: UnrollFactors.of([1]) });
    const r = await benchLoop(b.file, b.text, b.analysis, b.o);
    assert.equal(profiles(again.calls).length, 1, 'only the damaged entry is measured again');
    assert.deepEqual(
      r.variants.map(v => v.status),
      ['ok', 'ok'],
    );
  });

  test('progress: variant, phase, samples, done of total, elapsed and time left', async t => {
    if (skip) return t.skip(skip);
    const { runner } = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncuOk);
    const events: SweepProgress[] = [];
    const { o, file, text, analysis } = await options(runner, { factors: UnrollFactors.of(['default', 4]), progress: p => events.push(p) });
    await benchLoop(file, text, analysis, o);
    assert.equal(events[0].phase, 'start');
    const timed = events.filter(e => e.phase === 'time');
    assert.deepEqual(
      [...new Set(timed.map(e => benchLabelOfId(e.variant!)))],
      ['as-written', '4'],
      'default has the file as written’s code',
    );
    assert.ok(timed.some(e => e.samples === 20 && e.samplesWanted === 20));
    const done = events.filter(e => e.phase === 'done' && e.variant !== null);
    assert.deepEqual(
      done.map(e => [benchLabelOfId(e.variant!), e.done, e.total]),
      [
        ['as-written', 1, 3],
        ['default', 2, 3],
        ['4', 3, 3],
      ],
    );
    assert.ok(done[2].etaS !== null && done[2].etaS! >= 0, 'time left is estimated once a variant is measured');
    assert.ok(events.every((e, i) => i === 0 || e.elapsedS! >= events[i - 1].elapsedS!));
    assert.match(timed[timed.length - 1].message, /^\[2\/3\] ×4: timing on the GPU \(\d+\/20 samples\)/);
  });

  test('program runs follow the launches one run gives: one launch past the warm-up, 20 runs for 20 samples', async t => {
    if (skip) return t.skip(skip);
    // The recorded page cut to as many launches as ncu was asked for, at most `perRun` (a program
    // that launches the kernel that often after its warm-up).
    const lines = rec('matmul_basic.raw.csv').trimEnd().split('\n');
    let asked = 0;
    const perRun = 1;
    const ncu = (args: string[], run: Partial<ProcessResult>) => {
      if (args[0] !== '--import') {
        asked = Number(args[args.indexOf('--launch-count') + 1]);
        return underNcu(run);
      }
      return { stdout: [...lines.slice(0, 2), ...lines.slice(2, 2 + Math.min(asked, perRun))].join('\n') + '\n' };
    };
    const { runner, calls } = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncu);
    const { o, file, text, analysis } = await options(runner, { factors: UnrollFactors.of([4]) });
    const r = await benchLoop(file, text, analysis, o);
    assert.deepEqual(
      r.variants.map(v => [v.label, v.status, v.samples]),
      [
        ['as-written', 'ok', 20],
        ['4', 'ok', 20],
      ],
    );
    const counts = profiles(calls).map(c => Number(c[c.indexOf('--launch-count') + 1]));
    assert.equal(counts.length, 40, '20 runs per variant');
    assert.deepEqual(counts.slice(0, 3), [20, 19, 18], 'each run asks for what is still missing');
  });

  test('two ncu processes per GPU: a variant that fails beside another is measured again alone', async t => {
    if (skip) return t.skip(skip);
    const attempts = new Map<string, number>();
    let inFlight = 0;
    let most = 0;
    const base = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncuOk);
    const runner: ProcessRunner = async (cmd, args, o) => {
      if (cmd !== '/fake/ncu' || !args.includes('--metrics')) return base.runner(cmd, args, o);
      const program = args.find(a => a.startsWith(CACHE))!;
      const n = (attempts.get(program) ?? 0) + 1;
      attempts.set(program, n);
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise(r => setTimeout(r, 30));
      inFlight--;
      // every program's first run fails as an out-of-memory program would (exit 2, nothing profiled)
      if (n === 1) return result({ command: cmd, args, exitCode: 2, stdout: '==ERROR== The application returned an error code (2).\n' });
      return base.runner(cmd, args, o);
    };
    const { o, file, text, analysis } = await options(runner, { profilesPerGpu: 2, factors: UnrollFactors.of([1, 4]) });
    // programs built beforehand, so both processes start together
    await benchLoop(file, text, analysis, { ...o, toolchain: { ...o.toolchain, runner: base.runner } });
    const r = await benchLoop(file, text, analysis, o);
    assert.deepEqual(
      r.variants.map(v => [v.label, v.status, v.samples]),
      [
        ['as-written', 'ok', 20],
        ['1', 'ok', 20],
        ['4', 'ok', 20],
      ],
    );
    assert.equal(most, 2, 'two ncu processes were in flight at once');
    // six ncu runs of at least 30 ms each, two at a time: their sum, and the GPU never idle between them
    assert.equal(r.timing.gpuRuns, 6);
    assert.ok(r.timing.profileS >= 0.18 && r.timing.profileS <= r.timing.wallS * 2, String(r.timing.profileS));
    assert.deepEqual([...attempts.values()], [2, 2, 2]);
  });

  test('two GPUs: variants spread over both, each ncu pinned by CUDA_VISIBLE_DEVICES with its own lock; the same answers as one', async t => {
    if (skip) return t.skip(skip);
    const envs: (Record<string, string | undefined> | undefined)[] = [];
    const base = replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncuOk);
    const runner: ProcessRunner = (cmd, args, o) => {
      if (cmd === '/fake/ncu' && args.includes('--metrics')) envs.push(o?.env);
      return base.runner(cmd, args, o);
    };
    const { o, file, text, analysis } = await options(runner, { gpus: [0, 1], factors: UnrollFactors.of([1, 2, 4]) });
    const two = await benchLoop(file, text, analysis, o);
    const one = await benchLoop(
      file,
      text,
      analysis,
      (await options(replay(() => ({ stdout: rec('matmul_unroll.stdout') }), ncuOk).runner, { factors: UnrollFactors.of([1, 2, 4]) })).o,
    );
    assert.deepEqual(
      two.variants.map(v => [v.label, v.status, v.medianMs]),
      one.variants.map(v => [v.label, v.status, v.medianMs]),
    );
    assert.deepEqual(new Set(envs.map(e => e?.CUDA_VISIBLE_DEVICES)), new Set(['0', '1']));
    assert.ok(envs.every(e => e?.CUDA_DEVICE_ORDER === 'PCI_BUS_ID'));
    const locks = new Set(envs.map(e => e?.TMPDIR));
    assert.equal(locks.size, 2, 'one ncu lock folder per GPU');
    assert.deepEqual(two.timing.gpus, [0, 1]);
  });

  test('a launcher that runs elsewhere: programs and ncu reports live on the shared folder, never the local temp dir', async t => {
    if (skip) return t.skip(skip);
    // The "node": another working directory and its own temp folder. Its ncu refuses any path
    // under this machine's temp folder (node-local storage the other side cannot see), checks
    // the program is there, prints the recorded profile and writes the report where it is told.
    const local = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-local-'));
    const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-shared-'));
    t.after(() => fs.rmSync(shared, { recursive: true, force: true }));
    const launcher = path.join(shared, 'fake-srun');
    fs.writeFileSync(
      launcher,
      `#!/bin/sh\nexport UL_NODE_LOCAL="$TMPDIR"\ncd "$(mktemp -d)" || exit 90\nexport TMPDIR="$(mktemp -d)"\nexec "$@"\n`,
      { mode: 0o755 },
    );
    const ncu = path.join(shared, 'fake-ncu');
    const recDir = REC;
    fs.writeFileSync(
      ncu,
      `#!/bin/sh
if [ "$1" = "--import" ]; then cat "$2"; exit $?; fi
[ "$PWD" != "${REPO_ROOT}" ] || { echo "==ERROR== ran in the caller's directory" >&2; exit 91; }
for a in "$@"; do case "$a" in "$UL_NODE_LOCAL"/*) echo "==ERROR== node-local path: $a" >&2; exit 92;; esac; done
out=
while [ $# -gt 0 ]; do case "$1" in --export) out="$2"; shift 2;; --launch-count|--launch-skip|--metrics|--kernel-name|--kernel-name-base|--clock-control|--cache-control|--page|--print-kernel-base) shift 2;; --force-overwrite|--csv) shift;; *) break;; esac; done
[ -x "$1" ] || { echo "==ERROR== '$1' does not exist or is not an executable" ; exit 93; }
cat "${recDir}/matmul_unroll.stdout"
grep '^==' "${recDir}/matmul_basic.ncu-stdout.txt"
if [ -n "$out" ]; then cp "${recDir}/matmul_basic.raw.csv" "$out.ncu-rep"; else cat "${recDir}/matmul_basic.raw.csv"; fi
`,
      { mode: 0o755 },
    );
    const realRunner = real!.runner;
    const { o, file, text, analysis } = await options(realRunner, {
      launcher: [launcher],
      cacheDir: path.join(shared, 'builds'),
      factors: UnrollFactors.of([4]),
    });
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = local;
    try {
      // the raw page printed by ncu itself, and (reports kept) a report the node writes to the shared folder
      for (const keepReportsDir of [undefined, path.join(shared, 'kept')]) {
        const r = await benchLoop(file, text, analysis, {
          ...o,
          keepReportsDir,
          toolchain: { ...o.toolchain, ncu: { ...o.toolchain.ncu!, path: ncu } },
        });
        assert.deepEqual(
          r.variants.map(v => [v.label, v.status, v.samples, v.message]),
          [
            ['as-written', 'ok', 20, null],
            ['4', 'ok', 20, null],
          ],
          keepReportsDir ?? 'no reports kept',
        );
      }
      assert.equal(fs.readdirSync(path.join(shared, 'kept')).filter(f => f.endsWith('.ncu-rep')).length, 2);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    assert.ok(fs.existsSync(path.join(shared, 'runs')), 'reports were written beside the build cache');
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

describe('measurement cache shared by several processes', () => {
  test('4 processes writing and reading the same entries at once: every read is a miss or the whole entry', async () => {
    const { spawn } = await import('child_process');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-measure-mp-'));
    const mod = path.join(REPO_ROOT, 'out', 'src', 'engine', 'gpu', 'measurementCache.js');
    // Each process writes its own version of 8 shared keys (a big entry: partial writes would show) and reads them back in a loop.
    const script = `
      const { MeasurementCache } = require(${JSON.stringify(mod)});
      const c = new MeasurementCache(${JSON.stringify(dir)});
      const me = Number(process.argv[1]);
      const entry = w => ({ groups: [{ key: 'k', kernel: 'k', blockSize: null, durations: Array.from({ length: 20000 }, (_, i) => w + 1 + i / 1e6), last: null }], stdout: 'writer=' + w });
      let bad = 0, hits = 0;
      for (let round = 0; round < 40; round++) {
        for (let k = 0; k < 8; k++) {
          const key = String(k).padStart(64, 'a');
          if ((round + me + k) % 3 === 0) c.put(key, entry(me));
          const got = c.get(key);
          if (got === null) continue;
          hits++;
          const w = Number(got.stdout.slice(7));
          const d = got.groups[0].durations;
          if (d.length !== 20000 || d.some((x, i) => x !== w + 1 + i / 1e6)) bad++;
        }
      }
      process.stdout.write(JSON.stringify({ bad, hits }));
    `;
    const runs = await Promise.all(
      [0, 1, 2, 3].map(
        me =>
          new Promise<{ bad: number; hits: number }>((resolve, reject) => {
            const p = spawn(process.execPath, ['-e', script, String(me)], { stdio: ['ignore', 'pipe', 'inherit'] });
            let out = '';
            p.stdout.on('data', d => (out += d));
            p.on('close', code => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}`))));
          }),
      ),
    );
    assert.ok(
      runs.every(r => r.bad === 0),
      JSON.stringify(runs),
    );
    assert.ok(runs.reduce((a, r) => a + r.hits, 0) > 100, 'the processes did read each other’s entries');
    assert.deepEqual(
      fs
        .readdirSync(dir, { recursive: true })
        .map(String)
        .filter(f => f.endsWith('.tmp')),
      [],
      'no temporary file left behind',
    );
  });
});
