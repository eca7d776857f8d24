// Each measured or built variant's instruction-cache entry (issue 13). The model predicts from the
// variant's SASS how much slower its hot code runs for not fitting the instruction cache; once
// the GPU has run the variant, its measured slowdown and no_instruction share replace that
// prediction in what is shown (the prediction stays beside it, marked as such), when the
// slowdown is the instruction cache's (attribution.ts); otherwise it is shown as "not i-cache".
// The sweep (a bench is one) applies it to every point once the run ends (sweep.ts, attachIcache);
// a loop's SASS variants get predictions only.
import type { VariantIcache } from '../../schema/types';
import { warpsAtOccupancy } from '../occupancy/warpsPerSm';
import type { LoopVariant } from '../variants/reports';
import { calibrationFor, predictIcache } from './model';
import type { IcachePrediction } from './types';
import { attributeSlowdown } from './attribution';

/** What the entries read of a row: a sweep point (or a loop's SASS variant), measured or not. */
export interface IcacheRow {
  label: string;
  /** 'ok' when the variant ran and was timed (any other run status: not measured). */
  status: string;
  medianMs: number | null;
  stallShare: Record<string, number> | null;
  achievedOccupancy: number | null;
}
/** What the entries read of a variant's build: its loop's hot code and theoretical warps per SM. */
export type IcacheBuild = Pick<LoopVariant, 'icache' | 'warpsPerSm'>;

const measuredRow = (r: IcacheRow) => r.status === 'ok' && r.medianMs !== null && r.medianMs > 0;

/**
 * Warps per SM for the prediction: on a measured row ncu's achieved occupancy (the launch the
 * program really made, grid size included), else the build's theoretical occupancy.
 */
function predictionWarps(
  row: IcacheRow,
  sass: IcacheBuild | undefined,
  arch: string,
): { warps: number; source: 'achieved' | 'theoretical' } | null {
  const achieved = measuredRow(row) && row.achievedOccupancy !== null ? warpsAtOccupancy(row.achievedOccupancy / 100, arch) : null;
  if (achieved !== null) return { warps: achieved, source: 'achieved' };
  return sass?.warpsPerSm ? { warps: sass.warpsPerSm, source: 'theoretical' } : null;
}

/**
 * The row measured slowdowns are against. The model's slowdown is relative to the same loop at a
 * size that fits, so the reference is the closest such measured code: the most unrolled measured
 * variant whose hot code fits (largest fitting hot loop), else the rolled one (×1), else the fastest;
 * null when fewer than two variants were measured.
 */
function icacheReference(rows: IcacheRow[], predictions: (IcachePrediction | null)[]): number | null {
  const measured = rows.map((r, i) => i).filter(i => measuredRow(rows[i]));
  // One measured variant has nothing to be compared with: its slowdown would read 1× whatever its code.
  if (measured.length < 2) return null;
  const fitting = measured.filter(i => predictions[i]?.fits);
  if (fitting.length) {
    return fitting.reduce((a, b) =>
      predictions[b]!.bytes > predictions[a]!.bytes ||
      (predictions[b]!.bytes === predictions[a]!.bytes && rows[b].medianMs! < rows[a].medianMs!)
        ? b
        : a,
    );
  }
  const rolled = measured.find(i => rows[i].label === '1');
  if (rolled !== undefined) return rolled;
  return measured.reduce((a, b) => (rows[b].medianMs! < rows[a].medianMs! ? b : a));
}

/**
 * Each row's i-cache entry (`sass[i]` is row i's build; undefined when it has none), null where
 * neither a prediction nor a measurement exists.
 */
export function icacheEntries(
  rows: IcacheRow[],
  sass: (IcacheBuild | undefined)[],
  arch: string,
  /** What timed the rows (the result's measurement.tool): it names where the no_instruction share came from. */
  timer: 'ncu' | 'cupti' | null = null,
): (VariantIcache | null)[] {
  const cal = calibrationFor(arch);
  const warps = rows.map((r, i) => predictionWarps(r, sass[i], arch));
  const predictions = rows.map((_, i) => {
    const facts = sass[i]?.icache;
    return facts && warps[i] ? predictIcache(facts, warps[i]!.warps, arch, cal) : null;
  });
  const ref = icacheReference(rows, predictions);
  return rows.map((r, i) => {
    const p = predictions[i];
    const w = warps[i];
    const bytes = p?.bytes ?? sass[i]?.icache?.bytes ?? null;
    const measured =
      ref !== null && measuredRow(r)
        ? (() => {
            const slowdown = round3(r.medianMs! / rows[ref].medianMs!);
            const noInstruction = r.stallShare?.no_instruction ?? null;
            const attribution = attributeSlowdown({
              slowdown,
              noInstruction,
              referenceNoInstruction: rows[ref].stallShare?.no_instruction ?? null,
              fits: p ? p.fits : null,
              bytes,
              stallShare: r.stallShare,
            });
            return { slowdown, noInstruction, attribution };
          })()
        : null;
    if (!p && !measured) return null;
    const warpsNote = w
      ? `${w.warps} warps/SM from ${w.source === 'achieved' ? "ncu's achieved occupancy of this run" : 'the theoretical occupancy (registers, shared memory, launch bounds or 256 threads)'}`
      : null;
    const stallsFrom =
      timer === 'cupti' ? "the CUPTI timer's PC samples" : timer === 'ncu' ? "ncu's warp-stall metrics" : 'the warp-stall samples';
    const measuredNote = measured ? `measured: median ÷ ${rows[ref!].label}'s median, no_instruction share from ${stallsFrom}` : null;
    const basis = [
      measuredNote,
      p ? `predicted: ${p.basis}` : 'no prediction: the loop has no repeating machine code, or no SASS listing',
      warpsNote,
    ]
      .filter(Boolean)
      .join('; ');
    return {
      bytes,
      predicted: p ? { ...p.predictedSlowdown } : null,
      fits: p ? p.fits : null,
      warpsPerSm: p ? p.warpsPerSm : null,
      warpsSource: p && w ? w.source : null,
      shape: p?.shape ?? null,
      basis,
      reference: ref !== null ? rows[ref].label : null,
      measured,
      shown: !measured ? 'predicted' : measured.attribution.cause === 'other' ? 'not-icache' : 'measured',
    };
  });
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
