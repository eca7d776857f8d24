// The values a kernel launch is written with, read the way a user writes them (issue 22): local
// variables (`int threads = 128;`), `const`/`constexpr`, object-like macros, `dim3` variables and
// their members, `cudaLaunchConfig_t` fields, the SM count (`cudaDeviceGetAttribute(&sms,
// cudaDevAttrMultiProcessorCount, dev)`, `prop.multiProcessorCount`) and the occupancy API
// (`cudaOccupancyMaxActiveBlocksPerMultiprocessor`, `cudaOccupancyMaxPotentialBlockSize`).
//
// Host code is read as text with C++'s brace scopes: a name means the declaration visible at the
// launch, and a variable takes the values of the writes that can reach the launch (the last
// unconditional one before it, plus conditional ones after that, plus writes later in a loop that
// holds the launch). Values that depend on the GPU or on the kernel's resources (the SM count, the
// blocks that fit) stay symbolic: a value is a set of candidates, each a function of a LaunchEnv
// that the warps-per-SM resolver supplies. Anything else (a parameter, a value read at run time, a
// compound assignment) makes the value unknown, with the reason and its line.
import { evalMacroBody } from './fileConstants';

/** One input of a launch value and where it came from: "`threads` = 128 (line 22)". */
export interface LaunchInput {
  name: string;
  line: number;
  says: string;
}

/** What a value may depend on besides the source: the GPU and the kernel's resources. */
export interface LaunchEnv {
  /** SMs of the GPU. */
  sms: number;
  /** Blocks of the kernel that fit one SM at this block size and dynamic shared memory. */
  fit(threads: number, dynamicShared: number): number;
  /** cudaOccupancyMaxPotentialBlockSize's answer for this dynamic shared memory and block-size limit. */
  optimal(dynamicShared: number, limit: number): { block: number; blocksPerSm: number };
}

export interface LaunchCandidate {
  at(env: LaunchEnv): number | null;
  /** The inputs this candidate was computed from. */
  inputs: LaunchInput[];
}

export interface LaunchValue {
  candidates: LaunchCandidate[];
  /** Why the value is not known (non-empty: unknown); each with its line. */
  unknown: LaunchInput[];
  /** Writes from the command line or environment that were set aside: the value is the program's default. */
  options: LaunchInput[];
}

const MAX_CANDIDATES = 64;
const MAX_DEPTH = 16;

/** Comments and string literals blanked (newlines kept, so offsets and lines stay put). */
export function blankCommentsAndStrings(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, m =>
    m.startsWith('/') ? m.replace(/[^\n]/g, ' ') : m[0] + ' '.repeat(m.length - 2) + m[m.length - 1],
  );
}

/** Splits at commas outside parentheses, brackets and braces. */
export function splitTopLevel(text: string): string[] {
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

/** Index of the parenthesis closing the one opened at `open`, or -1. */
export function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
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
  double2: 16,
  int4: 16,
};

/** `1024 * sizeof(float)` → `1024 * 4`; casts to integer types dropped. */
function normaliseExpression(text: string): string {
  return text
    .replace(/\bsizeof\s*\(\s*(\w+)\s*\)/g, (m, t: string) => (SIZES[t] !== undefined ? String(SIZES[t]) : m))
    .replace(/\b(?:static_cast|reinterpret_cast)\s*<[^<>]*>/g, '')
    .replace(
      /\(\s*(?:const\s+)?(?:unsigned\s+|signed\s+)?(?:long\s+long|long|short|int|size_t|std::size_t|unsigned|u?int(?:8|16|32|64)_t)(?:\s+int)?\s*\)/g,
      '',
    )
    .replace(/\s+/g, ' ')
    .trim();
}

type DeclKind = 'macro' | 'const' | 'var' | 'dim3' | 'config';

interface Decl {
  name: string;
  kind: DeclKind;
  /** Offset of the declaration (where its name is visible from). */
  at: number;
  /** The scope block (the innermost block holding the declaration); null: file scope. */
  block: Block | null;
  /** Initialiser as written (var/const/macro), or parts (dim3 x,y,z; config gridDim, blockDim, dynamicSmemBytes). */
  init?: string | null;
  parts?: (string | null)[];
}

interface Block {
  open: number;
  close: number;
}

interface Write {
  at: number;
  end: number;
  /** The value written, as an expression, or a ready value (API calls). */
  expr?: string;
  value?: LaunchValue;
  /** Not an unconditional statement of its block (after `if (…)` or `else` without braces). */
  conditional: boolean;
}

const INTEGER_TYPE = String.raw`(?:unsigned\s+|signed\s+)?(?:long\s+long|long|short|int|size_t|std::size_t|unsigned|u?int(?:8|16|32|64)_t|auto)(?:\s+int)?`;
const CONFIG_FIELDS = ['gridDim', 'blockDim', 'dynamicSmemBytes'];

function escapeName(name: string): string {
  return name
    .split('.')
    .map(p => p.replace(/[$]/g, '\\$&'))
    .join(String.raw`\s*\.\s*`);
}

function known(candidates: LaunchCandidate[]): LaunchValue {
  return { candidates, unknown: [], options: [] };
}

function unknownValue(why: LaunchInput): LaunchValue {
  return { candidates: [], unknown: [why], options: [] };
}

function union(values: LaunchValue[]): LaunchValue {
  return {
    candidates: values.flatMap(v => v.candidates),
    unknown: values.flatMap(v => v.unknown),
    options: values.flatMap(v => v.options),
  };
}

/** Numbers of a candidate's arithmetic, with min/max calls reduced. */
function evalNumeric(expr: string): number | null {
  let t = expr;
  for (let guard = 0; guard < 16; guard++) {
    const m = /(?:std\s*::\s*)?\b(min|max)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)/.exec(t);
    if (!m) break;
    const args = splitTopLevel(m[2]).map(a => evalMacroBody(a, { values: new Map(), unboundTemplateParams: new Set() }));
    if (args.length !== 2 || args.some(a => a === null)) return null;
    const v = m[1] === 'min' ? Math.min(args[0]!, args[1]!) : Math.max(args[0]!, args[1]!);
    t = t.slice(0, m.index) + `(${v})` + t.slice(m.index + m[0].length);
  }
  return evalMacroBody(t, { values: new Map(), unboundTemplateParams: new Set() });
}

/** The host code of one file, read for launch values. */
export class LaunchText {
  readonly text: string;
  private readonly lineStarts: number[] = [0];
  private readonly blocks: Block[] = [];
  private readonly decls = new Map<string, Decl[]>();

  constructor(source: string) {
    this.text = blankCommentsAndStrings(source);
    for (let i = 0; i < this.text.length; i++) if (this.text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
    const stack: number[] = [];
    for (let i = 0; i < this.text.length; i++) {
      const c = this.text[i];
      if (c === '{') stack.push(i);
      else if (c === '}' && stack.length) this.blocks.push({ open: stack.pop()!, close: i });
    }
    this.blocks.sort((a, b) => a.open - b.open);
    this.collectDeclarations();
  }

  lineOf(at: number): number {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid] <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  /** The innermost brace block holding `at`; null at file scope. */
  blockAt(at: number): Block | null {
    let best: Block | null = null;
    for (const b of this.blocks) {
      if (b.open >= at) break;
      if (b.close > at) best = b;
    }
    return best;
  }

  private contains(b: Block | null, at: number): boolean {
    return b === null || (b.open < at && at < b.close);
  }

  private addDecl(d: Decl): void {
    const list = this.decls.get(d.name) ?? [];
    list.push(d);
    this.decls.set(d.name, list);
  }

  private collectDeclarations(): void {
    const t = this.text;
    for (const m of t.matchAll(/^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])((?:[^\n\\]|\\\n|\\)*)/gm))
      this.addDecl({ name: m[1], kind: 'macro', at: m.index!, block: null, init: m[2].replace(/\\\n/g, ' ').trim() });
    // enum { THREADS = 128, … }
    for (const m of t.matchAll(/\benum\b[^{};]*\{([^{}]*)\}/g)) {
      for (const e of splitTopLevel(m[1])) {
        const x = /^([A-Za-z_]\w*)\s*=\s*(.+)$/s.exec(e);
        if (x) this.addDecl({ name: x[1], kind: 'const', at: m.index!, block: null, init: x[2] });
      }
    }
    const decl = new RegExp(
      String.raw`((?:\b(?:static|const|constexpr|volatile|register|inline|__device__|__constant__)\s+)*)\b(${INTEGER_TYPE}|dim3|cudaLaunchConfig_t)\s+((?:const\s+)?[A-Za-z_](?:[^;{}()]|\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)|\{[^;{}]*\})*?);`,
      'g',
    );
    for (const m of t.matchAll(decl)) {
      const before = t.slice(Math.max(0, m.index! - 40), m.index!);
      // Parameters and casts: `(int n,` `, int n)`: only a for-statement's parenthesis opens a declaration.
      if (/[(,]\s*$/.test(before) && !/\bfor\s*\(\s*$/.test(before)) continue;
      if (/[\w.>]$/.test(before)) continue;
      const isConst = /\b(?:const|constexpr)\b/.test(m[1]) || /^const\s/.test(m[3]);
      const type = m[2];
      const block = this.blockAt(m.index!);
      let offset = m.index! + m[0].indexOf(m[3]);
      for (const d of splitTopLevel(m[3].replace(/^const\s+/, ''))) {
        const x = /^([A-Za-z_]\w*)\s*(?:=\s*([\s\S]+)|(\{[\s\S]*\})|\(([\s\S]*)\))?$/.exec(d);
        const at = t.indexOf(d, offset);
        offset = at >= 0 ? at + d.length : offset;
        if (!x) continue;
        const [, name, eq, brace, paren] = x;
        const pos = at >= 0 ? at : m.index!;
        if (type === 'dim3') {
          const init = eq ?? brace ?? (paren !== undefined ? `dim3(${paren})` : null);
          this.addDecl({ name, kind: 'dim3', at: pos, block, parts: init === null ? ['1', '1', '1'] : dim3Parts(init, name) });
        } else if (type === 'cudaLaunchConfig_t') {
          this.addDecl({ name, kind: 'config', at: pos, block, parts: configParts(eq ?? brace ?? null) });
        } else {
          const init = eq ?? (brace !== undefined ? brace.slice(1, -1) : (paren ?? null));
          this.addDecl({ name, kind: isConst ? 'const' : 'var', at: pos, block, init: init === null ? null : init.trim() });
        }
      }
    }
    for (const list of this.decls.values()) list.sort((a, b) => a.at - b.at);
  }

  /** The value of an expression as written at offset `at`. */
  evaluate(expression: string, at: number, depth = 0): LaunchValue {
    const t = normaliseExpression(expression);
    if (!t) return unknownValue({ name: expression, line: this.lineOf(at), says: 'empty' });
    if (depth > MAX_DEPTH) return unknownValue({ name: t, line: this.lineOf(at), says: `\`${t}\` is defined too deeply` });
    const dim = /^(?:dim3\s*)?[({]([\s\S]*)[)}]$/.exec(t);
    if (dim && /^dim3|^\{/.test(t)) return this.product(splitTopLevel(dim[1]), at, depth);
    // Names: qualified, member and pointer access; not a number's suffix.
    const nameRe = /(?<![\w.])(?:[A-Za-z_]\w*\s*::\s*)*[A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*)*/g;
    const parts: string[] = [];
    const values: LaunchValue[] = [];
    let last = 0;
    for (const m of t.matchAll(nameRe)) {
      const name = m[0].replace(/\s+/g, '');
      const next = t.slice(m.index! + m[0].length).trimStart();
      if (next.startsWith('(')) {
        if (/^(?:std::)?(?:min|max)$/.test(name)) continue;
        return unknownValue({ name, line: this.lineOf(at), says: `\`${t}\` calls ${name}() (line ${this.lineOf(at)})` });
      }
      parts.push(t.slice(last, m.index!));
      last = m.index! + m[0].length;
      values.push(this.resolve(name, at, depth + 1));
    }
    parts.push(t.slice(last));
    const bad = values.filter(v => v.unknown.length);
    const options = values.flatMap(v => v.options);
    if (bad.length) return { candidates: [], unknown: bad.flatMap(v => v.unknown), options };
    let combos: LaunchCandidate[][] = [[]];
    for (const v of values) {
      if (!v.candidates.length) return { candidates: [], unknown: [], options };
      combos = combos.flatMap(c => v.candidates.map(x => [...c, x]));
      if (combos.length > MAX_CANDIDATES)
        return { candidates: [], unknown: [{ name: t, line: this.lineOf(at), says: `\`${t}\` takes too many values` }], options };
    }
    const candidates = combos.map(c => ({
      at: (env: LaunchEnv) => {
        let s = parts[0];
        for (let i = 0; i < c.length; i++) {
          const v = c[i].at(env);
          if (v === null) return null;
          s += `(${v})` + parts[i + 1];
        }
        return evalNumeric(s);
      },
      inputs: c.flatMap(x => x.inputs),
    }));
    if (evalNumeric(parts.join('(7)')) === null)
      return unknownValue({
        name: t,
        line: this.lineOf(at),
        says: `\`${t}\` is not an integer expression we read (line ${this.lineOf(at)})`,
      });
    return { candidates, unknown: [], options };
  }

  /** x·y·z of a dim3 written as its parts. */
  private product(parts: string[], at: number, depth: number): LaunchValue {
    const expr = parts.length ? parts.map(p => `(${p})`).join(' * ') : '1';
    return this.evaluate(expr, at, depth + 1);
  }

  /** The value of a name at offset `at`. */
  resolve(rawName: string, at: number, depth = 0): LaunchValue {
    const line = this.lineOf(at);
    if (depth > MAX_DEPTH) return unknownValue({ name: rawName, line, says: `\`${rawName}\` is defined too deeply` });
    const name = rawName.replace(/->/g, '.');
    if (/(?:^|\.)multiProcessorCount$/.test(name)) {
      const owner = name.split('.')[0];
      const props = new RegExp(String.raw`\bcudaGetDeviceProperties\s*\(\s*&\s*${escapeName(owner)}\b`).exec(this.text);
      const from = props ? `cudaGetDeviceProperties, line ${this.lineOf(props.index)}` : `line ${line}`;
      return known([{ at: env => env.sms, inputs: [{ name: rawName, line, says: `\`${rawName}\`: the SM count (${from})` }] }]);
    }
    const qualified = name.includes('::');
    const path = name.replace(/^(?:\w+::)*/, '').split('.');
    const base = path[0];
    const macro = (this.decls.get(base) ?? []).filter(d => d.kind === 'macro' && d.at < at).pop();
    if (macro && path.length === 1) {
      const v = this.evaluate(macro.init ?? '', macro.at, depth + 1);
      return this.tag(v, rawName, macro.at, `\`${rawName}\` = ${macro.init} (#define, line ${this.lineOf(macro.at)})`);
    }
    const visible = (this.decls.get(base) ?? []).filter(
      d => d.kind !== 'macro' && ((d.at < at && this.contains(d.block, at)) || (qualified && d.kind === 'const')),
    );
    const d = visible.sort((a, b) => a.at - b.at).pop();
    if (!d) {
      const param = this.parameterOf(base, at);
      if (param)
        return path.length === 1
          ? this.argumentsOf(rawName, param, depth)
          : unknownValue({ name: rawName, line: param.line, says: `\`${rawName}\` is a parameter of ${param.fn} (line ${param.line})` });
      return unknownValue({ name: rawName, line, says: `\`${rawName}\` is not defined in the file` });
    }
    if (d.kind === 'const') {
      const v = this.evaluate(d.init ?? '', d.at, depth + 1);
      return this.tag(v, rawName, d.at, `\`${rawName}\` = ${normaliseExpression(d.init ?? '')} (line ${this.lineOf(d.at)})`);
    }
    if (d.kind === 'var') {
      if (path.length > 1) return unknownValue({ name: rawName, line, says: `\`${rawName}\` is a member we do not read` });
      return this.reaching(d, base, d.init ?? null, at, depth);
    }
    if (d.kind === 'dim3') {
      if (path.length === 1) {
        const comps = ['x', 'y', 'z'].map(c => this.component(d, c, at, depth));
        const v = this.multiply(comps, rawName, at);
        // Components straight from the declaration read as the declaration.
        const declLine = this.lineOf(d.at);
        const own = (i: LaunchInput) => i.name.startsWith(`${d.name}.`) && i.line === declLine;
        const decl = {
          name: rawName,
          line: declLine,
          says: `\`${rawName}\` = dim3(${(d.parts ?? []).map(p => normaliseExpression(p ?? '1')).join(', ')}) (line ${declLine})`,
        };
        return {
          ...v,
          candidates: v.candidates.map(c => ({
            at: c.at,
            inputs: c.inputs.some(own) ? [decl, ...c.inputs.filter(i => !own(i))] : c.inputs,
          })),
        };
      }
      if (path.length === 2 && /^[xyz]$/.test(path[1])) return this.component(d, path[1], at, depth);
      return unknownValue({ name: rawName, line, says: `\`${rawName}\` is not a dim3 component` });
    }
    // cudaLaunchConfig_t
    const field = CONFIG_FIELDS.indexOf(path[1] ?? '');
    if (field < 0 || path.length > 2)
      return unknownValue({ name: rawName, line, says: `\`${rawName}\` is a launch-config field we do not read` });
    return this.reaching(d, `${base}.${path[1]}`, d.parts?.[field] ?? null, at, depth);
  }

  private tag(v: LaunchValue, name: string, at: number, says: string): LaunchValue {
    const input = { name, line: this.lineOf(at), says };
    // An unknown value says which definition it came through.
    if (v.unknown.length)
      return { ...v, unknown: v.unknown.map(u => (u.says.startsWith(says) ? u : { ...u, says: `${says}, and ${u.says}` })) };
    // A name whose value is a plain number is its own input; one built from other names keeps theirs too.
    return { ...v, candidates: v.candidates.map(c => ({ at: c.at, inputs: [input, ...c.inputs] })) };
  }

  private multiply(values: LaunchValue[], name: string, at: number): LaunchValue {
    if (values.some(v => v.unknown.length)) return union(values.filter(v => v.unknown.length));
    let combos: LaunchCandidate[][] = [[]];
    for (const v of values) combos = combos.flatMap(c => v.candidates.map(x => [...c, x]));
    if (combos.length > MAX_CANDIDATES) return unknownValue({ name, line: this.lineOf(at), says: `\`${name}\` takes too many values` });
    return {
      candidates: combos.map(c => ({
        at: env =>
          c.reduce<number | null>((p, x) => (p === null ? null : ((y: number | null) => (y === null ? null : p * y))(x.at(env))), 1),
        inputs: c.flatMap(x => x.inputs),
      })),
      unknown: [],
      options: values.flatMap(v => v.options),
    };
  }

  /** A dim3 variable's component: its declaration's part, then writes to `v.x` or to `v` as a whole. */
  private component(d: Decl, c: string, at: number, depth: number): LaunchValue {
    const i = 'xyz'.indexOf(c);
    return this.reaching(d, `${d.name}.${c}`, d.parts?.[i] ?? '1', at, depth, (rhs: string) => dim3Parts(rhs, d.name)[i] ?? '1');
  }

  /**
   * The values a variable (or a member path of one) can have at `at`: its declaration's
   * initialiser and the writes that reach `at`.
   */
  private reaching(
    d: Decl,
    target: string,
    init: string | null,
    at: number,
    depth: number,
    wholeWrite?: (rhs: string) => string,
  ): LaunchValue {
    const scopeEnd = d.block ? d.block.close : this.text.length;
    const writes = this.writesTo(target, d.at, scopeEnd, depth);
    if (wholeWrite && target.includes('.')) {
      const whole = target.split('.')[0];
      for (const w of this.writesTo(whole, d.at, scopeEnd, depth))
        if (w.expr !== undefined) writes.push({ ...w, expr: wholeWrite(w.expr) });
    }
    writes.sort((a, b) => a.at - b.at);
    const declLine = this.lineOf(d.at);
    const reach: { write: Write | null; at: number }[] = init !== null ? [{ write: null, at: d.at }] : [];
    const loop = this.loopAround(at, d);
    for (const w of writes) {
      if (w.at < at) {
        if (!w.conditional && this.contains(this.blockAt(w.at), at)) reach.length = 0;
        reach.push({ write: w, at: w.at });
      } else if (loop && w.at < loop.close) reach.push({ write: w, at: w.at });
    }
    if (!reach.length)
      return unknownValue({ name: target, line: declLine, says: `\`${target}\` is never set before line ${this.lineOf(at)}` });
    const values = reach.map(r => {
      if (!r.write) {
        const v = this.evaluate(init!, d.at, depth + 1);
        return this.tag(v, target, d.at, `\`${target}\` = ${normaliseExpression(init!)} (line ${declLine})`);
      }
      if (r.write.value) return r.write.value;
      const rhs = r.write.expr!;
      const wl = this.lineOf(r.write.at);
      if (/\bargv\b|\bgetenv\b|\batoi\b|\bstrto\w+\b|\bstoi\b/.test(rhs))
        return {
          candidates: [],
          unknown: [],
          options: [{ name: target, line: wl, says: `\`${target}\` may be set from the command line (line ${wl})` }],
        };
      const v = this.evaluate(rhs, r.write.at, depth + 1);
      return this.tag(v, target, r.write.at, `\`${target}\` = ${normaliseExpression(rhs)} (line ${wl})`);
    });
    return union(values);
  }

  /** The innermost loop body holding `at` that is inside the variable's scope. */
  private loopAround(at: number, d: Decl): Block | null {
    let best: Block | null = null;
    for (const b of this.blocks) {
      if (b.open >= at) break;
      if (b.close <= at || b.open < d.at) continue;
      const head = this.text.slice(Math.max(0, b.open - 300), b.open).trimEnd();
      if (/\bdo$/.test(head)) best = b;
      else if (head.endsWith(')')) {
        const open = matchingOpen(head, head.length - 1);
        if (open >= 0 && /\b(?:for|while)\s*$/.test(head.slice(0, open))) best = b;
      }
    }
    return best;
  }

  /** Writes to `target` (a name or `name.member`) in [from, to). */
  private writesTo(target: string, from: number, to: number, depth: number): Write[] {
    const t = this.text;
    const n = escapeName(target);
    const out: Write[] = [];
    const region = (m: RegExpMatchArray) => m.index! > from && m.index! < to;
    const conditional = (at: number) => {
      const before = t.slice(Math.max(0, at - 200), at).trimEnd();
      return (
        /\belse$/.test(before) ||
        (before.endsWith(')') && /\b(?:if|for|while)\s*$/.test(before.slice(0, matchingOpen(before, before.length - 1))))
      );
    };
    for (const m of t.matchAll(new RegExp(String.raw`(?<![\w.>])${n}\s*=(?!=)`, 'g'))) {
      if (!region(m)) continue;
      const start = m.index! + m[0].length;
      const end = statementEnd(t, start);
      // A declaration is not a write (`int n = 4` is the Decl).
      if (this.isDeclarationAt(m.index!)) continue;
      out.push({ at: m.index!, end, expr: t.slice(start, end), conditional: conditional(m.index!) });
    }
    const compound = new RegExp(
      String.raw`(?<![\w.>])${n}\s*(?:\+=|-=|\*=|/=|%=|<<=|>>=|&=|\|=|\^=|\+\+|--)|(?:\+\+|--)\s*${n}(?![\w.])|>>\s*${n}(?![\w.])`,
      'g',
    );
    for (const m of t.matchAll(compound)) {
      if (!region(m)) continue;
      const line = this.lineOf(m.index!);
      out.push({
        at: m.index!,
        end: m.index! + m[0].length,
        value: unknownValue({ name: target, line, says: `\`${target}\` changes at line ${line} (\`${m[0].replace(/\s+/g, ' ')}\`)` }),
        conditional: true,
      });
    }
    for (const m of t.matchAll(new RegExp(String.raw`(?<!&)&\s*${n}(?![\w.])`, 'g'))) {
      if (!region(m)) continue;
      out.push({
        at: m.index!,
        end: m.index! + m[0].length,
        value: this.apiWrite(target, m.index!, depth),
        conditional: conditional(m.index!),
      });
    }
    return out;
  }

  private isDeclarationAt(at: number): boolean {
    const name = /^[A-Za-z_]\w*/.exec(this.text.slice(at))?.[0];
    return !!name && (this.decls.get(name) ?? []).some(d => d.at === at);
  }

  /** The value an API call stores through `&target`. */
  private apiWrite(target: string, amp: number, depth: number): LaunchValue {
    const t = this.text;
    const line = this.lineOf(amp);
    // The call around `&target`: the nearest unmatched '(' before it.
    let d = 0;
    let open = -1;
    for (let i = amp - 1; i >= 0; i--) {
      const c = t[i];
      if (c === ')') d++;
      else if (c === '(') {
        if (d === 0) {
          open = i;
          break;
        }
        d--;
      } else if ((c === ';' || c === '{' || c === '}') && d === 0) break;
    }
    const fn = open >= 0 ? /([A-Za-z_]\w*)\s*$/.exec(t.slice(Math.max(0, open - 80), open))?.[1] : undefined;
    const close = open >= 0 ? closingParen(t, open) : -1;
    if (!fn || close < 0) return unknownValue({ name: target, line, says: `\`${target}\` is set through a pointer at line ${line}` });
    const args = splitTopLevel(t.slice(open + 1, close));
    const index = args.findIndex(a => new RegExp(String.raw`^&\s*${escapeName(target)}$`).test(a));
    const arg = (i: number, dflt: string) => (args[i] !== undefined && args[i] !== '' ? args[i] : dflt);
    if (fn === 'cudaDeviceGetAttribute' && index === 0) {
      if (/\bcudaDevAttrMultiProcessorCount\b/.test(args[1] ?? ''))
        return known([
          {
            at: env => env.sms,
            inputs: [{ name: target, line, says: `\`${target}\`: the SM count (cudaDeviceGetAttribute, line ${line})` }],
          },
        ]);
      return unknownValue({ name: target, line, says: `\`${target}\` is the device attribute ${args[1]} (line ${line})` });
    }
    if (/^cudaOccupancyMaxActiveBlocksPerMultiprocessor(?:WithFlags)?$/.test(fn) && index === 0) {
      const threads = this.evaluate(arg(2, '0'), open, depth + 1);
      const shared = this.evaluate(arg(3, '0'), open, depth + 1);
      const v = this.combine2(threads, shared, (env, a, b) => env.fit(a, b));
      return this.tag(
        v,
        target,
        amp,
        `\`${target}\`: the blocks that fit an SM at \`${arg(2, '0')}\` threads (cudaOccupancyMaxActiveBlocksPerMultiprocessor, line ${line})`,
      );
    }
    if (/^cudaOccupancyMaxPotentialBlockSize(?:WithFlags)?$/.test(fn) && (index === 0 || index === 1)) {
      const shared = this.evaluate(arg(3, '0'), open, depth + 1);
      const limit = this.evaluate(arg(4, '0'), open, depth + 1);
      const v =
        index === 1
          ? this.combine2(shared, limit, (env, s, l) => env.optimal(s, l).block)
          : this.combine2(shared, limit, (env, s, l) => env.optimal(s, l).blocksPerSm * env.sms);
      const what = index === 1 ? 'the block size of highest occupancy' : 'the blocks that fit an SM at that block size × the SM count';
      return this.tag(v, target, amp, `\`${target}\`: ${what} (cudaOccupancyMaxPotentialBlockSize, line ${line})`);
    }
    return unknownValue({ name: target, line, says: `\`${target}\` is set by ${fn}() (line ${line})` });
  }

  private combine2(a: LaunchValue, b: LaunchValue, f: (env: LaunchEnv, x: number, y: number) => number): LaunchValue {
    if (a.unknown.length || b.unknown.length) return union([a, b].filter(v => v.unknown.length));
    const candidates: LaunchCandidate[] = [];
    for (const x of a.candidates)
      for (const y of b.candidates)
        candidates.push({
          at: env => {
            const [p, q] = [x.at(env), y.at(env)];
            return p === null || q === null ? null : f(env, p, q);
          },
          inputs: [...x.inputs, ...y.inputs],
        });
    return { candidates, unknown: [], options: [...a.options, ...b.options] };
  }

  /**
   * A parameter's values: the arguments of the function's direct calls in the file. Unknown when
   * it has none (called from elsewhere, or only through a pointer).
   */
  private argumentsOf(
    name: string,
    p: { fn: string; name: string | null; index: number; line: number; body: Block },
    depth: number,
  ): LaunchValue {
    const none = unknownValue({ name, line: p.line, says: `\`${name}\` is a parameter of ${p.fn} (line ${p.line})` });
    if (!p.name) return none;
    const values: LaunchValue[] = [];
    for (const m of this.text.matchAll(new RegExp(String.raw`(?<![\w.>])${p.name}\s*(?:<[^;()]*>)?\s*\(`, 'g'))) {
      const open = m.index! + m[0].length - 1;
      if (open < p.body.open && this.text.indexOf('{', open) === p.body.open) continue; // the definition
      const close = closingParen(this.text, open);
      if (close < 0) continue;
      const arg = splitTopLevel(this.text.slice(open + 1, close))[p.index];
      if (arg === undefined || arg === '') continue;
      const line = this.lineOf(m.index!);
      const v = this.evaluate(arg, m.index!, depth + 1);
      values.push(this.tag(v, name, m.index!, `\`${name}\` = \`${normaliseExpression(arg)}\` passed to ${p.fn} at line ${line}`));
    }
    return values.length ? union(values) : none;
  }

  /** The function whose parameter list declares `name`, for a use at `at`. */
  private parameterOf(name: string, at: number): { fn: string; name: string | null; index: number; line: number; body: Block } | null {
    for (const b of this.blocks) {
      if (b.open >= at) break;
      if (b.close <= at) continue;
      const head = withoutTrailingSpecifier(this.text.slice(Math.max(0, b.open - 600), b.open));
      if (!head.endsWith(')')) continue;
      const open = matchingOpen(head, head.length - 1);
      if (open < 0) continue;
      const before = head.slice(0, open).trimEnd();
      const fn = before.endsWith(']') ? 'a lambda' : /([A-Za-z_]\w*)\s*$/.exec(before)?.[1];
      if (!fn || /^(?:if|for|while|switch|catch)$/.test(fn)) continue;
      const params = head.slice(open + 1, head.length - 1);
      const index = splitTopLevel(params).findIndex(p => new RegExp(String.raw`\b${name}\s*(?:=.*)?$`).test(p.trim()));
      if (index >= 0)
        return { fn: fn === 'a lambda' ? fn : `${fn}()`, name: fn === 'a lambda' ? null : fn, index, line: this.lineOf(b.open), body: b };
    }
    return null;
  }
}

/** The parts x, y, z of a dim3 written as `dim3(a, b)`, `{a, b}`, `dim3 v = other` or a scalar. */
function dim3Parts(init: string, self: string): string[] {
  const t = init.trim();
  const m = /^(?:dim3\s*)?[({]([\s\S]*)[)}]$/.exec(t);
  if (m && (/^dim3/.test(t) || t.startsWith('{'))) {
    const p = splitTopLevel(m[1]).filter(x => x !== '');
    return [p[0] ?? '1', p[1] ?? '1', p[2] ?? '1'];
  }
  if (/^[A-Za-z_]\w*$/.test(t) && t !== self) return [`${t}.x`, `${t}.y`, `${t}.z`];
  return [t, '1', '1'];
}

/** gridDim, blockDim, dynamicSmemBytes of a cudaLaunchConfig_t initialiser (positional or designated); null: not set. */
function configParts(init: string | null): (string | null)[] {
  if (init === null) return [null, null, null];
  const m = /^\{([\s\S]*)\}$/.exec(init.trim());
  if (!m) return [null, null, null];
  const items = splitTopLevel(m[1]).filter(x => x !== '');
  const out: (string | null)[] = ['0', '0', '0'];
  items.forEach((item, i) => {
    const d = /^\.(\w+)\s*=\s*([\s\S]+)$/.exec(item);
    if (d) {
      const f = CONFIG_FIELDS.indexOf(d[1]);
      if (f >= 0) out[f] = d[2];
    } else if (i < 3) out[i] = item;
  });
  return out;
}

/** The end of the expression starting at `start`: the first `;` or `,` at depth 0, or an unmatched `)`. */
function statementEnd(t: string, start: number): number {
  let depth = 0;
  for (let i = start; i < t.length; i++) {
    const c = t[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return i;
      depth--;
    } else if ((c === ';' || c === ',') && depth === 0) return i;
  }
  return t.length;
}

/**
 * `head` without trailing white space, one trailing `const`, `noexcept` or `override`, and the
 * white space before it: what `head.replace(/\s*(?:const|noexcept|override)?\s*$/, '')` gives,
 * without that regex's cost (it tries every position of a long indented head: quadratic, most of
 * a hover's time on a 5,000-line file).
 */
function withoutTrailingSpecifier(head: string): string {
  const t = head.trimEnd();
  for (const k of ['const', 'noexcept', 'override']) if (t.endsWith(k)) return t.slice(0, t.length - k.length).trimEnd();
  return t;
}

/** The '(' matching the ')' at `close`, or -1. */
function matchingOpen(t: string, close: number): number {
  let depth = 0;
  for (let i = close; i >= 0; i--) {
    if (t[i] === ')') depth++;
    else if (t[i] === '(' && --depth === 0) return i;
  }
  return -1;
}
