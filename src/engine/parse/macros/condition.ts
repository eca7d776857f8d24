// `#if` / `#elif` expressions: `defined`, `__has_include`, the `__has_*` feature tests, macro
// expansion, then integer arithmetic with C's precedence. Identifiers left after expansion are 0
// (`true` is 1 in C++). A malformed expression is false, as a tolerant reader should take it.
import { ExpansionLimit, MacroLookup, expandTokens } from './expand';
import { Token, tokenize } from './tokens';

export interface ConditionContext {
  macros: MacroLookup;
  /** Resolves `__has_include(<x>)` / `("x")`. */
  hasInclude(spelling: string, angled: boolean): boolean;
}

/** Feature tests the real compiler answers from its own tables; reading none of them, we say no. */
const FEATURE_TESTS = new Set([
  '__has_builtin',
  '__has_attribute',
  '__has_cpp_attribute',
  '__has_feature',
  '__has_extension',
  '__has_declspec_attribute',
  '__has_warning',
  '__is_identifier',
  '__building_module',
]);

function num(v: number, space = false): Token {
  return { kind: 'num', text: String(v), space };
}

/** Replaces `defined X`, `defined(X)`, `__has_include(…)` and feature tests before expansion. */
function resolveOperators(tokens: Token[], ctx: ConditionContext): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind === 'id' && t.text === 'defined') {
      let j = i + 1;
      const paren = tokens[j]?.text === '(';
      if (paren) j++;
      const name = tokens[j];
      if (!name || name.kind !== 'id') return [num(0)];
      if (paren && tokens[j + 1]?.text !== ')') return [num(0)];
      out.push(num(ctx.macros.get(name.text) ? 1 : 0, t.space));
      i = paren ? j + 1 : j;
      continue;
    }
    if (t.kind === 'id' && (t.text === '__has_include' || t.text === '__has_include_next') && tokens[i + 1]?.text === '(') {
      let j = i + 2;
      let spelling = '';
      let angled = false;
      if (tokens[j]?.kind === 'str') {
        spelling = tokens[j].text.slice(1, -1);
        j++;
      } else if (tokens[j]?.text === '<') {
        angled = true;
        j++;
        while (j < tokens.length && tokens[j].text !== '>') spelling += (tokens[j].space && spelling ? ' ' : '') + tokens[j++].text;
        j++;
      }
      if (tokens[j]?.text !== ')') return [num(0)];
      out.push(num(spelling && ctx.hasInclude(spelling, angled) ? 1 : 0, t.space));
      i = j;
      continue;
    }
    if (t.kind === 'id' && FEATURE_TESTS.has(t.text) && tokens[i + 1]?.text === '(') {
      let depth = 0;
      let j = i + 1;
      for (; j < tokens.length; j++) {
        if (tokens[j].text === '(') depth++;
        else if (tokens[j].text === ')' && --depth === 0) break;
      }
      out.push(num(0, t.space));
      i = j;
      continue;
    }
    out.push(t);
  }
  return out;
}

/** Integer value of a pp-number or character literal; NaN when it is not an integer. */
function literalValue(text: string): number {
  if (text.startsWith("'") || /^[uUL]'/.test(text)) {
    const body = text.slice(text.indexOf("'") + 1, -1);
    if (body.startsWith('\\')) {
      const esc: Record<string, number> = { n: 10, t: 9, r: 13, '0': 0, '\\': 92, "'": 39, '"': 34, a: 7, b: 8, f: 12, v: 11 };
      return esc[body[1]] ?? (body[1] === 'x' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 8));
    }
    return body.charCodeAt(0) || 0;
  }
  const t = text.replace(/'/g, '').replace(/[uUlLzZ]+$/, '');
  if (/^0[xX][0-9a-fA-F]+$/.test(t)) return parseInt(t.slice(2), 16);
  if (/^0[bB][01]+$/.test(t)) return parseInt(t.slice(2), 2);
  if (/^0[0-7]*$/.test(t)) return parseInt(t, 8) || 0;
  if (/^[1-9]\d*$/.test(t)) return Number(t);
  return NaN;
}

class Parser {
  private i = 0;
  constructor(private readonly t: Token[]) {}

  parse(): number {
    const v = this.ternary();
    if (this.i !== this.t.length) throw new Error('trailing tokens');
    return v;
  }

  private peek(): string | undefined {
    return this.t[this.i]?.text;
  }

  private ternary(): number {
    const c = this.binary(0);
    if (this.peek() !== '?') return c;
    this.i++;
    const a = this.ternary();
    if (this.peek() !== ':') throw new Error('expected :');
    this.i++;
    const b = this.ternary();
    return c ? a : b;
  }

  private static readonly LEVELS: string[][] = [
    ['||'],
    ['&&'],
    ['|'],
    ['^'],
    ['&'],
    ['==', '!='],
    ['<', '>', '<=', '>='],
    ['<<', '>>'],
    ['+', '-'],
    ['*', '/', '%'],
  ];

  private binary(level: number): number {
    if (level >= Parser.LEVELS.length) return this.unary();
    let v = this.binary(level + 1);
    for (;;) {
      const op = this.peek();
      if (!op || !Parser.LEVELS[level].includes(op)) return v;
      this.i++;
      // Short-circuit evaluation still parses the right side.
      const r = this.binary(level + 1);
      v = apply(op, v, r);
    }
  }

  private unary(): number {
    const op = this.peek();
    if (op === '!' || op === '-' || op === '+' || op === '~') {
      this.i++;
      const v = this.unary();
      return op === '!' ? (v ? 0 : 1) : op === '-' ? -v : op === '~' ? ~v : v;
    }
    return this.primary();
  }

  private primary(): number {
    const tok = this.t[this.i++];
    if (!tok) throw new Error('unexpected end');
    if (tok.text === '(') {
      const v = this.ternary();
      if (this.peek() !== ')') throw new Error('expected )');
      this.i++;
      return v;
    }
    if (tok.kind === 'num') {
      const v = literalValue(tok.text);
      if (Number.isNaN(v)) throw new Error(`not an integer: ${tok.text}`);
      return v;
    }
    if (tok.kind === 'id') return tok.text === 'true' ? 1 : 0;
    throw new Error(`unexpected ${tok.text}`);
  }
}

function apply(op: string, a: number, b: number): number {
  switch (op) {
    case '||':
      return a || b ? 1 : 0;
    case '&&':
      return a && b ? 1 : 0;
    case '|':
      return a | b;
    case '^':
      return a ^ b;
    case '&':
      return a & b;
    case '==':
      return a === b ? 1 : 0;
    case '!=':
      return a !== b ? 1 : 0;
    case '<':
      return a < b ? 1 : 0;
    case '>':
      return a > b ? 1 : 0;
    case '<=':
      return a <= b ? 1 : 0;
    case '>=':
      return a >= b ? 1 : 0;
    case '<<':
      return a * 2 ** b;
    case '>>':
      return Math.floor(a / 2 ** b);
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return b === 0 ? 0 : Math.trunc(a / b);
    case '%':
      return b === 0 ? 0 : a % b;
  }
  return 0;
}

/** The value of a `#if`/`#elif` expression; a malformed one or one too long to expand is false. */
export function evaluateCondition(text: string, ctx: ConditionContext): boolean {
  try {
    const pre = resolveOperators(tokenize(text), ctx);
    // `defined` may also appear in an expansion (undefined behaviour, but gcc accepts it).
    const expanded = resolveOperators(expandTokens(pre, ctx.macros, 20000), ctx);
    return new Parser(expanded).parse() !== 0;
  } catch (e) {
    if (e instanceof ExpansionLimit) return false;
    return false;
  }
}
