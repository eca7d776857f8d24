// Object-like macros from the file's headers as numbers (`WARP_SIZE` → 32, ggml's common.cuh):
// what the preprocessor puts in place of a name that the file's own constants do not define.
import type { EvalResult } from './constEval';
import { evalMacroBody } from './fileConstants';
import { activeMacros } from './macroContext';
import type { MacroTable } from './macros/table';

/** Per macro table (the macros one file sees), each name's value once: null when it is none. */
const VALUES = new WeakMap<MacroTable, Map<string, number | null>>();

function macroNumber(name: string): number | null {
  const table = activeMacros();
  let values = VALUES.get(table);
  if (!values) VALUES.set(table, (values = new Map()));
  let v = values.get(name);
  if (v === undefined) {
    const text = table.expand(name, 500);
    v = text !== null && text !== name ? evalMacroBody(text, { values: new Map(), unboundTemplateParams: new Set() }) : null;
    values.set(name, v);
  }
  return v;
}

/** A name's value as the scope knows it, else as a header's macro gives it. */
export function orMacro(r: EvalResult | undefined, name: string): EvalResult | undefined {
  return r === undefined || r === 'unknown' ? (macroNumber(name) ?? r) : r;
}
