// Instruction-cache budget per architecture: the hot-loop code size past which throughput
// drops by more than 10%, calibrated from icache_cliff.cu runs (see docs/measurements.md).
import { parseRawPage } from '../profile/ncuCsv';
import { kernelProfile } from '../profile/stalls';

export interface IcacheBudget {
  arch: string;
  /** Largest hot-loop code size measured without a >10% slowdown. */
  bytes: number;
  status: 'measured' | 'estimate';
  /** Where the number comes from. */
  source: string;
}

/**
 * sm_90 was measured on an H100 80GB HBM3 (ncu 2025.3.1, CUDA 13.0, driver 580.159.04,
 * 2026-11-22) with icache_cliff.cu, 20 launches per point, same total work at every size: at
 * 4 warps per SM +9.9% at 48.8 KiB of hot-loop code, +10.1% at 64.8 KiB, +13.8% at 128.8 KiB and
 * +139% at 256.8 KiB (no_instruction 58% of stall cycles); at 8 warps per SM +8.1% at 128.8 KiB
 * and +88% at 256.8 KiB; at 32 warps per SM no slowdown up to 256.8 KiB. The budget is the
 * largest size still within 10% at 4 warps per SM. Other arches were not measured: they carry
 * sm_90's number as an estimate until scripts/device/record-fixtures.sh runs on one.
 */
const ICACHE_BUDGETS: IcacheBudget[] = [
  { arch: 'sm_90', bytes: 49_920, status: 'measured', source: 'icache_cliff.cu on an H100, 4 warps/SM, CUDA 13.0 (docs/measurements.md)' },
  { arch: 'sm_89', bytes: 49_920, status: 'estimate', source: 'not measured: sm_90 value' },
  { arch: 'sm_86', bytes: 49_920, status: 'estimate', source: 'not measured: sm_90 value' },
  { arch: 'sm_80', bytes: 49_920, status: 'estimate', source: 'not measured: sm_90 value' },
  { arch: 'sm_75', bytes: 49_920, status: 'estimate', source: 'not measured: sm_90 value' },
  { arch: 'sm_70', bytes: 49_920, status: 'estimate', source: 'not measured: sm_90 value' },
];

export function icacheBudget(arch: string): IcacheBudget {
  const base = arch.replace(/[af]$/, '');
  return (
    ICACHE_BUDGETS.find(b => b.arch === base) ?? {
      arch,
      bytes: ICACHE_BUDGETS[0].bytes,
      status: 'estimate',
      source: `not measured for ${arch}: sm_90 value`,
    }
  );
}

export interface CliffPoint {
  codeBytes: number;
  warpsPerSM: number;
  /** Median kernel duration for the same total work. */
  medianMs: number;
  /** no_instruction's share of all stall reasons (0..1), when profiled. */
  noInstructionShare: number | null;
}

export interface Cliff {
  warpsPerSM: number;
  /** Largest code size whose slowdown vs the smallest size stays within the threshold. */
  lastGoodBytes: number | null;
  /** First code size slower by more than the threshold. */
  firstBadBytes: number | null;
  points: (CliffPoint & { slowdown: number })[];
}

/** Finds, per occupancy, the code size where throughput drops by more than `threshold`. */
export function findCliffs(points: CliffPoint[], threshold = 0.1): Cliff[] {
  const byWarps = new Map<number, CliffPoint[]>();
  for (const p of points) byWarps.set(p.warpsPerSM, [...(byWarps.get(p.warpsPerSM) ?? []), p]);
  return [...byWarps]
    .sort((a, b) => a[0] - b[0])
    .map(([warpsPerSM, ps]) => {
      const sorted = [...ps].sort((a, b) => a.codeBytes - b.codeBytes);
      const base = sorted[0].medianMs;
      const withSlowdown = sorted.map(p => ({ ...p, slowdown: p.medianMs / base - 1 }));
      const bad = withSlowdown.find(p => p.slowdown > threshold) ?? null;
      const good = bad ? (withSlowdown.filter(p => p.codeBytes < bad.codeBytes).pop() ?? null) : withSlowdown[withSlowdown.length - 1];
      return { warpsPerSM, lastGoodBytes: good?.codeBytes ?? null, firstBadBytes: bad?.codeBytes ?? null, points: withSlowdown };
    });
}

/** One icache_cliff profile (`ncu --csv --page raw`) → a point: median duration and stall share. */
export function cliffPointFromRaw(rawCsv: string, codeBytes: number, warpsPerSM: number): CliffPoint | null {
  const rows = parseRawPage(rawCsv).kernels.map(k => kernelProfile(k));
  const d = rows
    .map(r => r.durationNs)
    .filter((x): x is number => x !== null)
    .sort((a, b) => a - b);
  if (!d.length) return null;
  const mid = d.length % 2 ? d[(d.length - 1) / 2] : (d[d.length / 2 - 1] + d[d.length / 2]) / 2;
  const shares = rows.map(r => r.stallShare?.no_instruction).filter((x): x is number => typeof x === 'number');
  return {
    codeBytes,
    warpsPerSM,
    medianMs: mid / 1e6,
    noInstructionShare: shares.length ? shares.reduce((a, b) => a + b, 0) / shares.length : null,
  };
}
