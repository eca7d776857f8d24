// Stage 5, summarise: statistics of the timed launches, and the noise model that says whether
// two medians differ (the sweep relates every variant to the file as written with it).

/** A timing's statistics, in milliseconds. */
interface Stats {
  medianMs: number | null;
  iqrMs: number | null;
  q1Ms: number | null;
  q3Ms: number | null;
  cv: number | null;
  samples: number;
}

function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function summarize(durationsMs: number[]): Stats {
  const s = [...durationsMs].sort((a, b) => a - b);
  if (!s.length) return { medianMs: null, iqrMs: null, q1Ms: null, q3Ms: null, cv: null, samples: 0 };
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  const sd = Math.sqrt(s.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, s.length - 1));
  const q1 = quantile(s, 0.25);
  const q3 = quantile(s, 0.75);
  return { medianMs: quantile(s, 0.5), q1Ms: q1, q3Ms: q3, iqrMs: q3 - q1, cv: mean > 0 ? sd / mean : null, samples: s.length };
}

/**
 * Run-to-run drift of one program's median on one GPU, as a share of the median (issue 22). The
 * same machine code timed in separate runs on the recorded H100 (test/fixtures/gpu/h100: cli/,
 * bench-gpu/, bench-gpu-final/, cache-check/ of matmul_basic; icache-ilp-bench/ vs recommend/ of
 * icache_ilp; sweep/matvec_coordinate vs matvec_exhaustive) spreads by up to 1.9 % (matmul_basic ×4,
 * 59.34–60.48 µs), and the identical cubins measured 28.7 vs 29.5 µs (2.8 %): 3 %.
 * Each run's IQR only shows the noise within that run; this term covers the drift between runs.
 */
export const RUN_DRIFT = 0.03;

type Timed = Pick<Stats, 'q1Ms' | 'q3Ms' | 'medianMs'>;

/**
 * Whether two timings are within noise: the same machine code always is (the same program cannot
 * differ); otherwise their interquartile ranges overlap once the gap between them is allowed
 * RUN_DRIFT of the larger median. Null without quartiles.
 */
export function withinNoise(a: Timed, b: Timed, sameCode = false): boolean | null {
  if (sameCode) return true;
  if (a.q1Ms === null || a.q3Ms === null || b.q1Ms === null || b.q3Ms === null) return null;
  const drift = RUN_DRIFT * Math.max(a.medianMs ?? 0, b.medianMs ?? 0);
  return a.q1Ms - drift <= b.q3Ms && b.q1Ms - drift <= a.q3Ms;
}

/** The interquartile ranges overlap (no drift term; withinNoise is the noise model). */
export function iqrOverlap(a: Pick<Stats, 'q1Ms' | 'q3Ms'>, b: Pick<Stats, 'q1Ms' | 'q3Ms'>): boolean | null {
  if (a.q1Ms === null || a.q3Ms === null || b.q1Ms === null || b.q3Ms === null) return null;
  return a.q1Ms <= b.q3Ms && b.q1Ms <= a.q3Ms;
}
