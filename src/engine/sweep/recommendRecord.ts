// How often the static recommendation (recommend.ts) landed within 5% of the GPU-measured best on
// the recorded sweeps (test/fixtures/gpu/h100/recommend/, docs/measurements.md "Recommended factor
// before running"), for the hover to say how far to trust it. Not a claim of its own:
// test/unit/recommend.test.ts recomputes it from those fixtures with the rule as it is now and
// fails when this record, the docs' count or the docs' table disagree with them.
export const RECOMMENDATION_RECORD = {
  /** Recorded loops whose recommendation was within 5% of the fastest measured variant. */
  hits: 18,
  /** Recorded loops scored. */
  loops: 22,
  /** The GPU the sweeps ran on. */
  gpu: 'H100',
} as const;

/** "within 5% of the GPU's best on 18 of 22 loops measured on an H100". */
export function recommendationRecordText(): string {
  const r = RECOMMENDATION_RECORD;
  return `within 5% of the GPU's best on ${r.hits} of ${r.loops} loops measured on an ${r.gpu}`;
}
