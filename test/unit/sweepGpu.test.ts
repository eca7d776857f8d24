// The GPU runner of a sweep (SASS → program → check → ncu timing per point) against real
// outputs recorded on an H100 (test/fixtures/gpu/h100): nvcc really compiles cubins and
// programs; the program runs, ncu and nvidia-smi are answered from the recordings through a
// replaceable runner, as in bench.test.ts.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, lineOf, REPO_ROOT, SAMPLES } from './helpers';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { parseNvidiaSmiXml } from '../../src/engine/toolchain/gpu';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { runSweep, SweepOptions } from '../../src/engine/sweep/sweep';
import { sweepJson } from '../../src/engine/sweep/json';
import { sweepText } from '../../src/engine/report/sweepText';
import { GpuRunner } from '../../src/engine/sweep/runners/gpu';
import { AS_WRITTEN, AS_WRITTEN_ID, resolveSpace } from '../../src/engine/sweep/space';
import { CodeRegistry } from '../../src/engine/sweep/variant';
import { UnrollFactors } from '../../src/engine/variants/factors';

const REC = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100');
const rec = (f: string) => fs.readFileSync(path.join(REC, f), 'utf8');
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-sweep-gpu-'));
const KERNEL = '_Z19matvec_warp_per_rowPKfS0_Pfii';

let real: Toolchain | null = null;
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

/** Real nvcc/c++filt/disassemblers; recorded answers for the program and for ncu. */
function replay(
  program: (runIndex: number, args: string[], cmd: string) => Partial<ProcessResult>,
  ncu: (args: string[]) => Partial<ProcessResult>,
  delayMs = 0,
) {
  const calls: string[][] = [];
  /** Each call's CUDA_VISIBLE_DEVICES (undefined: the default device), by the index in `calls`. */
  const devices: (string | undefined)[] = [];
  let runs = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const runner: ProcessRunner = async (cmd, args, o) => {
    if (cmd === real!.nvcc.path || cmd === real!.nvdisasm?.path || cmd === real!.cuobjdump?.path || cmd === real!.cxxfilt?.path)
      return real!.runner(cmd, args, o);
    calls.push([cmd, ...args]);
    devices.push(o?.env?.CUDA_VISIBLE_DEVICES);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      // Long enough for another GPU's process to start meanwhile.
      if (delayMs) await new Promise(r => setTimeout(r, delayMs));
      if (cmd === '/fake/ncu' && args.includes('--metrics')) {
        // a profile runs the program too: its recorded answer, inside ncu's own lines, then the
        // raw page ncu prints when no report is exported
        const at = args.findIndex(a => a.startsWith(CACHE));
        const prof = { ...result({ command: cmd, args }), ...underNcu(ncu(args), program(runs++, args.slice(at + 1), args[at])) };
        const ok = !prof.exitCode && !prof.timedOut && !prof.cancelled;
        if (ok && args.includes('--csv') && !args.includes('--export'))
          return { ...prof, stdout: prof.stdout + (ncu(['--import', 'direct']).stdout ?? '') };
        return prof;
      }
      if (cmd === '/fake/ncu') return { ...result({ command: cmd, args }), ...ncu(args) };
      return { ...result({ command: cmd, args }), ...program(runs++, args, cmd) };
    } finally {
      inFlight--;
    }
  };
  return { runner, calls, devices, maxInFlight: () => maxInFlight };
}

/**
 * ncu's answer around a program run: its `==` lines with the run's own output; a program that
 * fails makes ncu print the recorded error line and exit with its code
 * (test/fixtures/ncu/errors/no-kernels-app-fails).
 */
function underNcu(ncu: Partial<ProcessResult>, run: Partial<ProcessResult>): Partial<ProcessResult> {
  if (run.timedOut || run.cancelled) return run;
  const own = (ncu.stdout ?? '')
    .split('\n')
    .filter(l => l.startsWith('=='))
    .join('\n');
  if (run.exitCode) return { ...run, stdout: `${run.stdout ?? ''}==ERROR== The application returned an error code (${run.exitCode}).\n` };
  return { ...ncu, stdout: `${run.stdout ?? ''}${own}\n` };
}

const ncuOk = (args: string[]) =>
  args[0] === '--import' ? { stdout: rec('matvec_warp_per_row.raw.csv') } : { stdout: rec('matvec_warp_per_row.ncu-stdout.txt') };

async function options(runner: ProcessRunner, over: Partial<SweepOptions> = {}): Promise<SweepOptions & { c: number }> {
  const file = path.join(SAMPLES, 'matvec.cu');
  const text = fs.readFileSync(file, 'utf8');
  const c = lineOf(text, 'for (int c = lane; c < cols; c += WARP)');
  const toolchain: Toolchain = {
    ...real!,
    runner,
    ncu: { name: 'ncu', path: '/fake/ncu', version: '2025.3.1', source: 'setting' },
    gpus: parseNvidiaSmiXml(rec('nvidia-smi-q-x.xml')),
  };
  return {
    c,
    file,
    text,
    analysis: await analyze(text, file),
    toolchain,
    arch: 'sm_90',
    flags: flagsFromSettings({}, SAMPLES),
    cacheDir: CACHE,
    kernel: 'matvec_warp_per_row',
    loops: [c],
    factors: UnrollFactors.parse('default,4,full'),
    gpu: {
      args: ['--only', 'matvec_warp_per_row', '--reps', '25'],
      samples: 20,
      warmup: 2,
      clockControl: 'none',
      timeoutMs: 60_000,
      launcher: [],
      // one ncu process per GPU: a program run index names one point
      profilesPerGpu: 1,
    },
    ...over,
  };
}

describe('GPU sweep on recorded H100 outputs (matvec_warp_per_row, loop c: default, 4, full)', () => {
  test('an unchanged re-run: stored outputs checked, stored launches reused, no program or ncu run', async t => {
    if (skip) return t.skip(skip);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-sweep-measure-'));
    const first = replay(() => ({ stdout: rec('matvec.stdout') }), ncuOk);
    const a = await options(first.runner);
    const r1 = await runSweep({ ...a, gpu: { ...a.gpu!, measurementCacheDir: dir } });
    assert.equal(first.calls.filter(x => x[0] === '/fake/ncu' && x.includes('--metrics')).length, 2);
    assert.equal(r1.timing!.gpuRuns, 2);
    const second = replay(
      () => assert.fail('no program may run'),
      () => assert.fail('no ncu may run'),
    );
    const b = await options(second.runner);
    const r2 = await runSweep({ ...b, gpu: { ...b.gpu!, measurementCacheDir: dir } });
    assert.equal(second.calls.length, 0);
    assert.equal(r2.timing!.gpuRuns, 0);
    assert.equal(r2.timing!.profileS, 0);
    assert.equal(sweepJson(r2).timing!.gpuRuns, 0);
    assert.deepEqual(
      r2.variants.map(v => [v.id, v.status, v.medianMs, v.identicalTo]),
      r1.variants.map(v => [v.id, v.status, v.medianMs, v.identicalTo]),
    );
    // other arguments are another measurement
    const third = replay(() => ({ stdout: rec('matvec.stdout') }), ncuOk);
    const c = await options(third.runner);
    await runSweep({ ...c, gpu: { ...c.gpu!, args: ['--only', 'matvec_warp_per_row', '--reps', '30'], measurementCacheDir: dir } });
    assert.equal(third.calls.filter(x => x[0] === '/fake/ncu' && x.includes('--metrics')).length, 2);
  });

  test('one variant with the same code as an earlier one: "1 of 3 variants has … and reuses its timing"', async t => {
    if (skip) return t.skip(skip);
    const { runner } = replay(() => ({ stdout: rec('matvec.stdout') }), ncuOk);
    const o = await options(runner, { factors: UnrollFactors.parse('4,full') });
    const r = await runSweep(o);
    // `full` on a runtime trip count: nvcc unrolls ×4, the same code as unroll 4
    assert.deepEqual(
      r.variants.map(v => [v.id, v.identicalTo]),
      [
        ['as-written', null],
        [`${o.c}=4`, null],
        [`${o.c}=full`, `${o.c}=4`],
      ],
    );
    const note = r.notes.find(n => n.includes('the same machine code as an earlier one'));
    assert.equal(
      note,
      '1 of 3 variants has the same machine code as an earlier one and reuses its timing (nvcc ignored or capped the request, or the change did not matter)',
    );
  });

  test('each distinct program checked and timed once; identical code reuses the timing; speedups and stalls', async t => {
    if (skip) return t.skip(skip);
    const { runner, calls } = replay(() => ({ stdout: rec('matvec.stdout') }), ncuOk);
    const o = await options(runner);
    const r = await runSweep(o);
    const c = o.c;
    assert.equal(r.static, false);
    assert.equal(r.gpu, 'NVIDIA H100 80GB HBM3');
    assert.equal(r.complete, true);
    assert.deepEqual(
      r.variants.map(v => [v.id, v.status, v.samples, v.identicalTo]),
      [
        ['as-written', 'ok', 20, null],
        // nvcc's default for this loop is what the file has: the same program, not run again
        [`${c}=default`, 'ok', 20, 'as-written'],
        [`${c}=4`, 'ok', 20, null],
        // `full` on a runtime trip count: nvcc unrolls ×4, the same code as unroll 4
        [`${c}=full`, 'ok', 20, `${c}=4`],
      ],
    );
    // two programs ran, each once, under ncu: its output there is its check
    const plain = calls.filter(x => x[0] !== '/fake/ncu');
    const profiles = calls.filter(x => x[0] === '/fake/ncu' && x.includes('--metrics'));
    assert.equal(plain.length, 0);
    assert.equal(profiles.length, 2);
    const programAt = (c: string[]) => c.findIndex(a => a.startsWith(CACHE));
    assert.notEqual(profiles[0][programAt(profiles[0])], profiles[1][programAt(profiles[1])], 'as written and ×4 are different programs');
    assert.deepEqual(profiles[0].slice(programAt(profiles[0]) + 1), ['--only', 'matvec_warp_per_row', '--reps', '25']);
    const prof = profiles[1];
    assert.deepEqual(prof.slice(1, 9), [
      '--kernel-name-base',
      'mangled',
      '--kernel-name',
      `regex:^${KERNEL}$`,
      '--launch-skip',
      '2',
      '--launch-count',
      '20',
    ]);
    assert.equal(prof[prof.indexOf('--clock-control') + 1], 'none');
    const v = (id: string) => r.variants.find(x => x.id === id)!;
    for (const x of r.variants) {
      assert.ok(x.medianMs! > 0 && x.iqrMs! >= 0 && x.q1Ms! <= x.medianMs! && x.medianMs! <= x.q3Ms!, x.id);
      assert.ok(x.stallShare && Math.abs(Object.values(x.stallShare).reduce((a, b) => a + b, 0) - 1) < 1e-6, x.id);
      assert.ok(x.achievedOccupancy! > 0, x.id);
      assert.ok(x.kernelInstructions! > 0 && x.registers! > 0, x.id);
      // every program was answered with the same recorded page: no speedup, within noise
      assert.equal(x.speedup, 1, x.id);
      assert.equal(x.withinNoise, true, x.id);
    }
    assert.equal(v(`${c}=full`).medianMs, v(`${c}=4`).medianMs);
    assert.deepEqual(v(`${c}=full`).stallShare, v(`${c}=4`).stallShare);
    assert.equal(v(`${c}=4`).effectiveUnroll[c], 4, 'the SASS side is measured on a GPU sweep too');
    assert.equal(r.best, 'as-written', 'equal medians: the first wins');
    // the basis says the clocks it was measured under, as a bench always did
    assert.match(
      r.bestBasis!,
      /^fastest median kernel time on NVIDIA H100 80GB HBM3 \(ncu, 20 samples; clocks (locked to base|not locked), caches flushed before each launch\)$/,
    );
    assert.ok(
      r.notes.some(n => /2 of 4 variants have the same machine code as an earlier one and reuse its timing/.test(n)),
      r.notes.join('\n'),
    );
    assert.ok(r.notes.some(n => n === `timed kernel: ${KERNEL}`));
    // what it cost: two ncu runs (their output is the check), on the default device
    assert.equal(r.timing!.gpuRuns, 2);
    assert.deepEqual(r.timing!.gpus, [null]);
    assert.ok(r.timing!.wallS >= r.timing!.gpuIdleS && r.timing!.profileS >= 0 && r.timing!.compileS >= 0);
    const j = sweepJson(r);
    assert.deepEqual(Object.keys(j.timing!), ['wallS', 'compileS', 'checkS', 'profileS', 'gpuIdleS', 'gpuRuns', 'gpus']);
    assert.equal(j.static, false);
    assert.equal(j.variants[3].identicalTo, 4);
    assert.equal(j.variants[1].identicalTo, 'as-written');
    assert.equal(j.variants[2].medianMs, v(`${c}=4`).medianMs);
    // the text table carries ncu's counters too (executed warp instructions, achieved occupancy), each row its own
    const text = sweepText(r).split('\n');
    const header = text[1].split(/ {2,}/);
    assert.deepEqual(header.slice(header.indexOf('top stall') + 1), ['exec instr', 'achieved occ', 'same code as']); // this page predates the thread-instruction metric
    const asWritten = text.find(l => /^ *\*? *as written /.test(l)) ?? text[2];
    assert.ok(asWritten.includes(` ${v('as-written').executedInstructions}  `), asWritten);
    assert.ok(asWritten.includes(` ${v('as-written').achievedOccupancy!.toFixed(1)}%`), asWritten);
  });

  test('adaptive sampling (issue 25): the tied leaders timed again through ncu up to --max-samples; no Apply best', async t => {
    if (skip) return t.skip(skip);
    // every program answers with the same recorded page: the file as written and ×4 never separate
    const { runner, calls } = replay(() => ({ stdout: rec('matvec.stdout') }), ncuOk);
    const o = await options(runner);
    const r = await runSweep({ ...o, gpu: { ...o.gpu!, maxSamples: 40 } });
    const profiles = calls.filter(x => x[0] === '/fake/ncu' && x.includes('--metrics'));
    // two programs timed, then each once more with 20 launches: timing only, no check run
    assert.equal(profiles.length, 4);
    assert.equal(calls.filter(x => x[0] !== '/fake/ncu').length, 0);
    for (const p of profiles) assert.equal(p[p.indexOf('--launch-count') + 1], '20');
    assert.deepEqual(
      r.variants.map(v => [v.id, v.samples, v.durationsMs!.length]),
      [
        ['as-written', 40, 40],
        [`${o.c}=default`, 40, 40],
        [`${o.c}=4`, 40, 40],
        [`${o.c}=full`, 40, 40],
      ],
    );
    const c = r.confidence!;
    assert.deepEqual(c.sampling, { minSamples: 20, maxSamples: 40, rounds: 1, stopped: 'max samples reached' });
    assert.deepEqual(c.contenders, ['as-written', `${o.c}=4`]);
    assert.equal(c.distinguishable, false);
    assert.equal(r.timing!.gpuRuns, 4);
    assert.match(sweepText(r), /\n {2}no change offered: the file as written is the fastest\n/);
    assert.match(
      sweepText(r),
      /\n {2}adaptive sampling: 20 durations per variant, then the leading ones again up to 40 \(1 more round\); stopped: max samples reached\n/,
    );
  });

  test('a changed checksum is a correctness failure; the identical variant shares it without a run', async t => {
    if (skip) return t.skip(skip);
    // The recorded stdout with matvec_warp_per_row's checksum changed in its last digit, for the second program run.
    const wrong = rec('matvec.stdout').replace(/(kernel=matvec_warp_per_row .*checksum=6\.73518)7e\+02/, '$18e+02');
    assert.notEqual(wrong, rec('matvec.stdout'));
    const { runner, calls } = replay(i => ({ stdout: i === 1 ? wrong : rec('matvec.stdout') }), ncuOk);
    const o = await options(runner);
    const r = await runSweep(o);
    const v = (id: string) => r.variants.find(x => x.id === id)!;
    assert.equal(v(`${o.c}=4`).status, 'correctness');
    assert.match(
      v(`${o.c}=4`).message!,
      /checksums differ from the file as written: matvec_warp_per_row .*6\.735188e\+02 vs 6\.735187e\+02/,
    );
    assert.equal(v(`${o.c}=full`).status, 'correctness');
    assert.equal(v(`${o.c}=4`).medianMs, null, 'a wrong result is not timed');
    assert.equal(
      calls.filter(x => x[0] === '/fake/ncu' && x.includes('--metrics')).length,
      2,
      'one ncu run per distinct program, full not run',
    );
    assert.equal(r.best, 'as-written');
  });

  test('a crash (recorded) is a runtime failure; cancel mid-run returns what finished', async t => {
    if (skip) return t.skip(skip);
    const crash = replay(
      i =>
        i === 1
          ? { exitCode: Number(rec('crash.exit')), stdout: rec('crash.stdout'), stderr: rec('crash.stderr') }
          : { stdout: rec('matvec.stdout') },
      ncuOk,
    );
    const r = await runSweep(await options(crash.runner, { factors: UnrollFactors.parse('4') }));
    assert.deepEqual(
      r.variants.map(v => v.status),
      ['ok', 'runtime'],
    );
    assert.match(r.variants[1].message!, /exit code 3/);

    const ac = new AbortController();
    const cancel = replay(i => {
      if (i === 1) {
        ac.abort();
        return { cancelled: true, exitCode: null };
      }
      return { stdout: rec('matvec.stdout') };
    }, ncuOk);
    const c = await runSweep(await options(cancel.runner, { signal: ac.signal }));
    assert.equal(c.complete, false);
    // the file as written and its copy finished; the point whose run was cancelled is not reported.
    // (A point whose ncu run was already under way on the other slot may have finished too.)
    assert.deepEqual(
      c.variants.slice(0, 2).map(v => [v.id, v.status]),
      [
        ['as-written', 'ok'],
        [`${(await options(cancel.runner)).c}=default`, 'ok'],
      ],
    );
    assert.ok(c.variants.length < 4, c.variants.map(v => v.id).join(' '));
    assert.ok(
      c.variants.every(v => v.status === 'ok'),
      'only what finished',
    );
    assert.ok(c.notes.some(n => n.startsWith(`cancelled: ${c.variants.length} variants finished`)));
  });

  test('refused up front: no ncu; -D parameters with a project compile command', async t => {
    if (skip) return t.skip(skip);
    const { runner } = replay(
      () => ({}),
      () => ({}),
    );
    const o = await options(runner);
    await assert.rejects(runSweep({ ...o, toolchain: { ...o.toolchain, ncu: null } }), /ncu \(Nsight Compute\) not found/);
    await assert.rejects(
      runSweep({ ...o, params: { BLOCK: ['128'] }, gpu: { ...o.gpu!, compileCommand: ['make', 'SRC={source}'] } }),
      /sweeping BLOCK needs nvcc builds \(-D flags\)/,
    );
  });
});

describe('GPU sweep over two GPUs (--gpus 0,1) on the same recordings', () => {
  /** A call's program: the command of a plain run, the profiled program of an ncu run (null: ncu --import). */
  const programOf = (call: string[]): string | null => {
    if (call[0] !== '/fake/ncu') return call[0];
    return call.includes('--metrics') ? (call.find(a => a.startsWith(CACHE)) ?? null) : null;
  };

  test('check and ncu runs carry CUDA_VISIBLE_DEVICES 0 and 1; the file as written runs first; results as on one GPU', async t => {
    if (skip) return t.skip(skip);
    const factors = UnrollFactors.parse('default,2,4,8,full');
    const one = replay(() => ({ stdout: rec('matvec.stdout') }), ncuOk, 20);
    const single = await runSweep(await options(one.runner, { factors }));
    const two = replay(() => ({ stdout: rec('matvec.stdout') }), ncuOk, 20);
    const o = await options(two.runner, { factors });
    const seen: string[] = [];
    const r = await runSweep({ ...o, gpu: { ...o.gpu!, gpus: [0, 1] } }, { onVariant: v => seen.push(v.id) });

    // The same variants, statuses, copies and numbers as on one GPU, in the same order.
    const row = (v: (typeof r.variants)[number]) => [v.id, v.status, v.identicalTo, v.samples, v.medianMs, v.iqrMs, v.speedup];
    assert.deepEqual(r.variants.map(row), single.variants.map(row));
    assert.ok(
      r.variants.every(v => v.status === 'ok'),
      r.variants.map(v => `${v.id} ${v.status} ${v.message}`).join('\n'),
    );
    assert.equal(r.best, single.best);
    assert.equal(r.gpu, 'NVIDIA H100 80GB HBM3');
    assert.deepEqual(
      seen,
      r.variants.map(v => v.id),
      'variants are reported in point order',
    );
    assert.ok(
      r.notes.some(n => /^spread over GPUs 0, 1 /.test(n)),
      r.notes.join('\n'),
    );
    assert.ok(!single.notes.some(n => /spread over GPUs/.test(n)));

    // One GPU: the default device, environment untouched.
    assert.ok(one.devices.every(d => d === undefined));
    // Two: every plain run and ncu profile pinned to GPU 0 or 1, both used, at the same time.
    const runs = two.calls.map((c, i) => ({ c, i, program: programOf(c), device: two.devices[i] })).filter(x => x.program);
    const distinct = r.variants.filter(v => !v.identicalTo).length;
    assert.ok(distinct >= 3, `${distinct} distinct programs: too few to spread over two GPUs`);
    assert.equal(runs.filter(x => x.c[0] !== '/fake/ncu').length, 0, 'no plain runs: the check is the ncu run');
    assert.equal(runs.filter(x => x.c[0] === '/fake/ncu').length, distinct, 'one ncu profile per distinct program');
    assert.ok(
      runs.every(x => x.device === '0' || x.device === '1'),
      runs.map(x => x.device).join(','),
    );
    assert.deepEqual([...new Set(runs.map(x => x.device))].sort(), ['0', '1']);
    assert.equal(two.maxInFlight(), 2, 'two GPUs busy at once');
    assert.equal(one.maxInFlight(), 1);
    // A point's check and ncu runs go to the same GPU.
    for (const p of new Set(runs.map(x => x.program))) {
      assert.equal(new Set(runs.filter(x => x.program === p).map(x => x.device)).size, 1, p!);
    }
    // The file as written (the first program run) is checked and profiled before any other program starts.
    const asWritten = runs[0].program;
    const lastOwn = Math.max(...runs.filter(x => x.program === asWritten).map(x => x.i));
    const firstOther = Math.min(...runs.filter(x => x.program !== asWritten).map(x => x.i));
    assert.equal(runs.filter(x => x.program === asWritten).length, 1);
    assert.ok(lastOwn < firstOther, `as written's last run #${lastOwn}, another program's first #${firstOther}`);
  });

  test('two ncu processes share one GPU (no template parameters): the same results as one at a time', async t => {
    if (skip) return t.skip(skip);
    const factors = UnrollFactors.parse('default,2,4,8,full');
    const one = replay(() => ({ stdout: rec('matvec.stdout') }), ncuOk, 20);
    const single = await runSweep(await options(one.runner, { factors }));
    const shared = replay(() => ({ stdout: rec('matvec.stdout') }), ncuOk, 20);
    const o = await options(shared.runner, { factors });
    const r = await runSweep({ ...o, gpu: { ...o.gpu!, profilesPerGpu: 2 } });
    const row = (v: (typeof r.variants)[number]) => [v.id, v.status, v.identicalTo, v.samples, v.medianMs];
    assert.deepEqual(r.variants.map(row), single.variants.map(row));
    assert.equal(one.maxInFlight(), 1);
    assert.equal(shared.maxInFlight(), 2, 'two ncu processes on the GPU at once');
    assert.ok(
      shared.devices.every(d => d === undefined),
      'the default device, environment untouched',
    );
  });

  test('a changed checksum is still a correctness failure on either GPU; copies share it', async t => {
    if (skip) return t.skip(skip);
    const wrong = rec('matvec.stdout').replace(/(kernel=matvec_warp_per_row .*checksum=6\.73518)7e\+02/, '$18e+02');
    assert.notEqual(wrong, rec('matvec.stdout'));
    // The first program run is the file as written's (it runs before any other); every later one prints the changed checksum.
    const { runner, calls, devices } = replay(i => ({ stdout: i === 0 ? rec('matvec.stdout') : wrong }), ncuOk, 20);
    const o = await options(runner, { factors: UnrollFactors.parse('default,2,4,8,full') });
    const r = await runSweep({ ...o, gpu: { ...o.gpu!, gpus: [0, 1] } });
    const v = (id: string) => r.variants.find(x => x.id === id)!;
    assert.equal(v('as-written').status, 'ok');
    assert.equal(v(`${o.c}=default`).status, 'ok');
    for (const f of ['2', '4', '8', 'full']) {
      assert.equal(v(`${o.c}=${f}`).status, 'correctness', f);
      assert.equal(v(`${o.c}=${f}`).medianMs, null, f);
    }
    assert.match(v(`${o.c}=4`).message!, /checksums differ from the file as written: .*6\.735188e\+02 vs 6\.735187e\+02/);
    const checks = calls.map((c, i) => [c, devices[i]] as const).filter(([c]) => c[0] === '/fake/ncu' && c.includes('--metrics'));
    assert.equal(checks.length, 4, 'as written, 2, 4 and 8: one ncu run each, its output the check');
    assert.deepEqual([...new Set(checks.slice(1).map(([, d]) => d))].sort(), ['0', '1'], 'the failing checks ran on both GPUs');
    assert.equal(r.best, 'as-written');
  });

  test('the runner itself: the file as written in a batch runs before the rest, results and reports in point order', async t => {
    if (skip) return t.skip(skip);
    // a batch that holds the file as written runs it first: the others start once it has started.
    const { runner, calls } = replay(() => ({ stdout: rec('matvec.stdout') }), ncuOk, 20);
    const o = await options(runner, { factors: UnrollFactors.parse('2,4,8') });
    const space = resolveSpace(o.analysis, o.file, o);
    const gpu = new GpuRunner({
      file: o.file,
      text: o.text,
      analysis: o.analysis,
      kernel: space.kernel.name,
      loops: space.loops.map(l => l.line),
      toolchain: o.toolchain,
      arch: o.arch,
      flags: o.flags,
      cacheDir: o.cacheDir,
      templateParams: space.templateParams,
      templateDefaults: space.defaults(o.text),
      gpu: { ...o.gpu!, gpus: [0, 1] },
      params: space.macroParams,
      paramDefaults: space.defaults(o.text),
    });
    const points = [...space.points()];
    const batch = [points[0], AS_WRITTEN, ...points.slice(1)];
    const reported: string[] = [];
    const out = await gpu.measure(batch, { registry: new CodeRegistry(true), onVariant: v => reported.push(v.id) });
    const ids = [`${o.c}=2`, AS_WRITTEN_ID, `${o.c}=4`, `${o.c}=8`];
    assert.deepEqual(
      out.map(v => v.id),
      ids,
    );
    assert.deepEqual(reported, ids);
    assert.ok(
      out.every(v => v.status === 'ok' && v.samples === 20),
      out.map(v => `${v.id} ${v.status} ${v.message}`).join('\n'),
    );
    const runs = calls.map((c, i) => ({ i, program: programOf(c) })).filter(x => x.program);
    // The file as written's program (the runner keeps it for template instantiations' references).
    const asWritten = (gpu as unknown as { baselineProgram: string }).baselineProgram;
    assert.equal(runs[0].program, asWritten, 'the file as written is the first program run');
    const own = runs.filter(x => x.program === asWritten);
    assert.equal(own.length, 1, 'checked and profiled in one ncu run');
    assert.ok(Math.max(...own.map(x => x.i)) < Math.min(...runs.filter(x => x.program !== asWritten).map(x => x.i)));
    assert.equal(gpu.gpu, 'NVIDIA H100 80GB HBM3');
  });
});
