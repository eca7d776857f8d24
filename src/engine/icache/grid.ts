// The instruction-cache calibration grid (issue 13): what scripts/device/icache-grid/run.sh
// records on a GPU, read back into points. Each point is one kernel shape (mix, independent
// chains, hot-loop size) at one occupancy (warps per SM): its time per operation, its slowdown
// against the smallest body of the same mix, chains and warps (which fits every cache level),
// and ncu's no_instruction share of its warp stalls.
import { parseRawPage } from '../profile/ncuCsv';
import { stallBreakdown } from '../profile/stalls';

export interface GridPoint {
  mix: string;
  chains: number;
  /** The size the generator aimed at (KiB). */
  targetKib: number;
  /** The kernel's SASS size as cuobjdump lists it (bytes; the hot loop plus a few set-up instructions). */
  bytes: number | null;
  warps: number;
  medianMs: number;
  iqrMs: number;
  nsPerOp: number;
  /** nsPerOp / nsPerOp of the smallest size of the same mix, chains and warps. */
  slowdown: number | null;
  /** ncu's no_instruction share of the stall reasons (one launch), when profiled. */
  noInstruction: number | null;
  kernel: string;
}

/** `point mix=fp32 chains=1 kernel=k_fp32_c1_4k kib=4 … warps=4 … median_ms=… iqr_ms=… ns_per_op=…` lines. */
function parseGridPoints(text: string): Omit<GridPoint, 'bytes' | 'slowdown' | 'noInstruction'>[] {
  const out: Omit<GridPoint, 'bytes' | 'slowdown' | 'noInstruction'>[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith('point ')) continue;
    const f = Object.fromEntries(
      line
        .slice(6)
        .split(' ')
        .map(kv => kv.split('=') as [string, string]),
    );
    out.push({
      mix: f.mix,
      chains: Number(f.chains),
      targetKib: Number(f.kib),
      warps: Number(f.warps),
      medianMs: Number(f.median_ms),
      iqrMs: Number(f.iqr_ms),
      nsPerOp: Number(f.ns_per_op),
      kernel: f.kernel,
    });
  }
  return out;
}

/** `sizes.txt`: `<program> <mangled kernel> <instructions> <bytes>` per kernel. */
export function parseGridSizes(text: string): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const line of text.split(/\r?\n/)) {
    const [, mangled, , bytes] = line.trim().split(/\s+/);
    if (!mangled || !bytes) continue;
    // _Z13k_fp32_c1_64kPKfS0_fPfi → k_fp32_c1_64k
    const m = /^_Z\d+(k_\w+?k)PKf/.exec(mangled);
    if (m) sizes.set(m[1], Number(bytes));
  }
  return sizes;
}

/**
 * no_instruction share per (kernel, warps) from one program's ncu raw page: its measured
 * launches run every kernel at 4, 8, 16 and 32 warps per SM, in that order (block size = 32 × warps).
 */
function parseGridProfile(ncuStdout: string): Map<string, number> {
  const out = new Map<string, number>();
  const page = parseRawPage(ncuStdout);
  for (const row of page.kernels) {
    const m = /(k_\w+?k)PKf/.exec(row.kernelName) ?? /(k_\w+?k)\(/.exec(row.kernelName);
    if (!m || !row.blockSize) continue;
    const share = stallBreakdown(row).stallShare.no_instruction;
    if (share !== undefined) out.set(`${m[1]}@${row.blockSize[0] / 32}`, share);
  }
  return out;
}

/** Every point with its size, slowdown and no_instruction share. */
export function gridPoints(points: string, sizes: string, profiles: string[]): GridPoint[] {
  const raw = parseGridPoints(points);
  const bytes = parseGridSizes(sizes);
  const noInst = new Map<string, number>();
  for (const p of profiles) for (const [k, v] of parseGridProfile(p)) noInst.set(k, v);
  const base = new Map<string, number>();
  for (const p of raw) {
    const key = `${p.mix}/${p.chains}/${p.warps}`;
    const smallest = raw.filter(q => `${q.mix}/${q.chains}/${q.warps}` === key).reduce((a, b) => (b.targetKib < a.targetKib ? b : a));
    base.set(key, smallest.nsPerOp);
  }
  return raw.map(p => {
    const b = base.get(`${p.mix}/${p.chains}/${p.warps}`);
    return {
      ...p,
      bytes: bytes.get(p.kernel) ?? null,
      slowdown: b ? p.nsPerOp / b : null,
      noInstruction: noInst.get(`${p.kernel}@${p.warps}`) ?? null,
    };
  });
}

/** A markdown table: one row per (mix, chains, warps), one column per size: slowdown (no_instruction %). */
export function gridTable(points: GridPoint[], warps: number[]): string {
  const sizes = [...new Set(points.map(p => p.targetKib))].sort((a, b) => a - b);
  const rows: string[] = [
    `| mix | chains | warps/SM | ${sizes.map(s => `${s} KiB`).join(' | ')} |`,
    `|---|---|---|${sizes.map(() => '---').join('|')}|`,
  ];
  const shapes = [...new Set(points.map(p => `${p.mix}/${p.chains}`))];
  for (const shape of shapes)
    for (const w of warps) {
      const [mix, chains] = shape.split('/');
      const cells = sizes.map(s => {
        const p = points.find(q => q.mix === mix && q.chains === Number(chains) && q.warps === w && q.targetKib === s);
        if (!p || p.slowdown === null) return '–';
        return `${p.slowdown.toFixed(2)}×${p.noInstruction !== null ? ` (${Math.round(p.noInstruction * 100)}%)` : ''}`;
      });
      if (cells.every(c => c === '–')) continue;
      rows.push(`| ${mix} | ${chains} | ${w} | ${cells.join(' | ')} |`);
    }
  return rows.join('\n');
}
