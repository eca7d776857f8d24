// Issue 42: short kernels timed true. On an H200 (scripts/device/record-short-kernels.sh), two rounds of
// `unroll-lens compare --timer cupti` on our two short-kernel programs (scripts/device/short-kernels/:
// a transpose ladder of 3–18 µs kernels, and one kernel at ten lengths, 2.6 µs to 1.2 ms), each next to
// a hand-run `ncu --cache-control none --clock-control none` reading gpu__time_duration.sum for every
// launch of the same program. The reference is read here by its own small CSV reader, not the engine's;
// both sides skip each kernel's first 2 launches and take the next 20.
//
// The target: every median within max(1 %, 0.2 µs) of ncu's, every speedup within 1 %. The length curve
// meets it. The ladder meets it but for the misses listed below, each asserted with its measured cause.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT } from './helpers';
import { parseTimerRecords } from '../../src/engine/gpu/cupti/timerRecords';

const DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h200', 'short-kernels');
const read = (f: string) => fs.readFileSync(path.join(DIR, f), 'utf8');
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

function compared(program: string, round: number): Compared[] {
  const j = JSON.parse(read(`${program}.cupti.${round}.json`)) as { kernels: Row[]; measurement: Record<string, string> };
  const ref = ncuMedians(read(`${program}.ncu.${round}.csv`));
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
    for (const program of ['transpose_ladder', 'kernel_lengths'])
      for (const round of [1, 2]) {
        const j = JSON.parse(read(`${program}.cupti.${round}.json`)) as { measurement: unknown; notes: string[] };
        assert.deepEqual(j.measurement, { tool: 'cupti', clocks: 'as-is', caches: 'warm', duration: 'gpu-time' });
        assert.ok(!j.notes.some(n => n.startsWith('gpu__time_duration')), j.notes.join('\n'));
      }
    assert.match(read('gpu.txt'), /^NVIDIA H200, 580\./);
  });

  test('the length curve, 2.6 µs to 1.2 ms: every median within max(1 %, 0.2 µs) of ncu and every speedup within 1 %, both rounds', () => {
    for (const round of [1, 2]) {
      const rows = compared('kernel_lengths', round);
      assert.equal(rows.length, 10);
      assert.ok(Math.min(...rows.map(r => r.ncu)) < 3000 && Math.max(...rows.map(r => r.ncu)) > 1e6);
      for (const r of rows) {
        assert.ok(r.medianOk, `round ${round} ${r.name}: ${r.ours} ns against ncu ${r.ncu} ns`);
        assert.ok(Math.abs(r.speedupDiff) <= 0.01, `round ${round} ${r.name}: speedup ${(r.speedupDiff * 100).toFixed(2)} % off ncu's`);
      }
    }
  });

  test('the transpose ladder, 3–18 µs: within target but for the known misses, each a tick of the timer or naive’s own spread', () => {
    const misses: string[] = [];
    const rounds = [1, 2].map(round => compared('transpose_ladder', round));
    rounds.forEach((rows, i) => {
      assert.equal(rows.length, 8);
      for (const r of rows) {
        if (!r.medianOk) misses.push(`${i + 1} median ${r.name}`);
        if (Math.abs(r.speedupDiff) > 0.01) misses.push(`${i + 1} speedup ${r.name}`);
      }
    });
    // any change to this list, better or worse, is a finding: docs/measurements.md says why each is here
    assert.deepEqual(misses, ['1 median naive', '1 speedup naive', '1 speedup tiled<1, 16, 0>', '2 speedup copy_shared']);
    // The one-tick misses: each kernel's median is within one 32 ns tick of ncu's; at 3 µs a tick is 1.05 %,
    // and ncu's own two rounds differ by a tick on these kernels too.
    for (const [round, name] of [
      [1, 'tiled<1, 16, 0>'],
      [2, 'copy_shared'],
    ] as const) {
      const r = rounds[round - 1]!.find(x => x.name === name)!;
      assert.ok(Math.abs(r.ours - r.ncu) <= TICK_NS && r.ncu < 3200, `${name}: ${r.ours} against ${r.ncu}`);
    }
    const ncuOwn = [1, 2].map(round => ncuMedians(read(`transpose_ladder.ncu.${round}.csv`)));
    assert.equal(Math.abs(ncuOwn[0]!.get('copy_shared')! - ncuOwn[1]!.get('copy_shared')!), TICK_NS);
    // naive (strided writes) runs at a speed of its own in each process: ncu alone, in nine processes of
    // the same program this session (ncu-spread/: an earlier recording's ncu runs), gave medians 352 ns
    // apart, more than our miss of it
    const naive = rounds[0]!.find(x => x.name === 'naive')!;
    const ncuNaive = [
      ...ncuOwn.map(m => m.get('naive')!),
      ncuMedians(read('probe/transpose_ladder.ncu.1.csv')).get('naive')!,
      ...['gap-0', 'gap-10000', 'ncu-spread/gap-0', 'ncu-spread/gap-10000'].map(g => ncuMedians(read(`${g}.ncu.csv`)).get('naive')!),
      ...['a', 'b'].map(r => ncuMedians(read(`ncu-spread/transpose_ladder.ncu.${r}.csv`)).get('naive')!),
    ];
    assert.equal(ncuNaive.length, 9);
    const spread = Math.max(...ncuNaive) - Math.min(...ncuNaive);
    assert.ok(spread > Math.abs(naive.ours - naive.ncu), `ncu's own spread ${spread} ns, ours off by ${naive.ours - naive.ncu} ns`);
  });

  test("the product's medians are its timed run's gpu__time_duration, paired launch by launch; stalls came from a run of their own", () => {
    for (const program of ['transpose_ladder', 'kernel_lengths'])
      for (const round of [1, 2]) {
        const timed = parseTimerRecords(read(`${program}.timed.${round}.timer.jsonl`));
        assert.equal(timed.gpuTimeProblem, null);
        assert.ok(timed.launches.length > 0 && timed.launches.every(l => l.gpuTimeNs !== null && l.gpuTimeNs > 0));
        // under the profiler's kernel replay the records carry no times: the counter is the only clock
        assert.ok(timed.launches.every(l => l.durationNs === 0));
        assert.equal(timed.pcSampling, null);
        const j = JSON.parse(read(`${program}.cupti.${round}.json`)) as { kernels: Row[] };
        for (const k of j.kernels) {
          const ns = timed.launches.filter(l => l.kernel === k.kernel).map(l => l.gpuTimeNs!);
          assert.equal(median(ns.slice(2, 22)), Math.round(k.medianMs * 1e6), k.kernel);
        }
        const stalls = parseTimerRecords(read(`${program}.stalls.${round}.timer.jsonl`));
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

  test('npm run bench:gpu in the same session: timing only within 0.25× the hand loop, with stalls 0.209× (over 0.2×: the stall run)', () => {
    const wall = (f: string) => Number(read(`bench-gpu/${f}.wall_s`));
    const summary = JSON.parse(read('bench-gpu/summary.json')) as { factors: { factor: string; diff: number | null }[] };
    // every factor's median within 0.5 % of the hand-run ncu's (--cache-control none), 56–87 µs kernels
    const diffs = summary.factors.filter(f => f.diff !== null).map(f => f.diff!);
    assert.ok(diffs.length >= 6 && diffs.every(d => d <= 0.005), diffs.join(', '));
    const md = read('bench-gpu/summary.md');
    assert.match(md, /ratio, timing only \| 0\.210 \| ≤ 0\.25 \| PASS/);
    assert.match(md, /ratio ours \/ hand \| 0\.209 \| ≤ 0\.2 \| MISS/);
    assert.match(md, /cached re-run \| 1\.30 s, 0 GPU runs/);
    assert.ok(wall('ours-nostall') < wall('ours-cold'));
  });
});
