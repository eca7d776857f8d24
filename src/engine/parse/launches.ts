// Kernel launches visible in a file: `kernel<<<grid, block[, shared[, stream]]>>>(…)`, with the
// sizes evaluated where they are compile-time constants (literals, object-like #defines,
// const/constexpr integers, dim3 built from those). Launches sit in host code, which the
// analysis does not walk, so this reads the text: the values the instruction-cache model needs
// (threads per block, blocks in the grid) are nearly always literals or named constants.
import type { ConstScope } from './constEval';
import { evalMacroBody } from './analyze';

export interface LaunchDimension {
  /** The argument as written. */
  text: string;
  /** Its value (dim3: x·y·z) when constant, else null. */
  value: number | null;
  /**
   * A grid sized by the GPU's SM count (`prop.multiProcessorCount`, `k * numSMs` where numSMs was
   * assigned from it): blocks per SM. Persistent-style launches size their grid that way.
   */
  blocksPerSm?: number;
}

export interface KernelLaunch {
  /** Source name of the kernel launched; null for a launch through a pointer or member (`v.kernel<<<…>>>`). */
  kernel: string | null;
  /** The callee as written: `hot_loop<64>`, `v.kernel`. */
  callee: string;
  line: number;
  /** The file holding the launch when it is not the one analysed (a header's translation unit). */
  file?: string;
  grid: LaunchDimension;
  block: LaunchDimension;
  /** Dynamic shared memory, bytes; null when the launch passes none. */
  sharedBytes: LaunchDimension | null;
}

/** Comments and string literals blanked (newlines kept, so offsets and lines stay put). */
function blankCommentsAndStrings(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, m =>
    m.startsWith('/') ? m.replace(/[^\n]/g, ' ') : m[0] + ' '.repeat(m.length - 2) + m[m.length - 1],
  );
}

interface Definition {
  at: number;
  name: string;
  /** dim3 arguments, or the integer expression. */
  dims?: string[];
  expr?: string;
}

const INTEGER_TYPE = String.raw`(?:unsigned\s+|signed\s+)?(?:int|long\s+long|long|short|size_t|u?int(?:8|16|32|64)_t|auto|unsigned)`;

function definitionsIn(text: string): Definition[] {
  const defs: Definition[] = [];
  // Object-like macros (no parenthesis right after the name), continuation lines joined.
  for (const m of text.matchAll(/^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])((?:[^\n\\]|\\\n|\\)*)/gm))
    defs.push({ at: m.index!, name: m[1], expr: m[2].replace(/\\\n/g, ' ').trim() });
  const constInt = new RegExp(
    String.raw`\b(?:static\s+)?(?:constexpr|const)\s+(?:static\s+)?${INTEGER_TYPE}\s+(?:const\s+)?([A-Za-z_]\w*)\s*(?:=\s*([^;{}]+?)|\{([^;{}]+?)\})\s*;`,
    'g',
  );
  for (const m of text.matchAll(constInt)) defs.push({ at: m.index!, name: m[1], expr: (m[2] ?? m[3]).trim() });
  // dim3 NAME(a, b), dim3 NAME{a}, dim3 NAME = dim3(a, b), dim3 NAME = {a, b}
  for (const m of text.matchAll(/\bdim3\s+([A-Za-z_]\w*)\s*(?:=\s*(?:dim3\s*)?)?[({]([^;(){}]*(?:\([^;(){}]*\)[^;(){}]*)*)[)}]\s*;/g))
    defs.push({ at: m.index!, name: m[1], dims: splitTopLevel(m[2]) });
  return defs.sort((a, b) => a.at - b.at);
}

/** Splits at commas outside parentheses, brackets and braces. */
function splitTopLevel(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last || out.length) out.push(last);
  return out;
}

/** The constants and dim3 variables defined before `at` (the last definition of a name wins). */
class ScopeAt {
  private readonly values = new Map<string, number>();
  private readonly dims = new Map<string, string[]>();
  private readonly runtime = new Set<string>();
  private next = 0;

  constructor(private readonly defs: Definition[]) {}

  advanceTo(at: number): void {
    for (; this.next < this.defs.length && this.defs[this.next].at < at; this.next++) {
      const d = this.defs[this.next];
      if (d.dims) {
        this.dims.set(d.name, d.dims);
        continue;
      }
      const v = evalMacroBody(d.expr ?? '', this.scope());
      if (v === null) {
        this.values.delete(d.name);
        this.runtime.add(d.name);
      } else this.values.set(d.name, v);
    }
  }

  private scope(): ConstScope {
    return { values: this.values, unboundTemplateParams: new Set() };
  }

  evaluate(text: string): number | null {
    const t = withSizes(text.trim());
    const dim3 = /^dim3\s*[({]([\s\S]*)[)}]$/.exec(t);
    const parts = dim3 ? splitTopLevel(dim3[1]) : this.dims.get(t);
    if (parts) {
      let product = 1;
      for (const p of parts) {
        const v = evalMacroBody(p, this.scope());
        if (v === null) return null;
        product *= v;
      }
      return product;
    }
    return evalMacroBody(t, this.scope());
  }
}

const SIZES: Record<string, number> = {
  char: 1,
  short: 2,
  int: 4,
  unsigned: 4,
  float: 4,
  double: 8,
  long: 8,
  size_t: 8,
  half: 2,
  __half: 2,
  float2: 8,
  float4: 16,
};

/** `1024 * sizeof(float)` → `1024 * 4` (shared-memory sizes are written that way). */
function withSizes(text: string): string {
  return text.replace(/\bsizeof\s*\(\s*(\w+)\s*\)/g, (m, t: string) => (SIZES[t] !== undefined ? String(SIZES[t]) : m));
}

/** Every `<<<…>>>` launch in the text, in order. */
export function findLaunches(source: string): KernelLaunch[] {
  const text = blankCommentsAndStrings(source);
  const scope = new ScopeAt(definitionsIn(text));
  const out: KernelLaunch[] = [];
  // The callee: a name (qualified, member or pointer access allowed) with optional template arguments.
  const launch = /([A-Za-z_][\w]*(?:\s*(?:::|\.|->)\s*[A-Za-z_]\w*)*)\s*(<(?:[^<>;]|<[^<>;]*>)*>)?\s*<<</g;
  // Lines counted incrementally: launches come in text order.
  let line = 1;
  let counted = 0;
  for (const m of text.matchAll(launch)) {
    const open = m.index! + m[0].length;
    const close = text.indexOf('>>>', open);
    if (close < 0) continue;
    const args = splitTopLevel(text.slice(open, close));
    if (args.length < 2) continue;
    scope.advanceTo(m.index!);
    for (let i = counted; i < m.index!; i++) if (text.charCodeAt(i) === 10) line++;
    counted = m.index!;
    const dim = (t: string): LaunchDimension => ({ text: t.replace(/\s+/g, ' '), value: scope.evaluate(t) });
    const grid = dim(args[0]);
    if (grid.value === null) {
      const perSm = gridInSms(text, grid.text);
      if (perSm !== null) grid.blocksPerSm = perSm;
    }
    const name = m[1].replace(/\s+/g, '');
    const indirect = /\.|->/.test(name);
    out.push({
      kernel: indirect ? null : name.split('::').pop()!,
      callee: `${name}${m[2] ? m[2].replace(/\s+/g, ' ') : ''}`,
      line,
      grid,
      block: dim(args[1]),
      sharedBytes: args.length > 2 && args[2] ? dim(args[2]) : null,
    });
  }
  return out;
}

const SM_COUNT = /\bmultiProcessorCount\b|\bcudaDevAttrMultiProcessorCount\b/;

/**
 * Blocks per SM of a grid written as the SM count, or a constant multiple of it: the expression
 * names multiProcessorCount, or is a variable the file assigns from it (`blocks =
 * prop.multiProcessorCount`, anywhere in the file: launches are often in a helper that takes the
 * grid as a parameter). Null otherwise.
 */
export function gridInSms(text: string, grid: string): number | null {
  const m = /^(?:(\d+)\s*\*\s*)?([A-Za-z_][\w.>-]*)(?:\s*\*\s*(\d+))?$/.exec(grid.trim());
  if (!m) return null;
  const k = Number(m[1] ?? m[3] ?? 1);
  const name = m[2];
  if (SM_COUNT.test(name)) return k;
  if (!/^[A-Za-z_]\w*$/.test(name)) return null;
  const assign = new RegExp(`\\b${name}\\s*=\\s*([^;=][^;]*);`, 'g');
  for (const a of text.matchAll(assign)) if (SM_COUNT.test(a[1]) && /^[\w.\s>-]+$/.test(a[1].trim())) return k;
  return null;
}

/** A constant expression's value with every definition in the file in scope (`__launch_bounds__(BLOCK)`), else null. */
export function evaluateInFile(source: string, expression: string): number | null {
  const text = blankCommentsAndStrings(source);
  const scope = new ScopeAt(definitionsIn(text));
  scope.advanceTo(text.length);
  return scope.evaluate(expression);
}

/** The launches of a header's translation unit (where a header's kernels are launched), tagged with its path. */
export function launchesIn(file: string, source: string): KernelLaunch[] {
  return findLaunches(source).map(l => ({ ...l, file }));
}
