// Replays a recorded exhaustive sweep through a strategy: each point's recorded measurement is
// its score, so a strategy's evaluations and the best it finds can be compared with the whole
// space's best without a GPU (test/bench, and on saved results to choose a strategy).
import type { SweepResult, SweepVariant } from '../../schema/types';
import { bestBy, gpuScore, staticRuleOf, staticScore } from './objective';
import { AS_WRITTEN_ID, pointId, SweepPoint } from './space';
import type { Strategy } from './strategies';

export type ReplayObjective = 'median' | 'static';

export interface ReplayOutcome {
  strategy: string;
  objective: ReplayObjective;
  /** Variants the strategy had measured, the file as written included (as SweepResult.evaluations counts). */
  evaluations: number;
  /** Points of the recording (the file as written included). */
  recorded: number;
  bestId: string | null;
  /** Median of the best found and of the recording's best (null for the static objective). */
  bestMedian: number | null;
  exhaustiveBestMedian: number | null;
  /** bestMedian / exhaustiveBestMedian - 1: 0 when the strategy found the fastest (null statically). */
  gap: number | null;
  /** Rank of the best found among all recorded variants by the objective (1 = the recording's best). */
  bestRank: number | null;
}

export async function replaySweep(
  recorded: SweepResult,
  strategy: Strategy,
  objective: ReplayObjective = recorded.static ? 'static' : 'median',
): Promise<ReplayOutcome> {
  const byId = new Map(recorded.variants.map(v => [v.id, v]));
  const baseline = byId.get(recorded.baseline) ?? byId.get(AS_WRITTEN_ID) ?? null;
  const score = (v: SweepVariant | undefined) =>
    !v ? null : objective === 'median' ? gpuScore(v) : staticScore(v, baseline, staticRuleOf(recorded), recorded.variants);
  const lines = recorded.loops.map(l => String(l.line));
  const params = Object.entries(recorded.params);
  const sizes = [...lines.map(() => recorded.factors.length), ...params.map(([, vs]) => vs.length)];
  const pointAt = (idx: number[]): SweepPoint => ({
    factors: Object.fromEntries(lines.map((l, i) => [l, recorded.factors[idx[i]]])),
    params: Object.fromEntries(params.map(([n, vs], j) => [n, vs[idx[lines.length + j]]])),
  });
  const start = [
    ...recorded.loops.map(l => {
      const i = recorded.factors.findIndex(f => String(f) === String(l.written));
      const d = recorded.factors.indexOf('default');
      return i >= 0 ? i : d >= 0 ? d : 0;
    }),
    ...params.map(() => 0),
  ];
  const seen = new Set<string>();
  await strategy.search({
    space: { sizes, start },
    evaluate: async idx =>
      idx.map(i => {
        const id = pointId(pointAt(i));
        seen.add(id);
        return score(byId.get(id));
      }),
  });
  const found = [baseline, ...[...seen].map(id => byId.get(id))].filter((v): v is SweepVariant => !!v);
  const best = bestBy(found, score);
  const overall = bestBy(recorded.variants, score);
  const ranked = recorded.variants
    .map(v => ({ id: v.id, s: score(v) }))
    .filter((x): x is { id: string; s: number } => x.s !== null)
    .sort((a, b) => a.s - b.s);
  const rank = best ? ranked.findIndex(x => score(byId.get(x.id)) === score(best)) + 1 : 0;
  const bestMedian = objective === 'median' ? (best?.medianMs ?? null) : null;
  const exhaustiveBestMedian = objective === 'median' ? (overall?.medianMs ?? null) : null;
  return {
    strategy: strategy.name,
    objective,
    evaluations: seen.size + (baseline && !seen.has(baseline.id) ? 1 : 0),
    recorded: recorded.variants.length,
    bestId: best?.id ?? null,
    bestMedian,
    exhaustiveBestMedian,
    gap: bestMedian !== null && exhaustiveBestMedian ? bestMedian / exhaustiveBestMedian - 1 : null,
    bestRank: rank > 0 ? rank : null,
  };
}
