// Issue 22, the noise flag: identical machine code is never "outside noise", and run-to-run drift
// (RUN_DRIFT, measured on the recorded H100 runs) is part of the noise model.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import type { SweepVariant } from '../../src/protocol';
import { iqrOverlap, RUN_DRIFT, summarize, withinNoise } from '../../src/engine/sweep/bench';
import { relate, sameCode } from '../../src/engine/sweep/sweep';
import { REPO_ROOT } from './helpers';

const H100 = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100');

/** n durations spread evenly ±spread around a median (ms). */
const around = (median: number, spread: number, n = 10) =>
  Array.from({ length: n }, (_, i) => median - spread + (2 * spread * i) / (n - 1));

/** A timed row: its own statistics, and each of its instantiations' (the same durations by default). */
const run = (id: string, durations: number[], identicalTo: string | null = null, other = durations): SweepVariant =>
  ({
    id,
    status: 'ok',
    identicalTo,
    ...summarize(durations),
    instantiations: [
      { kernel: 'k1', blockSize: null, ...summarize(durations), speedup: null, withinNoise: null },
      { kernel: 'k2', blockSize: null, ...summarize(other), speedup: null, withinNoise: null },
    ],
  }) as SweepVariant;

describe('noise model', () => {
  test("the issue's same code measured twice, 28.7 vs 29.5 µs (10 samples): within noise, though the IQRs do not overlap", () => {
    const a = summarize(around(0.0287, 0.0001));
    const b = summarize(around(0.0295, 0.0001));
    assert.equal(iqrOverlap(a, b), false);
    assert.equal(withinNoise(a, b), true);
  });

  test('a difference well past the drift stays outside noise', () => {
    const a = summarize(around(0.0582, 0.0002));
    // 3.4 % slower (matmul_basic ×4 vs as written): the IQRs' gap is the drift itself, within noise
    assert.equal(withinNoise(a, summarize(around(0.0602, 0.0002))), true);
    // 5 % slower with tight IQRs: past IQRs and drift
    assert.equal(withinNoise(a, summarize(around(0.0611, 0.0002))), false);
    assert.equal(withinNoise(summarize(around(0.0582, 0.0002)), summarize(around(0.1687, 0.0003))), false);
  });

  test('the same machine code is within noise whatever the two timings read', () => {
    const a = summarize(around(1.0, 0.001));
    const b = summarize(around(1.5, 0.001));
    assert.equal(withinNoise(a, b), false);
    assert.equal(withinNoise(a, b, true), true);
  });

  test("bench rows: a row carrying the first row's code (identicalTo) is within noise; another at the same times is not", () => {
    const rows = [run('as-written', around(1.0, 0.001)), run('default', around(1.2, 0.001), 'as-written'), run('4', around(1.2, 0.001))];
    for (const r of rows) relate(r, rows[0]);
    assert.deepEqual(
      rows.map(r => r.withinNoise),
      [true, true, false],
    );
    // each instantiation's row follows the same rule against the same instantiation of the first row
    assert.deepEqual(
      rows.map(r => r.instantiations!.map(x => x.withinNoise)),
      [
        [true, true],
        [true, true],
        [false, false],
      ],
    );
    assert.ok(Math.abs(rows[2].instantiations![0].speedup! - 1 / 1.2) < 1e-9);
  });

  test('an instantiation is compared with the same instantiation of the first row, not with the row', () => {
    const base = run('as-written', around(1.0, 0.001), null, around(2.0, 0.001));
    const v = run('4', around(0.5, 0.001), null, around(2.0, 0.001));
    relate(base, base);
    relate(v, base);
    assert.ok(Math.abs(v.speedup! - 2) < 1e-9);
    assert.ok(Math.abs(v.instantiations![1].speedup! - 1) < 1e-9);
    assert.equal(v.instantiations![1].withinNoise, true);
  });

  test('sweep points: identicalTo either way, or both to a third point, is the same code', () => {
    const p = (id: string, identicalTo: string | null) => ({ id, identicalTo }) as SweepVariant;
    assert.equal(sameCode(p('a', null), p('b', 'a')), true);
    assert.equal(sameCode(p('b', 'a'), p('a', null)), true);
    assert.equal(sameCode(p('b', 'a'), p('c', 'a')), true);
    assert.equal(sameCode(p('b', null), p('c', null)), false);
    assert.equal(sameCode(p('b', 'a'), p('c', 'd')), false);
  });

  test('RUN_DRIFT covers the spread of the same program across the recorded H100 runs, and is of its size', () => {
    const files = [
      'cli/matmul_basic.json',
      'bench-gpu/ours-cold.json',
      'bench-gpu/ours-alt-profiles-per-gpu_1.json',
      'bench-gpu/ours-alt-profiles-per-gpu_3.json',
      'bench-gpu/ours-alt-ncu-passes_split.json',
      'bench-gpu-final/ours-cold.json',
      'cache-check/bench-cold.json',
      'icache-ilp-bench/sweep.json',
      'recommend/icache_ilp.json',
      'sweep/matvec_coordinate.json',
      'sweep/matvec_exhaustive.json',
    ];
    const medians = new Map<string, number[]>();
    for (const f of files) {
      const r = JSON.parse(fs.readFileSync(path.join(H100, f), 'utf8')) as {
        kernel: string;
        variants: { label?: string; id?: string; medianMs: number | null }[];
      };
      for (const v of r.variants) {
        if (v.medianMs === null) continue;
        const key = `${r.kernel}|${v.id ?? v.label}`;
        medians.set(key, [...(medians.get(key) ?? []), v.medianMs]);
      }
    }
    const spreads = [...medians.values()].filter(m => m.length > 1).map(m => Math.max(...m) / Math.min(...m) - 1);
    assert.ok(spreads.length >= 20, `${spreads.length} programs measured more than once`);
    const worst = Math.max(...spreads);
    assert.ok(worst <= RUN_DRIFT, `worst spread ${(worst * 100).toFixed(2)} %`);
    assert.ok(worst >= RUN_DRIFT / 2, `worst spread ${(worst * 100).toFixed(2)} %: the drift term is no larger than the data says`);
  });
});
