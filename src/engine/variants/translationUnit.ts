// Which translation unit builds a header's variants: a .cu file that includes the header. From
// compile_commands.json first (its entries that include the header, directly or through other
// headers, those that instantiate the loop's function first), else from a text search of the
// workspace's .cu files, for the user to pick from. Cheap by design: textual `#include`s resolved
// from the including file's folder and the entry's include folders, no preprocessor; the build
// itself confirms the choice (nvcc's -MD list must name the header, see overlay.ts; the SASS must
// hold the loop, see inspect.ts). Nothing here runs a program.
import * as fs from 'fs';
import * as path from 'path';
import { compileCommandsCandidates, compileDbFiles, flagsFromCompileCommands, realOrResolved } from '../toolchain/flags';
import { Definitions, definitionsOf, externNames, instantiationIn, namesLeadingTo } from './unitInstantiates';
import { READ_CAPS, tryReadBoundedText } from '../base/boundedRead';

export interface UnitCandidate {
  /** Absolute path of the .cu file. */
  file: string;
  /** Where it was found: an entry of a compile database, or a text search of the workspace. */
  via: 'compile_commands' | 'search';
  /** The `#include` resolves to the header from the unit's own folder (not only the same file name). */
  exact: boolean;
  /**
   * Whether its text instantiates the loop's function (unitInstantiates.ts): 'explicit' at file
   * scope, 'implicit' inside its functions, null when it names nothing that leads to it;
   * undefined when no function was asked about.
   */
  instantiates?: 'explicit' | 'implicit' | null;
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

/**
 * Best first: a unit that instantiates the function (a textual guess: the names do not say which
 * template arguments, so one that includes the header itself is likelier to use this very code
 * than one that reaches it through other headers); then one that includes the header directly;
 * then an explicit instantiation (a small file of its own, ggml's template-instances/) before an
 * implicit one; then the nearest.
 */
function rank(list: UnitCandidate[], header: string): UnitCandidate[] {
  const inst = (c: UnitCandidate) => (c.instantiates === null ? 1 : 0);
  const explicit = (c: UnitCandidate) => (c.instantiates === 'explicit' ? 0 : 1);
  return list.sort(
    (a, b) =>
      inst(a) - inst(b) ||
      Number(b.exact) - Number(a.exact) ||
      explicit(a) - explicit(b) ||
      distance(a.file, header) - distance(b.file, header) ||
      a.file.localeCompare(b.file),
  );
}

/** Texts, include lists and definitions read once per search. */
class IncludeScan {
  private readonly texts = new Map<string, string | null>();
  private readonly includes = new Map<string, { quoted: boolean; name: string }[]>();
  private readonly defs = new Map<string, Definitions>();
  private readonly exists = new Map<string, boolean>();
  /** Files read in all: a bound on the work of one search. */
  private reads = 0;

  constructor(private readonly readLog?: Set<string>) {}

  text(file: string): string | null {
    if (!this.texts.has(file)) {
      this.readLog?.add(file);
      this.texts.set(file, this.reads++ < 20_000 ? read(file) : null);
    }
    return this.texts.get(file)!;
  }

  definitions(file: string): Definitions | null {
    if (!this.defs.has(file)) {
      const t = this.text(file);
      if (t === null) return null;
      this.defs.set(file, definitionsOf(t));
    }
    return this.defs.get(file)!;
  }

  private isFile(p: string): boolean {
    let hit = this.exists.get(p);
    if (hit === undefined) {
      try {
        hit = fs.statSync(p).isFile();
      } catch {
        hit = false;
      }
      this.exists.set(p, hit);
    }
    return hit;
  }

  /** The files `unit` includes, transitively: `"…"` from the including file's folder, then `dirs`; `<…>` from `dirs`. */
  closure(unit: string, dirs: string[], limit = 2000): string[] {
    const seen = new Set<string>([unit]);
    const queue = [unit];
    while (queue.length && seen.size < limit) {
      const cur = queue.shift()!;
      let incs = this.includes.get(cur);
      if (!incs) {
        const t = this.text(cur);
        incs = t === null ? [] : [...t.matchAll(INCLUDE)].map(m => ({ quoted: m[1] === '"', name: m[2].trim() }));
        this.includes.set(cur, incs);
      }
      for (const inc of incs) {
        const where = inc.quoted ? [path.dirname(cur), ...dirs] : dirs;
        const hit = where.map(d => path.resolve(d, inc.name)).find(p => this.isFile(p));
        if (hit && !seen.has(hit)) {
          seen.add(hit);
          queue.push(hit);
        }
      }
    }
    return [...seen];
  }
}

/** The include folders of a compile command's flags (-I, -isystem), absolute. */
function includeFolders(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if ((args[i] === '-I' || args[i] === '-isystem') && i + 1 < args.length) out.push(args[++i]);
    else if (args[i].startsWith('-I') && args[i].length > 2) out.push(args[i].slice(2));
  }
  return out.filter(d => path.isAbsolute(d));
}

export interface UnitSearch {
  /** A database named by the user, searched first. */
  compileCommands?: string | null;
  /** The loop's function (and its kernels): units whose text leads to one of them come first. */
  functions?: string[];
  /** Filled with every file the search read (databases included): a caller's memo keys on them. */
  read?: Set<string>;
}

/**
 * compile_commands.json entries (from the header's folder up to its workspace root) that include
 * the header, directly or through other headers, best first: those whose text instantiates one
 * of `functions` (explicitly, then implicitly), then a direct include from the unit's folder, then
 * the nearest.
 */
export function unitsFromCompileCommands(header: string, workspaceRoots: string[], search: UnitSearch = {}): UnitCandidate[] {
  const seen = new Set<string>();
  const found: { file: string; exact: boolean; closure: string[] }[] = [];
  const scan = new IncludeScan(search.read);
  const want = realOrResolved(header);
  for (const db of compileCommandsCandidates(header, workspaceRoots, search.compileCommands)) {
    search.read?.add(db);
    for (const file of compileDbFiles(db)) {
      if (seen.has(file) || !/\.cu$/i.test(file)) continue;
      seen.add(file);
      const text = scan.text(file);
      if (text === null) continue;
      const dirs = includeFolders(flagsFromCompileCommands(db, file)?.args ?? []);
      const closure = scan.closure(file, dirs);
      if (!closure.some(f => f === header || realOrResolved(f) === want)) continue;
      found.push({ file, exact: includesHeader(text, file, header)?.exact ?? false, closure });
    }
  }
  const functions = search.functions?.filter(Boolean) ?? [];
  if (!functions.length)
    return rank(
      found.map(f => ({ file: f.file, via: 'compile_commands' as const, exact: f.exact })),
      header,
    );
  // What leads to the function: names over every header these units include.
  const headers = [...new Set(found.flatMap(f => f.closure.slice(1)))].flatMap(h => scan.definitions(h) ?? []);
  const names = namesLeadingTo(functions, headers);
  const implicit = namesLeadingTo(functions, headers, externNames(headers));
  return rank(
    found.map(f => {
      const defs = scan.definitions(f.file);
      return {
        file: f.file,
        via: 'compile_commands' as const,
        exact: f.exact,
        instantiates: defs ? instantiationIn(defs, names, implicit) : null,
      };
    }),
    header,
  );
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

/**
 * The unit a header's variants are built through when the user chose none: the best
 * compile_commands.json entry (one that instantiates `search.functions` when any does).
 */
export function findTranslationUnit(header: string, workspaceRoots: string[], search: UnitSearch = {}): string | null {
  return unitsFromCompileCommands(header, workspaceRoots, search)[0]?.file ?? null;
}
