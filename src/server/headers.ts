// Which translation unit builds a header's loops: the one the user chose (the client remembers it
// per workspace and tells the server), else the nearest compile_commands.json entry whose text
// includes the header. Also what a header's hover and CodeLens say about it.
import * as fs from 'fs';
import { UnitCandidate, UnitSearch, isHeaderFile, unitsByTextSearch, unitsFromCompileCommands } from '../engine';
import type { TranslationUnitsResult } from '../protocol';

export interface HeaderUnit {
  unit: string | null;
  via: 'chosen' | 'compile_commands' | null;
}

export class HeaderUnits {
  private readonly chosen = new Map<string, string>();
  /** The last search per header, with the state of every file it read: reused only while none changed. */
  private readonly memo = new Map<string, { key: string; files: Map<string, string>; units: UnitCandidate[] }>();

  constructor(
    private readonly workspaceRoots: () => string[],
    /** What the search needs beyond the header: unrollLens.compileCommands, the file's functions. */
    private readonly search: (header: string) => Omit<UnitSearch, 'read'> = () => ({}),
  ) {}

  /** compile_commands.json entries that include the header, those that instantiate its functions first (memoised on the files read). */
  private units(header: string): UnitCandidate[] {
    const search = this.search(header);
    const key = JSON.stringify([this.workspaceRoots(), search]);
    const hit = this.memo.get(header);
    if (hit && hit.key === key && [...hit.files].every(([f, sig]) => statSig(f) === sig)) return hit.units;
    const read = new Set<string>();
    const units = unitsFromCompileCommands(header, this.workspaceRoots(), { ...search, read });
    this.memo.set(header, { key, files: new Map([...read].map(f => [f, statSig(f)])), units });
    return units;
  }

  /** The client's remembered choices (initialization) or one new choice; null forgets it. */
  set(header: string, unit: string | null): void {
    if (unit) this.chosen.set(header, unit);
    else this.chosen.delete(header);
  }

  /** Null for a file that is not a header (it is its own translation unit). */
  unitFor(file: string): HeaderUnit | null {
    if (!isHeaderFile(file)) return null;
    const chosen = this.chosen.get(file);
    if (chosen && fs.existsSync(chosen)) return { unit: chosen, via: 'chosen' };
    const found = this.units(file)[0]?.file ?? null;
    return found ? { unit: found, via: 'compile_commands' } : { unit: null, via: null };
  }

  /** What the chooser offers: compile_commands.json entries first, then a text search of the workspace. */
  candidates(header: string): TranslationUnitsResult {
    const current = this.unitFor(header) ?? { unit: null, via: null };
    const fromDb = this.units(header);
    const seen = new Set(fromDb.map(c => c.file));
    const searched = unitsByTextSearch(header, this.workspaceRoots()).filter(c => !seen.has(c.file));
    return {
      header,
      current: current.unit,
      currentVia: current.via,
      candidates: [...fromDb, ...searched].map(c => ({ path: c.file, via: c.via, exact: c.exact })),
    };
  }
}

/** Why a header's loops have no variants yet, and what to do (hover, errors). */
export const NO_UNIT_HINT =
  'A header has no SASS of its own: its loops are built through a translation unit (.cu) that includes it, and none is known (no compile_commands.json entry includes it). Run **Unroll Lens: Choose Translation Unit for Header**.';

/** A file's size and modification time (or that it is gone): a changed one makes a memo stale. */
function statSig(file: string): string {
  try {
    const st = fs.statSync(file);
    return `${st.size}:${st.mtimeMs}:${st.ino}`;
  } catch {
    return '-';
  }
}
