// What the analyser asks of macros: does this name in a function head make it `__global__` or
// `__device__`, and is this statement an unroll pragma in disguise? Answered from the macros the
// file really sees (environment.ts, expanded through every level) and, for names no readable
// header defines, from the built-in table of well-known libraries (libraryMacros.ts). Every
// answer says which of the two it came from, for hover.
//
// Names are classified when first asked about, not up front: a file that includes CUB sees some
// 3,000 macros and uses a handful in function heads. A classification is reused by every file
// whose macros it read are the same definitions (most files of one library).
import { MacroLibrary, PRAGMA_MACROS, QUALIFIER_MACROS } from '../libraryMacros';
import type { MacroOrigin } from '../model';
import { ExpansionLimit, MacroDefinition, MacroLookup, expandTokens } from './expand';
import { Token, render, tokenize } from './tokens';
import { MaskOracle, MaskRecord, leadingQualifierOf, maskText, unmaskAttributes } from './mask';
import { selectUnbalancedBranches } from './branches';
import { evaluateCondition } from './condition';

export interface QualifierMeaning {
  name: string;
  qualifier: 'global' | 'device' | 'host' | 'inline';
  /** What nvcc sees, e.g. `__forceinline__ __device__`. */
  expandsTo: string;
  origin: MacroOrigin;
}

export interface PragmaMeaning {
  name: string;
  functionLike: boolean;
  /** The pragma text it expands to; `$1` stands for the argument (`unroll $1`). */
  expandsTo: string;
  origin: MacroOrigin;
  /** The library whose spelling variants should use (`_CCCL_PRAGMA_UNROLL(4)`), when known. */
  library?: MacroLibrary;
  /** Each step of the expansion, first the invocation's replacement (hover). */
  chain: string[];
}

/** Macros by name (a Map, or environment.ts's layered MacroMap). */
export interface MacroDefinitions {
  get(name: string): MacroDefinition | undefined;
  has(name: string): boolean;
}

type Meaning = { qualifier: QualifierMeaning } | { pragma: PragmaMeaning } | null;

/** Stands for a pragma macro's argument while expanding it. */
const ARG = '__unroll_lens_arg__';

/** A classification and the definitions it read: valid wherever those are the same. */
const CLASSIFIED = new WeakMap<MacroDefinition, { reads: Map<string, MacroDefinition | null>; meaning: Meaning }>();

const BUILTIN_QUALIFIERS = new Map(
  Object.entries(QUALIFIER_MACROS).map(([name, m]): [string, QualifierMeaning] => [
    name,
    { name, qualifier: m.qualifier, expandsTo: m.expandsTo, origin: { kind: 'builtin', library: m.library } },
  ]),
);
const BUILTIN_PRAGMAS = new Map(
  Object.entries(PRAGMA_MACROS).map(([name, m]): [string, PragmaMeaning] => [
    name,
    {
      name,
      functionLike: m.functionLike,
      expandsTo: m.expandsTo,
      origin: { kind: 'builtin', library: m.library },
      library: m.library,
      chain: [],
    },
  ]),
);

const KEYWORD_QUALIFIER = /\b(__global__|__device__)\b/;
const IDENTIFIERS = /\b[A-Za-z_]\w*\b/g;
/** Built-in qualifier names, for a quick test before scanning every identifier. */
const BUILTIN_ANY = new RegExp(`\\b(__global__|__device__|${[...BUILTIN_QUALIFIERS.keys()].join('|')})\\b`);

export class MacroTable {
  private readonly meanings = new Map<string, Meaning>();
  /** What masking rewrote, to read the names back (mask.ts). */
  private readonly masked: MaskRecord = { pragmas: new Map(), unknown: new Map(), attributes: new Map() };
  private readonly oracle: MaskOracle = {
    isObjectPragma: name => {
      const p = this.pragma(name);
      return !!p && !p.functionLike;
    },
    isPragma: name => this.pragma(name) !== undefined,
    isQualifier: name => this.qualifier(name) !== undefined,
  };

  private constructor(private readonly defs: MacroDefinitions | null) {}

  /** The built-in table alone: what a file whose headers cannot be read gets. */
  static readonly builtin = new MacroTable(null);

  /** The table for the macros a file sees (environment.ts), falling back to the built-in one. */
  static fromDefinitions(defs: MacroDefinitions): MacroTable {
    return new MacroTable(defs);
  }

  qualifier(name: string): QualifierMeaning | undefined {
    const m = this.meaning(name);
    return m && 'qualifier' in m ? m.qualifier : undefined;
  }

  pragma(name: string): PragmaMeaning | undefined {
    const m = this.meaning(name);
    return m && 'pragma' in m ? m.pragma : undefined;
  }

  /**
   * `text` with the macros the file sees expanded (`CUDA_WKV_BLOCK_SIZE * 2` → `64 * 2`, a list of
   * explicit instantiations written through a macro), or null: no macros read (the built-in
   * table), or the expansion ran past its budget.
   */
  expand(text: string, budget = 20000): string | null {
    const defs = this.defs;
    if (!defs) return null;
    try {
      return render(expandTokens(tokenize(text), { get: n => defs.get(n) }, budget));
    } catch (e) {
      if (e instanceof ExpansionLimit) return null;
      throw e;
    }
  }

  /** The parameters of a function-like macro the file sees (null: none, or object-like). */
  macroParams(name: string): string[] | null {
    return this.defs?.get(name)?.params ?? null;
  }

  /**
   * The macro a call statement's callee stands for, or null. Object-like pragma macros reach the
   * parser masked (maskForParse: `CUTLASS_PRAGMA_UNROLL` → `CUTLASS_PRAGMA_UNR();`), so a callee
   * may be a masked name; a function-like one must have its argument when it takes one.
   */
  pragmaOfCall(callee: string, argText: string | null): PragmaMeaning | null {
    const unmasked = this.masked.pragmas.get(callee);
    const m = this.pragma(unmasked ?? callee);
    if (!m || m.functionLike !== !unmasked) return null;
    // A generic `PRAGMA(x)`: only `PRAGMA(unroll …)` is an unroll pragma. `UNROLL()` with an
    // empty argument expands to a bare `unroll` (CCCL's `_CCCL_PRAGMA_UNROLL()`): a full unroll.
    if (m.expandsTo.startsWith('$1') && !/^unroll\b/.test(argText?.trim() ?? '')) return null;
    return m;
  }

  /**
   * The text the parser reads: same length and lines, macros the grammar cannot know rewritten
   * (mask.ts), and of each `#if` group whose branches do not balance their braces only the branch
   * the configuration takes (branches.ts).
   */
  maskForParse(text: string): string {
    return this.maskSelected(this.selectBranches(text));
  }

  /** maskForParse of a text whose branches selectBranches has already selected (a document reads both). */
  maskSelected(selected: string): string {
    return maskText(selected, this.oracle, this.masked);
  }

  /** `text` with the branches of unbalanced `#if` groups that the configuration does not take blanked. */
  selectBranches(text: string): string {
    return selectUnbalancedBranches(text, cond => this.conditionValue(cond));
  }

  /**
   * A `#if` condition's value under the macros the file sees (those defined at its end: its
   * headers', its own and the compile flags'), or null when none were read (the built-in table)
   * and the condition names any macro.
   */
  private conditionValue(cond: string): boolean | null {
    if (!this.defs && /[A-Za-z_]/.test(cond)) return null;
    const defs = this.defs;
    return evaluateCondition(cond, { macros: { get: n => defs?.get(n) }, hasInclude: () => false });
  }

  /**
   * The masked text of the lines that [start, end) of `text` touches and of the line before them
   * (whose masking may depend on the next line), read with one more line after as context.
   */
  maskedRegion(text: string, start: number, end: number): { start: number; end: number; masked: string } {
    const prevLine = start > 0 ? text.lastIndexOf('\n', start - 1) : -1;
    const regionStart = prevLine <= 0 ? 0 : text.lastIndexOf('\n', prevLine - 1) + 1;
    let regionEnd = text.indexOf('\n', end);
    if (regionEnd === -1) regionEnd = text.length;
    let contextEnd = regionEnd === text.length ? regionEnd : text.indexOf('\n', regionEnd + 1);
    if (contextEnd === -1) contextEnd = text.length;
    // Line by line only: a change that alters which branches are taken is caught by the caller
    // (documents.ts compares selectBranches before and after).
    const masked = maskText(text.slice(regionStart, contextEnd), this.oracle, this.masked).slice(0, regionEnd - regionStart);
    return { start: regionStart, end: regionEnd, masked };
  }

  /** The name a masked call statement stands for when masking kept an unknown macro off a loop, or null. */
  unknownOfCall(callee: string): string | null {
    return this.masked.unknown.get(callee) ?? null;
  }

  /** The qualifier macro a comment that masking wrote before `template` stands for, or null. */
  leadingQualifier(comment: string): string | null {
    return comment.length < 64 ? leadingQualifierOf(comment, this.masked) : null;
  }

  /** Masked text with the attributes masking made read back as the macros written. */
  unmask(text: string): string {
    return unmaskAttributes(text, this.masked);
  }

  /** The qualifier macros written in a function head, in order. */
  qualifierMacrosIn(head: string): string[] {
    head = this.unmask(head);
    return head.match(IDENTIFIERS)?.filter(n => !isReserved(n) && this.qualifier(n) !== undefined) ?? [];
  }

  /** `global`, `device` or null for a function head's text. */
  headQualifier(head: string): 'global' | 'device' | null {
    head = this.unmask(head);
    let device = false;
    const k = KEYWORD_QUALIFIER.exec(head);
    if (k) {
      if (k[1] === '__global__' || head.includes('__global__')) return 'global';
      device = true;
    }
    for (const n of head.match(IDENTIFIERS) ?? []) {
      if (isReserved(n)) continue;
      const q = this.qualifier(n);
      if (q?.qualifier === 'global') return 'global';
      if (q?.qualifier === 'device') device = true;
    }
    return device ? 'device' : null;
  }

  /** Whether text (a class, a function) may hold device code: a CUDA keyword or a qualifier macro. */
  mentionsDeviceCode(text: string): boolean {
    text = this.unmask(text);
    if (BUILTIN_ANY.test(text)) return true;
    if (!this.defs) return false;
    for (const n of text.match(IDENTIFIERS) ?? []) {
      if (!this.defs.has(n)) continue;
      const q = this.qualifier(n)?.qualifier;
      if (q === 'global' || q === 'device') return true;
    }
    return false;
  }

  // -------------------------------------------------------------------------------------------

  private meaning(name: string): Meaning {
    let m = this.meanings.get(name);
    if (m !== undefined) return m;
    const def = this.defs?.get(name);
    if (def) m = classify(def, this.defs!);
    else {
      const q = BUILTIN_QUALIFIERS.get(name);
      const p = BUILTIN_PRAGMAS.get(name);
      m = q ? { qualifier: q } : p ? { pragma: p } : null;
    }
    this.meanings.set(name, m);
    return m;
  }
}

/** `__device__`, `__restrict__`, `__launch_bounds__`: the compiler's words, not a project's macros. */
function isReserved(name: string): boolean {
  return name.startsWith('__') && name.endsWith('__');
}

function classify(def: MacroDefinition, defs: MacroDefinitions): Meaning {
  const cached = CLASSIFIED.get(def);
  if (cached && [...cached.reads].every(([n, d]) => (defs.get(n) ?? null) === d)) return cached.meaning;
  const reads = new Map<string, MacroDefinition | null>();
  const lookup: MacroLookup = {
    get(n) {
      const d = defs.get(n);
      reads.set(n, d ?? null);
      return d;
    },
  };
  const meaning = classifyWith(def, lookup);
  CLASSIFIED.set(def, { reads, meaning });
  return meaning;
}

function classifyWith(def: MacroDefinition, macros: MacroLookup): Meaning {
  const params = def.params;
  if (params && params.length > 1) return null;
  if (def.file === '<built-in>') return null;
  const invocation = params === null ? def.name : params.length === 0 ? `${def.name}()` : `${def.name}(${ARG})`;
  const steps: string[] = [];
  let tokens: Token[];
  try {
    tokens = expandTokens(tokenize(invocation), macros, 5000, s => {
      if (steps.length < 8) steps.push(render(s));
    });
  } catch (e) {
    if (e instanceof ExpansionLimit) return null;
    throw e;
  }
  const origin: MacroOrigin = { kind: 'header', file: def.file, line: def.line };
  const pragma = pragmaIn(tokens);
  if (pragma !== null) {
    // `PRAGMA(x)` → `_Pragma(#x)`: any pragma, the argument says which (pragmaOfCall checks it).
    if (pragma !== ARG && !/^unroll\b/.test(pragma)) return null;
    const builtin = PRAGMA_MACROS[def.name];
    return {
      pragma: {
        name: def.name,
        functionLike: params !== null,
        expandsTo: pragma.replace(ARG, '$1'),
        origin,
        ...(builtin ? { library: builtin.library } : {}),
        chain: steps.map(s => s.replace(ARG, 'N')),
      },
    };
  }
  if (params && params.length) return null;
  const words = new Set(tokens.filter(t => t.kind === 'id').map(t => t.text));
  const inline = words.has('__forceinline__') || words.has('__forceinline') || words.has('__always_inline__') || words.has('always_inline');
  const qualifier = words.has('__global__')
    ? 'global'
    : words.has('__device__')
      ? 'device'
      : words.has('__host__')
        ? 'host'
        : inline
          ? 'inline'
          : null;
  if (!qualifier) return null;
  // Only a qualifier when the expansion is qualifiers and attributes (not a whole declaration).
  if (tokens.some(t => t.text === ';' || t.text === '{')) return null;
  return { qualifier: { name: def.name, qualifier, expandsTo: render(tokens).slice(0, 120), origin } };
}

/**
 * The pragma text of the first pragma in tokens, or null: `_Pragma("…")` (what `_Pragma(#n)`
 * stringising gives too), or `#pragma …` written in an object-like macro's body (CUTLASS and
 * CuTe spell `#define CUTLASS_PRAGMA_UNROLL #pragma unroll` for nvcc, which accepts it: there the
 * `#` is an ordinary token and nvcc's front end reads the rest of the line as the directive).
 */
function pragmaIn(tokens: Token[]): string | null {
  for (let i = 0; i + 1 < tokens.length; i++) {
    const t = tokens[i];
    if (
      t.text === '_Pragma' &&
      i + 3 < tokens.length &&
      tokens[i + 1].text === '(' &&
      tokens[i + 2].kind === 'str' &&
      tokens[i + 3].text === ')'
    ) {
      const s = tokens[i + 2].text;
      return s
        .slice(s.indexOf('"') + 1, -1)
        .replace(/\\"/g, '"')
        .replace(/\\\\/g, '\\')
        .trim();
    }
    if ((t.text === '#' || t.text === '%:') && tokens[i + 1].text === 'pragma' && tokens[i + 1].kind === 'id') {
      // The directive runs to the end of the expansion (a `#pragma` body ends the line).
      return render(tokens.slice(i + 2).map((x, j) => (j === 0 ? { ...x, space: false } : x))).trim();
    }
  }
  return null;
}
