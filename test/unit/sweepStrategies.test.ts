// Strategies on synthetic objectives: counts of evaluations, no point evaluated twice, and the
// optimum found on separable and mildly coupled landscapes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { coordinate, exhaustive, Score, Strategy, strategyByName } from '../../src/engine/sweep/strategies';
import { allPoints } from '../../src/engine/sweep/strategies/exhaustive';
import { limitProcesses } from '../../src/engine/sweep/runners/static';

/** Runs a strategy on f, recording every point it asks for (no memo between it and f). */
async function run(s: Strategy, sizes: number[], start: number[], f: (p: number[]) => Score) {
  const asked: string[] = [];
  let batches = 0;
  await s.search({
    space: { sizes, start },
    evaluate: async ps => {
      batches++;
      for (const p of ps) {
        assert.equal(p.length, sizes.length);
        p.forEach((v, i) => assert.ok(v >= 0 && v < sizes[i], `index ${v} out of axis ${i}`));
        asked.push(p.join(','));
      }
      return ps.map(f);
    },
  });
  const best = asked
    .map(k => k.split(',').map(Number))
    .reduce<number[] | null>((b, p) => {
      const fp = f(p);
      return fp !== null && (b === null || fp < f(b)!) ? p : b;
    }, null);
  return { asked, batches, best };
}

function optimum(sizes: number[], f: (p: number[]) => Score): number {
  return Math.min(
    ...allPoints(sizes)
      .map(f)
      .filter((x): x is number => x !== null),
  );
}

// Unroll-like per-axis curves: a dip at some factor, a rise past it (code size, registers).
const curveA = [10, 9, 7, 5, 4.5, 6, 8];
const curveB = [6, 6.5, 5, 3, 2.8, 3.5, 9];

describe('search strategies', () => {
  test('exhaustive: every point once, start first, one batch', async () => {
    const r = await run(exhaustive, [7, 7], [2, 3], p => curveA[p[0]] + curveB[p[1]]);
    assert.equal(r.asked.length, 49);
    assert.equal(new Set(r.asked).size, 49);
    assert.equal(r.asked[0], '2,3');
    assert.equal(r.batches, 1);
    assert.equal(exhaustive.expectedEvaluations({ sizes: [7, 7, 3], start: [0, 0, 0] }), 147);
  });

  test('coordinate: separable 2-D objective, optimum in one pass plus a confirming pass', async () => {
    const f = (p: number[]) => curveA[p[0]] + curveB[p[1]];
    const r = await run(coordinate, [7, 7], [0, 0], f);
    assert.equal(new Set(r.asked).size, r.asked.length, 'no point asked twice');
    assert.equal(f(r.best!), optimum([7, 7], f));
    assert.equal(r.best!.join(','), '4,4');
    // pass 1: start + 6 + 6; pass 2 re-walks axis 0 at the new b (6 new), axis 1 is known
    assert.equal(r.asked.length, 19);
    assert.ok(r.asked.length < 49);
  });

  test('coordinate: mildly coupled 2-D objective (shared register budget) still reaches the optimum', async () => {
    // Unrolling both loops far costs extra (registers → occupancy): a coupling term on a·b.
    const f = (p: number[]) => curveA[p[0]] + curveB[p[1]] + 0.35 * Math.max(0, p[0] + p[1] - 6) ** 2;
    for (const start of [
      [0, 0],
      [6, 6],
      [3, 0],
      [0, 5],
    ]) {
      const r = await run(coordinate, [7, 7], start, f);
      assert.equal(new Set(r.asked).size, r.asked.length, `start ${start}: no point asked twice`);
      assert.equal(f(r.best!), optimum([7, 7], f), `start ${start}: found ${r.best} (${f(r.best!)}) vs ${optimum([7, 7], f)}`);
      assert.ok(r.asked.length <= 37, `start ${start}: ${r.asked.length} evaluations`);
    }
  });

  test('coordinate: 3 loops × 7 factors, a fraction of 343 evaluations; failed points never win', async () => {
    const curveC = [4, 3, 2, 2.5, 3, 3.5, 4];
    const f = (p: number[]): Score =>
      p[2] === 6 && p[0] === 4 ? null : curveA[p[0]] + curveB[p[1]] + curveC[p[2]] + 0.1 * Math.abs(p[0] - p[2]);
    const r = await run(coordinate, [7, 7, 7], [0, 0, 0], f);
    assert.equal(new Set(r.asked).size, r.asked.length);
    assert.equal(f(r.best!), optimum([7, 7, 7], f));
    assert.ok(r.asked.length <= 1 + 3 * 18, `${r.asked.length} evaluations`);
    assert.ok(r.asked.length < 343 / 5);
  });

  test('coordinate: a failed start moves to any working point; cancellation stops between batches', async () => {
    const f = (p: number[]): Score => (p[0] === 0 ? null : curveA[p[0]] + curveB[p[1]]);
    const r = await run(coordinate, [7, 7], [0, 0], f);
    assert.equal(f(r.best!), optimum([7, 7], f));
    const ac = new AbortController();
    let batches = 0;
    await coordinate.search({
      space: { sizes: [7, 7], start: [0, 0] },
      signal: ac.signal,
      evaluate: async ps => {
        if (++batches === 2) ac.abort();
        return ps.map(p => curveA[p[0]] + curveB[p[1]]);
      },
    });
    assert.equal(batches, 2);
  });

  test('by name', () => {
    assert.equal(strategyByName('coordinate'), coordinate);
    assert.throws(() => strategyByName('random'), /unknown strategy 'random': use exhaustive or coordinate/);
  });
});

describe('shared nvcc limit', () => {
  test('limitProcesses: never more than n at once across callers, every call answered', async () => {
    let now = 0;
    let peak = 0;
    const slow = async (command: string) => {
      now++;
      peak = Math.max(peak, now);
      await new Promise(r => setTimeout(r, 2 + (command.length % 3)));
      now--;
      return {
        command,
        args: [],
        exitCode: 0,
        signal: null,
        stdout: command,
        stderr: '',
        timedOut: false,
        cancelled: false,
        durationMs: 1,
      };
    };
    const limited = limitProcesses(slow, 3);
    const out = await Promise.all(Array.from({ length: 40 }, (_, i) => limited(`c${i}`, [])));
    assert.deepEqual(
      out.map(r => r.stdout),
      Array.from({ length: 40 }, (_, i) => `c${i}`),
    );
    assert.equal(peak, 3);
  });
});
