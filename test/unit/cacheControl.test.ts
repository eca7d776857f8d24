// --cache-control all|none (issue 25, "say what was measured"): passed to every ncu run that times
// or samples, part of the measurement cache's key, stated in the result's conditions and texts;
// refused with --timer cupti where asked for explicitly (the CLI), noted on the result where the
// settings ask for it (the editor). nvcc builds for real; ncu answers with the H100 recordings
// (test/fixtures/gpu/h100/).
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, REPO_ROOT, SAMPLES } from './helpers';
import { main } from '../../src/cli/main';
import { timerOptions } from '../../src/cli/gpuOptions';
import { UsageError } from '../../src/cli/io';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { measurementKeyFor } from '../../src/engine/gpu/measurementCache';
import { unmetConditions } from '../../src/engine/gpu/timer';
import { benchLoop } from '../../src/engine/sweep/bench';
import type { BenchOptions } from '../../src/engine/gpu/options';
import { conditionsText } from '../../src/schema/measurementText';
import { runConfigFromSettings } from '../../src/server/runOptions';
import { DEFAULT_SETTINGS } from '../../src/settings';
import { UnrollFactors } from '../../src/engine/variants/factors';

const H100 = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100');
const rec = (f: string) => fs.readFileSync(path.join(H100, f), 'utf8');
const cliff = path.join(SAMPLES, 'icache_cliff.cu');

async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
  return { code, out, err };
}

describe('--cache-control on the command line', () => {
  test('a bad value, and base clocks or flushed caches asked of --timer cupti, are usage errors naming --timer ncu', async () => {
    const cases: [string[], RegExp][] = [
      [['bench', cliff, '--loop', '72', '--cache-control', 'warm'], /--cache-control takes all or none, not 'warm'/],
      [['sweep', cliff, '--cache-control=flush'], /--cache-control takes all or none, not 'flush'/],
      [
        ['bench', cliff, '--loop', '72', '--timer', 'cupti', '--cache-control', 'all'],
        /--timer cupti runs the program as itself, with its caches as it leaves them: --cache-control all needs ncu\. Use --timer ncu for flushed caches, or leave it out\./,
      ],
      [
        ['sweep', cliff, '--timer=cupti', '--clock-control=base'],
        /--timer cupti runs the program as itself, at the clocks the GPU sets: --clock-control base needs ncu\. Use --timer ncu for base clocks, or leave it out\./,
      ],
      [
        ['sweep', cliff, '--timer', 'cupti', '--clock-control', 'base', '--cache-control', 'all'],
        /at the clocks the GPU sets and with its caches as it leaves them: --clock-control base and --cache-control all need ncu\. Use --timer ncu for base clocks and flushed caches, or leave them out\./,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, message, args.join(' '));
      assert.equal(r.out, '');
    }
  });

  test('what --timer cupti is given with: defaults and none pass, explicit base/all do not; ncu takes every value', () => {
    // the CUPTI timer is the default; the clock and cache defaults are ncu's: not asked for, so nothing it fails to give
    assert.deepEqual(timerOptions({}), { timer: 'cupti', stalls: true, counters: false, clockControl: 'base', cacheControl: 'all' });
    assert.deepEqual(timerOptions({ 'cache-control': 'none' }), {
      timer: 'cupti',
      stalls: true,
      counters: false,
      clockControl: 'base',
      cacheControl: 'none',
    });
    assert.deepEqual(timerOptions({ timer: 'ncu', 'clock-control': 'base', 'cache-control': 'all', stalls: 'off' }), {
      timer: 'ncu',
      stalls: false,
      counters: false,
      clockControl: 'base',
      cacheControl: 'all',
    });
    // --counters: off by default, on when asked; compare counts unless told not to
    assert.equal(timerOptions({ counters: 'on' }).counters, true);
    assert.equal(timerOptions({}, true).counters, true);
    assert.equal(timerOptions({ counters: 'off' }, true).counters, false);
    assert.throws(() => timerOptions({ counters: 'maybe' }), UsageError);
    assert.throws(() => timerOptions({ 'cache-control': 'all' }), /Use --timer ncu for flushed caches/, 'flushed caches asked for: ncu');
    assert.deepEqual(timerOptions({ timer: 'cupti' }), {
      timer: 'cupti',
      stalls: true,
      counters: false,
      clockControl: 'base',
      cacheControl: 'all',
    });
    assert.deepEqual(timerOptions({ timer: 'cupti', 'clock-control': 'none', 'cache-control': 'none' }).timer, 'cupti');
    assert.throws(() => timerOptions({ timer: 'cupti', 'cache-control': 'all' }), UsageError);
    assert.throws(() => timerOptions({ timer: 'cupti', 'clock-control': 'base' }), UsageError);
  });

  test('the rule, for every caller: only what was asked counts', () => {
    assert.deepEqual(unmetConditions({ timer: 'cupti', clockControl: 'base', cacheControl: 'all' }), ['base-clocks', 'flushed-caches']);
    assert.deepEqual(unmetConditions({ timer: 'cupti', clockControl: 'none', cacheControl: 'all' }), ['flushed-caches']);
    assert.deepEqual(unmetConditions({ timer: 'cupti' }), []);
    assert.deepEqual(unmetConditions({ timer: 'ncu', clockControl: 'base', cacheControl: 'all' }), []);
    assert.deepEqual(unmetConditions({ clockControl: 'base', cacheControl: 'all' }), [], 'ncu by default');
  });
});

describe('unrollLens.profile.cacheControl in the editor', () => {
  test("the setting reaches the run options; flushed (ncu's default) is its default", () => {
    assert.equal(DEFAULT_SETTINGS.profile.cacheControl, 'all');
    const config = (p: typeof DEFAULT_SETTINGS.profile) => runConfigFromSettings(p, { cacheDir: '/c', gpusHere: 1 }).config;
    assert.equal(config(DEFAULT_SETTINGS.profile).cacheControl, 'all');
    assert.equal(config({ ...DEFAULT_SETTINGS.profile, cacheControl: 'none' }).cacheControl, 'none');
    // unrollLens.profile.counters: off by default (one more ncu run per variant), on when set
    assert.equal(config(DEFAULT_SETTINGS.profile).counters, false);
    assert.equal(config({ ...DEFAULT_SETTINGS.profile, counters: 'on' }).counters, true);
  });

  test('timer cupti (the default) with the default base clocks and flushed caches: the result says what it had, not what was set', () => {
    const o = runConfigFromSettings(DEFAULT_SETTINGS.profile, { cacheDir: '/c', gpusHere: 1 }).config;
    assert.deepEqual([o.timer, o.clockControl, o.cacheControl], ['cupti', 'base', 'all']);
  });
});

describe('the conditions in words', () => {
  test('flushed and warm caches, under ncu and the CUPTI timer', () => {
    assert.equal(
      conditionsText({ tool: 'ncu', clocks: 'base', caches: 'flushed' }, 20),
      'ncu, 20 samples; clocks locked to base, caches flushed before each launch',
    );
    assert.equal(
      conditionsText({ tool: 'ncu', clocks: 'as-is', caches: 'warm' }, 20),
      'ncu, 20 samples; clocks not locked, caches not flushed between launches (warm)',
    );
    assert.equal(
      conditionsText({ tool: 'cupti', clocks: 'as-is', caches: 'warm' }, 20),
      'CUPTI timer, program run as itself, 20 samples; clocks not locked, caches warm',
    );
    assert.equal(conditionsText(undefined, 20, 'none'), 'ncu, 20 samples; clocks not locked, caches flushed before each launch');
  });
});

describe('the measurement cache key', () => {
  const program = path.join(H100, 'matmul_unroll.stdout'); // any file: the key hashes its bytes
  const base = {
    toolchain: { ncu: { version: '2025.3.1' }, gpus: [] } as unknown as Toolchain,
    args: [],
    launcher: [],
    clockControl: 'none' as const,
    samples: 20,
    warmup: 2,
  };
  const key = (over: object, sourceText?: string) => measurementKeyFor({ ...base, ...over }, program, null, ['k'], sourceText);

  test('flushed and warm ncu timings are two entries; a flushed one keeps the key it had before the option', () => {
    assert.notEqual(key({ cacheControl: 'all' }), key({ cacheControl: 'none' }));
    assert.equal(key({ cacheControl: 'all' }), key({}), 'entries measured before --cache-control existed were flushed: they still answer');
    assert.equal(key({ cacheControl: 'none' }), key({ cacheControl: 'none' }));
  });

  test('per-line stalls (always ncu) too; the CUPTI timer, which never flushes, has one entry', () => {
    assert.notEqual(key({ cacheControl: 'all' }, 'src'), key({ cacheControl: 'none' }, 'src'));
    assert.notEqual(key({ timer: 'cupti', cacheControl: 'all' }, 'src'), key({ timer: 'cupti', cacheControl: 'none' }, 'src'));
    const lib = { timer: 'cupti', timerLibrary: '/c/timer/aaa/lib.so' };
    assert.equal(key({ ...lib, cacheControl: 'all' }), key({ ...lib, cacheControl: 'none' }));
  });
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

let real: Toolchain | null = null;
let skip: string | false = false;
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cachectl-'));
const FAKE_NCU = '/fake/bin/ncu';
before(async () => {
  try {
    real = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

/**
 * ncu as the H100 answered: the program's output, ncu's own lines and (--csv, no --export) the raw
 * page; a per-line stall run fails (this file checks its command line, not its samples).
 */
const fakeNcu: ProcessRunner = async (_cmd, args) => {
  if (args.includes('SourceCounters')) return ok({ exitCode: 1, stdout: '==ERROR== not recorded here\n' });
  const page = args.includes('--csv') && !args.includes('--export') ? rec('matmul_basic.raw.csv') : '';
  return ok({ stdout: `${rec('matmul_unroll.stdout')}${rec('matmul_basic.ncu-stdout.txt')}\n${page}` });
};

/** A bench of matmul_basic's loop (as written and ×4) under the fake ncu; nvcc and the disassemblers for real. */
async function bench(over: Partial<BenchOptions>) {
  const file = path.join(SAMPLES, 'matmul_unroll.cu');
  const text = fs.readFileSync(file, 'utf8');
  const analysis = await analyze(text, file);
  const line = analysis.kernels.find(k => k.name === 'matmul_basic')!.loops[0].line;
  const calls: string[][] = [];
  const runner: ProcessRunner = async (cmd, args, o) => {
    if ([real!.nvcc.path, real!.nvdisasm?.path, real!.cuobjdump?.path, real!.cxxfilt?.path].includes(cmd))
      return real!.runner(cmd, args, o);
    calls.push([cmd, ...args]);
    return cmd === FAKE_NCU ? fakeNcu(cmd, args, o) : ok({ stdout: rec('matmul_unroll.stdout') });
  };
  const r = await benchLoop(file, text, analysis, {
    toolchain: { ...real!, runner, ncu: { name: 'ncu', path: FAKE_NCU, version: '2025.3.1', source: 'PATH' }, gpus: [] },
    arch: 'sm_90',
    flags: flagsFromSettings({}, SAMPLES),
    cacheDir: path.join(CACHE, 'builds'),
    loops: [line],
    factors: UnrollFactors.of([4]),
    args: ['--only', 'matmul_basic', '--reps', '25'],
    samples: 20,
    warmup: 2,
    clockControl: 'none',
    timeoutMs: 60_000,
    launcher: [],
    profilesPerGpu: 1,
    measurementCacheDir: path.join(CACHE, 'measurements'),
    ...over,
  });
  const ncuRuns = calls.filter(c => c[0] === FAKE_NCU && c.includes('--metrics'));
  const valueOf = (c: string[], flag: string) => c[c.indexOf(flag) + 1];
  return { r, ncuRuns, calls, valueOf };
}

describe('a bench with --cache-control', () => {
  test('ncu is told, the result says flushed or warm, and a flushed measurement never answers a warm request', async t => {
    if (skip) return t.skip(skip);
    const flushed = await bench({});
    assert.ok(flushed.ncuRuns.length > 0);
    for (const c of flushed.ncuRuns) assert.equal(flushed.valueOf(c, '--cache-control'), 'all', "ncu's default, said");
    assert.deepEqual(flushed.r.measurement, { tool: 'ncu', clocks: 'as-is', caches: 'flushed' });
    assert.match(flushed.r.bestBasis!, /\(ncu, 20 samples; clocks not locked, caches flushed before each launch\)$/);
    assert.ok(flushed.r.notes.some(n => /clocks not locked \(--clock-control none\), caches flushed before each launch$/.test(n)));
    assert.ok(flushed.r.variants.every(v => v.status === 'ok' && !v.cached));

    const warm = await bench({ cacheControl: 'none' });
    assert.ok(warm.ncuRuns.length > 0, 'measured again: the flushed entries are not a warm measurement');
    for (const c of warm.ncuRuns) assert.equal(warm.valueOf(c, '--cache-control'), 'none');
    assert.ok(warm.r.variants.every(v => v.status === 'ok' && !v.cached));
    assert.deepEqual(warm.r.measurement, { tool: 'ncu', clocks: 'as-is', caches: 'warm' });
    assert.match(warm.r.bestBasis!, /\(ncu, 20 samples; clocks not locked, caches not flushed between launches \(warm\)\)$/);
    assert.ok(warm.r.notes.some(n => /caches not flushed between launches \(--cache-control none\)$/.test(n)));

    // each is its own entry: both come back from the cache now, with no ncu run
    for (const cacheControl of ['all', 'none'] as const) {
      const again = await bench({ cacheControl });
      assert.equal(again.ncuRuns.length, 0, cacheControl);
      assert.ok(again.r.variants.every(v => v.cached));
      assert.equal(again.r.measurement!.caches, cacheControl === 'all' ? 'flushed' : 'warm');
    }
  });

  test('the per-line stall run gets the same --cache-control', async t => {
    if (skip) return t.skip(skip);
    const { calls, valueOf, r } = await bench({ cacheControl: 'none', sourceStalls: true, measurementCacheDir: null });
    const stalls = calls.find(c => c[0] === FAKE_NCU && c.includes('SourceCounters'))!;
    assert.equal(valueOf(stalls, '--cache-control'), 'none');
    assert.equal(valueOf(stalls, '--clock-control'), 'none');
    assert.ok(r.lineStallsProblem, 'the fake run failed: reported, not thrown');
  });
});
