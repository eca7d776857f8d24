// Every point of the space, in one batch: what a small space (one or two loops) should get,
// and the reference the smarter strategies are measured against.
import type { SearchSpace, Strategy, StrategyContext } from './strategy';

export function allPoints(sizes: number[]): number[][] {
  if (sizes.some(s => s <= 0)) return [];
  const out: number[][] = [];
  const idx = sizes.map(() => 0);
  for (;;) {
    out.push([...idx]);
    let a = sizes.length - 1;
    while (a >= 0 && ++idx[a] === sizes[a]) idx[a--] = 0;
    if (a < 0) return out;
  }
}

export const exhaustive: Strategy = {
  name: 'exhaustive',
  description: 'every combination',
  expectedEvaluations(space: SearchSpace): number {
    return space.sizes.reduce((a, b) => a * b, 1);
  },
  maxEvaluations(space: SearchSpace): number {
    return space.sizes.reduce((a, b) => a * b, 1);
  },
  asksForAll: true,
  async search(ctx: StrategyContext): Promise<void> {
    // The start point first, so a one-point-at-a-time runner measures the file's own choice early.
    const start = ctx.space.start.join(',');
    const rest = allPoints(ctx.space.sizes).filter(p => p.join(',') !== start);
    await ctx.evaluate([ctx.space.start, ...rest]);
  },
};
