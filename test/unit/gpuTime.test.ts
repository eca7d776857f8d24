// The CUPTI timer's gpu__time_duration ranges (issue 42): read from a run recorded on an H200
// (test/fixtures/gpu/h200/short-kernels/, scripts/device/short-kernels.sh), matched to the launches,
// and the fallback to the activity records when the range profiler could not run.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from './helpers';
import { parseTimerRecords } from '../../src/engine/profile/native/timerRecords';
import { runDurations } from '../../src/engine/profile/native/gpuTime';

const DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h200', 'short-kernels', 'setup-while-held');
const TIMER = path.join(DIR, 'transpose_ladder-timer');
const stalls = fs.readFileSync(path.join(TIMER, 'transpose_ladder-as-written-run-0.timer.jsonl'), 'utf8');
const timed = fs.readFileSync(path.join(TIMER, 'transpose_ladder-as-written-run-1.timer.jsonl'), 'utf8');
const COPY = '_Z7tl_copyPKfPfi';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
};

describe('gpu__time_duration from the range profiler (recorded on an H200)', () => {
  test('a timing run: one range per launch, named by its kernel, and kernel records without times', () => {
    const r = parseTimerRecords(timed);
    assert.deepEqual(r.errors, []);
    assert.equal(r.launches.length, 200);
    assert.equal(r.gpuTime!.ranges.length, 200);
    assert.equal(r.gpuTime!.end!.ranges, 200);
    assert.equal(r.gpuTime!.end!.dropped, 0);
    // with the range profiler on, CUPTI's kernel records carry no timestamps
    assert.ok(r.launches.every(l => l.durationNs === 0));
    assert.ok(r.gpuTime!.ranges.every(x => x.kernel.startsWith('_Z') && x.ns > 0));
  });

  test('matched to the launches kernel by kernel: the medians compare printed from them', () => {
    const d = runDurations(parseTimerRecords(timed), true);
    assert.ok(!('unusable' in d));
    if ('unusable' in d) return;
    assert.equal(d.source, 'gpu__time_duration');
    const ours = JSON.parse(fs.readFileSync(path.join(DIR, 'transpose_ladder.json'), 'utf8')) as {
      kernels: { kernel: string; medianMs: number }[];
    };
    for (const k of ours.kernels) {
      const mine: number[] = d.launches.filter(l => l.kernel === k.kernel).map(l => l.durationNs);
      assert.equal(mine.length, 25);
      assert.equal(median(mine.slice(2, 22)) / 1e6, k.medianMs, k.kernel);
    }
    // the 3 µs copy: ncu's own tick (32 ns) and no microsecond of record overhead
    assert.ok(median(d.launches.filter(l => l.kernel === COPY).map(l => l.durationNs)) < 3300);
  });

  test('ranges named by no kernel: matched in launch order', () => {
    const r = parseTimerRecords(timed);
    const unnamed = { ...r, gpuTime: { ...r.gpuTime!, ranges: r.gpuTime!.ranges.map(x => ({ ...x, kernel: '' })) } };
    const a = runDurations(r, true);
    const b = runDurations(unnamed, true);
    assert.ok(!('unusable' in a) && !('unusable' in b));
    if ('unusable' in a || 'unusable' in b) return;
    assert.deepEqual(
      b.launches.map(l => l.durationNs),
      a.launches.map(l => l.durationNs),
    );
  });

  test('the stall run (PC sampling, no counters): its activity records, untouched', () => {
    const r = parseTimerRecords(stalls);
    assert.equal(r.gpuTime, null);
    const d = runDurations(r, false);
    assert.ok(!('unusable' in d) && d.source === 'activity-records' && d.problem === null);
    // asked and not read: the activity records stand, and why
    const asked = runDurations(r, true);
    assert.ok(!('unusable' in asked) && asked.source === 'activity-records');
    assert.match(!('unusable' in asked) ? (asked.problem ?? '') : '', /did not read gpu__time_duration/);
  });

  test('counters refused (before any kernel): the activity records stand, with the reason', () => {
    const refused = stalls + '{"gterror":"cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"}\n';
    const d = runDurations(parseTimerRecords(refused), true);
    assert.ok(!('unusable' in d));
    if ('unusable' in d) return;
    assert.equal(d.source, 'activity-records');
    assert.match(d.problem ?? '', /GPU counters could not be read: cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES/);
    assert.ok(d.launches.every(l => l.durationNs > 0));
  });

  test('counters failing part-way (records without times, ranges missing): no durations at all, never zeros', () => {
    const lines = timed.split('\n');
    const cut = lines.filter((l, i) => !(l.startsWith('{"gt"') && i % 2 === 0)).join('\n');
    const d = runDurations(parseTimerRecords(cut), true);
    assert.ok('unusable' in d);
    const failed = runDurations(parseTimerRecords(timed + '{"gterror":"cuptiRangeProfilerDecodeData: CUPTI_ERROR_UNKNOWN"}\n'), true);
    assert.ok('unusable' in failed);
  });
});
