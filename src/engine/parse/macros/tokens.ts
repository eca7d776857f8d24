// Preprocessing tokens of one logical line (comments already removed), as the C preprocessor
// sees them: identifiers, pp-numbers, string and character literals, punctuators. Each token
// knows whether whitespace preceded it, which stringification (#) and the spelling of an
// expansion (for hover) need.

type TokenKind = 'id' | 'num' | 'str' | 'punct';

export interface Token {
  kind: TokenKind;
  text: string;
  /** Whitespace before it (rendering and `#`). */
  space: boolean;
  /** Macro names that must not expand this token again (the "hide set" of C's rescanning rule). */
  hide?: ReadonlySet<string>;
}

const PUNCTUATORS = [
  '%:%:',
  '...',
  '<<=',
  '>>=',
  '<=>',
  '->*',
  '##',
  '->',
  '++',
  '--',
  '<<',
  '>>',
  '<=',
  '>=',
  '==',
  '!=',
  '&&',
  '||',
  '*=',
  '/=',
  '%=',
  '+=',
  '-=',
  '&=',
  '^=',
  '|=',
  '::',
  '.*',
  '%:',
];

function isIdStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c > 127;
}

function isIdPart(c: number): boolean {
  return isIdStart(c) || (c >= 48 && c <= 57);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Tokens of `text` (no newlines expected; comments must already be gone). */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let space = false;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 11 || c === 12) {
      space = true;
      i++;
      continue;
    }
    const start = i;
    let kind: TokenKind;
    if (isIdStart(c)) {
      i++;
      while (i < n && isIdPart(text.charCodeAt(i))) i++;
      // Encoding prefixes and raw strings: u8"…", L'…', R"(…)".
      const q = text.charCodeAt(i);
      if ((q === 34 || q === 39) && /^(u8|u|U|L|R|u8R|uR|UR|LR)$/.test(text.slice(start, i))) {
        i = skipQuoted(text, i);
        kind = q === 34 ? 'str' : 'num';
      } else kind = 'id';
    } else if (isDigit(c) || (c === 46 && isDigit(text.charCodeAt(i + 1)))) {
      // pp-number: digits, letters, dots, and e+/e-/p+/p- exponents, digit separators.
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if ((d === 43 || d === 45) && /[eEpP]/.test(text[i - 1])) i++;
        else if (isIdPart(d) || d === 46 || (d === 39 && isIdPart(text.charCodeAt(i + 1)))) i++;
        else break;
      }
      kind = 'num';
    } else if (c === 34 || c === 39) {
      i = skipQuoted(text, i);
      kind = c === 34 ? 'str' : 'num';
    } else {
      const p = PUNCTUATORS.find(s => text.startsWith(s, i));
      i += p ? p.length : 1;
      kind = 'punct';
    }
    out.push({ kind, text: text.slice(start, i), space });
    space = false;
  }
  return out;
}

function skipQuoted(text: string, i: number): number {
  const q = text[i];
  i++;
  while (i < text.length && text[i] !== q) i += text[i] === '\\' ? 2 : 1;
  return Math.min(i + 1, text.length);
}

/** Tokens back to text, one space where the source had whitespace. */
export function render(tokens: readonly Token[]): string {
  let s = '';
  for (let i = 0; i < tokens.length; i++) s += (i > 0 && tokens[i].space ? ' ' : '') + tokens[i].text;
  return s;
}
