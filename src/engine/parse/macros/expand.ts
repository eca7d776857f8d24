// Macro expansion as the C preprocessor does it (C11 6.10.3, C++20 [cpp.replace]): object-like
// and function-like macros, `#` and `##`, `__VA_ARGS__`/`__VA_OPT__`, arguments fully expanded
// before substitution unless next to `#`/`##`, and rescanning with hide sets so that a macro
// never expands inside its own expansion. Bounded: a pathological table gives up instead of
// hanging the language server.
import { Token, tokenize, render } from './tokens';

export interface MacroDefinition {
  name: string;
  /** null for an object-like macro. */
  params: string[] | null;
  variadic: boolean;
  body: Token[];
  /** Where it was defined: file path and 1-based line; `<built-in>` for predefined macros. */
  file: string;
  line: number;
  /** Cached identity of what it means (environment.ts defKey). */
  key?: string;
}

/** Macros read by name; a Map works, so does a view that layers several tables. */
export interface MacroLookup {
  get(name: string): MacroDefinition | undefined;
}

/** Keywords that cuda_runtime.h turns into attributes: kept as written, they are what we look for. */
const CUDA_KEYWORDS = new Set(['__global__', '__device__', '__host__', '__forceinline__', '__noinline__', '__shared__', '__constant__']);

export class ExpansionLimit extends Error {}

/** Parses `#define` text after the directive name: `NAME(params) body` or `NAME body`. */
export function parseDefine(rest: string, file: string, line: number): MacroDefinition | null {
  const m = /^\s*([A-Za-z_$][\w$]*)/.exec(rest);
  if (!m) return null;
  const name = m[1];
  let after = rest.slice(m[0].length);
  let params: string[] | null = null;
  let variadic = false;
  if (after.startsWith('(')) {
    const close = after.indexOf(')');
    if (close === -1) return null;
    params = after
      .slice(1, close)
      .split(',')
      .map(p => p.trim())
      .filter(p => p.length > 0);
    const last = params[params.length - 1];
    if (last === '...') {
      variadic = true;
      params[params.length - 1] = '__VA_ARGS__';
    } else if (last?.endsWith('...')) {
      // GNU named variadic parameter: `args...`
      variadic = true;
      params[params.length - 1] = last.slice(0, -3).trim();
    }
    after = after.slice(close + 1);
  }
  const body = tokenize(after);
  if (body.length) body[0] = { ...body[0], space: false };
  return { name, params, variadic, body, file, line };
}

interface State {
  macros: MacroLookup;
  budget: number;
}

const EMPTY: ReadonlySet<string> = new Set();

function withHide(t: Token, hide: ReadonlySet<string>): Token {
  if (!hide.size) return t;
  if (!t.hide?.size) return { ...t, hide };
  const merged = new Set(t.hide);
  for (const h of hide) merged.add(h);
  return { ...t, hide: merged };
}

/**
 * Fully expands `tokens`. `onStep` sees the text after each top-level macro replacement, which is
 * what hover shows as the expansion chain.
 */
export function expandTokens(tokens: Token[], macros: MacroLookup, budget = 20000, onStep?: (tokens: Token[]) => void): Token[] {
  const st: State = { macros, budget };
  return expandList(tokens, st, onStep);
}

function expandList(input: Token[], st: State, onStep?: (tokens: Token[]) => void): Token[] {
  const out: Token[] = [];
  // Work on a reversed stack so that replacing a macro pushes its expansion in front cheaply.
  const stack = input.slice().reverse();
  while (stack.length) {
    if (--st.budget < 0) throw new ExpansionLimit('macro expansion too long');
    const t = stack.pop()!;
    const def = t.kind === 'id' && !CUDA_KEYWORDS.has(t.text) && !t.hide?.has(t.text) ? st.macros.get(t.text) : undefined;
    if (!def) {
      out.push(t);
      continue;
    }
    let replacement: Token[];
    if (def.params === null) {
      const hide = new Set(t.hide ?? EMPTY);
      hide.add(def.name);
      replacement = pasteAll(
        def.body.map(b => ({ ...b })),
        st,
      ).map(b => withHide(b, hide));
    } else {
      // Function-like: only a macro when a `(` follows.
      const next = stack[stack.length - 1];
      if (!next || next.text !== '(') {
        out.push(t);
        continue;
      }
      const args = collectArgs(stack);
      if (!args) {
        // Unbalanced: leave the name as written (the rest is already consumed, put it back).
        out.push(t);
        continue;
      }
      const hide = new Set(t.hide ?? EMPTY);
      hide.add(def.name);
      replacement = substitute(def, args.args, st).map(b => withHide(b, hide));
    }
    if (replacement.length) replacement[0] = { ...replacement[0], space: t.space };
    for (let i = replacement.length - 1; i >= 0; i--) stack.push(replacement[i]);
    if (onStep) onStep([...out, ...stack.slice().reverse()]);
  }
  return out;
}

/** Pops `( a, b, … )` off the reversed stack; commas inside nested parentheses do not split. */
function collectArgs(stack: Token[]): { args: Token[][] } | null {
  const saved = stack.length;
  const popped: Token[] = [];
  stack.pop(); // (
  popped.push({ kind: 'punct', text: '(', space: false });
  const args: Token[][] = [[]];
  let depth = 0;
  while (stack.length) {
    const t = stack.pop()!;
    popped.push(t);
    if (t.text === '(') depth++;
    else if (t.text === ')') {
      if (depth === 0) return { args };
      depth--;
    } else if (t.text === ',' && depth === 0) {
      args.push([]);
      continue;
    }
    args[args.length - 1].push(t);
  }
  // Restore what was consumed.
  for (let i = popped.length - 1; i >= 0; i--) stack.push(popped[i]);
  void saved;
  return null;
}

function stringify(arg: Token[]): Token {
  const s = render(arg.map((t, i) => (i === 0 ? { ...t, space: false } : t)))
    .trim()
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"');
  return { kind: 'str', text: `"${s}"`, space: false };
}

function substitute(def: MacroDefinition, rawArgs: Token[][], st: State): Token[] {
  const params = def.params!;
  let args = rawArgs;
  // `F()` of a one-parameter macro has one empty argument; of a zero-parameter macro, none.
  if (params.length === 0 && args.length === 1 && args[0].length === 0) args = [];
  if (def.variadic) {
    const fixed = params.length - 1;
    if (args.length > fixed) {
      const rest = args.slice(fixed);
      const va: Token[] = [];
      rest.forEach((a, i) => {
        if (i > 0) va.push({ kind: 'punct', text: ',', space: false });
        va.push(...a);
      });
      args = [...args.slice(0, fixed), va];
    } else {
      while (args.length < params.length) args = [...args, []];
    }
  }
  const index = new Map(params.map((p, i) => [p, i] as const));
  const expanded = new Map<number, Token[]>();
  const expandedArg = (i: number) => {
    let e = expanded.get(i);
    if (!e) {
      e = expandList(args[i] ?? [], st);
      expanded.set(i, e);
    }
    return e;
  };
  const body = def.body;
  const out: Token[] = [];
  for (let i = 0; i < body.length; i++) {
    const t = body[i];
    if (t.text === '#' && i + 1 < body.length && index.has(body[i + 1].text)) {
      const s = stringify(args[index.get(body[i + 1].text)!] ?? []);
      out.push({ ...s, space: t.space });
      i++;
      continue;
    }
    if (t.kind === 'id' && t.text === '__VA_OPT__' && def.variadic && body[i + 1]?.text === '(') {
      // __VA_OPT__(x): x when the variadic arguments are not empty.
      let depth = 0;
      let j = i + 1;
      for (; j < body.length; j++) {
        if (body[j].text === '(') depth++;
        else if (body[j].text === ')' && --depth === 0) break;
      }
      const vaTokens = args[params.length - 1] ?? [];
      if (vaTokens.length) {
        const inner = substitute({ ...def, body: body.slice(i + 2, j) }, rawArgs, st);
        out.push(...inner);
      }
      i = j;
      continue;
    }
    const pi = t.kind === 'id' ? index.get(t.text) : undefined;
    if (pi !== undefined) {
      const nextIsPaste = body[i + 1]?.text === '##';
      const prevIsPaste = body[i - 1]?.text === '##';
      const raw = args[pi] ?? [];
      const tokens = nextIsPaste || prevIsPaste ? raw : expandedArg(pi);
      if (!tokens.length) {
        // A placemarker keeps `a ## EMPTY` and `EMPTY ## b` working.
        if (nextIsPaste || prevIsPaste) out.push({ kind: 'punct', text: '', space: t.space });
        continue;
      }
      out.push({ ...tokens[0], space: t.space }, ...tokens.slice(1));
      continue;
    }
    out.push(t);
  }
  return pasteAll(out, st).filter(t => t.text !== '' || t.kind !== 'punct');
}

/** Applies every `##` in `tokens` (left to right), re-lexing each pasted pair into one token. */
function pasteAll(tokens: Token[], st: State): Token[] {
  if (!tokens.some(t => t.text === '##')) return tokens;
  const out: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.text === '##' && out.length && i + 1 < tokens.length) {
      const left = out.pop()!;
      const right = tokens[++i];
      const text = left.text + right.text;
      if (--st.budget < 0) throw new ExpansionLimit('macro expansion too long');
      const lexed = tokenize(text);
      if (lexed.length === 1) out.push({ ...lexed[0], space: left.space });
      else if (text === '') out.push({ kind: 'punct', text: '', space: left.space });
      else out.push({ ...left }, { ...right, space: false }); // invalid paste: keep both (gcc errors)
      continue;
    }
    out.push(t);
  }
  return out;
}

/** Expands a macro invocation written as text (`_CCCL_PRAGMA_UNROLL(4)`), with each step. */
export function expandText(text: string, macros: MacroLookup, budget?: number): { result: string; steps: string[] } {
  const steps: string[] = [];
  const tokens = expandTokens(tokenize(text), macros, budget, s => steps.push(render(s)));
  return { result: render(tokens), steps };
}
