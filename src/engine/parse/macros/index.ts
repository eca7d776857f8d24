// The macro table of each file, computed from its directives and headers and reused until either
// changes: what the language server and the scanner hand to the analyser.
import * as fs from 'fs';
import * as path from 'path';
import { DeadlineExceeded, MacroEnvironment, PreprocessOptions, Preprocessor } from './environment';
import { preprocessInputsFromFlags, toolkitIncludeDirs } from './includePaths';
import { resolveCompileFlags } from '../../toolchain/flags';
import { readDirectives } from './directives';
import { MacroTable } from './table';

export { MacroTable } from './table';
export type { PreprocessOptions } from './environment';
export { toolkitIncludeDirs } from './includePaths';

export interface FileMacros {
  table: MacroTable;
  env: MacroEnvironment;
}

function keyOf(text: string, options: PreprocessOptions): string {
  return JSON.stringify([options, readDirectives(text).map(d => [d.name, d.rest, d.name === 'define' ? d.line : 0])]);
}

export class MacroTables {
  private readonly pp = new Preprocessor();
  private readonly byFile = new Map<string, { key: string; result: FileMacros }>();

  /**
   * The macros `file` (with `text`) sees. Recomputed only when its directives or the options
   * changed; the line of a directive counts only for `#define` (hover shows where a macro is).
   */
  tableFor(file: string, text: string, options: PreprocessOptions, deadline?: number): FileMacros {
    const key = keyOf(text, options);
    const cached = this.byFile.get(file);
    if (cached && cached.key === key) return cached.result;
    const env = this.pp.run(file, text, options, deadline);
    const result = { table: MacroTable.fromDefinitions(env.macros), env };
    this.byFile.set(file, { key, result });
    return result;
  }

  /**
   * The table if it can be had within `budgetMs` (known already, its headers read before, or a
   * small first reading: the CUDA runtime's headers take ~80 ms), else null; the part read stays
   * cached for the call that completes it.
   */
  within(file: string, text: string, options: PreprocessOptions, budgetMs: number): FileMacros | null {
    try {
      return this.tableFor(file, text, options, performance.now() + budgetMs);
    } catch (e) {
      if (e instanceof DeadlineExceeded) return null;
      throw e;
    }
  }

  /** Re-reads headers that changed on disk; true when any did (tables are then recomputed on next use). */
  revalidate(): boolean {
    const changed = this.pp.revalidate();
    if (changed) this.byFile.clear();
    return changed;
  }

  forget(file: string): void {
    this.byFile.delete(file);
  }
}

/**
 * Preprocessing inputs for a file from its compile flags (compile_commands.json or settings):
 * -I/-isystem/-D/-U, the defines written to a header because they were unsafe for a shell, then
 * the toolkit's include directories.
 */
export function preprocessOptionsFromFlags(
  flags: { args: string[]; directory: string; headerDefines?: string[] },
  arch: string,
  toolkitDirs: string[],
): PreprocessOptions {
  const fromArgs = preprocessInputsFromFlags(flags.args, flags.directory);
  const headerDefines = (flags.headerDefines ?? []).flatMap(line => {
    const m = /^\s*#\s*define\s+([A-Za-z_]\w*)\s?(.*)$/.exec(line);
    return m ? [`${m[1]}=${m[2]}`] : [];
  });
  // nvcc defines __CUDACC_RDC__ for relocatable device code (CUB_RUNTIME_FUNCTION is then
  // __host__ __device__ instead of __host__).
  const rdc = flags.args.some(a => /^-(?:-relocatable-device-code|rdc)(?:=true)?$/.test(a) || a === '-rdc=true');
  return {
    includeDirs: fromArgs.includeDirs,
    systemIncludeDirs: [...fromArgs.systemIncludeDirs, ...toolkitDirs],
    defines: [...(rdc ? ['__CUDACC_RDC__'] : []), ...fromArgs.defines, ...headerDefines],
    arch,
  };
}

/**
 * Each file's preprocessing inputs from its compile flags (compile_commands.json from the file up
 * to `root`, else none) and the toolkit's include directories: what the CLI and scans use.
 */
export function optionsFromProject(
  root: string,
  arch: string | null,
  defaultArch: string,
  scanRoots: string[] = [],
): (file: string) => PreprocessOptions {
  const toolkit = toolkitIncludeDirs(null);
  const fallback = scanFallbackDirs(scanRoots);
  return file => {
    const flags = resolveCompileFlags(file, [root], {});
    const options = preprocessOptionsFromFlags(flags, arch ?? flags.arch ?? defaultArch, toolkit);
    return fallback.length ? { ...options, fallbackIncludeDirs: fallback } : options;
  };
}

/**
 * Where a scan of `roots` finds headers nothing else names (PreprocessOptions.fallbackIncludeDirs):
 * each root and its include/ folder, the layout of header libraries (cutlass/include/cutlass/…,
 * tiny-cuda-nn's include/tiny-cuda-nn/…).
 */
export function scanFallbackDirs(roots: string[]): string[] {
  const out: string[] = [];
  for (const r of roots) {
    const abs = path.resolve(r);
    for (const d of [abs, path.join(abs, 'include')]) {
      try {
        if (fs.statSync(d).isDirectory() && !out.includes(d)) out.push(d);
      } catch {
        // not there
      }
    }
  }
  return out;
}
