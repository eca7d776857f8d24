// Stall reasons from CUPTI PC sampling in the timed run (--timer cupti, issue 25). The records are
// real: test/fixtures/gpu/h100/cupti/pcsampling/, written by native/cupti_timer.c on an H100
// with UNROLL_LENS_PCSAMPLING=15 (scripts/device/run-pc-sampling.sh), beside ncu's own PC sampling
// and warp-state metrics of the same kernels in the same program (--cache-control none
// --clock-control none), the independent source the shares are checked against.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT, SAMPLES } from './helpers';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';
import type { ProcessResult } from '../../src/engine/toolchain/process';
import { parseTimerRecords } from '../../src/engine/gpu/cupti/timerRecords';
import { kernelSamples, kernelStalls, pcSamplingProblem, PC_SAMPLING_PERIOD } from '../../src/engine/gpu/cupti/pcStalls';
import { timeNative } from '../../src/engine/gpu/cupti/timeNative';
import { parseRawPage, RawKernelRow } from '../../src/engine/profile/ncuCsv';
import { stallBreakdown } from '../../src/engine/profile/stalls';
import { measurementKeyFor } from '../../src/engine/gpu/measurementCache';

const DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'cupti', 'pcsampling');
const sampled = fs.readFileSync(path.join(DIR, 'sampled15-1.jsonl'), 'utf8');
const timedOnly = fs.readFileSync(path.join(DIR, 'timed-1.jsonl'), 'utf8');
const BASIC = '_Z12matmul_basicPKfS0_Pfi';
const PRAGMA2 = '_Z13matmul_pragmaILi2EEvPKfS1_Pfi';

/** ncu's own PC-sampling stall shares of the first profiled launch in a recorded raw page. */
function ncuShares(file: string, family: RegExp): Record<string, number> {
  const row: RawKernelRow = parseRawPage(fs.readFileSync(path.join(DIR, file), 'utf8')).kernels[0];
  const picked = new Map(Object.entries(row.metrics).filter(([k]) => family.test(k)));
  return stallBreakdown(picked).stallShare;
}

function largestGap(a: Record<string, number>, b: Record<string, number>): number {
  return Math.max(...[...new Set([...Object.keys(a), ...Object.keys(b)])].map(k => Math.abs((a[k] ?? 0) - (b[k] ?? 0))));
}

describe('PC sampling records (recorded on an H100)', () => {
  const r = parseTimerRecords(sampled);
  test('every PC line read; the summary says the run is complete and lost nothing', () => {
    assert.deepEqual(r.errors, []);
    const s = r.pcSampling!;
    assert.equal(s.pcs.length, sampled.split('\n').filter(l => l.startsWith('{"pc"')).length);
    assert.equal(s.period, PC_SAMPLING_PERIOD);
    // 38 stall reasons (issued and not) and CUPTI's per-PC sample count and dropped-data count
    assert.equal(s.reasons.filter(n => n.startsWith('smsp__pcsamp_warps_issue_stalled_')).length, 38);
    assert.deepEqual(
      s.reasons.filter(n => !n.startsWith('smsp__pcsamp_warps_issue_stalled_')),
      ['smsp__pcsamp_sample_count', 'smsp__pcsamp_samples_data_dropped'],
    );
    assert.equal(kernelSamples(s, BASIC), 82618, 'matmul_basic: 26 launches of 0.4 ms, every 2^15 cycles');
    assert.deepEqual([s.complete, s.hardwareBufferFull, s.dropped, s.lost, s.errors.length], [true, false, 0, 0, 0]);
    assert.equal(pcSamplingProblem(s), null);
    assert.equal(r.launches.length, r.end!.records, 'the kernel times are intact beside the samples');
    assert.equal(parseTimerRecords(timedOnly).pcSampling, null, 'a run without sampling has none');
  });

  test("a kernel's shares agree with ncu's own PC sampling of it (within 0.5 points for matmul_pragma<2>, 5 for matmul_basic)", () => {
    const pcsamp = /^smsp__pcsamp_warps_issue_stalled_/;
    const warpState = /^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$/;
    const p2 = kernelStalls(r.pcSampling!, PRAGMA2);
    assert.equal(p2.source, 'pc-sampling');
    assert.ok(p2.stallShare.long_scoreboard > 0.7, 'long_scoreboard leads, as ncu says');
    assert.ok(largestGap(p2.stallShare, ncuShares('ncu-matmul_pragma-raw.csv', pcsamp)) < 0.005);
    assert.ok(largestGap(p2.stallShare, ncuShares('ncu-matmul_pragma-raw.csv', warpState)) < 0.005);
    // ncu samples one launch (the program's first, cold); the timer all 26: the gap is 4.3 points on lg_throttle/long_scoreboard
    const basic = kernelStalls(r.pcSampling!, BASIC);
    assert.ok(largestGap(basic.stallShare, ncuShares('ncu-matmul_basic-raw.csv', pcsamp)) < 0.05);
    assert.equal(kernelStalls(r.pcSampling!, '_Z5otherv').source, 'none', 'no samples: no mix');
  });

  test('what makes the samples untrustworthy is said; the kernel times stay valid', () => {
    const edit = (f: (t: string) => string) => parseTimerRecords(f(sampled));
    const refused = edit(
      t =>
        '{"pcerror":"cuptiPCSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"}\n' +
        t
          .split('\n')
          .filter(l => !l.startsWith('{"pc'))
          .join('\n'),
    );
    assert.deepEqual(refused.errors, [], 'not an error of the timer');
    assert.match(
      pcSamplingProblem(refused.pcSampling)!,
      /INSUFFICIENT_PRIVILEGES.*NVreg_RestrictProfilingToAdminUsers=0.*ERR_NVGPUCTRPERM/,
    );
    assert.match(pcSamplingProblem(edit(t => t.replace('"hwFull":0', '"hwFull":1')).pcSampling)!, /hardware buffer filled/);
    assert.match(pcSamplingProblem(edit(t => t.replace('"dropped":0,"nonUser"', '"dropped":12,"nonUser"')).pcSampling)!, /dropped 12/);
    assert.match(pcSamplingProblem(edit(t => t.replace(/^\{"pcs".*$/m, '')).pcSampling)!, /before PC sampling wrote its summary/);
    assert.match(pcSamplingProblem(null)!, /no PC samples/);
  });
});

function ok(stdout: string): ProcessResult {
  return { command: '', args: [], exitCode: 0, signal: null, stdout, stderr: '', timedOut: false, cancelled: false, durationMs: 1 };
}

describe('the time stage with PC sampling', () => {
  const program = { label: 'as-written', program: '/x/prog', file: path.join(SAMPLES, 'matmul_unroll.cu') };
  const options = { launcher: [], args: [], samples: 40, warmup: 2, timeoutMs: 10_000, library: '/lib/timer.so' };

  test('without gpu__time_duration: samples in the first run only; every timed kernel gets its mix; the durations are the records', async () => {
    const periods: (string | undefined)[] = [];
    const toolchain = {
      runner: async (_c: string, _a: string[], o?: { env?: Record<string, string> }) => {
        periods.push(o!.env!.UNROLL_LENS_PCSAMPLING);
        assert.equal(o!.env!.UNROLL_LENS_GPU_TIME, '0');
        fs.appendFileSync(o!.env!.UNROLL_LENS_TIMER_OUT, o!.env!.UNROLL_LENS_PCSAMPLING ? sampled : timedOnly);
        return ok('checksum=1\n');
      },
    } as unknown as Toolchain;
    const t = await timeNative(
      program,
      { kernel: BASIC, kernels: [BASIC, PRAGMA2] },
      { ...options, toolchain, stallSampling: true, gpuTime: false },
    );
    assert.equal(t.status, 'ok', t.message ?? '');
    assert.deepEqual(periods, [String(PC_SAMPLING_PERIOD), undefined], '24 launches a run past the warm-up: a second run, not sampled');
    assert.ok([...t.groups.values()].every(g => g.durationSource === 'kernel-record'));
    assert.equal(t.stallProblem, null);
    for (const k of [BASIC, PRAGMA2]) {
      const g = t.groups.get(k)!;
      assert.equal(g.durations.length, 40);
      assert.equal(g.last!.stallSource, 'pc-sampling');
      assert.deepEqual(g.last!.stallShare, kernelStalls(parseTimerRecords(sampled).pcSampling!, k).stallShare);
    }
  });

  test('PC sampling refused: the times stand, the stall reasons are unknown and the reason is given', async () => {
    const refused =
      '{"pcerror":"cuptiPCSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"}\n' +
      sampled
        .split('\n')
        .filter(l => !l.startsWith('{"pc'))
        .join('\n');
    const toolchain = {
      runner: async (_c: string, _a: string[], o?: { env?: Record<string, string> }) => {
        fs.appendFileSync(o!.env!.UNROLL_LENS_TIMER_OUT, o!.env!.UNROLL_LENS_PCSAMPLING ? refused : timedOnly);
        return ok('checksum=1\n');
      },
    } as unknown as Toolchain;
    const t = await timeNative(program, { kernel: BASIC, kernels: [BASIC] }, { ...options, toolchain, stallSampling: true });
    assert.equal(t.status, 'ok');
    assert.equal(t.groups.get(BASIC)!.durations.length, 40);
    assert.equal(t.groups.get(BASIC)!.last!.stallSource, 'none');
    assert.match(t.stallProblem!, /INSUFFICIENT_PRIVILEGES/);
  });

  test('a kernel with a handful of samples gets no mix from them, and the reason says how many', async () => {
    // the recorded run keeping 3 of matmul_basic's PC lines, each with fewer than 30 samples
    let kept = 0;
    const small = (l: string) => (JSON.parse(l) as { n: number[][] }).n.reduce((a, [, c]) => a + c, 0) < 30;
    const few = sampled
      .split('\n')
      .filter(l => !l.startsWith(`{"pc":`) || !l.includes(`"f":"${BASIC}"`) || (small(l) && kept++ < 3))
      .join('\n');
    const toolchain = {
      runner: async (_c: string, _a: string[], o?: { env?: Record<string, string> }) => {
        fs.appendFileSync(o!.env!.UNROLL_LENS_TIMER_OUT, o!.env!.UNROLL_LENS_PCSAMPLING ? few : timedOnly);
        return ok('checksum=1\n');
      },
    } as unknown as Toolchain;
    const t = await timeNative(program, { kernel: BASIC, kernels: [BASIC, PRAGMA2] }, { ...options, toolchain, stallSampling: true });
    const n = kernelSamples(parseTimerRecords(few).pcSampling!, BASIC);
    assert.ok(n > 0 && n < 200);
    assert.equal(t.stallProblem, `too few PC samples for a stall mix (${BASIC}: ${n}; at least 200)`);
    assert.equal(t.groups.get(BASIC)!.last!.stallSource, 'none');
    assert.equal(t.groups.get(PRAGMA2)!.last!.stallSource, 'pc-sampling', 'the other kernel keeps its mix');
  });
});

describe('the measurement cache key', () => {
  test('a timing with PC-sampled stalls is not one without: --stalls off is another entry (ncu and CUPTI alike)', () => {
    const toolchain = { gpus: [{ name: 'H100', driverVersion: '580' }], ncu: { version: '2025.3' } } as unknown as Toolchain;
    const base = { toolchain, args: [], launcher: [], clockControl: 'none' as const, samples: 20, warmup: 2 };
    const prog = path.join(SAMPLES, 'matmul_unroll.cu');
    const key = (o: object) => measurementKeyFor({ ...base, ...o }, prog, 0, [BASIC]);
    assert.notEqual(key({ timer: 'cupti', timerLibrary: '/t/a.so' }), key({ timer: 'cupti', timerLibrary: '/t/a.so', stalls: false }));
    assert.equal(key({ timer: 'cupti', timerLibrary: '/t/a.so' }), key({ timer: 'cupti', timerLibrary: '/t/a.so', stalls: true }));
    assert.notEqual(key({ timer: 'ncu' }), key({ timer: 'ncu', stalls: false }));
  });
});

describe('the fixed gap between the timer and ncu (recorded on an H100, scripts/device/run-timer-overheads.sh)', () => {
  test('ncu gpu__time_duration.sum reads 1.09 µs more than the CUPTI record on an empty kernel and on a 51.5 µs one alike', () => {
    const dir = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'cupti', 'offset');
    const launches = parseTimerRecords(fs.readFileSync(path.join(dir, 'offset-timer-1.jsonl'), 'utf8')).launches;
    const ncu = parseRawPage(fs.readFileSync(path.join(dir, 'offset-ncu-1.csv'), 'utf8')).kernels;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const gaps: number[] = [];
    for (const [name, mangled] of [
      ['empty_kernel', '_Z12empty_kernelv'],
      ['spin_kernel', '_Z11spin_kernelxPi'],
    ]) {
      const cupti = median(launches.filter(l => l.kernel === mangled).map(l => l.durationNs));
      const rows = ncu.filter(k => k.kernelName.startsWith(name));
      assert.equal(rows.length, 30, name);
      const profiled = median(rows.map(k => k.metrics['gpu__time_duration.sum'].value as number));
      const unit = rows[0].metrics['gpu__time_duration.sum'].unit;
      gaps.push(profiled * (unit === 'us' || unit === 'usecond' ? 1000 : 1) - cupti);
    }
    // the same offset whatever the kernel's length: what ncu counts per launch beyond the kernel's own execution
    for (const g of gaps) assert.ok(g > 1000 && g < 1200, `gap ${g} ns`);
    assert.ok(Math.abs(gaps[0] - gaps[1]) < 50);
  });
});
