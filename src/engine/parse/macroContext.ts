// The macro table (macros/table.ts) of the analysis in progress, shared by the analysis steps.
import { MacroTable } from './macros/table';

/**
 * The macro table of the analysis in progress. Analysis is synchronous, so the entry points set it
 * for their duration (withMacros) instead of threading it through every helper.
 */
let macros: MacroTable = MacroTable.builtin;

export function withMacros<T>(table: MacroTable, f: () => T): T {
  const saved = macros;
  macros = table;
  try {
    return f();
  } finally {
    macros = saved;
  }
}

/** The table set by the innermost withMacros (the built-in one outside any). */
export function activeMacros(): MacroTable {
  return macros;
}

export function qualifierMacrosIn(head: string): string[] {
  return macros.qualifierMacrosIn(head);
}
