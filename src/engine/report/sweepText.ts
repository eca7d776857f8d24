// A SweepResult as a plain-text table (the CLI's output, logs): one row per variant, the
// swept loops' SASS side by side, GPU timings when there are any, the best marked.
import { pointsText } from '../../schema/sweepCounts';
import type { SweepResult, SweepVariant } from '../../schema/types';
import { instantiationLabel, showInstantiations } from '../../schema/kernelNames';
import { confidenceLines } from '../../schema/applyBest';

function pct(x: number | null | undefined): string {
  return x === null || x === undefined ? '-' : `${(x * 100).toFixed(1)}%`;
}

function num(x: number | null | undefined, digits = 0): string {
  return x === null || x === undefined ? '-' : x.toFixed(digits);
}

function unroll(v: SweepVariant, line: string): string {
  const u = v.effectiveUnroll[line];
  if (u === null || u === undefined) return '-';
  return `×${u}${v.fullyUnrolled[line] ? ' full' : ''}`;
}

/** Columns padded to their widest cell; text columns left-aligned, numbers right-aligned. */
function table(header: string[], rows: string[][], left: Set<number>): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (left.has(i) ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** The instantiation column's cells (`hot_loop<2048>`), or null when no row needs one (showInstantiations). */
function instantiationCells(r: SweepResult): string[] | null {
  if (!showInstantiations(r.variants)) return null;
  return r.variants.map(v => (v.instantiation ? instantiationLabel(v.instantiation) : '-'));
}

/** The counter columns (ncu's, `--counters on` or the ncu timer) that at least one variant has. */
function counterColumns(r: SweepResult): { title: string; cell: (v: SweepVariant) => string }[] {
  if (r.static) return [];
  const columns: { title: string; cell: (v: SweepVariant) => string; has: (v: SweepVariant) => boolean }[] = [
    { title: 'exec instr', cell: v => num(v.executedInstructions), has: v => v.executedInstructions != null },
    { title: 'instr/thread', cell: v => num(v.instructionsPerThread, 1), has: v => v.instructionsPerThread != null },
    { title: 'instr/elem', cell: v => num(v.instructionsPerElement, 2), has: v => v.instructionsPerElement != null },
    // ncu gives achieved occupancy in % of peak already
    {
      title: 'achieved occ',
      cell: v => (v.achievedOccupancy == null ? '-' : `${v.achievedOccupancy.toFixed(1)}%`),
      has: v => v.achievedOccupancy != null,
    },
  ];
  return columns.filter(c => r.variants.some(c.has));
}

export function sweepText(r: SweepResult): string {
  const lines = r.loops.map(l => String(l.line));
  const labelOf = new Map(r.variants.map(v => [v.id, v.label]));
  const inst = instantiationCells(r);
  const header = [
    '',
    'variant',
    ...(inst ? ['instantiation'] : []),
    'status',
    'instr',
    ...lines.flatMap(l => [`L${l} instr`, `L${l} unroll`]),
    'regs',
    'spills',
    'occupancy',
  ];
  // adaptive sampling gives the leading variants more durations than the others
  const sampled = !r.static && !!r.confidence?.sampling;
  if (!r.static) header.push(...(sampled ? ['samples'] : []), 'median ms', 'IQR ms', 'speedup', 'no_instr', 'top stall');
  const counters = counterColumns(r);
  header.push(...counters.map(c => c.title), 'same code as');
  const rows = r.variants.map((v, i) => {
    const top = v.stallShare
      ? Object.entries(v.stallShare)
          .filter(([k]) => k !== 'selected')
          .sort((a, b) => b[1] - a[1])[0]
      : undefined;
    const spills = v.spillStores === null && v.spillLoads === null ? '-' : String((v.spillStores ?? 0) + (v.spillLoads ?? 0));
    const row = [
      v.id === r.best ? '*' : '',
      v.label,
      ...(inst ? [inst[i]] : []),
      v.status,
      num(v.kernelInstructions),
      ...lines.flatMap(l => [num(v.loopInstructions[l]), unroll(v, l)]),
      num(v.registers),
      spills,
      pct(v.occupancy),
    ];
    if (!r.static) {
      row.push(
        ...(sampled ? [String(v.samples)] : []),
        num(v.medianMs, 4),
        num(v.iqrMs, 4),
        v.speedup === null ? '-' : `${v.speedup.toFixed(2)}×${v.withinNoise && v.id !== r.baseline ? '~' : ''}`,
        pct(v.stallShare?.no_instruction),
        top ? `${top[0]} ${pct(top[1])}` : '-',
      );
    }
    row.push(...counters.map(c => c.cell(v)), v.identicalTo ? (labelOf.get(v.identicalTo) ?? v.identicalTo) : '');
    return row;
  });
  const left = new Set([0, 1, 2, ...(inst ? [3] : []), header.length - 1, ...(r.static ? [] : [header.indexOf('top stall')])]);
  const where = r.static ? 'static (SASS only)' : `on ${r.gpu ?? 'the GPU'}`;
  const out = [
    // a sweep of parameters only has no loop part (no empty `·  ·`)
    [r.kernel, r.loops.map(l => `L${l.line}`).join(', '), Object.keys(r.params).join(', '), where].filter(Boolean).join(' · ') +
      ` · ${r.strategy}: ${pointsText(r)}${r.complete ? '' : ' (cancelled)'}`,
    ...table(header, rows, left),
  ];
  const best = r.variants.find(v => v.id === r.best);
  out.push('', best ? `* best: ${best.label} (${best.id}) — ${r.bestBasis}` : '* best: none (no variant finished ok)');
  out.push(...confidenceLines(r, id => labelOf.get(id) ?? id).map(l => `  ${l}`));
  if (!r.static) out.push('~ = within noise (identical code, or the interquartile ranges overlap allowing 3 % run-to-run drift)');
  for (const v of r.variants) if (v.message) out.push(`${v.label}: ${v.status}: ${v.message.split('\n')[0]}`);
  for (const n of r.notes) out.push(`note: ${n}`);
  return out.join('\n') + '\n';
}
