// The CUPTI kernel timer (--timer cupti, issue 25): its records, the time stage that reads them,
// the library built with the real nvcc, and a bench through the sweep pipeline that runs no ncu.
// The records are real: test/fixtures/gpu/h100/cupti/, written by the library on an H100
// (scripts/device/run-native-timer.sh), beside that run's own `bench --timer cupti --json`.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, REPO_ROOT, SAMPLES } from './helpers';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { parseTimerRecords } from '../../src/engine/gpu/cupti/timerRecords';
import { recordsProblem, startAhead, timeNative } from '../../src/engine/gpu/cupti/timeNative';
import { cuptiPaths, timerLibrary, toolkitRoot } from '../../src/engine/gpu/cupti/timerLibrary';
import { summarize } from '../../src/engine/gpu/stages/summary';
import { benchJson, benchLoop } from '../../src/engine/sweep/bench';
import { checkSweepResult } from '../../src/schema/result';
import { measurementKeyFor } from '../../src/engine/gpu/measurementCache';
import { UnrollFactors } from '../../src/engine/variants/factors';

const CUPTI = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'cupti');
const H100 = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100');
const KERNEL = '_Z12matmul_basicPKfS0_Pfi';
const records = (label: string) => fs.readFileSync(path.join(CUPTI, `matmul_unroll-${label}-run-0.timer.jsonl`), 'utf8');
const recorded = JSON.parse(fs.readFileSync(path.join(CUPTI, 'bench-cupti.json'), 'utf8')) as {
  variants: { label: string; medianMs: number | null; samples: number }[];
};

let real: Toolchain | null = null;
let skip: string | false = false;
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-timer-'));
before(async () => {
  try {
    real = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

function ok(over: Partial<ProcessResult>): ProcessResult {
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
 * nvcc and the disassemblers for real; a program run answered as the H100 run answered it: the
 * timer's records written where UNROLL_LENS_TIMER_OUT says (the label read from the program's
 * build: the as-written build or the factor), the program's recorded output on stdout.
 */
function replay(labelOf: (program: string) => string, calls: string[][] = []): ProcessRunner {
  return async (cmd, args, o) => {
    if (real && [real.nvcc.path, real.nvdisasm?.path, real.cuobjdump?.path, real.cxxfilt?.path].includes(cmd))
      return real.runner(cmd, args, o);
    calls.push([cmd, ...args]);
    const out = o?.env?.UNROLL_LENS_TIMER_OUT;
    if (!out || !o?.env?.CUDA_INJECTION64_PATH) return ok({ exitCode: 1, stderr: 'not run with the timer' });
    fs.appendFileSync(out, records(labelOf(cmd)));
    return ok({ stdout: fs.readFileSync(path.join(H100, 'matmul_unroll.stdout'), 'utf8') });
  };
}

describe('CUPTI timer records (recorded on an H100)', () => {
  test('every launch with exact ns durations; init and end lines; nothing dropped', () => {
    const r = parseTimerRecords(records('as-written'));
    assert.equal(r.initialised, true);
    assert.deepEqual(r.end, { records: 26, dropped: 0 });
    assert.equal(r.launches.length, 26);
    assert.ok(r.launches.every(l => l.kernel === KERNEL && Number.isInteger(l.durationNs) && l.durationNs > 0));
    assert.deepEqual(r.launches[0].block, [16, 16, 1]);
    assert.deepEqual(r.launches[0].grid, [32, 32, 1]);
    assert.equal(recordsProblem(r), null);
  });

  test('what makes a run untrustworthy is said, never hidden', () => {
    const text = records('as-written');
    const noEnd = text
      .split('\n')
      .filter(l => !l.startsWith('{"end"'))
      .join('\n');
    assert.match(recordsProblem(parseTimerRecords(noEnd))!, /ended without the CUPTI timer flushing/);
    const dropped = text.replace('"dropped":0', '"dropped":3');
    assert.match(recordsProblem(parseTimerRecords(dropped))!, /CUPTI dropped 3 kernel records/);
    const error = `${text}{"error":"cuptiActivityEnable(KERNEL): CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"}\n`;
    assert.match(recordsProblem(parseTimerRecords(error))!, /INSUFFICIENT_PRIVILEGES/);
    assert.match(recordsProblem(parseTimerRecords(''))!, /did not start/);
    const lost = text.replace(/\{"k":[^\n]*\n/, '');
    assert.match(recordsProblem(parseTimerRecords(lost))!, /wrote 26 records, 25 were read/);
    const cut = text.slice(0, text.length - 20);
    assert.ok(recordsProblem(parseTimerRecords(cut)));
    assert.match(parseTimerRecords('{"k":"x","s":1,"du":-5,"g":[1,1,1],"b":[1,1,1]}\n').errors[0], /without valid times/);
  });
});

describe('the recorded H100 run against hand-run ncu', () => {
  /** Median gpu__time_duration.sum of a hand loop's raw CSV (ncu's own page), in ms: read here, not by our reader. */
  function handMedian(file: string): number {
    const lines = fs.readFileSync(path.join(CUPTI, file), 'utf8').split('\n');
    const at = lines.findIndex(l => l.startsWith('"ID"'));
    const cells = (l: string) => l.split('","').map(c => c.replace(/^"|"$/g, ''));
    const col = cells(lines[at]).indexOf('gpu__time_duration.sum');
    const unit = cells(lines[at + 1])[col];
    const ns = lines
      .slice(at + 2)
      .filter(l => l.startsWith('"'))
      .map(l => Number(cells(l)[col].replace(/,/g, '')) * (unit === 'us' ? 1000 : unit === 'ms' ? 1e6 : 1))
      .sort((a, b) => a - b);
    assert.equal(ns.length, 20, file);
    return (ns[9] + ns[10]) / 2 / 1e6;
  }

  test('CUPTI medians sit 0.2–2 µs under ncu --cache-control none --clock-control none: a fixed gap, not a ratio (docs/measurements.md)', () => {
    const gapsUs = ['default', '1', '2', '4', '8', '16', 'full'].map(
      f => (handMedian(`hand-nocache/hand-${f}.csv`) - recorded.variants.find(v => v.label === f)!.medianMs!) * 1000,
    );
    assert.ok(
      gapsUs.every(g => g > 0 && g < 2),
      gapsUs.map(g => g.toFixed(2)).join(' '),
    );
    // the same gap on kernels 7× and 56× longer: within 0.5 % from about 0.4 ms a launch
    for (const size of [512, 1024, 2048]) {
      const run = JSON.parse(fs.readFileSync(path.join(CUPTI, 'sizes', `cupti-${size}.json`), 'utf8')) as typeof recorded;
      for (const [label, factor] of [
        ['as-written', 'default'],
        ['4', '4'],
      ]) {
        const ncu = handMedian(`sizes/hand-${size}-${factor}.csv`);
        const cupti = run.variants.find(v => v.label === label)!.medianMs!;
        const gap = (ncu - cupti) * 1000;
        assert.ok(gap > 0 && gap < 5, `${size} ${label}: ${gap.toFixed(2)} µs`);
        if (size >= 1024) assert.ok(Math.abs(cupti / ncu - 1) < 0.005, `${size} ${label}: ${((cupti / ncu - 1) * 100).toFixed(2)} %`);
      }
    }
  });
});

describe('the measurement cache key of a CUPTI timing', () => {
  test('names the timer and its library: another library (source, toolkit) or ncu is another measurement', () => {
    const program = path.join(H100, 'matmul_unroll.stdout'); // any file: the key hashes the program's bytes
    const base = {
      toolchain: { ncu: null, gpus: [] } as unknown as Toolchain,
      args: [],
      launcher: [],
      clockControl: 'none' as const,
      samples: 20,
      warmup: 2,
    };
    const key = (over: object) => measurementKeyFor({ ...base, ...over }, program, null, [KERNEL]);
    const a = key({ timer: 'cupti', timerLibrary: '/c/timer/aaa/lib.so' });
    assert.equal(a, key({ timer: 'cupti', timerLibrary: '/c/timer/aaa/lib.so' }));
    assert.notEqual(a, key({ timer: 'cupti', timerLibrary: '/c/timer/bbb/lib.so' }));
    assert.notEqual(a, key({ timer: 'ncu' }));
    assert.equal(key({ timer: 'ncu', timerLibrary: '/c/timer/bbb/lib.so' }), key({ timer: 'ncu' }), 'ncu timings do not depend on it');
    // counted by ncu besides (--counters on): another answer, never served for a timing without them
    assert.notEqual(a, key({ timer: 'cupti', timerLibrary: '/c/timer/aaa/lib.so', counters: true }));
    assert.equal(key({ timer: 'ncu', counters: true }), key({ timer: 'ncu' }), 'the ncu timer counts anyway');
  });
});

describe('the time stage without ncu', () => {
  test("skips the warm-up, keeps --samples launches in launch order: the H100 bench's own median, recomputed", async () => {
    const calls: string[][] = [];
    const toolchain = { runner: replay(() => 'as-written', calls) } as unknown as Toolchain;
    const t = await timeNative(
      { label: 'as-written', program: '/x/prog', file: path.join(SAMPLES, 'matmul_unroll.cu') },
      { kernel: KERNEL, kernels: [KERNEL] },
      { toolchain, launcher: [], args: ['--only', 'matmul_basic'], samples: 20, warmup: 2, timeoutMs: 10_000, library: '/lib/timer.so' },
    );
    assert.equal(t.status, 'ok', t.message ?? '');
    assert.equal(calls.length, 1, 'one run gives 24 launches past the warm-up: enough');
    const g = t.groups.get(KERNEL)!;
    assert.equal(g.durations.length, 20);
    const launches = parseTimerRecords(records('as-written')).launches.sort((a, b) => a.startNs - b.startNs);
    assert.deepEqual(
      g.durations,
      launches.slice(2, 22).map(l => l.durationNs / 1e6),
    );
    assert.equal(summarize(g.durations).medianMs, recorded.variants.find(v => v.label === 'as-written')!.medianMs);
    assert.equal(g.last!.registers, 32);
    assert.ok(t.stdout && t.stdout.length > 0, "the first run's output is the check");
  });

  test('more runs when one run gives few launches; a kernel never launched past the warm-up is a failure', async () => {
    const few = records('as-written')
      .split('\n')
      .filter((l, i) => !l.startsWith('{"k"') || i < 8)
      .join('\n')
      .replace('"records":26', '"records":7');
    let runs = 0;
    const toolchain = {
      runner: async (_c: string, _a: string[], o?: { env?: Record<string, string> }) => {
        runs++;
        fs.appendFileSync(o!.env!.UNROLL_LENS_TIMER_OUT, few);
        return ok({ stdout: 'checksum=1\n' });
      },
    } as unknown as Toolchain;
    const p = { label: 'x', program: '/x/prog', file: path.join(SAMPLES, 'matmul_unroll.cu') };
    const o = { toolchain, launcher: [], args: [], samples: 20, warmup: 2, timeoutMs: 10_000, library: '/lib/t.so' };
    const t = await timeNative(p, { kernel: KERNEL, kernels: [KERNEL] }, o);
    assert.equal(t.status, 'ok');
    assert.equal(runs, 4, '5 launches a run past the warm-up: 4 runs for 20');
    assert.equal(t.groups.get(KERNEL)!.durations.length, 20);
    const none = await timeNative(p, { kernel: '_Z5otherv', kernels: ['_Z5otherv'] }, o);
    assert.equal(none.status, 'profile');
    assert.match(none.message!, /launched _Z5otherv no more than 2 times/);
  });
});

describe('runs started ahead, held at their first launch', () => {
  const few = () =>
    records('as-written')
      .split('\n')
      .filter((l, i) => !l.startsWith('{"k"') || i < 8)
      .join('\n')
      .replace('"records":26', '"records":7');

  /** A program run: held ones wait for their gate file (as the library does at its first launch); each takes 40 ms. */
  function heldRunner(log: string[]) {
    let n = 0;
    return {
      runner: async (_c: string, _a: string[], o?: { env?: Record<string, string>; signal?: AbortSignal }) => {
        const id = n++;
        const gate = o!.env!.UNROLL_LENS_HOLD;
        log.push(`start ${id}${gate ? ' held' : ''}`);
        while (gate && !fs.existsSync(gate)) {
          if (o!.signal?.aborted) {
            log.push(`stopped ${id}`);
            return ok({ exitCode: null, signal: 'SIGKILL', cancelled: true });
          }
          await new Promise(r => setTimeout(r, 2));
        }
        if (gate) log.push(`go ${id}`);
        await new Promise(r => setTimeout(r, 40));
        fs.appendFileSync(o!.env!.UNROLL_LENS_TIMER_OUT, few() + (gate ? '{"held":1000}\n' : ''));
        log.push(`end ${id}`);
        return ok({ stdout: 'checksum=1\n' });
      },
    } as unknown as Toolchain;
  }
  const p = { label: 'x', program: '/x/prog', file: path.join(SAMPLES, 'matmul_unroll.cu') };
  const base = { launcher: [], args: [], samples: 20, warmup: 2, timeoutMs: 10_000, library: '/lib/t.so' };

  test('each later run starts during the one before and is let go only after it exits; the samples are the same', async () => {
    const log: string[] = [];
    const t = await timeNative(p, { kernel: KERNEL, kernels: [KERNEL] }, { ...base, toolchain: heldRunner(log) });
    assert.equal(t.status, 'ok');
    assert.equal(t.groups.get(KERNEL)!.durations.length, 20);
    assert.equal(t.runs, 4);
    // run 0 alone (how many runs are needed is learnt from it); then each next one started ahead
    const at = (e: string) => log.indexOf(e);
    assert.deepEqual(log.slice(0, 3), ['start 0', 'end 0', 'start 1 held'], log.join(', '));
    for (const k of [2, 3]) {
      assert.ok(at(`start ${k} held`) < at(`end ${k - 1}`), `run ${k} started during run ${k - 1}: ${log.join(', ')}`);
      assert.ok(at(`go ${k}`) > at(`end ${k - 1}`), `run ${k} let go only after run ${k - 1} ended: ${log.join(', ')}`);
    }
    assert.equal(log.length, 11, 'four runs, nothing more');
  });

  test("an earlier variant's run count starts the second run during the first; one not needed is stopped before its first launch", async () => {
    const log: string[] = [];
    const t = await timeNative(p, { kernel: KERNEL, kernels: [KERNEL] }, { ...base, expectedRuns: 4, toolchain: heldRunner(log) });
    assert.equal(t.status, 'ok');
    assert.deepEqual(log.slice(0, 3), ['start 0', 'start 1 held', 'end 0']);
    const log2: string[] = [];
    // 5 samples come from one run: the run started ahead is stopped, never let go
    const one = await timeNative(
      p,
      { kernel: KERNEL, kernels: [KERNEL] },
      { ...base, samples: 5, expectedRuns: 3, toolchain: heldRunner(log2) },
    );
    assert.equal(one.status, 'ok');
    assert.deepEqual(log2, ['start 0', 'start 1 held', 'end 0', 'stopped 1']);
  });
});

describe('a first run started ahead that fails before its first launch', () => {
  test('the timing that takes it reports the failure (no GPU, a crash), never an error of its own', async () => {
    const toolchain = {
      runner: async () => ok({ exitCode: 1, stderr: 'cudaMalloc returned CUDA driver version is insufficient for CUDA runtime version' }),
    } as unknown as Toolchain;
    const p = { label: 'x', program: '/x/prog', file: path.join(SAMPLES, 'matmul_unroll.cu') };
    const o = { toolchain, launcher: [], args: [], samples: 20, warmup: 2, timeoutMs: 10_000, library: '/lib/t.so' };
    const ahead = startAhead(p, o);
    await ahead.outcome; // ended, its folder removed, before its timing lets it go
    const t = await timeNative(p, { kernel: KERNEL, kernels: [KERNEL] }, { ...o, ahead });
    assert.equal(t.status, 'profile');
    assert.match(t.programFailed ?? '', /driver version is insufficient/);
  });
});

describe('the timer library and a bench with it', () => {
  test("built once with the toolkit's nvcc and CUPTI (rpath to libcupti), reused after", async t => {
    if (skip) return t.skip(skip);
    const root = await toolkitRoot(real!);
    if (!cuptiPaths(root)) return t.skip(`no CUPTI in ${root}`);
    const lib = await timerLibrary({ toolchain: real!, cacheDir: path.join(CACHE, 'builds') });
    const bytes = fs.readFileSync(lib);
    assert.ok(bytes.includes(Buffer.from('InitializeInjection')), 'the entry point the driver calls');
    assert.ok(bytes.includes(Buffer.from(cuptiPaths(root)!.lib)), 'an rpath to libcupti');
    let nvccRuns = 0;
    const counting = {
      ...real!,
      runner: (c: string, a: string[], o?: object) => (
        c === real!.nvcc.path && !a.includes('--dryrun') && nvccRuns++,
        real!.runner(c, a, o)
      ),
    };
    assert.equal(await timerLibrary({ toolchain: counting as Toolchain, cacheDir: path.join(CACHE, 'builds') }), lib);
    assert.equal(nvccRuns, 0);
  });

  test('bench --timer cupti: the pipeline times with the recorded records, runs no ncu, and says what it measured', async t => {
    if (skip) return t.skip(skip);
    const root = await toolkitRoot(real!);
    if (!cuptiPaths(root)) return t.skip(`no CUPTI in ${root}`);
    const file = path.join(SAMPLES, 'matmul_unroll.cu');
    const text = fs.readFileSync(file, 'utf8');
    const analysis = await analyze(text, file);
    const line = analysis.kernels.find(k => k.name === 'matmul_basic')!.loops[0].line;
    const calls: string[][] = [];
    // the program built for each point: its build key names the factor (variantKey)
    const label = (program: string) => {
      const m = /-L\d+x([^./-]+)/.exec(path.basename(program));
      return m ? `${line}=${m[1]}` : 'as-written';
    };
    const programs = new Map<string, string>();
    let inFlight = 0;
    let most = 0;
    let held = 0;
    let nvccDone = 0;
    let nvccStarted = 0;
    const runner: ProcessRunner = async (cmd, args, o) => {
      if (cmd === real!.nvcc.path) {
        nvccStarted++;
        const r = await real!.runner(cmd, args, o);
        nvccDone++;
        return r;
      }
      if ([real!.nvdisasm?.path, real!.cuobjdump?.path, real!.cxxfilt?.path].includes(cmd)) return real!.runner(cmd, args, o);
      calls.push([cmd, ...args]);
      // the file as written runs as long as the others take to build (cubins, programs, the timer; all started
      // at once, the timer library only when not built yet): as on a GPU, where a run takes a second
      for (let waited = 0; calls.length === 1 && (nvccDone < 6 || nvccDone < nvccStarted) && waited < 60_000; waited += 20)
        await new Promise(r => setTimeout(r, 20));
      if (!programs.has(cmd)) programs.set(cmd, label(cmd));
      // a run started ahead waits at its first launch for its gate, as the library does; stopped there, it never ran
      const gate = o?.env?.UNROLL_LENS_HOLD;
      if (gate) held++;
      while (gate && !fs.existsSync(gate)) {
        if (o?.signal?.aborted) return ok({ exitCode: null, signal: 'SIGKILL', cancelled: true });
        await new Promise(r => setTimeout(r, 2));
      }
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        await new Promise(r => setTimeout(r, 30)); // long enough for a second program to start, were it allowed
        return await replay(() => programs.get(cmd)!)(cmd, args, o);
      } finally {
        inFlight--;
      }
    };
    const r = await benchLoop(file, text, analysis, {
      toolchain: { ...real!, runner, ncu: null, gpus: [] },
      arch: 'sm_90',
      flags: flagsFromSettings({}, SAMPLES),
      cacheDir: path.join(CACHE, 'builds'),
      loops: [line],
      factors: UnrollFactors.of([1, 4]),
      args: ['--only', 'matmul_basic', '--reps', '25'],
      samples: 20,
      warmup: 2,
      clockControl: 'none',
      timer: 'cupti',
      timeoutMs: 60_000,
      launcher: [],
      measurementCacheDir: null,
      sourceStalls: true,
    });
    // no ncu on this machine (toolchain.ncu null): the per-line stalls alone are missing, and say why
    assert.match(r.lineStallsProblem ?? '', /stalls per source line need Nsight Compute \(ncu\), which was not found/);
    assert.equal(r.lineStalls ?? null, null);
    assert.ok(!calls.some(c => /ncu/.test(c[0])), 'no ncu ran');
    // programs timed as themselves share nothing: one at a time on the GPU (two at once inflated a 3 ms kernel 1.5–1.8× on an H100)
    assert.equal(most, 1, 'one program at a time per GPU');
    assert.ok(held >= 1, 'the next variant started ahead, held at its first launch');
    assert.deepEqual(
      r.variants.map(v => [v.id, v.status, v.samples]),
      [
        ['as-written', 'ok', 20],
        [`${line}=1`, 'ok', 20],
        [`${line}=4`, 'ok', 20],
      ],
    );
    assert.deepEqual(r.measurement, { tool: 'cupti', clocks: 'as-is', caches: 'warm', duration: 'kernel-record' }); // recorded before the range profiler
    // the replayed records carry no PC samples although sampling was asked for: said, not hidden (pcStalls.test.ts has real ones)
    assert.equal(r.variants[0].stallShare, null, 'no PC samples in these records');
    assert.ok(
      r.notes.includes('stall reasons unknown for 3 variants: the CUPTI timer wrote no PC samples (the run did not sample)'),
      r.notes.join('\n'),
    );
    assert.match(
      r.bestBasis!,
      /CUPTI timer \(kernel records: ~0\.6 µs a launch over ncu, short kernels read long\), program run as itself, 20 samples; clocks not locked, caches warm/,
    );
    assert.ok(
      r.notes.some(n => n.startsWith('gpu__time_duration') && /unknown for 3 variants: the run did not read gpu__time_duration/.test(n)),
      r.notes.join('\n'),
    );
    // the H100's 55–57 µs kernels, timed by their records: flagged, each with its shortest median
    assert.ok(
      r.notes.some(n => /^short kernels timed by their records, .*: _Z12matmul_basicPKfS0_Pfi \(5\d\.\d µs\)$/.test(n)),
      r.notes.join('\n'),
    );
    assert.ok(r.notes.some(n => /timed by the CUPTI kernel timer/.test(n)));
    const j = benchJson(r);
    assert.equal(j.variants[0].medianMs, recorded.variants.find(v => v.label === 'as-written')!.medianMs);
    assert.deepEqual(checkSweepResult(JSON.parse(JSON.stringify(r))), r);
  });

  test('two GPUs: each starts its next variant ahead on itself, one program at a time per GPU', async t => {
    if (skip) return t.skip(skip);
    const root = await toolkitRoot(real!);
    if (!cuptiPaths(root)) return t.skip(`no CUPTI in ${root}`);
    const file = path.join(SAMPLES, 'matmul_unroll.cu');
    const text = fs.readFileSync(file, 'utf8');
    const analysis = await analyze(text, file);
    const line = analysis.kernels.find(k => k.name === 'matmul_basic')!.loops[0].line;
    let nvccDone = 0;
    let nvccStarted = 0;
    let runs = 0;
    const inFlight = new Map<string, number>();
    const most = new Map<string, number>();
    const heldOn: string[] = [];
    const runner: ProcessRunner = async (cmd, args, o) => {
      if (cmd === real!.nvcc.path) {
        nvccStarted++;
        const r = await real!.runner(cmd, args, o);
        nvccDone++;
        return r;
      }
      if ([real!.nvdisasm?.path, real!.cuobjdump?.path, real!.cxxfilt?.path].includes(cmd)) return real!.runner(cmd, args, o);
      const gpu = o?.env?.CUDA_VISIBLE_DEVICES ?? 'default';
      // the file as written runs until every build is in (5 cubins, 5 programs, the timer library when not built yet), as a long run would
      const firstRun = runs++ === 0;
      for (let waited = 0; firstRun && (nvccDone < 10 || nvccDone < nvccStarted) && waited < 60_000; waited += 20)
        await new Promise(r => setTimeout(r, 20));
      const gate = o?.env?.UNROLL_LENS_HOLD;
      if (gate) heldOn.push(gpu);
      while (gate && !fs.existsSync(gate)) {
        if (o?.signal?.aborted) return ok({ exitCode: null, signal: 'SIGKILL', cancelled: true });
        await new Promise(r => setTimeout(r, 2));
      }
      inFlight.set(gpu, (inFlight.get(gpu) ?? 0) + 1);
      most.set(gpu, Math.max(most.get(gpu) ?? 0, inFlight.get(gpu)!));
      try {
        await new Promise(r => setTimeout(r, 40));
        return await replay(() => 'as-written')(cmd, args, o);
      } finally {
        inFlight.set(gpu, inFlight.get(gpu)! - 1);
      }
    };
    const r = await benchLoop(file, text, analysis, {
      toolchain: { ...real!, runner, ncu: null, gpus: [] },
      arch: 'sm_90',
      flags: flagsFromSettings({}, SAMPLES),
      cacheDir: fs.mkdtempSync(path.join(CACHE, 'two-gpus-')),
      loops: [line],
      factors: UnrollFactors.of([1, 2, 4, 8]),
      args: ['--only', 'matmul_basic', '--reps', '25'],
      samples: 20,
      warmup: 2,
      clockControl: 'none',
      timer: 'cupti',
      timeoutMs: 60_000,
      launcher: [],
      measurementCacheDir: null,
      gpus: [0, 1],
      stalls: false,
    });
    assert.deepEqual(
      r.variants.map(v => [v.id, v.status, v.samples]),
      ['as-written', `${line}=1`, `${line}=2`, `${line}=4`, `${line}=8`].map(id => [id, 'ok', 20]),
    );
    assert.deepEqual([...most.keys()].sort(), ['0', '1'], 'both GPUs timed variants');
    assert.ok(
      [...most.values()].every(n => n === 1),
      `one program at a time per GPU: ${JSON.stringify([...most])}`,
    );
    assert.ok(heldOn.includes('0') && heldOn.includes('1'), `runs started ahead on both GPUs: ${heldOn.join(', ')}`);
    // every run started ahead was let go on its own GPU: the medians are the recorded ones
    assert.equal(r.variants[0].medianMs, recorded.variants.find(v => v.label === 'as-written')!.medianMs);
  });

  test("the GPU starts on the file as written while a later variant's cubin is still building", async t => {
    if (skip) return t.skip(skip);
    const root = await toolkitRoot(real!);
    if (!cuptiPaths(root)) return t.skip(`no CUPTI in ${root}`);
    const file = path.join(SAMPLES, 'matmul_unroll.cu');
    const text = fs.readFileSync(file, 'utf8');
    const analysis = await analyze(text, file);
    const line = analysis.kernels.find(k => k.name === 'matmul_basic')!.loops[0].line;
    const events: string[] = [];
    // ×8's cubin: the nvcc writing a .cubin whose source (the last argument) sets the loop to 8
    const isX8Cubin = (cmd: string, args: string[]) =>
      cmd === real!.nvcc.path &&
      args.some(a => a.endsWith('.cubin')) &&
      /_Pragma\("unroll 8"\)/.test(fs.readFileSync(args[args.length - 1], 'utf8'));
    const runner: ProcessRunner = async (cmd, args, o) => {
      if (isX8Cubin(cmd, args)) {
        await new Promise(r => setTimeout(r, 12_000)); // it takes 12 s longer than the rest
        const r = await real!.runner(cmd, args, o);
        events.push('x8 cubin built');
        return r;
      }
      if ([real!.nvcc.path, real!.nvdisasm?.path, real!.cuobjdump?.path, real!.cxxfilt?.path].includes(cmd))
        return real!.runner(cmd, args, o);
      events.push('program ran');
      return replay(() => 'as-written')(cmd, args, o);
    };
    const r = await benchLoop(file, text, analysis, {
      toolchain: { ...real!, runner, ncu: null, gpus: [] },
      arch: 'sm_90',
      flags: flagsFromSettings({}, SAMPLES),
      cacheDir: fs.mkdtempSync(path.join(CACHE, 'stream-')),
      loops: [line],
      factors: UnrollFactors.of([1, 8]),
      args: ['--only', 'matmul_basic', '--reps', '25'],
      samples: 20,
      warmup: 2,
      clockControl: 'none',
      timer: 'cupti',
      timeoutMs: 60_000,
      launcher: [],
      measurementCacheDir: null,
    });
    assert.deepEqual(
      r.variants.map(v => [v.id, v.status]),
      [
        ['as-written', 'ok'],
        [`${line}=1`, 'ok'],
        [`${line}=8`, 'ok'],
      ],
    );
    assert.ok(events.includes('x8 cubin built'), events.join(', '));
    assert.ok(events.indexOf('program ran') < events.indexOf('x8 cubin built'), `the GPU waited for every cubin: ${events.join(', ')}`);
    assert.equal(events.lastIndexOf('program ran'), events.length - 1, '×8 itself runs once its cubin says it is not a copy');
  });
});
