// coarsening: each thread handles U elements. A run of U copies steps a thread index that was
// scaled by U (`r0 = 4 * threadIdx.x`, or `4 * threadIdx.x + j` written in place), or steps U
// suffixed accumulators in a function that has such an index.
//
//   r0 = 4 * threadIdx.x; … out[r0 + 0] = …; out[r0 + 1] = …; … out[r0 + 3] = …;
import type { Candidate, ManualUnrollDetector } from './detector';
import { allSites, describeCopies, Run, runEndRow, runStartRow } from './runs';
import type { CoarseIndex, FunctionScan } from './statements';
import { mentions, mentionsAny, squash } from './text';

/** The coarsened thread index that run `r` steps through, or null when it steps none. */
export function coarseFor(scan: FunctionScan, r: Run): CoarseIndex | null {
  const sites = allSites(r);
  for (const c of scan.coarse) {
    if (c.factor !== r.copies) continue;
    for (const s of sites) if (mentions(s.aText, c.name) || mentionsAny(s.aText, c.derived)) return c;
  }
  // the index written in place: out[4 * threadIdx.x + j]
  for (const s of sites) {
    if (!s.aLin) continue;
    for (const [k, v] of s.aLin.t) {
      if (Math.abs(v) === r.copies && scan.isThreadTerm(k)) {
        return { name: '', factor: r.copies, row: runStartRow(r), text: squash(s.aText, 60), derived: new Set() };
      }
    }
  }
  // suffixed accumulators (e1..eN) in a function that has an N-fold coarsened index
  if (sites.length && sites.every(s => s.kind === 'suffix')) {
    const row = runStartRow(r);
    const c = scan.coarse.find(x => x.factor === r.copies && x.row <= row);
    if (c) return c;
  }
  return null;
}

export const coarsening: ManualUnrollDetector = {
  pattern: 'coarsening',
  overlap: 'first-wins',
  detect(ctx) {
    const out: Candidate[] = [];
    for (const r of ctx.runs()) {
      const c = coarseFor(ctx.scan, r);
      if (!c) continue;
      const index = c.name ? `\`${c.text}\` (line ${c.row + 1})` : `\`${c.text}\``;
      const startRow = runStartRow(r);
      const endRow = runEndRow(r);
      out.push({
        line: startRow + 1,
        endLine: endRow + 1,
        pattern: 'coarsening',
        factor: r.copies,
        detail: `thread coarsening: each thread handles ${r.copies} elements of index ${index}; ${describeCopies(r)}`,
        startRow,
        endRow,
      });
    }
    return out;
  },
};
