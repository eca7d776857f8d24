// The CUPTI timer's gpu__time_duration (issue 42): each launch's counter read by CUPTI's range profiler
// in the program's own run, paired with the kernel records, and the runs the time stage makes for it.
// Real outputs: the H200 short-kernel recordings (test/fixtures/gpu/h200/short-kernels/) and the H100
// PC-sampling recordings. Where a case needs a run no GPU gave us (a profiler failing part-way), it is
// made from a real recording by a stated edit.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT, SAMPLES } from './helpers';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';
import type { ProcessResult } from '../../src/engine/toolchain/process';
import { parseTimerRecords } from '../../src/engine/gpu/cupti/timerRecords';
import { PC_SAMPLING_PERIOD } from '../../src/engine/gpu/cupti/pcStalls';
import { timeNative } from '../../src/engine/gpu/cupti/timeNative';
import { underProfiler } from './gpuTimeReplay';

const H200 = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h200', 'short-kernels');
const H100 = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'cupti', 'pcsampling');
const timedH200 = fs.readFileSync(path.join(H200, 'kernel_lengths.timed.1.timer.jsonl'), 'utf8');
const sampled = fs.readFileSync(path.join(H100, 'sampled15-1.jsonl'), 'utf8');
const timedOnly = fs.readFileSync(path.join(H100, 'timed-1.jsonl'), 'utf8');
const BASIC = '_Z12matmul_basicPKfS0_Pfi';
const PRAGMA2 = '_Z13matmul_pragmaILi2EEvPKfS1_Pfi';

const lines = (text: string) => text.split('\n').filter(Boolean);

function ok(stdout: string): ProcessResult {
  return { command: '', args: [], exitCode: 0, signal: null, stdout, stderr: '', timedOut: false, cancelled: false, durationMs: 1 };
}

describe('gpu__time_duration lines', () => {
  test("a real H200 run: every launch paired with its range, in launch order; the profiler's host time read", () => {
    const r = parseTimerRecords(timedH200);
    assert.deepEqual(r.errors, []);
    assert.equal(r.gpuTimeProblem, null);
    assert.equal(r.launches.length, 230);
    assert.ok(
      r.launches.every(l => l.gpuTimeNs! % 32 === 0),
      'the GPU timer ticks in 32 ns',
    );
    // the first launch of the first kernel (length<8>, the check launch) and its next
    assert.deepEqual(
      r.launches.slice(0, 2).map(l => l.kernel),
      ['_Z6lengthILi8EEvPKfPf', '_Z6lengthILi8EEvPKfPf'],
    );
    assert.ok(r.launches.slice(1, 23).every(l => l.gpuTimeNs! >= 2500 && l.gpuTimeNs! <= 2700));
    assert.ok(r.gpuTimeHostMs! > 0);
  });

  test("what keeps a run's ranges from its launches is said, and no launch is given a range then", () => {
    const problem = (text: string) => {
      const r = parseTimerRecords(text);
      assert.ok(r.launches.every(l => l.gpuTimeNs === null));
      return r.gpuTimeProblem;
    };
    assert.match(problem(timedOnly)!, /did not read gpu__time_duration/);
    const gt = lines(timedH200);
    assert.match(problem(['{"gterror":"cuptiRangeProfilerEnable: CUPTI_ERROR_HARDWARE_BUSY"}', ...gt].join('\n'))!, /HARDWARE_BUSY/);
    assert.match(problem(gt.filter(l => !l.startsWith('{"gtend"')).join('\n'))!, /did not finish/);
    assert.match(problem(gt.map(l => l.replace('"dropped":0,"prepareMs"', '"dropped":2,"prepareMs"')).join('\n'))!, /dropped 2 ranges/);
    // one range lost: 229 ranges for 230 records
    const lost = gt.filter(l => !l.startsWith('{"gt":') || !l.includes('"gi":229}'));
    assert.match(problem(lost.map(l => l.replace('"ranges":230', '"ranges":229')).join('\n'))!, /229 ranges of 229 for 230 kernel records/);
    // records with times: a range paired with the wrong launch shows (its record 400 µs, its range 2.6 µs)
    const shifted = underProfiler(timedOnly, ns => ns.map((n, i) => `{"gt":${i === 3 ? 2592 : n},"gi":${i}}`)).replace(
      /"s":0,"du":0/g,
      '"s":1,"du":412000',
    );
    assert.match(problem(shifted)!, /range 3 \(2592 ns\) does not match its kernel record/);
  });
});

describe('the time stage reading gpu__time_duration', () => {
  const program = { label: 'as-written', program: '/x/prog', file: path.join(SAMPLES, 'matmul_unroll.cu') };
  const options = { launcher: [], args: [], samples: 40, warmup: 2, timeoutMs: 10_000, library: '/lib/timer.so' };
  const target = { kernel: BASIC, kernels: [BASIC, PRAGMA2] };

  test('stalls sampled in a run of their own, untimed; the timed runs read gpu__time_duration for every sample', async () => {
    const runs: string[] = [];
    const toolchain = {
      runner: async (_c: string, _a: string[], o?: { env?: Record<string, string> }) => {
        const env = o!.env!;
        runs.push(`${env.UNROLL_LENS_PCSAMPLING ?? '-'}/${env.UNROLL_LENS_GPU_TIME}`);
        fs.appendFileSync(env.UNROLL_LENS_TIMER_OUT, env.UNROLL_LENS_PCSAMPLING ? sampled : underProfiler(timedOnly));
        return ok('checksum=1\n');
      },
    } as unknown as Toolchain;
    const t = await timeNative(program, target, { ...options, toolchain, stallSampling: true });
    assert.equal(t.status, 'ok', t.message ?? '');
    // 24 launches a timed run past the warm-up: two timed runs for 40 samples, after the stall run
    assert.deepEqual(runs, [`${PC_SAMPLING_PERIOD}/0`, '-/1', '-/1']);
    assert.equal(t.runs, 2, 'the runs a timing needs, the stall run not counted');
    assert.equal(t.gpuTimeProblem, null);
    assert.equal(t.stallProblem, null);
    const spans = parseTimerRecords(timedOnly).launches.filter(l => l.kernel === BASIC);
    const g = t.groups.get(BASIC)!;
    assert.equal(g.durationSource, 'gpu-time');
    assert.equal(g.last!.stallSource, 'pc-sampling');
    // the first timed run's launches past the warm-up, then the second's: each its record's span less 600 ns
    assert.deepEqual(
      g.durations.slice(0, 3),
      spans.slice(2, 5).map(l => (l.durationNs - 600) / 1e6),
    );
  });

  test('the profiler failing in a run whose records read 0: that run again without it, timed by the records, and the reason kept', async () => {
    const gpu: string[] = [];
    const failed = ['{"gterror":"cuptiRangeProfilerStart: CUPTI_ERROR_HARDWARE_BUSY"}', ...lines(underProfiler(timedOnly, () => []))]
      .join('\n')
      .replace(/"ranges":\d+/, '"ranges":0');
    const toolchain = {
      runner: async (_c: string, _a: string[], o?: { env?: Record<string, string> }) => {
        const env = o!.env!;
        gpu.push(env.UNROLL_LENS_GPU_TIME!);
        fs.appendFileSync(env.UNROLL_LENS_TIMER_OUT, env.UNROLL_LENS_GPU_TIME === '1' ? failed : timedOnly);
        return ok('checksum=1\n');
      },
    } as unknown as Toolchain;
    const t = await timeNative(program, target, { ...options, toolchain, stallSampling: false });
    assert.equal(t.status, 'ok', t.message ?? '');
    // the failed run, the run started ahead of it with the profiler (stopped), then two without it
    assert.equal(gpu[0], '1');
    assert.deepEqual(gpu.slice(-2), ['0', '0']);
    assert.match(t.gpuTimeProblem!, /HARDWARE_BUSY/);
    const g = t.groups.get(BASIC)!;
    assert.equal(g.durationSource, 'kernel-record');
    assert.equal(g.durations.length, 40);
    assert.ok(
      g.durations.every(d => d > 0.4),
      'no zero from the failed run',
    );
  });

  test('a kernel timed by both clocks in one variant is timed by its records alone: one clock per median', async () => {
    let n = 0;
    const toolchain = {
      runner: async (_c: string, _a: string[], o?: { env?: Record<string, string> }) => {
        // the first timed run reads the counter, the second does not (its records keep their times)
        fs.appendFileSync(
          o!.env!.UNROLL_LENS_TIMER_OUT,
          n++ === 0 ? underProfiler(timedOnly).replace(/"s":0,"du":0/g, '"s":1,"du":412000') : timedOnly,
        );
        return ok('checksum=1\n');
      },
    } as unknown as Toolchain;
    const t = await timeNative(program, target, { ...options, toolchain, stallSampling: false });
    assert.equal(t.status, 'ok', t.message ?? '');
    const g = t.groups.get(BASIC)!;
    assert.equal(g.durationSource, 'kernel-record');
    assert.equal(g.durations.length, 40);
    assert.ok(
      g.durations.slice(0, 24).every(d => d === 0.412),
      g.durations.slice(0, 3).join(', '),
    );
    assert.match(t.gpuTimeProblem!, /did not read gpu__time_duration/);
  });
});

describe("both clocks in one variant, the profiled run's records reading 0 (as kernel replay leaves them)", () => {
  test('only the records that hold a time are kept: fewer samples, never a zero', async () => {
    const program = { label: 'as-written', program: '/x/prog', file: path.join(SAMPLES, 'matmul_unroll.cu') };
    let n = 0;
    const toolchain = {
      runner: async (_c: string, _a: string[], o?: { env?: Record<string, string> }) => {
        fs.appendFileSync(o!.env!.UNROLL_LENS_TIMER_OUT, n++ === 0 ? underProfiler(timedOnly) : timedOnly);
        return ok('checksum=1\n');
      },
    } as unknown as Toolchain;
    const t = await timeNative(
      program,
      { kernel: BASIC, kernels: [BASIC] },
      { launcher: [], args: [], samples: 40, warmup: 2, timeoutMs: 10_000, library: '/lib/timer.so', toolchain, stallSampling: false },
    );
    assert.equal(t.status, 'ok', t.message ?? '');
    const g = t.groups.get(BASIC)!;
    assert.equal(g.durationSource, 'kernel-record');
    assert.equal(g.durations.length, 16, "the second run's 16 wanted samples; the first run's records read 0");
    assert.ok(g.durations.every(d => d > 0.4));
  });
});
