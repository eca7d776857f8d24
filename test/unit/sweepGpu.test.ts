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
) {
  const calls: string[][] = [];
  let runs = 0;
  const runner: ProcessRunner = async (cmd, args, o) => {
    if (cmd === real!.nvcc.path || cmd === real!.nvdisasm?.path || cmd === real!.cuobjdump?.path || cmd === real!.cxxfilt?.path)
      return real!.runner(cmd, args, o);
    calls.push([cmd, ...args]);
    if (cmd === '/fake/ncu') return { ...result({ command: cmd, args }), ...ncu(args) };
    return { ...result({ command: cmd, args }), ...program(runs++, args, cmd) };
  };
  return { runner, calls };
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
    factors: 'default,4,full',
    gpu: {
      args: ['--only', 'matvec_warp_per_row', '--reps', '25'],
      samples: 20,
      warmup: 2,
      clockControl: 'none',
      timeoutMs: 60_000,
      launcher: [],
    },
    ...over,
  };
}

describe('GPU sweep on recorded H100 outputs (matvec_warp_per_row, loop c: default, 4, full)', () => {
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
    // two programs ran: one plain run (check) and one ncu profile each
    const plain = calls.filter(x => x[0] !== '/fake/ncu');
    const profiles = calls.filter(x => x[0] === '/fake/ncu' && x.includes('--export'));
    assert.equal(plain.length, 2);
    assert.equal(profiles.length, 2);
    assert.notEqual(plain[0][0], plain[1][0], 'as written and ×4 are different programs');
    assert.deepEqual(plain[0].slice(1), ['--only', 'matvec_warp_per_row', '--reps', '25']);
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
    assert.match(r.bestBasis!, /^fastest median kernel time on NVIDIA H100 80GB HBM3 \(ncu, 20 samples\)$/);
    assert.ok(
      r.notes.some(n => /2 of 4 variants have the same machine code as an earlier one and reuse its timing/.test(n)),
      r.notes.join('\n'),
    );
    assert.ok(r.notes.some(n => n === `timed kernel: ${KERNEL}`));
    const j = sweepJson(r);
    assert.equal(j.static, false);
    assert.equal(j.variants[3].identicalTo, 4);
    assert.equal(j.variants[1].identicalTo, 'as-written');
    assert.equal(j.variants[2].medianMs, v(`${c}=4`).medianMs);
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
    assert.equal(v(`${o.c}=4`).medianMs, null);
    assert.equal(calls.filter(x => x[0] === '/fake/ncu' && x.includes('--export')).length, 1, 'only the file as written was timed');
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
    const r = await runSweep(await options(crash.runner, { factors: '4' }));
    assert.deepEqual(
      r.variants.map(v => v.status),
      ['ok', 'runtime'],
    );
    assert.match(r.variants[1].message!, /exit 3/);

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
    assert.deepEqual(
      c.variants.map(v => [v.id, v.status]),
      [
        ['as-written', 'ok'],
        [`${(await options(cancel.runner)).c}=default`, 'ok'],
      ],
    );
    assert.ok(c.notes.some(n => /^cancelled: 2 variants finished/.test(n)));
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
