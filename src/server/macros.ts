// The macros each open document sees, for the analyser: read from its headers (found through
// compile_commands.json or the settings' include paths, then the CUDA toolkit's include
// directories), with the built-in library table as fallback. Only files are read; nothing runs,
// so this works the same in an untrusted workspace.
import * as path from 'path';
import { DEFAULT_ARCH, MacroTable, MacroTables, preprocessOptionsFromFlags, scanFallbackDirs, toolkitIncludeDirs } from '../engine';
import type { SegmentedText } from '../engine';
import type { Settings } from '../protocol';
import type { ServerToolchain } from './toolchain';

/** How long opening a document may spend reading its headers before it opens with the built-in table. */
const FIRST_READING_BUDGET_MS = 250;

export class MacroService {
  private readonly tables = new MacroTables();
  private toolkitDirs: { key: string; dirs: string[] } | null = null;

  constructor(
    private readonly toolchain: ServerToolchain,
    private readonly settings: () => Settings,
    private readonly log: (message: string) => void,
  ) {}

  /** The table for a document; the built-in one when it has no path (untitled) or reading fails. */
  tableFor(file: string | null, text: string): MacroTable {
    if (!file || !path.isAbsolute(file)) return MacroTable.builtin;
    try {
      const { table, env } = this.tables.tableFor(file, text, this.optionsFor(file));
      if (env.unresolved.length)
        this.log(`${path.basename(file)}: headers not found on the include path: ${env.unresolved.slice(0, 5).join(', ')}`);
      if (env.truncated) this.log(`warning: ${env.truncated}`);
      return table;
    } catch (e) {
      this.log(`${path.basename(file)}: cannot read its macros (${e instanceof Error ? e.message : e}); using the built-in table`);
      return MacroTable.builtin;
    }
  }

  /**
   * The table when it can be had quickly (known already, headers read before, or a small first
   * reading), else null: the first reading of a file that includes a whole library (all of CUB)
   * takes a second or more, so such a document opens with the built-in table and gets its own
   * right after (see the server's didOpen).
   */
  knownTableFor(file: string | null, text: string): MacroTable | null {
    if (!file || !path.isAbsolute(file)) return MacroTable.builtin;
    try {
      return this.tables.within(file, text, this.optionsFor(file), FIRST_READING_BUDGET_MS)?.table ?? null;
    } catch {
      return null;
    }
  }

  private optionsFor(file: string) {
    const s = this.settings();
    const flags = this.toolchain.flagsFor(file);
    const options = preprocessOptionsFromFlags(flags, s.arch || flags.arch || DEFAULT_ARCH, this.toolkit());
    // As a scan does: headers nothing names are looked for last in the workspace folder that
    // holds the file, and its include/ (a header library opened without build flags).
    const fallback = this.fallbackDirs(file);
    return fallback.length ? { ...options, fallbackIncludeDirs: fallback } : options;
  }

  private fallback: { key: string; dirs: string[] } | null = null;

  private fallbackDirs(file: string): string[] {
    const roots = this.toolchain.folders().filter(r => file.startsWith(r.endsWith(path.sep) ? r : r + path.sep));
    const key = roots.join('\0');
    if (this.fallback?.key !== key) this.fallback = { key, dirs: scanFallbackDirs(roots) };
    return this.fallback.dirs;
  }

  /** Headers changed on disk (a save, a checkout): true when any that was read did. */
  revalidate(): boolean {
    return this.tables.revalidate();
  }

  forget(file: string | null): void {
    if (file) this.tables.forget(file);
  }

  /** Settings changed: the toolkit may be elsewhere, flags differ (options are part of each table's key). */
  reset(): void {
    this.toolkitDirs = null;
  }

  private toolkit(): string[] {
    const s = this.settings();
    // Paths from settings count only when trusted (VS Code already drops a repo's restricted values).
    const nvcc = this.toolchain.trusted ? s.toolchain.nvccPath || null : null;
    const home = this.toolchain.trusted ? s.toolchain.cudaHome || null : null;
    const key = `${nvcc}\0${home}`;
    if (this.toolkitDirs?.key !== key) this.toolkitDirs = { key, dirs: toolkitIncludeDirs(nvcc, home) };
    return this.toolkitDirs.dirs;
  }
}

/**
 * Whether an edit may change what the file's directives say: it adds or removes a line, or its
 * line (before or after) is a directive. Other edits keep the macro table as it is.
 */
export function editMayChangeMacros(
  oldText: Pick<string, 'slice' | 'lastIndexOf'> | SegmentedText,
  start: number,
  length: number,
  inserted: string,
): boolean {
  const removed = oldText.slice(start, start + length);
  if (inserted.includes('\n') || removed.includes('\n') || inserted.includes('#') || removed.includes('#')) return true;
  // A block comment opened or closed (`/*`, `*/`, before or after) may hide or reveal directives below.
  const edge = (mid: string) => oldText.slice(Math.max(0, start - 1), start) + mid + oldText.slice(start + length, start + length + 1);
  if (/\/\*|\*\//.test(edge(removed)) || /\/\*|\*\//.test(edge(inserted))) return true;
  const lineStart = oldText.lastIndexOf('\n', start - 1) + 1;
  // A continuation line of a multi-line #define: the line before it ends with a backslash.
  if (lineStart > 0 && /\\\r?$/.test(oldText.slice(oldText.lastIndexOf('\n', lineStart - 2) + 1, lineStart - 1))) return true;
  const before = oldText.slice(lineStart, start);
  // The line was a directive, or becomes one: what stood before a `#` deleted (`}#if 0`, fuzz seed 4135269002).
  if (/^[ \t]*#/.test(before + removed + oldText.slice(start + length, start + length + 1))) return true;
  if (/^[ \t]*$/.test(before + inserted) && /^[ \t]*#/.test(oldText.slice(start + length, start + length + 256))) return true;
  return before.trimEnd().endsWith('\\');
}
