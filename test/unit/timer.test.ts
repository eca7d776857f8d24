// The timer as a value (engine/gpu/timer.ts): chosen once from the run options, each of its two
// implementations with its own facts, which the runner, the measurement cache, readiness, the
// result's conditions and the tool checks ask instead of testing the timer's name.
import { strict as assert } from 'assert';
import { describe, test } from 'node:test';
import { timerFor, unmetConditions } from '../../src/engine/gpu/timer';
import { PC_SAMPLING_PERIOD } from '../../src/engine/gpu/cupti/pcStalls';
import { PROFILE_METRICS, STALL_METRICS, TIME_ONLY_METRICS } from '../../src/engine/gpu/stages/time';

const RUN = { samples: 20, warmup: 2, clockControl: 'base' as const, cacheControl: 'all' as const };

describe('timerFor: the timer the run options name', () => {
  test('ncu unless cupti is named (the engine default; the settings default to cupti)', () => {
    assert.equal(timerFor({}).name, 'ncu');
    assert.equal(timerFor({ timer: 'ncu' }).name, 'ncu');
    assert.equal(timerFor({ timer: 'cupti' }).name, 'cupti');
    // one value per timer: asking twice gives the same one
    assert.equal(timerFor({ timer: 'cupti' }), timerFor({ timer: 'cupti' }));
  });

  test("ncu's facts: each launch under ncu, counters read, clocks and caches its options, processes share a GPU", () => {
    const t = timerFor({ timer: 'ncu' });
    assert.deepEqual(
      [t.needsNcu, t.needsCounterPermission, t.locksClocks, t.flushesCaches, t.sharesGpu, t.loadsTimerLibrary, t.samplesSourceLines],
      [true, true, true, true, true, false, false],
    );
  });

  test("the CUPTI timer's facts: the program as itself, no ncu, no counters, its library, PC samples per line", () => {
    const t = timerFor({ timer: 'cupti' });
    assert.deepEqual(
      [t.needsNcu, t.needsCounterPermission, t.locksClocks, t.flushesCaches, t.sharesGpu, t.loadsTimerLibrary, t.samplesSourceLines],
      [false, false, false, false, false, true, true],
    );
  });
});

describe('what each timer records and says', () => {
  test('conditions and clocks: ncu as asked, the CUPTI timer as the GPU and the program leave them', () => {
    const ncu = timerFor({ timer: 'ncu' });
    assert.deepEqual(ncu.conditions(RUN), { tool: 'ncu', clocks: 'base', caches: 'flushed' });
    assert.deepEqual(ncu.conditions({ ...RUN, clockControl: 'none', cacheControl: 'none' }), {
      tool: 'ncu',
      clocks: 'as-is',
      caches: 'warm',
    });
    assert.deepEqual(ncu.conditions({ ...RUN, cacheControl: undefined }).caches, 'flushed', "ncu's default flushes");
    assert.equal(ncu.clockControl(RUN), 'base');
    assert.equal(ncu.clockControl({ ...RUN, clockControl: 'none' }), 'none');
    const cupti = timerFor({ timer: 'cupti' });
    // whatever the ncu options say
    assert.deepEqual(cupti.conditions(RUN), { tool: 'cupti', clocks: 'as-is', caches: 'warm' });
    assert.equal(cupti.clockControl(RUN), 'none');
  });

  test('the timing note names the tool, launches, clocks, caches and stalls', () => {
    assert.equal(
      timerFor({ timer: 'ncu' }).note({ ...RUN, maxSamples: 60 }, 'NVIDIA H200'),
      'timed under ncu on NVIDIA H200, 20 launches per variant (the leading ones up to 60) after 2 warm-up, clocks locked to base, caches flushed before each launch',
    );
    assert.equal(
      timerFor({ timer: 'ncu' }).note({ ...RUN, clockControl: 'none', cacheControl: 'none' }, null),
      'timed under ncu on the GPU, 20 launches per variant after 2 warm-up, clocks not locked (--clock-control none), caches not flushed between launches (--cache-control none)',
    );
    assert.equal(
      timerFor({ timer: 'cupti' }).note(RUN, 'NVIDIA H200'),
      "timed by the CUPTI kernel timer in the program's own runs on NVIDIA H200, 20 launches per variant after 2 warm-up: " +
        "each launch's gpu__time_duration (ncu's counter) read by CUPTI's range profiler, clocks as the GPU sets them, " +
        `caches warm between launches, stall reasons from CUPTI PC sampling (every 2^${PC_SAMPLING_PERIOD} cycles, in a run of their own before the timed runs)`,
    );
    assert.match(timerFor({ timer: 'cupti' }).note({ ...RUN, stalls: false }, null), /no stall reasons \(--stalls off\)$/);
  });

  test("cache methods: the keys earlier runs stored under (a cache answer stays found), never one timer's for the other's", () => {
    const ncu = timerFor({ timer: 'ncu' });
    assert.equal(ncu.cacheMethod({}), `combined:${PROFILE_METRICS.join(',')}`);
    assert.equal(ncu.cacheMethod({ passes: 'split' }), `split:${['gpu__time_duration.sum', ...STALL_METRICS].join(',')}`);
    assert.equal(ncu.cacheMethod({ stalls: false }), `combined:${TIME_ONLY_METRICS.join(',')}`);
    // v4: durations are gpu__time_duration per launch (issue 42); entries of v3 are measured again
    const cupti = timerFor({ timer: 'cupti' });
    assert.equal(cupti.cacheMethod({ timerLibrary: '/c/lib.so' }), `cupti-timer:v4:/c/lib.so:pc-sampling-2^${PC_SAMPLING_PERIOD}`);
    assert.equal(cupti.cacheMethod({ stalls: false }), 'cupti-timer:v4::times-only');
    assert.equal(
      cupti.cacheMethod({ counters: true, stalls: false }),
      `cupti-timer:v4::times-only+ncu-counters:${PROFILE_METRICS.join(',')}`,
    );
  });

  test('unmet conditions come from the facts: only what the timer cannot give, and only when asked', () => {
    assert.deepEqual(unmetConditions({ timer: 'cupti', clockControl: 'base' }), ['base-clocks']);
    assert.deepEqual(unmetConditions({ timer: 'cupti', cacheControl: 'none', clockControl: 'none' }), []);
    assert.deepEqual(unmetConditions({ timer: 'ncu', clockControl: 'base', cacheControl: 'all' }), []);
  });
});
