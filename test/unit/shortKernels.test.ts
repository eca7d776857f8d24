// Issue 42: short kernels timed true. On an H200 (scripts/device/record-short-kernels.sh), two rounds of
// `unroll-lens compare --timer cupti` on our two short-kernel programs (scripts/device/short-kernels/:
// a transpose ladder of 3–18 µs kernels, and one kernel at ten lengths, 2.6 µs to 1.2 ms), each next to
// a hand-run `ncu --cache-control none --clock-control none` reading gpu__time_duration.sum for every
// launch of the same program. The reference is read here by its own small CSV reader, not the engine's;
// both sides skip each kernel's first 2 launches and take the next 20.
//
// The target: every median within max(1 %, 0.2 µs) of ncu's, every speedup within 1 %. The length curve
// meets it. The ladder meets it but for the misses listed below, each asserted with its measured cause.
// Two recordings, each a whole run of the script on one machine: short-kernels/ (2026-12-02, with the
// first probe and ncu's own spread) and short-kernels-2/ (2026-12-03, with the bench:gpu of that run).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from './helpers';
import { parseTimerRecords } from '../../src/engine/gpu/cupti/timerRecords';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h200');
const RUNS = ['short-kernels', 'short-kernels-2'] as const;
type Run = (typeof RUNS)[number];
const readIn = (run: Run, f: string) => fs.readFileSync(path.join(FIXTURES, run, f), 'utf8');
/** The first recording: its probe and ncu-spread/ are read by name. */
const read = (f: string) => readIn('short-kernels', f);
/** One tick of the GPU timer behind gpu__time_duration: every value here is a multiple of it. */
const TICK_NS = 32;

function median(a: number[]): number {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** `void tiled<1, 8, false>(float const*, float*, int)` and ncu's `void tiled<1, 8, 0>(const float *, …)` alike: `tiled<1, 8, 0>`. */
const nameOf = (demangled: string) =>
  demangled
    .replace(/^void /, '')
    .replace(/\(.*$/, '')
    .replace(/\bfalse\b/g, '0')
    .replace(/\btrue\b/g, '1');

/** Each kernel's launches in ncu's CSV (`--csv --print-units base`), in launch order, ns. */
function ncuLaunches(csv: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const line of csv.split('\n')) {
    if (!line.startsWith('"') || !line.includes('"gpu__time_duration.sum"')) continue;
    const cells = line.slice(1, -1).split('","');
    const name = nameOf(cells[4]!);
    out.set(name, [...(out.get(name) ?? []), Number(cells.at(-1)!.replace(/,/g, ''))]);
  }
  return out;
}

/** ncu's median of each kernel's launches 3..22 (the 2 skipped are compare's --warmup 2). */
const ncuMedians = (csv: string) => new Map([...ncuLaunches(csv)].map(([k, v]) => [k, median(v.slice(2, 22))]));

interface Row {
  kernel: string;
  demangled: string;
  medianMs: number;
  samples: number;
  speedup: number;
}
interface Compared {
  name: string;
  ours: number;
  ncu: number;
  medianOk: boolean;
  speedupDiff: number;
}

function compared(run: Run, program: string, round: number): Compared[] {
  const j = JSON.parse(readIn(run, `${program}.cupti.${round}.json`)) as { kernels: Row[]; measurement: Record<string, string> };
  const ref = ncuMedians(readIn(run, `${program}.ncu.${round}.csv`));
  const base = j.kernels[0]!;
  const baseRef = ref.get(nameOf(base.demangled))!;
  return j.kernels.map(k => {
    const name = nameOf(k.demangled);
    const ncu = ref.get(name)!;
    const ours = Math.round(k.medianMs * 1e6);
    assert.ok(ncu > 0, `${program}: ${name} not in ncu's CSV`);
    assert.equal(k.samples, 20);
    return {
      name,
      ours,
      ncu,
      medianOk: Math.abs(ours - ncu) <= Math.max(0.01 * ncu, 200),
      speedupDiff: base.medianMs / k.medianMs / (baseRef / ncu) - 1,
    };
  });
}

describe('short kernels against ncu on an H200 (gpu__time_duration in the program run)', () => {
  test('every result says it timed with gpu__time_duration, and names the kernels timed', () => {
    for (const run of RUNS) {
      for (const program of ['transpose_ladder', 'kernel_lengths'])
        for (const round of [1, 2]) {
          const j = JSON.parse(readIn(run, `${program}.cupti.${round}.json`)) as { measurement: unknown; notes: string[] };
          assert.deepEqual(j.measurement, { tool: 'cupti', clocks: 'as-is', caches: 'warm', duration: 'gpu-time' });
          assert.ok(!j.notes.some(n => n.startsWith('gpu__time_duration')), j.notes.join('\n'));
        }
      assert.match(readIn(run, 'gpu.txt'), /^NVIDIA H200, 580\./);
    }
  });

  test('the length curve, 2.6 µs to 1.2 ms: every median within max(1 %, 0.2 µs) of ncu and every speedup within 1 %, both rounds', () => {
    for (const run of RUNS)
      for (const round of [1, 2]) {
        const rows = compared(run, 'kernel_lengths', round);
        assert.equal(rows.length, 10);
        assert.ok(Math.min(...rows.map(r => r.ncu)) < 3000 && Math.max(...rows.map(r => r.ncu)) > 1e6);
        for (const r of rows) {
          assert.ok(r.medianOk, `${run} round ${round} ${r.name}: ${r.ours} ns against ncu ${r.ncu} ns`);
          const off = `${run} round ${round} ${r.name}: speedup ${(r.speedupDiff * 100).toFixed(2)} % off ncu's`;
          assert.ok(Math.abs(r.speedupDiff) <= 0.01, off);
        }
      }
  });

  test('the transpose ladder, 3–18 µs: within target but for the known misses, each a tick of the timer or naive’s own spread', () => {
    const missesOf = (run: Run) => {
      const misses: string[] = [];
      const rounds = [1, 2].map(round => compared(run, 'transpose_ladder', round));
      rounds.forEach((rows, i) => {
        assert.equal(rows.length, 8);
        for (const r of rows) {
          if (!r.medianOk) misses.push(`${i + 1} median ${r.name}`);
          if (Math.abs(r.speedupDiff) > 0.01) misses.push(`${i + 1} speedup ${r.name}`);
        }
        // every miss but naive's is a tick: this kernel's median and the first kernel's (every
        // speedup's base) each within one 32 ns tick of ncu's, at 3 µs a tick being 1.05 %
        for (const r of rows.filter(x => x.name !== 'naive' && (!x.medianOk || Math.abs(x.speedupDiff) > 0.01))) {
          assert.ok(Math.abs(r.ours - r.ncu) <= TICK_NS && Math.abs(rows[0]!.ours - rows[0]!.ncu) <= TICK_NS, `${run} ${r.name}`);
          assert.ok(r.ncu < 3200 || rows[0]!.ncu < 3200, `${run} ${r.name}: a tick is over 1 % only under 3.2 µs`);
        }
      });
      return { misses, rounds };
    };
    // any change to these lists, better or worse, is a finding: docs/measurements.md says why each is here
    const first = missesOf('short-kernels');
    assert.deepEqual(first.misses, ['1 median naive', '1 speedup naive', '1 speedup tiled<1, 16, 0>', '2 speedup copy_shared']);
    const ncuOwn = [1, 2].map(round => ncuMedians(read(`transpose_ladder.ncu.${round}.csv`)));
    assert.equal(Math.abs(ncuOwn[0]!.get('copy_shared')! - ncuOwn[1]!.get('copy_shared')!), TICK_NS);
    // The second recording: in its round 1 ncu read the base kernel (copy_rows, 3 µs) one tick under
    // ours, so six speedups moved by 1.05–1.08 % at once; every median but naive's is within a tick.
    const second = missesOf('short-kernels-2');
    assert.deepEqual(second.misses, [
      '1 speedup copy_shared',
      '1 median naive',
      '1 speedup naive',
      '1 speedup tiled<1, 16, 0>',
      '1 speedup tiled<1, 2, 0>',
      '1 speedup tiled<1, 8, 0>',
      '1 speedup tiled<0, 8, 0>',
      '2 median naive',
      '2 speedup naive',
    ]);
    const base = second.rounds[0]![0]!;
    assert.equal(base.ncu - base.ours, -TICK_NS);
    // naive (strided writes, 18 µs) runs at a speed of its own in each process. ncu alone gave
    // medians 352 ns apart in nine processes of the first recording's session (its ncu-spread/,
    // probe and rounds), more than our miss of it there; and 17,952–18,400 ns over those and six
    // more on another day (short-kernels-2/ncu-spread/: the ladder whole and naive alone, three
    // each), 448 ns apart: more than every naive miss of both recordings (up to 432 ns).
    const ncuNaive = [
      ...ncuOwn.map(m => m.get('naive')!),
      ncuMedians(read('probe/transpose_ladder.ncu.1.csv')).get('naive')!,
      ...['gap-0', 'gap-10000', 'ncu-spread/gap-0', 'ncu-spread/gap-10000'].map(g => ncuMedians(read(`${g}.ncu.csv`)).get('naive')!),
      ...['a', 'b'].map(r => ncuMedians(read(`ncu-spread/transpose_ladder.ncu.${r}.csv`)).get('naive')!),
    ];
    assert.equal(ncuNaive.length, 9);
    const spreadOf = (a: number[]) => Math.max(...a) - Math.min(...a);
    const naive = first.rounds[0]!.find(x => x.name === 'naive')!;
    assert.equal(spreadOf(ncuNaive), 352);
    assert.ok(spreadOf(ncuNaive) > Math.abs(naive.ours - naive.ncu), `ours off by ${naive.ours - naive.ncu} ns`);
    const later = ['full', 'only'].flatMap(m =>
      [1, 2, 3].map(i => ncuMedians(readIn('short-kernels-2', `ncu-spread/transpose_ladder.ncu.${m}-${i}.csv`)).get('naive')!),
    );
    const all = [...ncuNaive, ...later];
    assert.deepEqual([Math.min(...all), Math.max(...all)], [17952, 18400]);
    const misses = [first, second].flatMap(r => r.rounds.map(rows => rows.find(x => x.name === 'naive')!)).map(n => n.ncu - n.ours);
    assert.deepEqual(misses, [240, 160, 336, 432]);
    assert.ok(misses.every(m => m < spreadOf(all)));
  });

  test("the product's medians are its timed run's gpu__time_duration, paired launch by launch; stalls came from a run of their own", () => {
    for (const [run, program, round] of RUNS.flatMap(run =>
      ['transpose_ladder', 'kernel_lengths'].flatMap(program => [1, 2].map(round => [run, program, round] as const)),
    )) {
      const timed = parseTimerRecords(readIn(run, `${program}.timed.${round}.timer.jsonl`));
      assert.equal(timed.gpuTimeProblem, null);
      assert.ok(timed.launches.length > 0 && timed.launches.every(l => l.gpuTimeNs !== null && l.gpuTimeNs > 0));
      // under the profiler's kernel replay the records carry no times: the counter is the only clock
      assert.ok(timed.launches.every(l => l.durationNs === 0));
      assert.equal(timed.pcSampling, null);
      const j = JSON.parse(readIn(run, `${program}.cupti.${round}.json`)) as { kernels: Row[] };
      for (const k of j.kernels) {
        const ns = timed.launches.filter(l => l.kernel === k.kernel).map(l => l.gpuTimeNs!);
        assert.equal(median(ns.slice(2, 22)), Math.round(k.medianMs * 1e6), k.kernel);
      }
      const stalls = parseTimerRecords(readIn(run, `${program}.stalls.${round}.timer.jsonl`));
      assert.ok(stalls.pcSampling && stalls.pcSampling.total > 0);
      assert.ok(stalls.launches.every(l => l.durationNs > 0 && l.gpuTimeNs === null));
      assert.match(stalls.gpuTimeProblem!, /did not read gpu__time_duration/);
    }
  });

  test('why not the records or user replay: the first probe (same GPU class), short kernels against ncu', () => {
    // kernel records read 0.38–0.82 µs over ncu on every kernel under 20 µs; the range profiler's user
    // replay (which keeps the records) read longer still; kernel replay met the target on the length curve
    const median20 = (durations: number[]) => {
      const out: number[] = [];
      for (let i = 0; i + 21 <= durations.length; i += 21) out.push(median(durations.slice(i + 1, i + 21)));
      return out;
    };
    for (const program of ['transpose_ladder', 'kernel_lengths']) {
      const lines = (mode: string) =>
        read(`probe/${program}.${mode}.1.jsonl`)
          .split('\n')
          .filter(Boolean)
          .map(l => JSON.parse(l) as Record<string, number>);
      const records = median20(
        lines('activity')
          .filter(r => 'k' in r)
          .sort((a, b) => a.s! - b.s!)
          .map(r => r.du!),
      );
      const gt = (mode: string) =>
        median20(
          lines(mode)
            .filter(r => 'gt' in r)
            .sort((a, b) => a.gi! - b.gi!)
            .map(r => r.gt!),
        );
      const ref: number[] = [];
      const launches = [...ncuLaunches(read(`probe/${program}.ncu.1.csv`)).values()];
      for (const l of launches) ref.push(median(l.slice(1, 21)));
      const [kernelReplay, userReplay] = [gt('gt-kernel'), gt('gt-user')];
      ref.forEach((n, i) => {
        if (n >= 20000) return;
        assert.ok(records[i]! - n >= 380 && records[i]! - n <= 820, `${program} ${i}: records ${records[i]} against ${n}`);
        assert.ok(userReplay[i]! - n >= 600, `${program} ${i}: user replay ${userReplay[i]} against ${n}`);
        if (program === 'kernel_lengths')
          assert.ok(Math.abs(kernelReplay[i]! - n) <= Math.max(0.01 * n, 200), `${i}: ${kernelReplay[i]} against ${n}`);
      });
    }
  });

  test('npm run bench:gpu in the same session as the second recording, and twice more: with stalls 0.198×, 0.203× and 0.194× the hand loop, timing only 0.202×, 0.196× and 0.206×', () => {
    for (const [dir, withStalls, timingOnly, cached] of [
      ['bench-gpu', '0.198', '0.202', '1.27'],
      // again later the same day, on another H200 host (its hand loop 58.0 s against 55.7 s)
      ['bench-gpu-again', '0.203', '0.196', '1.36'],
      // the next session's build (2026-12-03, 09:39), another H200 host again (hand loop 59.0 s)
      ['bench-gpu-third', '0.194', '0.206', '1.47'],
    ] as const) {
      const bench = (f: string) => readIn('short-kernels-2', `${dir}/${f}`);
      const wall = (f: string) => Number(bench(`${f}.wall_s`));
      const summary = JSON.parse(bench('summary.json')) as { factors: { factor: string; diff: number | null }[] };
      // every factor's median within 0.5 % of the hand-run ncu's (--cache-control none), 56–87 µs kernels
      const diffs = summary.factors.filter(f => f.diff !== null).map(f => f.diff!);
      assert.ok(diffs.length >= 6 && diffs.every(d => d <= 0.005), diffs.join(', '));
      const md = bench('summary.md');
      // the summary's ratios, recomputed from the wall times it read
      const hand = (what: string) => Number(new RegExp(`\\| hand loop wall \\(${what}\\) \\| ([\\d.]+) s`).exec(md)![1]);
      // (the table shows the hand loop's seconds to two places: the ratio from them is within 0.001)
      const near = (a: number, b: string) => assert.ok(Math.abs(a - Number(b)) < 0.001, `${a} against ${b}`);
      near(wall('ours-cold') / hand('durations and stall metrics'), withStalls);
      near(wall('ours-nostall') / hand('durations only'), timingOnly);
      const met = (r: string, target: number) => (Number(r) <= target ? 'PASS' : 'MISS');
      assert.ok(md.includes(`| ratio, timing only | ${timingOnly} | ≤ 0.25 | ${met(timingOnly, 0.25)} |`), md);
      assert.ok(md.includes(`| ratio ours / hand | ${withStalls} | ≤ 0.2 | ${met(withStalls, 0.2)} |`), md);
      assert.ok(md.includes(`| cached re-run | ${cached} s, 0 GPU runs |`), md);
      assert.ok(wall('ours-nostall') < wall('ours-cold'));
    }
  });
});
