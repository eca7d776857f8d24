// What a search strategy sees: the axis sizes, where to start, and an evaluator that scores
// points. Strategies know nothing about loops, nvcc or GPUs; they decide which index vectors to
// evaluate next (a batch at a time, so builds can run in parallel) and stop when they are done.

/** Lower is better; null: the point failed (compile error, wrong result, …). */
export type Score = number | null;

export interface SearchSpace {
  /** Values per axis. */
  sizes: number[];
  /** Index vector of the starting point (the file as written, as near as the space allows). */
  start: number[];
}

export interface StrategyContext {
  space: SearchSpace;
  /** Scores of the points, in order. Cancelled points come back null; check `signal` after each batch. */
  evaluate(points: number[][]): Promise<Score[]>;
  signal?: AbortSignal;
  /**
   * What the strategy has learnt of its length: it will ask for at most `more` points beyond those
   * it has asked for so far. Tightens the progress counter's bound (`[3/≤38]`); optional, and a
   * strategy that never calls it is held to maxEvaluations.
   */
  atMost?(more: number): void;
}

export interface Strategy {
  readonly name: string;
  /** One line for `bestBasis`, help texts and reports. */
  readonly description: string;
  /** Evaluations it expects on this space: an estimate, for the time left, not a promise. */
  expectedEvaluations(space: SearchSpace): number;
  /** Evaluations it can need at most on this space: a promise, the progress counter's bound. */
  maxEvaluations(space: SearchSpace): number;
  /** It always asks for exactly maxEvaluations points (every one of the space): its count is known from the start. */
  readonly asksForAll?: boolean;
  search(ctx: StrategyContext): Promise<void>;
}

function pointKey(p: number[]): string {
  return p.join(',');
}

/**
 * Remembers every score, so a strategy asking again for a point (or for one point twice in a
 * batch) never causes a second evaluation.
 */
export class ScoreMemo {
  private readonly scores = new Map<string, Score>();

  constructor(private readonly evaluate: (points: number[][]) => Promise<Score[]>) {}

  get size(): number {
    return this.scores.size;
  }

  has(p: number[]): boolean {
    return this.scores.has(pointKey(p));
  }

  get(p: number[]): Score | undefined {
    return this.scores.get(pointKey(p));
  }

  async scoresOf(points: number[][]): Promise<Score[]> {
    const fresh = new Map<string, number[]>();
    for (const p of points) if (!this.scores.has(pointKey(p))) fresh.set(pointKey(p), p);
    if (fresh.size) {
      const list = [...fresh.values()];
      const got = await this.evaluate(list);
      list.forEach((p, i) => this.scores.set(pointKey(p), got[i] ?? null));
    }
    return points.map(p => this.scores.get(pointKey(p)) ?? null);
  }
}

/** a better than b (lower), a failed score never better than anything. */
export function better(a: Score | undefined, b: Score | undefined): boolean {
  if (a === null || a === undefined) return false;
  if (b === null || b === undefined) return true;
  return a < b;
}
