// offset-run: straight-line copies of one statement (or a group of up to 4) that step an index
// by a constant or a stride term, or step several suffixed names together. Runs that are thread
// coarsening are left to that detector (it runs first and keeps them).
//
//   int a1 = g[idx]; int a2 = g[idx + blockDim.x]; int a3 = g[idx + 2 * blockDim.x];
import { coarseFor } from './coarsening';
import type { Candidate, ManualUnrollDetector } from './detector';
import type { Site } from './diff';
import { allSites, describeCopies, Run, runEndRow, runStartRow } from './runs';

/** An offset run must step an index (or several suffixed names together), not just a value. */
export function isIndexRun(r: Run): boolean {
  for (const p of r.pairs) {
    const lin = p.sites.filter(s => s.kind === 'lin');
    const suffix = p.sites.length - lin.length;
    if (suffix >= 2) return true;
    if (r.copies === 2 && r.group === 1) {
      if (lin.some(s => s.inIndex)) return true;
    } else if (lin.some(s => s.inIndex || s.hasBase)) return true;
  }
  return false;
}

export function stepWords(sites: Site[]): string {
  const units = new Set<string>();
  for (const s of sites) {
    if (s.kind === 'suffix') {
      const d = s.delta.get('#') ?? 1;
      units.add(`name suffix ${d < 0 ? '' : '+'}${d}`);
    } else
      for (const [k, v] of s.delta) {
        const sign = v < 0 ? '-' : '+';
        const m = Math.abs(v);
        units.add(k === '' ? `${sign}${m}` : `${sign}${m === 1 ? '' : m + '*'}${k}`);
      }
  }
  return 'per copy: ' + [...units].slice(0, 4).join(', ');
}

export const offsetRun: ManualUnrollDetector = {
  pattern: 'offset-run',
  overlap: 'first-wins',
  detect(ctx) {
    const out: Candidate[] = [];
    for (const r of ctx.runs()) {
      if (coarseFor(ctx.scan, r) || !isIndexRun(r)) continue;
      const startRow = runStartRow(r);
      const endRow = runEndRow(r);
      out.push({
        line: startRow + 1,
        endLine: endRow + 1,
        pattern: 'offset-run',
        factor: r.copies,
        detail: `${describeCopies(r)} (${stepWords(allSites(r))})`,
        startRow,
        endRow,
      });
    }
    return out;
  },
};
