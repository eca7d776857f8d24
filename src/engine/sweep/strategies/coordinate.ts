// Coordinate descent over the sweep's axes (one loop's factor, or one macro's value, at a time).
//
// Why this search: an unroll factor mostly changes its own loop's code, so a kernel's time is
// close to a sum of per-loop effects; the loops interact only through shared resources
// (registers and with them occupancy, total code size against the instruction cache, a nested
// loop multiplying its parent's body). On such a separable-plus-mild-coupling landscape one pass
// of coordinate descent from the as-written point already lands on the optimum of the separable
// part, and further passes (until a pass changes nothing, at most MAX_PASSES) correct for the
// coupling. It costs about the sum of the axis sizes per pass instead of their product: a 2-loop
// × 7-factor space takes 13 to 25 evaluations of 49, a 3-loop one 19 to 37 of 343. Random or
// evolutionary searches need far more evaluations to be reliable on spaces this small, and the
// runner builds a whole axis in parallel, which suits nvcc. test/bench (npm run bench) measures
// it against the exhaustive sweep.
import { better, ScoreMemo, SearchSpace, Strategy, StrategyContext } from './strategy';

const MAX_PASSES = 3;

export const coordinate: Strategy = {
  name: 'coordinate',
  description: `coordinate descent from the as-written point, one axis at a time, until a pass changes nothing (at most ${MAX_PASSES} passes)`,
  expectedEvaluations(space: SearchSpace): number {
    // One pass and half a second one: a progress estimate.
    const pass = space.sizes.reduce((a, s) => a + s - 1, 0);
    return Math.min(
      space.sizes.reduce((a, b) => a * b, 1),
      1 + Math.ceil(pass * 1.5),
    );
  },
  maxEvaluations(space: SearchSpace): number {
    // the start, then every pass walks each axis: at most its other values are new
    return Math.min(
      space.sizes.reduce((a, b) => a * b, 1),
      1 + MAX_PASSES * space.sizes.reduce((a, s) => a + s - 1, 0),
    );
  },
  async search(ctx: StrategyContext): Promise<void> {
    const memo = new ScoreMemo(ps => ctx.evaluate(ps));
    const x = [...ctx.space.start];
    const sizes = ctx.space.sizes;
    const product = sizes.reduce((a, b) => a * b, 1);
    const lineOf = (axis: number) => Array.from({ length: sizes[axis] }, (_, v) => x.map((c, i) => (i === axis ? v : c)));
    // Before each line: its new points are known exactly (x is), the later lines' at most their
    // axis's other values, and never more than the points not evaluated yet.
    const tell = (pass: number, axis: number) => {
      let more = lineOf(axis).filter(p => !memo.has(p)).length;
      for (let a = axis + 1; a < sizes.length; a++) more += sizes[a] - 1;
      more += (MAX_PASSES - pass - 1) * sizes.reduce((s, n) => s + n - 1, 0);
      ctx.atMost?.(Math.min(more, product - memo.size));
    };
    await memo.scoresOf([x]);
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      let changed = false;
      for (let axis = 0; axis < x.length; axis++) {
        if (ctx.signal?.aborted) return;
        tell(pass, axis);
        const line = lineOf(axis);
        const scores = await memo.scoresOf(line);
        if (ctx.signal?.aborted) return;
        // Move only on a strict improvement: ties keep the current value (fewer changes to the file).
        let bestV = x[axis];
        let bestScore = memo.get(x);
        scores.forEach((s, v) => {
          if (better(s, bestScore)) {
            bestV = v;
            bestScore = s;
          }
        });
        if (bestV !== x[axis]) {
          x[axis] = bestV;
          changed = true;
        }
      }
      if (!changed) return;
    }
  },
};
