// Issue 26: a coarsening sweep over a template parameter on an H100 (scripts/device/run-coarsen-sweep.sh):
// cuda-samples/coarsen_template.cu, `sweep --kernel coarsen_potential --factors none --param
// COARSEN=1,2,4,8 --args "--coarsen {COARSEN} --reps 20"` with the CUPTI timer and under ncu, next
// to the program's own cudaEvent medians (plain runs before and after). And the pipelining fix it
// needed: the points of a template sweep share one program, so runs started ahead are told apart
// by their arguments.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from './helpers';
import { AheadRuns } from '../../src/engine/sweep/runners/pipelining';
import type { NativeTimeOptions } from '../../src/engine/gpu/cupti/timeNative';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';
import type { BuildResult } from '../../src/engine/variants/build';
import type { sweepJson } from '../../src/engine/sweep/json';

const DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'coarsen-sweep');
const read = (f: string) => fs.readFileSync(path.join(DIR, f), 'utf8');
type SweepJson = ReturnType<typeof sweepJson>;
const FACTORS = ['1', '2', '4', '8'];

/** The program's own lines: COARSEN → time_ms (cudaEvent median of 20), check, checksum. */
function own(stdout: string): Map<string, { ms: number; check: string; checksum: string }> {
  return new Map(
    [...stdout.matchAll(/^kernel=coarsen_potential<(\d+)> \S+ time_ms=([0-9.]+) check=(\w+) checksum=(\S+)$/gm)].map(m => [
      m[1],
      { ms: Number(m[2]), check: m[3], checksum: m[4] },
    ]),
  );
}

describe('coarsen_potential<COARSEN> swept on an H100, against the program’s own cudaEvent timing', () => {
  const before = own(read('plain-before.stdout'));
  const after = own(read('plain-after.stdout'));
  const cupti = JSON.parse(read('cupti.json')) as SweepJson;
  const ncu = JSON.parse(read('ncu.json')) as SweepJson;
  const point = (j: SweepJson, c: string) => j.variants.find(v => v.id === `COARSEN=${c}`)!;

  test('the plain runs: every instantiation checks, one checksum for all (each point sums its atoms in the same order)', () => {
    for (const m of [before, after]) {
      assert.deepEqual([...m.keys()], FACTORS);
      assert.ok([...m.values()].every(x => x.check === 'PASS'));
      assert.equal(new Set([...m.values()].map(x => x.checksum)).size, 1);
    }
    assert.match(read('env.txt'), /^NVIDIA H100 80GB HBM3, 580\.159\.04,/);
  });

  test('every point over 100 µs agrees with the cudaEvent median within 5 %, CUPTI and ncu alike', () => {
    const checked: string[] = [];
    for (const [tool, j] of [
      ['cupti', cupti],
      ['ncu', ncu],
    ] as const) {
      for (const c of FACTORS) {
        const v = point(j, c);
        if (v.status !== 'ok') continue;
        const events = (before.get(c)!.ms + after.get(c)!.ms) / 2;
        if (events <= 0.1) continue;
        const off = v.medianMs! / events - 1;
        assert.ok(Math.abs(off) < 0.05, `${tool} COARSEN=${c}: ${v.medianMs} ms vs ${events} ms (${(off * 100).toFixed(1)} %)`);
        checked.push(`${tool}:${c}`);
      }
    }
    // all four under ncu; under CUPTI the JSON run lost COARSEN=4 (below)
    assert.deepEqual(checked, ['cupti:1', 'cupti:2', 'cupti:8', 'ncu:1', 'ncu:2', 'ncu:4', 'ncu:8']);
    // the file as written is COARSEN=1 (the first value), the same machine code
    assert.equal(cupti.variants[0].id, 'as-written');
    assert.equal(cupti.variants[0].instantiation, 'void coarsen_potential<1>(float*, int, float, float, int)');
  });

  test('per point: registers rise with COARSEN, executed instructions fall, achieved occupancy is there (ncu)', () => {
    const regs = FACTORS.map(c => point(ncu, c).registers!);
    assert.deepEqual(regs, [22, 26, 32, 32]);
    assert.ok(regs.every((r, i) => i === 0 || r >= regs[i - 1]));
    const executed = FACTORS.map(c => point(ncu, c).executedInstructions!);
    assert.ok(
      executed.every((x, i) => x > 0 && (i === 0 || x < executed[i - 1])),
      executed.join(', '),
    );
    assert.ok(executed[0] / executed[3] > 1.7 && executed[0] / executed[3] < 1.8, 'C=8 executes 0.57× the instructions of C=1');
    const occupancy = FACTORS.map(c => point(ncu, c).achievedOccupancy!);
    assert.ok(
      occupancy.every(x => x > 70 && x <= 100),
      occupancy.join(', '),
    );
    // …while the time falls 16.7×: the point the issue asks to see
    assert.ok(point(ncu, '1').medianMs! / point(ncu, '8').medianMs! > 16);
    // the CUPTI timer measures no counters: absent, not null
    assert.ok(cupti.variants.every(v => !('executedInstructions' in v) && !('achievedOccupancy' in v)));
  });

  test('the CUPTI run that lost COARSEN=4: its run started ahead sampled PCs while COARSEN=2 sampled (records kept)', () => {
    const v = point(cupti, '4');
    assert.equal(v.status, 'profile');
    assert.match(v.message ?? '', /launched _Z17coarsen_potentialILi4EEvPfiffi no more than 2 times/);
    const lost = read('keep-cupti/coarsen_template-COARSEN=4-run-0.timer.jsonl');
    assert.match(lost, /"pcerror":"cuptiPCSamplingGetData: CUPTI_ERROR_UNKNOWN"/);
    assert.match(lost, /"end":1,"records":0,/);
    // held over two seconds, through the whole of COARSEN=2's sampled first run
    assert.ok(Number(/"held":(\d+)/.exec(lost)![1]) > 2e9);
    // each run of every other point launched its own instantiation only (before the fix, COARSEN=2 was given a run started for COARSEN=4)
    for (const c of ['2', '8']) {
      for (const run of [0, 1]) {
        const t = read(`keep-cupti/coarsen_template-COARSEN=${c}-run-${run}.timer.jsonl`);
        assert.deepEqual([...new Set([...t.matchAll(/"k":"([^"]+)"/g)].map(m => m[1]))], [`_Z17coarsen_potentialILi${c}EEvPfiffi`]);
      }
    }
    // the table printed after it re-measured COARSEN=4 from the measurement cache's miss
    assert.match(read('cupti.txt'), /COARSEN=4 +coarsen_potential<4> +ok +240 +32 +0 +100\.0% +1\.3811 /);
  });
});

describe('the same sweep after PC sampling waits for a held run to be let go (native/cupti_timer.c), twice from cold caches', () => {
  const held = (f: string) => fs.readFileSync(path.join(DIR, 'held-sampling', f), 'utf8');
  test('every point measured with its stall mix, runs held for seconds while another sampled, no PC-sampling error', () => {
    const plain = own(read('plain-before.stdout'));
    for (const round of [1, 2]) {
      const j = JSON.parse(held(`cupti-${round}.json`)) as SweepJson;
      for (const c of FACTORS) {
        const v = j.variants.find(x => x.id === `COARSEN=${c}`)!;
        assert.equal(v.status, 'ok', `round ${round} COARSEN=${c}: ${v.message}`);
        assert.equal(v.samples, 20);
        assert.ok(v.stallShare && Object.keys(v.stallShare).length > 0, `round ${round} COARSEN=${c}: stall mix`);
        // serialized kernel records: within 1 % of the program's own cudaEvent median (all over 1 ms)
        const d = Math.abs(v.medianMs! / plain.get(c)!.ms - 1);
        assert.ok(d < 0.01, `round ${round} COARSEN=${c}: ${v.medianMs} against ${plain.get(c)!.ms}`);
      }
    }
    const records = fs.readdirSync(path.join(DIR, 'held-sampling', 'keep-1')).map(f => held(`keep-1/${f}`));
    assert.ok(!records.some(t => /pcerror/.test(t)));
    const waits = records.flatMap(t => [...t.matchAll(/"held":(\d+)/g)].map(m => Number(m[1])));
    assert.ok(Math.max(...waits) > 2e9, 'a run started ahead waited over 2 s while the one before it sampled');
  });
});

describe('runs started ahead are told apart by program arguments (one program, many template points)', () => {
  function options(args: string[], started: string[], stopped: string[]): NativeTimeOptions {
    const runner: ProcessRunner = async (_cmd, a, o) => {
      started.push(a.join(' '));
      const gate = o?.env?.UNROLL_LENS_HOLD;
      while (gate && !fs.existsSync(gate)) {
        if (o?.signal?.aborted) {
          stopped.push(a.join(' '));
          return { exitCode: null, signal: 'SIGKILL', cancelled: true } as ProcessResult;
        }
        await new Promise(r => setTimeout(r, 2));
      }
      return { exitCode: 1, stdout: '', stderr: 'not a real run' } as ProcessResult;
    };
    return {
      toolchain: { runner } as unknown as Toolchain,
      launcher: [],
      args,
      library: '/nonexistent/libtimer.so',
      samples: 20,
      warmup: 2,
      timeoutMs: 10_000,
    };
  }

  test('take() gets the run started with the point’s arguments; drop() with arguments stops only that one', async () => {
    const started: string[] = [];
    const stopped: string[] = [];
    const ahead = new AheadRuns();
    const program = '/tmp/coarsen_template';
    const p = (label: string) => ({ label, program, file: '/tmp/coarsen_template.cu' });
    const a2 = ['--coarsen', '2', '--reps', '20'];
    const a4 = ['--coarsen', '4', '--reps', '20'];
    ahead.start(p('COARSEN=4'), options(a4, started, stopped));
    ahead.start(p('COARSEN=2'), options(a2, started, stopped));
    assert.deepEqual(started, [a4.join(' '), a2.join(' ')], 'one run each: the same program, other arguments');
    const taken = ahead.take(program, undefined, a2);
    assert.ok(taken);
    assert.equal(ahead.take(program, undefined, ['--coarsen', '8', '--reps', '20']), undefined);
    // the point COARSEN=2 done: the run started for COARSEN=4 stays
    await ahead.drop({ outputPath: program } as BuildResult, a2);
    assert.deepEqual(stopped, []);
    const four = ahead.take(program, undefined, a4);
    assert.ok(four, 'still there for COARSEN=4');
    await taken!.stop();
    await four!.stop();
    assert.deepEqual(stopped, [a2.join(' '), a4.join(' ')]);
    // without arguments every run of the build is stopped (the sweep's end)
    ahead.start(p('COARSEN=8'), options(['--coarsen', '8'], started, stopped));
    await ahead.drop({ outputPath: program } as BuildResult);
    assert.deepEqual(stopped, [a2.join(' '), a4.join(' '), '--coarsen 8']);
  });
});
