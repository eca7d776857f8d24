// The text tree-sitter reads: the file with the macros the grammar cannot know rewritten into
// C++ it parses the same way nvcc sees them, every offset and line kept (analysis positions,
// incremental edits). Without it, one project macro in the wrong place turns a whole class or
// loop into an ERROR node and its device code silently vanishes.
//
// - an object-like unroll pragma macro alone on its line (or before `for`): a call statement,
//   `CUTLASS_PRAGMA_UNROLL` → `CUTLASS_PRAGMA_UNR();` (pragmas.ts reads it back as the pragma);
// - an upper-case name that is no pragma we know, alone on its line right before a loop (a
//   pragma macro from a header that could not be read): a call statement too, so that the loop
//   survives, marked as preceded by an unknown macro;
// - a qualifier macro (`CUTLASS_HOST_DEVICE`, `_CCCL_DEVICE`): a C++11 attribute,
//   `[[CUTLASS_HOST_DE]]`, which the grammar accepts wherever nvcc accepts the qualifier
//   (before a constructor with initialisers, before a template-id return type, after the type);
// - `struct ALIGN_MACRO name {` and nvcc's head attributes the grammar lacks
//   (`__cluster_dims__(2, 1, 1)`, `__maxnreg__(64)`): attributes as well;
// - a line holding only a namespace macro: blanked (it would read as a return type).
//
// Every rule reads one line, and the unknown-name rule also the line after it; documents.ts
// re-masks the line before an edit for that reason (maskedRegion).

/** What masking needs to know about a name (macros/table.ts answers from the file's macros). */
export interface MaskOracle {
  /** An object-like unroll pragma macro. */
  isObjectPragma(name: string): boolean;
  /** Any unroll pragma macro (object- or function-like). */
  isPragma(name: string): boolean;
  /** A qualifier macro: `__global__`, `__device__`, `__host__` or an inline specifier. */
  isQualifier(name: string): boolean;
}

/** Masked names → the names written, filled while masking. */
export interface MaskRecord {
  /** Callee of a masked pragma macro → the macro. */
  pragmas: Map<string, string>;
  /** Callee of a masked unknown name before a loop → the name. */
  unknown: Map<string, string>;
  /** Attribute name of a masked qualifier or head macro → the macro. */
  attributes: Map<string, string>;
}

/**
 * Where an object-like pragma macro can stand: alone on its line, or right before a loop keyword.
 * Names of 4 or more characters, so that `NAME` → `NA();`… keeps every offset.
 */
const MASK_CANDIDATE = /^([ \t]*)([A-Za-z_]\w{3,})([ \t]*(?:\/\/.*|\/\*.*\*\/)?[ \t]*)$|\b([A-Za-z_]\w{3,})(?=[ \t]+(?:for|while|do)\b)/gm;

/** A line that starts a loop. */
const LOOP_LINE = /[ \t]*(?:for|while|do)\b/y;

/** A macro's usual spelling: upper case, digits and `_`, with a letter. */
const MACRO_NAME = /^_*[A-Z][A-Z0-9_]*$/;

const NAMESPACE_LINE_RE = /^([ \t]*)([A-Z_][A-Z0-9_]*NAMESPACE[A-Z0-9_]*)([ \t]*(?:\/\/.*)?)$/gm;

/**
 * Directive lines (kept as they are), `struct MACRO name`, nvcc's function-like head attributes,
 * and runs of upper-case words (qualifier macros among them). One pass; the first alternative consumes `#` lines.
 */
const ATTRIBUTE_CANDIDATE =
  /^[ \t]*#.*$|\b(struct|class|union)([ \t]+)(_*[A-Z][A-Z0-9_]{4,})(?:(\([^()\n]*\))|\b)(?=[ \t]+(?!final\b)[A-Za-z_]\w*[ \t]*(?:[{:]|$))|\b(__cluster_dims__|__maxnreg__)([ \t]*\([^()\n]*\))|\b(_*[A-Z][A-Z0-9_]{4,}(?:[ \t]+_*[A-Z][A-Z0-9_]{4,})*)\b(?![ \t]*(?:[(<]|::))/gm;

/** Whether [start, end) is all of its line's text and the next line is a directive. */
function aloneBeforeDirective(s: string, start: number, end: number): boolean {
  const lineStart = s.lastIndexOf('\n', start - 1) + 1;
  const lineEnd = s.indexOf('\n', end);
  if (lineEnd === -1) return false;
  if (s.slice(lineStart, start).trim() || s.slice(end, lineEnd).trim()) return false;
  DIRECTIVE_LINE.lastIndex = lineEnd + 1;
  return DIRECTIVE_LINE.test(s);
}

const DIRECTIVE_LINE = /[ \t]*#/y;

/** Whether [start, end) is all of its line's text and the next line starts `template`. */
function aloneBeforeTemplate(s: string, start: number, end: number): boolean {
  const lineStart = s.lastIndexOf('\n', start - 1) + 1;
  const lineEnd = s.indexOf('\n', end);
  if (lineEnd === -1) return false;
  if (s.slice(lineStart, start).trim() || s.slice(end, lineEnd).trim()) return false;
  TEMPLATE_LINE.lastIndex = lineEnd + 1;
  return TEMPLATE_LINE.test(s);
}

const TEMPLATE_LINE = /[ \t]*template\b/y;

/** `NAME` → `/*NA*\/`, the same length; read back by unmaskAttributes like an attribute. */
function leadingComment(name: string, record: MaskRecord): string {
  const short = name.slice(0, -4);
  record.attributes.set(short, name);
  return `/*${short}*/`;
}

/** The qualifier macro a comment made by masking stands for (`/*CUTLASS_HOST_DE*\/`), or null. */
export function leadingQualifierOf(comment: string, record: MaskRecord): string | null {
  const m = /^\/\*([A-Za-z_]\w*)\*\/$/.exec(comment);
  return m ? (record.attributes.get(m[1]) ?? null) : null;
}

/** `NAME` or `NAME(args)` → `[[NA(args)]]`: four characters shorter, so the same length. */
function attribute(name: string, args: string, record: MaskRecord): string {
  const short = name.slice(0, -4);
  record.attributes.set(short, name);
  return `[[${short}${args}]]`;
}

export function maskText(text: string, oracle: MaskOracle, record: MaskRecord): string {
  let out = text;
  if (out.includes('NAMESPACE'))
    out = out.replace(NAMESPACE_LINE_RE, (_all, indent: string, name: string, rest: string) => indent + ' '.repeat(name.length) + rest);
  out = out.replace(
    MASK_CANDIDATE,
    (
      all: string,
      indent: string | undefined,
      alone: string | undefined,
      rest: string | undefined,
      before: string | undefined,
      at: number,
      s: string,
    ) => {
      const name = alone ?? before!;
      if (oracle.isObjectPragma(name)) {
        const callee = name.slice(0, -3);
        record.pragmas.set(callee, name);
        return alone !== undefined ? indent + callee + '();' + rest : callee + '();';
      }
      // An unknown name before a loop: written before `for`, or alone on the line before one.
      if (!MACRO_NAME.test(name) || oracle.isPragma(name) || oracle.isQualifier(name)) return all;
      if (alone !== undefined) {
        const next = s.indexOf('\n', at);
        if (next === -1) return all;
        LOOP_LINE.lastIndex = next + 1;
        if (!LOOP_LINE.test(s)) return all;
      }
      const callee = name.slice(0, -3);
      record.unknown.set(callee, name);
      return alone !== undefined ? indent + callee + '();' + rest : callee + '();';
    },
  );
  return out.replace(
    ATTRIBUTE_CANDIDATE,
    (
      all: string,
      keyword: string | undefined,
      space: string | undefined,
      classMacro: string | undefined,
      classArgs: string | undefined,
      headAttr: string | undefined,
      headArgs: string | undefined,
      run: string | undefined,
      at: number,
      s: string,
    ) => {
      if (keyword) return keyword + space + attribute(classMacro!, classArgs ?? '', record);
      if (headAttr) return attribute(headAttr, headArgs!, record);
      // `_CCCL_NODISCARD _CCCL_HIDE_FROM_ABI _CCCL_DEVICE`: with a qualifier among them, the
      // upper-case words around it are specifiers too (attributes, inline, visibility).
      if (!run || !run.split(/[ \t]+/).some(w => oracle.isQualifier(w))) return all;
      // Alone in a branch (`#if … __device__ __noinline__ #else CUTLASS_HOST_DEVICE #endif` before
      // a head): an attribute there would stand for a whole statement; left as written.
      if (aloneBeforeDirective(s, at, at + run.length)) return all;
      // Alone on the line before `template <…>` (CUTLASS's arch/simd.h): nothing may stand
      // before `template`, so a comment that scanTopLevel reads back as the function's qualifier.
      if (aloneBeforeTemplate(s, at, at + run.length)) return run.replace(/[A-Za-z_]\w*/g, w => leadingComment(w, record));
      return run.replace(/[A-Za-z_]\w*/g, w => attribute(w, '', record));
    },
  );
}

/** `[[CUTLASS_HOST_DE]]` → `[[CUTLASS_HOST_DEVICE]]` in a piece of masked text (head analysis, hover). */
export function unmaskAttributes(text: string, record: MaskRecord): string {
  if (!text.includes('[[')) return text;
  return text.replace(/\[\[([A-Za-z_]\w*)/g, (all, short: string) => {
    const name = record.attributes.get(short);
    return name ? '[[' + name : all;
  });
}
