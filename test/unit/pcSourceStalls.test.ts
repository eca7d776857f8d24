// --timer cupti --source-stalls: the file as written's per-line and per-instruction stalls from the
// PC samples of its timed run (native/pcSourceStalls.ts), no ncu run; ncu's message only when the
// samples give nothing. The program runs are replayed from the real H100 recording
// (test/fixtures/gpu/h100/cupti/pclines/sampled15-1.jsonl, matmul_unroll.cu built with nvcc 13.0
// -O3 -lineinfo -arch=sm_90); nvcc, cuobjdump and nvdisasm run for real, so the listing the samples
// are attached to is of the program this test built: one of other machine code is refused.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as zlib from 'zlib';
import { analyze, REPO_ROOT, SAMPLES } from './helpers';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { underProfiler } from './gpuTimeReplay';
import { parseTimerRecords } from '../../src/engine/gpu/cupti/timerRecords';
import { pcLineStalls, pcSassStalls } from '../../src/engine/gpu/cupti/pcLines';
import { sourceLineRows } from '../../src/engine/gpu/cupti/pcSourceStalls';
import { cuptiPaths, toolkitRoot } from '../../src/engine/gpu/cupti/timerLibrary';
import { benchJson, benchLoop } from '../../src/engine/sweep/bench';
import { MeasurementCache, measurementKeyFor } from '../../src/engine/gpu/measurementCache';
import { lineStallsText } from '../../src/engine/report/lineStallsText';
import { checkSweepResult } from '../../src/schema/result';
import { parseNvdisasm } from '../../src/engine/sass';
import { UnrollFactors } from '../../src/engine/variants/factors';

const H100 = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100');
const DIR = path.join(H100, 'cupti', 'pclines');
const KERNEL = '_Z12matmul_basicPKfS0_Pfi';
const read = (f: string) => {
  const bytes = fs.readFileSync(path.join(DIR, f));
  return (f.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes).toString('utf8');
};
const SAMPLED = read('sampled15-1.jsonl');
/** The same run without its PC sampling lines: a run that did not sample. */
const UNSAMPLED = SAMPLED.split('\n')
  .filter(l => !l.startsWith('{"pc'))
  .join('\n');

let real: Toolchain | null = null;
let skip: string | false = false;
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-pcsrc-'));
before(async () => {
  try {
    real = await detectToolchain({ probeGpu: false });
    if (!real.nvdisasm || !real.cuobjdump) skip = 'no nvdisasm/cuobjdump (npm run setup:cuda-tools)';
    else if (!cuptiPaths(await toolkitRoot(real))) skip = 'no CUPTI in the toolkit';
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

/** nvcc and the disassemblers for real; every program run answered with `records` (and the H100 run's output). */
function replay(records: string, calls: string[][]): ProcessRunner {
  return async (cmd, args, o) => {
    if ([real!.nvcc.path, real!.nvdisasm?.path, real!.cuobjdump?.path, real!.cxxfilt?.path].includes(cmd)) {
      calls.push([path.basename(cmd), ...args]);
      return real!.runner(cmd, args, o);
    }
    calls.push([cmd, ...args]);
    const out = o?.env?.UNROLL_LENS_TIMER_OUT;
    if (!out || !o?.env?.CUDA_INJECTION64_PATH) return ok({ exitCode: 1, stderr: 'not run with the timer' });
    // a run started ahead waits at its gate, as the library does
    const gate = o.env.UNROLL_LENS_HOLD;
    while (gate && !fs.existsSync(gate)) {
      if (o.signal?.aborted) return ok({ exitCode: null, signal: 'SIGKILL', cancelled: true });
      await new Promise(r => setTimeout(r, 2));
    }
    // a timed run reads gpu__time_duration (its samples come from the stall run before it)
    fs.appendFileSync(out, o.env.UNROLL_LENS_GPU_TIME === '1' ? underProfiler(records) : records);
    return ok({ stdout: fs.readFileSync(path.join(H100, 'matmul_unroll.stdout'), 'utf8') });
  };
}

async function bench(records: string, calls: string[][], measurementCacheDir: string | null = null) {
  const file = path.join(SAMPLES, 'matmul_unroll.cu');
  const text = fs.readFileSync(file, 'utf8');
  const analysis = await analyze(text, file);
  const line = analysis.kernels.find(k => k.name === 'matmul_basic')!.loops[0].line;
  const r = await benchLoop(file, text, analysis, {
    toolchain: { ...real!, runner: replay(records, calls), ncu: null, gpus: [] },
    arch: 'sm_90',
    flags: flagsFromSettings({}, SAMPLES),
    cacheDir: path.join(CACHE, 'builds'),
    loops: [line],
    factors: UnrollFactors.of([4]),
    args: ['--size', '1024', '--reps', '25'],
    samples: 20,
    warmup: 2,
    clockControl: 'none',
    timer: 'cupti',
    timeoutMs: 120_000,
    launcher: [],
    measurementCacheDir,
    sourceStalls: true,
  });
  return { r, file, text };
}

/** What pcLines computes from the recorded files alone: the samples on the recorded program's listing. */
function expected(file: string, text: string) {
  const s = parseTimerRecords(SAMPLED).pcSampling!;
  const fn = parseNvdisasm(read('prog.nvdisasm.txt.gz')).functions.find(f => f.name === KERNEL)!;
  return {
    lines: sourceLineRows(pcLineStalls(s, KERNEL, fn, file, text.split('\n'))),
    sass: pcSassStalls(s, KERNEL, fn, 'as-written').stalls!,
  };
}

describe('per-line stalls of the file as written from the timed run’s PC samples (no ncu installed)', () => {
  test('the recorded samples give the lines pcLines computes from the recording, said to come from PC sampling; no ncu ran', async t => {
    if (skip) return t.skip(skip);
    const calls: string[][] = [];
    const { r, file, text } = await bench(SAMPLED, calls);
    assert.equal(r.variants[0].status, 'ok', r.variants[0].message ?? '');
    assert.equal(r.lineStallsProblem, null);
    const want = expected(file, text);
    assert.ok(want.lines!.length >= 3, 'matmul_basic samples several lines');
    assert.deepEqual(r.lineStalls, want.lines);
    assert.equal(r.lineStallsSource, 'pc-sampling');
    assert.equal(r.sassStalls?.totalSamples, want.sass.totalSamples);
    assert.deepEqual(
      r.sassStalls?.instructions.map(i => [i.offset, i.samples]),
      want.sass.instructions.map(i => [i.offset, i.samples]),
    );
    assert.ok(!calls.some(c => /ncu/.test(c[0])), 'no ncu ran');
    assert.ok(
      calls.some(c => c[0].startsWith('cuobjdump') && c.includes('-xelf')),
      'the program that ran was listed',
    );
    const j = benchJson(r);
    assert.equal(j.lineStallsSource, 'pc-sampling');
    assert.deepEqual(j.lineStalls, want.lines);
    assert.match(
      lineStallsText(r.lineStalls, r.lineStallsProblem, r.lineStallsSource),
      /file as written, from the timed run's CUPTI PC samples/,
    );
    assert.deepEqual(checkSweepResult(JSON.parse(JSON.stringify(r))), r);
  });

  test('a run without PC samples keeps the message that ncu is needed, and says why the samples gave none', async t => {
    if (skip) return t.skip(skip);
    const { r } = await bench(UNSAMPLED, []);
    assert.equal(r.variants[0].status, 'ok');
    assert.equal(r.lineStalls ?? null, null);
    assert.equal(r.lineStallsSource, undefined);
    assert.match(r.lineStallsProblem ?? '', /stalls per source line need Nsight Compute \(ncu\), which was not found/);
    assert.match(r.lineStallsProblem ?? '', /the CUPTI timer wrote no PC samples/);
  });

  test('the measurement cache: a re-run whose timing is cached serves the PC-sampled lines; never under the ncu key', async t => {
    if (skip) return t.skip(skip);
    const dir = path.join(CACHE, 'measurements');
    const first = await bench(SAMPLED, [], dir);
    assert.equal(first.r.lineStallsSource, 'pc-sampling');
    // the second run's program runs would give no samples: its lines can only come from the cache
    const calls: string[][] = [];
    const again = await bench(UNSAMPLED, calls, dir);
    assert.equal(again.r.variants[0].cached, true);
    assert.deepEqual(again.r.lineStalls, first.r.lineStalls);
    assert.equal(again.r.lineStallsSource, 'pc-sampling');
    assert.ok(!calls.some(c => c[0].startsWith('cuobjdump') && c.includes('-xelf')), 'nothing listed: served from the cache');
    // the two methods' keys differ: a PC-sampled entry is never an ncu answer, nor the other way
    const o = {
      toolchain: { ...real!, ncu: null, gpus: [] },
      args: ['--size', '1024', '--reps', '25'],
      runCommand: undefined,
      launcher: [],
      clockControl: 'none' as const,
      samples: 20,
      warmup: 2,
      timer: 'cupti' as const,
      timerLibrary: 'lib',
    };
    const prog = path.join(DIR, 'gpu.txt');
    const ncuKey = measurementKeyFor(o, prog, null, [KERNEL], 'text');
    const pcKey = measurementKeyFor({ ...o, lineStallsFrom: 'pc-sampling' }, prog, null, [KERNEL], 'text');
    assert.notEqual(ncuKey, pcKey);
    assert.notEqual(pcKey, measurementKeyFor({ ...o, timerLibrary: 'other', lineStallsFrom: 'pc-sampling' }, prog, null, [KERNEL], 'text'));
    const store = new MeasurementCache(dir);
    const entries = (d: string): string[] =>
      fs.readdirSync(d, { withFileTypes: true }).flatMap(e => (e.isDirectory() ? entries(path.join(d, e.name)) : [e.name]));
    // one timing per program (2) and one PC-sampled source-stalls entry: no ncu-keyed one
    assert.equal(entries(dir).filter(f => f.endsWith('.json')).length, 3);
    assert.equal(store.get(ncuKey), null);
  });
});
