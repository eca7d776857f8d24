// `unroll-lens compare` (issue 26): the names kernels are written with, and the ladder's rows.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, REPO_ROOT, SAMPLES } from './helpers';
import { sourceNameOf } from '../../src/schema/kernelNames';
import { compareKernels } from '../../src/engine/sweep/compare';
import { compareJson, renderComparison } from '../../src/cli/compare';
import { writeResultOutputs } from '../../src/cli/resultOutputs';
import { COMMANDS, main } from '../../src/cli/main';
import { elementsOption } from '../../src/cli/gpuOptions';
import { UsageError } from '../../src/cli/io';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { FAKE_NCU, ownTimes, replayCompare } from './compareReplay';
import { cuptiPaths, toolkitRoot } from '../../src/engine/gpu/cupti/timerLibrary';

describe('--elements', () => {
  test('a positive whole number, or not named', () => {
    assert.equal(elementsOption(undefined), undefined);
    assert.equal(elementsOption('134217728'), 134217728);
    for (const bad of ['0', '-4', '1.5', '', 'n', '1e30']) assert.throws(() => elementsOption(bad), UsageError, bad);
  });
});

describe('the name a kernel is written with, from its demangled name', () => {
  test('plain, template, namespaced, operator-free', () => {
    assert.equal(sourceNameOf('reduce_unroll2(int const*, int*, unsigned int)'), 'reduce_unroll2');
    assert.equal(sourceNameOf('void reduce_complete<256u>(int const*, int*, unsigned int)'), 'reduce_complete');
    assert.equal(sourceNameOf('void ns::inner::k<(int)4, float>(float*)'), 'k');
    assert.equal(sourceNameOf('void k<Tile<4, 8>, 2>(Tile<4, 8>*)'), 'k');
    assert.equal(sourceNameOf('_Z8gj_rows1PKfPf'), '_Z8gj_rows1PKfPf');
  });
});

// The ladder of cuda-samples/reduce_unroll.cu (--size 2^27 --reps 20) as `compare` timed it on an H100
// (scripts/device/run-compare.sh): the timer's records of its two program runs replayed through the
// pipeline, with nvcc and the disassemblers for real. The rows must be those the H100 run printed.
const COMPARE = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'compare');
const REDUCE = ['reduce_interleaved', 'reduce_unroll2', 'reduce_unroll4', 'reduce_unroll8', 'reduce_unroll8_warptail', 'reduce_complete'];
type CompareJson = ReturnType<typeof compareJson>;

describe('compare: the reduction ladder, replayed from an H100 run', () => {
  let real: Toolchain | null = null;
  before(async () => {
    try {
      real = await detectToolchain({ probeGpu: false });
    } catch (e) {
      if (process.env.CI) throw e;
    }
  });

  test('one row per kernel in the order named, the medians and speedups the H100 run printed, no ncu', async t => {
    if (!real) return t.skip('no nvcc');
    if (!cuptiPaths(await toolkitRoot(real))) return t.skip('no CUPTI in the toolkit');
    const file = path.join(SAMPLES, 'reduce_unroll.cu');
    const text = fs.readFileSync(file, 'utf8');
    const analysis = await analyze(text, file);
    const recorded = JSON.parse(fs.readFileSync(path.join(COMPARE, 'reduce.cupti.json'), 'utf8')) as CompareJson;
    const stdout = fs.readFileSync(path.join(COMPARE, 'reduce.plain.stdout'), 'utf8');
    const replay = replayCompare(
      real,
      stdout,
      [0, 1].map(i => path.join(COMPARE, `reduce_unroll-as-written-run-${i}.timer.jsonl`)),
    );
    const c = await compareKernels(file, text, analysis, {
      toolchain: { ...real, runner: replay.runner, ncu: null, gpus: [] },
      arch: 'sm_90',
      flags: flagsFromSettings({}, SAMPLES),
      cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ul-compare-')),
      kernels: REDUCE,
      args: ['--reps', '20', '--size', '134217728'],
      samples: 20,
      warmup: 2,
      clockControl: 'none',
      timer: 'cupti',
      timeoutMs: 60_000,
      launcher: [],
      measurementCacheDir: null,
    });
    assert.equal(replay.timerRuns(), 2, 'two program runs: 20 launches of each kernel a run, 2 of them warm-up');
    assert.deepEqual([replay.ncuRuns, replay.others], [[], []]);
    const j = compareJson(c);
    assert.deepEqual(
      j.kernels.map(k => [k.name, k.medianMs, k.samples]),
      recorded.kernels.map(k => [k.name, k.medianMs, k.samples]),
    );
    assert.deepEqual(
      j.kernels.map(k => k.name),
      REDUCE,
    );
    assert.equal(j.baseline, '_Z18reduce_interleavedPKiPij');
    // where a row click goes: each kernel's definition line in the file (the template's for reduce_complete<256>)
    assert.deepEqual(c.result.compareLines, {
      _Z18reduce_interleavedPKiPij: 51,
      _Z14reduce_unroll2PKiPij: 70,
      _Z14reduce_unroll4PKiPij: 94,
      _Z14reduce_unroll8PKiPij: 119,
      _Z23reduce_unroll8_warptailPKiPij: 157,
      _Z15reduce_completeILj256EEvPKiPij: 206,
    });
    assert.equal(j.kernels[0].speedup, 1);
    // the ladder's story: ×2 halves the time, ×8 and beyond stop gaining (memory bound)
    const s = j.kernels.map(k => Number(k.speedup!.toFixed(2)));
    assert.deepEqual(s, [1, 1.9, 3.22, 3.49, 3.49, 3.49]);
    assert.deepEqual(j.measurement, { tool: 'cupti', clocks: 'as-is', caches: 'warm', duration: 'kernel-record' }); // recorded before the range profiler
    // spill bytes from ptxas -v of the file as written (nvcc run here): none on this ladder, known (0), not unknown
    assert.deepEqual(
      j.kernels.map(k => [k.spillStores, k.spillLoads]),
      REDUCE.map(() => [0, 0]),
    );
    // the result carries the ladder (the panel and the exports read it): rows in the order named, the baseline
    assert.equal(c.result.compareBaseline, '_Z18reduce_interleavedPKiPij');
    assert.deepEqual(
      c.result.variants[0].instantiations!.map(x => x.speedup),
      j.kernels.map(k => k.speedup),
    );
    // the results panel's fixture (test/fixtures/sweep/compare/README.md): this replay's result, its path and GPU the recorded run's
    if (process.env.UNROLL_LENS_WRITE_COMPARE_FIXTURE)
      fs.writeFileSync(
        path.join(REPO_ROOT, 'test', 'fixtures', 'sweep', 'compare', 'reduce_unroll.json'),
        JSON.stringify({ ...c.result, file: recorded.file, gpu: recorded.gpu }, null, 2) + '\n',
      );
    assert.match(renderComparison(c), /^reduce_complete +0\.1715 /m);
    // against the program's own cudaEvent medians (all over 100 µs): within 5 %, each a little under
    // (the events hold the launch gap); recorded with the serialized kernel records (native/cupti_timer.c)
    const own = ownTimes(stdout);
    const off = j.kernels.map(k => k.medianMs! / own.get(k.name)! - 1);
    assert.ok(own.get('reduce_complete')! > 0.1 && off.length === 6);
    assert.ok(
      off.every(x => x < 0 && x > -0.05),
      off.join(', '),
    );
  });

  test("--counters (compare counts by default): executed instructions and occupancy from one ncu launch per kernel, the times the CUPTI timer's", async t => {
    if (!real) return t.skip('no nvcc');
    if (!cuptiPaths(await toolkitRoot(real))) return t.skip('no CUPTI in the toolkit');
    const dir = path.join(COMPARE, 'counters');
    const file = path.join(SAMPLES, 'reduce_unroll.cu');
    const text = fs.readFileSync(file, 'utf8');
    const analysis = await analyze(text, file);
    const recorded = JSON.parse(fs.readFileSync(path.join(dir, 'reduce.counters.json'), 'utf8')) as CompareJson;
    const stdout = fs.readFileSync(path.join(COMPARE, 'reduce.plain.stdout'), 'utf8');
    // each kept raw page, by the mangled kernel it profiled
    const pages = fs
      .readdirSync(dir)
      .filter(f => f.endsWith('.raw.csv'))
      .map(f => fs.readFileSync(path.join(dir, f), 'utf8'));
    const replay = replayCompare(
      real,
      stdout,
      [0, 1].map(i => path.join(dir, `reduce_unroll-as-written-run-${i}.timer.jsonl`)),
      pages,
    );
    const ncuRuns = replay.ncuRuns;
    const c = await compareKernels(file, text, analysis, {
      toolchain: { ...real, runner: replay.runner, ncu: FAKE_NCU, gpus: [] },
      arch: 'sm_90',
      flags: flagsFromSettings({}, SAMPLES),
      cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ul-compare-')),
      kernels: REDUCE,
      args: ['--reps', '20', '--size', '134217728'],
      samples: 20,
      warmup: 2,
      clockControl: 'none',
      timer: 'cupti',
      counters: true,
      // the ladder reduces 2^27 ints a launch: instructions per element besides per thread
      elements: 134217728,
      timeoutMs: 60_000,
      launcher: [],
      measurementCacheDir: null,
    });
    const j = compareJson(c);
    // one ncu run per kernel, one launch after the warm-up, caches and clocks left alone
    assert.equal(ncuRuns.length, REDUCE.length);
    for (const a of ncuRuns) {
      assert.equal(a[a.indexOf('--launch-count') + 1], '1');
      assert.equal(a[a.indexOf('--cache-control') + 1], 'none');
      assert.equal(a[a.indexOf('--clock-control') + 1], 'none');
    }
    assert.deepEqual(
      j.kernels.map(k => [k.name, k.medianMs, k.executedInstructions, k.achievedOccupancy]),
      recorded.kernels.map(k => [k.name, k.medianMs, k.executedInstructions, k.achievedOccupancy]),
    );
    // the ladder's story in counters: ×8 with the unrolled warp executes a tenth of the first rung's warp instructions
    assert.deepEqual(
      j.kernels.map(k => k.executedInstructions),
      [440401920, 230686720, 121634816, 69730304, 43450368, 36765696],
    );
    // recorded before the timer read gpu__time_duration: that alone is unknown, and said
    assert.ok(!c.result.notes.some(n => /unknown/.test(n) && !n.startsWith('gpu__time_duration')), c.result.notes.join('\n'));
    // per thread: thread instructions over grid × block. Checked against the warp count: at most 32 lanes
    // a warp instruction, so per thread ≤ warp instructions × 32 ÷ threads (524,288 blocks of 256 for the first rung)
    assert.deepEqual(
      j.kernels.map(k => k.instructionsPerThread),
      recorded.kernels.map(k => k.instructionsPerThread),
    );
    const first = j.kernels[0];
    assert.ok(first.instructionsPerThread! <= (first.executedInstructions! * 32) / (524288 * 256));
    assert.ok(first.instructionsPerThread! > 100 && first.instructionsPerThread! < 106, String(first.instructionsPerThread));
    // per element: all threads' instructions ÷ 2^27 = per thread × threads ÷ elements (the first rung: two threads an element)
    for (const k of j.kernels) assert.ok(k.instructionsPerElement! > 0, k.name);
    const threads = 524288 * 256;
    assert.ok(
      Math.abs(first.instructionsPerElement! - (first.instructionsPerThread! * threads) / 134217728) < 1e-6 * first.instructionsPerElement!,
    );
    assert.ok(j.kernels[5].instructionsPerElement! < first.instructionsPerElement! / 1.4, 'the complete unroll does less work per element');
  });

  test('a name that is no kernel of the file is refused with the kernels it has', async t => {
    if (!real) return t.skip('no nvcc');
    const file = path.join(SAMPLES, 'reduce_unroll.cu');
    const text = fs.readFileSync(file, 'utf8');
    const analysis = await analyze(text, file);
    await assert.rejects(
      compareKernels(file, text, analysis, {
        toolchain: { ...real, ncu: null, gpus: [] },
        arch: 'sm_90',
        flags: flagsFromSettings({}, SAMPLES),
        cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ul-compare-')),
        kernels: ['reduce_unroll2', 'reduce_unroll3'],
        args: [],
        samples: 20,
        warmup: 2,
        clockControl: 'none',
        timer: 'cupti',
        timeoutMs: 60_000,
        launcher: [],
        measurementCacheDir: null,
      }),
      /no kernel named reduce_unroll3 in .*reduce_unroll\.cu; its kernels: .*reduce_unroll2.*reduce_complete/,
    );
  });
});

describe('compare --report, --csv and --save (issue 43: compare had no report)', () => {
  const recorded = () =>
    JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'sweep', 'compare', 'reduce_unroll.json'), 'utf8'));

  test('the report is the panel with the kernel comparison; the CSV has a row per kernel', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-compare-out-'));
    const report = path.join(dir, 'ladder.html');
    const csv = path.join(dir, 'ladder.csv');
    const result = recorded();
    writeResultOutputs(
      result,
      {
        files: [
          { option: 'report', file: report },
          { option: 'csv', file: csv },
        ],
        force: false,
        save: dir,
      },
      { out: () => undefined, err: () => undefined, isTTY: false },
    );
    const html = fs.readFileSync(report, 'utf8');
    assert.match(html, /"origin":"compare"/);
    assert.match(html, /reduce_unroll8_warptail/);
    assert.ok(fs.readFileSync(csv, 'utf8').trim().split('\n').length >= 2);
    assert.equal(fs.readdirSync(path.join(dir, '.unroll-lens', 'results')).length, 1);
  });

  test('an output it may not write is refused before anything is built (exit 65), and the help lists the outputs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-compare-out-'));
    const mine = path.join(dir, 'mine.html');
    fs.writeFileSync(mine, 'not written by Unroll Lens');
    let err = '';
    const code = await main(['compare', path.join(SAMPLES, 'reduce_unroll.cu'), '--kernels', 'reduce_interleaved', '--report', mine], {
      out: () => undefined,
      err: s => (err += s),
      isTTY: false,
    });
    assert.equal(code, 65, err);
    assert.equal(fs.readFileSync(mine, 'utf8'), 'not written by Unroll Lens');
    const help = COMMANDS.find(c => c.name === 'compare')!.help();
    for (const o of ['--csv FILE', '--report FILE', '--save DIR', '--force']) assert.ok(help.includes(o), o);
  });
});
