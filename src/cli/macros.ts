// The macros a file sees, for the CLI's analyses: its #defines and its headers' (compile flags
// from compile_commands.json from the current directory up, then the CUDA toolkit's include
// directories), the built-in library table as fallback. Reads files only.
import { MacroTable } from '../engine/parse/macros';
import { projectScanMacros, type ScanMacros } from '../engine/parse/scan';

/** Each file's macros from its flags and the toolkit's headers (scan: one reader for all files). */
export function cliMacros(cwd = process.cwd(), arch: string | null = null, scanRoots: string[] = []): ScanMacros {
  return projectScanMacros(cwd, arch, scanRoots);
}

/** The macro table of one file (`file`: its real path, which its relative #includes start from). */
export function macroTableFor(file: string, text: string, arch: string | null = null): MacroTable {
  const m = cliMacros(process.cwd(), arch);
  return m.tables.tableFor(file, text, m.optionsFor(file)).table;
}
