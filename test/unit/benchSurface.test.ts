// bench's user-facing surface for issue 11: the --json timing and identical/cached fields, the
// table's markers and footer, the progress lines, and the --gpus/--shared-dir/--fresh options.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'os';
import * as path from 'path';
import { benchJson } from '../../src/engine/sweep/bench';
import type { SweepProgress } from '../../src/schema/progress';
import { benchCommand, renderBench, renderTiming } from '../../src/cli/bench';
import { benchLocations, gpusOption, gpusOptionSyntax } from '../../src/cli/gpuOptions';
import { BenchProgressWriter, benchProgressLine, formatSeconds } from '../../src/cli/progress';
import { UsageError } from '../../src/cli/io';
import { benchWorkMessage, benchWorkPercent } from '../../src/server/bench';
import { gpusFromSetting } from '../../src/server/runOptions';
import { benchMarkdown } from '../../src/engine/report/benchText';
import { BENCH_TIMING as TIMING, benchId, benchResult as report, benchRow as run } from './benchFixture';

/** A step of a bench (the sweep's progress): `variant` by its bench label. */
function progress(over: Partial<Omit<SweepProgress, 'variant'>> & { variant?: string | null } = {}): SweepProgress {
  const { variant = '4', ...rest } = over;
  return {
    variant: variant === null ? null : benchId(variant),
    phase: 'time',
    gpu: 1,
    samples: 12,
    samplesWanted: 20,
    done: 3,
    total: 8,
    elapsedS: 14.2,
    etaS: 19.6,
    message: '',
    ...rest,
  };
}

describe('bench --json: timing, identicalTo, cached', () => {
  test('every RunTiming field, and per variant identicalTo and cached', () => {
    const j = benchJson(report());
    assert.deepEqual(j.timing, TIMING);
    assert.notEqual(j.timing.gpus, TIMING.gpus, 'a copy');
    assert.deepEqual(
      j.variants.map(v => [v.label, v.identicalTo, v.cached]),
      [
        ['as-written', null, false],
        ['4', 'as-written', false],
        ['8', null, true],
      ],
    );
    assert.deepEqual(JSON.parse(JSON.stringify(j)).timing.gpus, [0, 1]);
  });

  test('the default device is gpus [null]; instantiations carry the same two fields', () => {
    const timed = (kernel: string, blockSize: string | null) => ({
      kernel,
      blockSize,
      ...{ kernelInstructions: 100, registers: 32, samples: 20, medianMs: 0.05, q1Ms: 0.0495, q3Ms: 0.0505, iqrMs: 0.001, cv: 0.01 },
      ...{ speedup: 1, withinNoise: true, stallShare: null, achievedOccupancy: 70, executedInstructions: 1000 },
    });
    const instantiations = [timed('a', null), timed('b', '128')];
    const v = [run('as-written', { instantiations }), run('2', { same: 'as-written', cached: true, instantiations })];
    const j = benchJson(report({ variants: v, timing: { ...TIMING, gpus: [null] } }));
    assert.deepEqual(j.timing.gpus, [null]);
    assert.deepEqual(
      j.instantiations!.map(x => x.variants.map(r => [r.identicalTo, r.cached])),
      [
        [
          [null, false],
          ['as-written', true],
        ],
        [
          [null, false],
          ['as-written', true],
        ],
      ],
    );
  });
});

describe('bench table', () => {
  test('= <label> for identical code, * for a cached measurement, with their legends', () => {
    const text = renderBench(report());
    const rows = text.split('\n');
    assert.match(rows[1], /^variant {6}same as {6}status/);
    assert.match(
      rows.find(l => l.startsWith('4 '))!,
      /^4 {12}= as-written ok {5}/,
    );
    assert.match(
      rows.find(l => l.startsWith('8 '))!,
      / 20\* /,
    );
    assert.match(text, /= <label>: same machine code as that variant, measured once/);
    assert.match(text, /\* = measurement reused from an earlier run/);
    const plain = renderBench(report({ variants: [run('as-written')] }));
    assert.doesNotMatch(plain, /same machine code|reused/);
  });

  test('the header says what timed the kernels and under which conditions', () => {
    const cupti = report({ measurement: { tool: 'cupti', clocks: 'as-is', caches: 'warm' }, clockControl: 'none' });
    assert.match(renderBench(cupti).split('\n')[0], /· CUPTI timer, program run as itself, 20 samples; clocks not locked, caches warm ·/);
    assert.match(benchMarkdown(cupti), /\(CUPTI timer, program run as itself, 20 samples; clocks not locked, caches warm\)/);
    const ncu = report({ measurement: { tool: 'ncu', clocks: 'base', caches: 'flushed' } });
    assert.match(renderBench(ncu).split('\n')[0], /· ncu, 20 samples; clocks locked to base, caches flushed before each launch ·/);
    // a result saved before the conditions were kept: ncu's, with the clocks it recorded
    const old = report({ measurement: undefined, clockControl: 'none' });
    assert.match(renderBench(old).split('\n')[0], /· ncu, 20 samples; clocks not locked, caches flushed before each launch ·/);
  });

  test('the timing footer: wall, compile, check, profile, GPU idle, GPU runs, GPUs', () => {
    assert.equal(
      renderTiming(TIMING),
      '\nrun: 42.3 s wall · compile 1 min 2 s · check 3.2 s · profile 30.0 s · GPU idle 4.5 s · 9 GPU runs · GPUs 0,1\n',
    );
    assert.match(renderTiming({ ...TIMING, gpus: [null], gpuRuns: 1 }), /· 1 GPU run · default GPU\n$/);
    assert.match(renderTiming({ ...TIMING, gpus: [2] }), /· GPU 2\n$/);
  });
});

describe('bench progress', () => {
  test('one line: [done/total] variant · phase · GPU · elapsed · estimate', () => {
    assert.equal(benchProgressLine(progress()), '[3/8] 4 · time 12/20 samples · GPU 1 · 14 s elapsed · ~20 s left');
    assert.equal(
      benchProgressLine(progress({ phase: 'build', gpu: null, etaS: null, elapsedS: 125 })),
      '[3/8] 4 · build · 2 min 5 s elapsed',
    );
    assert.equal(
      benchProgressLine(progress({ variant: null, phase: 'source-stalls', gpu: null, done: 8 })),
      '[8/8] · source-line stalls · 14 s elapsed · ~20 s left',
    );
    assert.equal(formatSeconds(3720), '1 h 2 min');
    assert.equal(formatSeconds(-1), '0 s');
  });

  test('not a terminal: one line per phase change of a variant, never per sample', () => {
    const out: string[] = [];
    const w = new BenchProgressWriter(s => out.push(s), false);
    w.update(progress({ phase: 'build', variant: '4', gpu: null, etaS: null }));
    w.update(progress({ phase: 'time', samples: 0 }));
    w.update(progress({ phase: 'time', samples: 5 }));
    w.update(progress({ phase: 'check', variant: '8', gpu: 0 }));
    w.update(progress({ phase: 'time', samples: 12 }));
    w.update(progress({ phase: 'done', samples: 20, done: 4 }));
    w.done();
    assert.deepEqual(out, [
      'bench: [3/8] 4 · build · 14 s elapsed\n',
      'bench: [3/8] 4 · time 0/20 samples · GPU 1 · 14 s elapsed · ~20 s left\n',
      'bench: [3/8] 8 · check · GPU 0 · 14 s elapsed · ~20 s left\n',
      'bench: [4/8] 4 · done · GPU 1 · 14 s elapsed · ~20 s left\n',
    ]);
  });

  test('a terminal: one line redrawn (samples at most every 50 ms, phase changes at once), cleared at the end', () => {
    const out: string[] = [];
    let now = 1000;
    const w = new BenchProgressWriter(
      s => out.push(s),
      true,
      () => now,
      40,
    );
    w.update(progress({ samples: 1 }));
    now += 10;
    w.update(progress({ samples: 2 }));
    now += 60;
    w.update(progress({ samples: 3 }));
    now += 1;
    w.update(progress({ phase: 'stalls' }));
    w.done();
    w.done();
    assert.equal(out.length, 4);
    assert.ok(out.slice(0, 3).every(s => s.startsWith('\rbench: [3/8] 4 · ') && s.endsWith('\x1b[K')));
    assert.match(out[0], /time 1\/20/);
    assert.match(out[1], /time 3\/20/);
    assert.match(out[2], /stalls/);
    assert.ok(out[0].length <= 1 + 40 + 3, 'cut to the width');
    assert.ok(out[0].includes('…'));
    assert.equal(out[3], '\r\x1b[K');
  });
});

describe('bench --gpus, --shared-dir, --fresh, --quiet', () => {
  test('--gpus: all, a list, checked against the GPUs seen; bad forms are usage errors', () => {
    assert.deepEqual(gpusOption(undefined, 4), []);
    assert.deepEqual(gpusOption('all', 2), [0, 1]);
    assert.deepEqual(gpusOption('1,0', 2), [1, 0]);
    assert.deepEqual(gpusOption('5', 0), [5], 'no GPUs seen here (a launcher): not checked');
    assert.throws(
      () => gpusOption('2', 2),
      (e: unknown) => e instanceof UsageError && /--gpus: there is no GPU 2/.test(e.message),
    );
    assert.throws(
      () => gpusOptionSyntax('0,0'),
      (e: unknown) => e instanceof UsageError && /--gpus: GPU 0 is listed twice/.test(e.message),
    );
    assert.throws(
      () => gpusOptionSyntax('x'),
      (e: unknown) => e instanceof UsageError && /--gpus: 'x' is not a CUDA device index/.test(e.message),
    );
    assert.throws(() => gpusOptionSyntax(''), UsageError);
    assert.doesNotThrow(() => gpusOptionSyntax('7'));
  });

  test('--shared-dir holds builds, runs and measurements; --fresh turns the measurement cache off', () => {
    const cache = path.join(os.homedir(), '.cache', 'unroll-lens', 'builds');
    assert.deepEqual(benchLocations({ sharedDir: '/scratch/ul', launcher: ['srun'], fresh: false }, cache), {
      cacheDir: path.resolve('/scratch/ul/builds'),
      runDir: path.resolve('/scratch/ul/runs'),
      measurementCacheDir: path.resolve('/scratch/ul/measurements'),
    });
    const local = benchLocations({ sharedDir: undefined, launcher: [], fresh: true }, cache);
    assert.deepEqual(local, { cacheDir: cache, runDir: os.tmpdir(), measurementCacheDir: null });
    assert.throws(() => benchLocations({ sharedDir: ' ', launcher: [], fresh: false }, cache), UsageError);
  });

  test('the help lists the new options with their defaults', () => {
    const help = benchCommand.help();
    assert.match(help, /--gpus all\|0,1,…\s+GPUs to spread variants over/);
    assert.match(help, /\(default: the default\s+device\)/);
    assert.match(help, /--shared-dir DIR\s+folder every GPU node sees/);
    assert.match(help, /--fresh\s+measure every variant on the GPU/);
    assert.match(help, /--quiet\s+no progress on stderr/);
  });
});

describe('editor: bench progress, GPUs, the panel and the hover', () => {
  test('work-done message and percentage', () => {
    assert.equal(benchWorkMessage(progress({ gpu: null })), '4 · time 12/20 · ~20 s left');
    assert.equal(benchWorkMessage(progress()), '4 · time 12/20 · GPU 1 · ~20 s left');
    assert.equal(benchWorkMessage(progress({ phase: 'cached', etaS: null, gpu: null })), '4 · cached');
    assert.equal(benchWorkMessage(progress({ variant: null, phase: 'source-stalls', gpu: null, etaS: null })), 'source-line stalls');
    assert.equal(benchWorkPercent({ done: 3, total: 8 }), 38);
    assert.equal(benchWorkPercent({ done: 9, total: 8 }), 100);
    assert.equal(benchWorkPercent({ done: 0, total: 0 }), 0);
  });

  test('unrollLens.profile.gpus: checked against the GPUs here, not with a launcher; errors name the setting', () => {
    assert.deepEqual(gpusFromSetting('all', 2, []), [0, 1]);
    assert.deepEqual(gpusFromSetting('', 2, []), []);
    assert.deepEqual(gpusFromSetting('3', 1, ['srun']), [3]);
    assert.throws(() => gpusFromSetting('3', 1, []), /^Error: unrollLens\.profile\.gpus: there is no GPU 3/);
  });

  test('the hover table marks identical and cached rows and ends with the timing', () => {
    const md = benchMarkdown(report());
    assert.match(md, /\| 4 \| ok \(same code as as-written\) \|/);
    assert.match(md, /\| 8 \| ok \(cached\) \|/);
    assert.match(md, /_run: 42\.3 s wall · .* · GPUs 0,1_$/);
  });
});
