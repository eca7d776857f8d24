// The macros a file sees, for the CLI's analyses: its #defines and its headers' (compile flags
// from compile_commands.json from the current directory up, then the CUDA toolkit's include
// directories), the built-in library table as fallback. Reads files only.
import { MacroTable, projectScanMacros } from '../engine';

/** The macro table of one file (`file`: its real path, which its relative #includes start from). */
export function macroTableFor(file: string, text: string, arch: string | null = null): MacroTable {
  const m = projectScanMacros(process.cwd(), arch);
  return m.tables.tableFor(file, text, m.optionsFor(file)).table;
}
