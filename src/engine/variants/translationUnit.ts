// Which translation unit builds a header's variants: a .cu file that includes the header. From
// compile_commands.json first (its entries whose text includes the header, nearest first), else
// from a text search of the workspace's .cu files, for the user to pick from. Cheap by design: a
// textual `#include` check, no preprocessor; the build itself confirms the choice (nvcc's -MD list
// must name the header, see overlay.ts). Nothing here runs a program.
import * as fs from 'fs';
import * as path from 'path';
import { compileCommandsCandidates, compileDbFiles } from '../toolchain/flags';
import { READ_CAPS, tryReadBoundedText } from '../boundedRead';

export interface UnitCandidate {
  /** Absolute path of the .cu file. */
  file: string;
  /** Where it was found: an entry of a compile database, or a text search of the workspace. */
  via: 'compile_commands' | 'search';
  /** The `#include` resolves to the header from the unit's own folder (not only the same file name). */
  exact: boolean;
}

const INCLUDE = /^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]/gm;

/**
 * Does `text` (of `unit`) include `header`? `exact` when a `"…"` include resolves to it from the
 * unit's folder; else an include naming the same file name (through an include path, or `<…>`).
 */
export function includesHeader(text: string, unit: string, header: string): { exact: boolean } | null {
  const base = path.basename(header);
  let found: { exact: boolean } | null = null;
  for (const m of text.matchAll(INCLUDE)) {
    const name = m[2].trim();
    if (path.basename(name) !== base) continue;
    if (m[1] === '"' && path.resolve(path.dirname(unit), name) === path.resolve(header)) return { exact: true };
    found = { exact: false };
  }
  return found;
}

/** A unit's text; null for anything but a readable regular file (a FIFO named as a unit never blocks us). */
function read(file: string): string | null {
  return tryReadBoundedText(file, { maxBytes: READ_CAPS.source, what: 'translation unit' });
}

/** Folder steps between the unit and the header: the nearest unit is the likeliest owner. */
function distance(unit: string, header: string): number {
  const rel = path.relative(path.dirname(unit), path.dirname(header));
  return rel ? rel.split(path.sep).length : 0;
}

function rank(list: UnitCandidate[], header: string): UnitCandidate[] {
  return list.sort(
    (a, b) => Number(b.exact) - Number(a.exact) || distance(a.file, header) - distance(b.file, header) || a.file.localeCompare(b.file),
  );
}

/** compile_commands.json entries (from the header's folder up to its workspace root) whose text includes the header, best first. */
export function unitsFromCompileCommands(header: string, workspaceRoots: string[]): UnitCandidate[] {
  const seen = new Set<string>();
  const out: UnitCandidate[] = [];
  for (const db of compileCommandsCandidates(header, workspaceRoots)) {
    for (const file of compileDbFiles(db)) {
      if (seen.has(file) || !/\.cu$/i.test(file)) continue;
      seen.add(file);
      const text = read(file);
      const inc = text === null ? null : includesHeader(text, file, header);
      if (inc) out.push({ file, via: 'compile_commands', exact: inc.exact });
    }
  }
  return rank(out, header);
}

/** .cu files under the roots (node_modules and dot-folders skipped) whose text includes the header, best first. */
export function unitsByTextSearch(header: string, roots: string[], limit = 5000): UnitCandidate[] {
  const out: UnitCandidate[] = [];
  let visited = 0;
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (visited >= limit) return;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && !e.name.startsWith('.')) walk(p);
      } else if (e.isFile() && /\.cu$/i.test(e.name)) {
        visited++;
        const text = read(p);
        const inc = text === null ? null : includesHeader(text, p, header);
        if (inc) out.push({ file: p, via: 'search', exact: inc.exact });
      }
    }
  };
  for (const r of new Set(roots.map(x => path.resolve(x)))) walk(r);
  return rank(out, header);
}

/** The unit a header's variants are built through when the user chose none: the best compile_commands.json entry. */
export function findTranslationUnit(header: string, workspaceRoots: string[]): string | null {
  return unitsFromCompileCommands(header, workspaceRoots)[0]?.file ?? null;
}
