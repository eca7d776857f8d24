// The statement lists of one function (FunctionScan), the unit every detector works on: each
// list is a block's statements in document order, with what the detectors ask of a statement
// precomputed once (its `if` guard stripped, whether it is a barrier, its text shapes), plus
// the function's `for` loops and its thread-coarsened indices (`r0 = 4 * threadIdx.x`).
import type { Node } from '../parser';
import type { Analyzer, PairResult } from './diff';
import { namedKids, opOf, typedKids } from './syntax';
import { mentions, mentionsAny, Shape, shapeOf, skeleton, squash } from './text';

/** Barriers and fences: skipped between the steps of a warp tail, allowed inside a repeated group. */
const SYNC_RE =
  /^\s*(__syncwarp|__syncthreads|__syncthreads_count|__syncthreads_and|__syncthreads_or|__threadfence_block|__threadfence)\s*\(/;

export interface Stmt {
  node: Node;
  type: string;
  text: string;
  row: number;
  /** The statement without its `if (…)` guard (itself when unguarded). */
  core: Node;
  coreType: string;
  coreText: string;
  /** Text of the guard's condition clause, when the statement is `if (cond) stmt;` (no else). */
  guardText: string | null;
  guard: Node | null;
  eligible: boolean;
  isSync: boolean;
  shape?: Shape;
  skel?: string;
  guardShape?: Shape;
  ifConsequence?: Node | null;
  ifAlternative?: Node | null;
}

export interface StmtList {
  items: Stmt[];
  cache: Map<number, PairResult | null>;
  /** The for_statement whose body holds this list (without a loop in between), by startIndex. */
  ownerFor: number;
}

export interface ForInfo {
  node: Node;
  list: StmtList;
  index: number;
  lists: StmtList[];
}

export interface CoarseIndex {
  name: string;
  factor: number;
  row: number;
  text: string;
  /** Variables computed from this index (they step with it). */
  derived: Set<string>;
}

/** Text of the operand that ends just before `end` (a name, a number or a parenthesised group). */
function operandBefore(text: string, end: number): string {
  let i = end - 1;
  while (i >= 0 && /\s/.test(text[i])) i--;
  if (text[i] === ')') {
    let depth = 0;
    for (let j = i; j >= 0; j--) {
      if (text[j] === ')') depth++;
      else if (text[j] === '(' && --depth === 0) return text.slice(j, i + 1);
    }
    return text.slice(0, i + 1);
  }
  const m = /[\w.]+$/.exec(text.slice(Math.max(0, i - 80), i + 1));
  return m ? m[0] : '';
}

/** Text of the operand that starts at or after `start`. */
function operandAfter(text: string, start: number): string {
  let i = start;
  while (i < text.length && /\s/.test(text[i])) i++;
  if (text[i] === '(') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      if (text[j] === '(') depth++;
      else if (text[j] === ')' && --depth === 0) return text.slice(i, j + 1);
    }
    return text.slice(i);
  }
  const m = /^[\w.]+/.exec(text.slice(i, i + 80));
  return m ? m[0] : '';
}

/** Declarations of integer (index-like) variables. */
const INTEGRAL_DECL_RE =
  /^\s*(?:(?:const|constexpr|static|register|volatile)\s+)*(?:unsigned|signed|int|long|short|char|size_t|ptrdiff_t|auto|u?int(?:8|16|32|64)?_t|uint|unsigned\s+int)\b[^(]*?=/;

/** `const unsigned int idx = …;` (one declarator): name and value text. */
const SIMPLE_DECL_RE = /^[^=;{}()]*?\b([A-Za-z_]\w*)\s*=(?!=)\s*([^;]*?)\s*;?\s*$/;
/** `idx = …;`: name and value text. */
const SIMPLE_ASSIGN_RE = /^\s*([A-Za-z_]\w*)\s*=(?!=)\s*([^;]*?)\s*;?\s*$/;

/** Statements that contain statements. */
const NESTING = new Set([
  'if_statement',
  'for_statement',
  'for_range_loop',
  'while_statement',
  'do_statement',
  'switch_statement',
  'labeled_statement',
  'case_statement',
]);

/** Simple statements that may be a loop's or an `if`'s whole body, without braces. */
const LONE = new Set(['expression_statement', 'declaration', 'return_statement']);

function isStatementType(t: string): boolean {
  return (
    t.endsWith('_statement') ||
    t === 'declaration' ||
    t === 'ERROR' ||
    t === 'for_range_loop' ||
    t === 'type_definition' ||
    t.startsWith('preproc_')
  );
}

export function shapeOfStmt(s: Stmt): Shape {
  return (s.shape ??= shapeOf(s.coreText));
}

export function skelOf(s: Stmt): string {
  return (s.skel ??= skeleton(s.coreText));
}

/** Walks the statement lists of one function in document order. */
export class FunctionScan {
  readonly lists: StmtList[] = [];
  readonly fors: ForInfo[] = [];
  readonly coarse: CoarseIndex[] = [];
  readonly threadVars = new Set<string>();
  private readonly forByStart = new Map<number, ForInfo>();

  constructor(
    private readonly an: Analyzer,
    private readonly checkErrors: boolean,
  ) {}

  scanContainer(n: Node, owner: number, depth: number): void {
    if (depth > 200) return;
    const type = n.type;
    if (
      type === 'compound_statement' ||
      type === 'ERROR' ||
      type === 'case_statement' ||
      type.startsWith('preproc_') ||
      type === 'translation_unit'
    ) {
      const kids = typedKids(n);
      let skipId = -1;
      if (type === 'case_statement') {
        const v = n.childForFieldName('value');
        if (v) skipId = v.startIndex;
      }
      const stmts: Array<[Node, string]> = [];
      for (const [k, t] of kids) {
        if (isStatementType(t) && !(skipId >= 0 && k.startIndex === skipId && t !== 'expression_statement')) stmts.push([k, t]);
      }
      this.scanList(stmts, owner, depth);
    } else if (NESTING.has(type) || LONE.has(type)) {
      // a lone sub-statement (`if (c) for (…) …`, `for (…) s += a[k] + a[k + 1] + …;`): a list
      // of one, which holds no run but may hold a form inside one statement (expression-sum)
      this.scanList([[n, type]], owner, depth);
    }
  }

  private scanList(stmts: Array<[Node, string]>, owner: number, depth: number): void {
    const list: StmtList = { items: [], cache: new Map(), ownerFor: owner };
    this.lists.push(list);
    const ownerInfo = this.forByStart.get(owner);
    if (ownerInfo) ownerInfo.lists.push(list);
    for (const [s, type] of stmts) {
      const item = this.makeStmt(s, type);
      list.items.push(item);
      if (type === 'declaration' || type === 'expression_statement') this.collectDecl(s, type, item.text);
      if (type === 'for_statement') {
        const info: ForInfo = { node: s, list, index: list.items.length - 1, lists: [] };
        this.fors.push(info);
        this.forByStart.set(s.startIndex, info);
        const init = s.childForFieldName('initializer');
        if (init && init.type === 'declaration') this.collectDecl(init, 'declaration', init.text);
      }
      this.descend(item, owner, depth + 1);
    }
  }

  private descend(item: Stmt, owner: number, depth: number): void {
    const s = item.node;
    const type = item.type;
    const sub = (n: Node | null | undefined, o = owner) => {
      if (n) this.scanContainer(n, o, depth);
    };
    switch (type) {
      case 'compound_statement':
      case 'ERROR':
      case 'case_statement':
        sub(s);
        break;
      case 'if_statement': {
        sub(item.ifConsequence);
        const alt = item.ifAlternative;
        if (alt) for (const c of namedKids(alt)) if (isStatementType(c.type)) sub(c);
        break;
      }
      case 'for_statement':
        sub(s.childForFieldName('body'), s.startIndex);
        break;
      case 'for_range_loop':
      case 'while_statement':
      case 'do_statement':
        sub(s.childForFieldName('body'), -1);
        break;
      case 'switch_statement': {
        const body = s.childForFieldName('body');
        if (body) for (const c of namedKids(body)) if (c.type === 'case_statement') sub(c);
        break;
      }
      case 'labeled_statement':
        for (const c of namedKids(s)) if (isStatementType(c.type)) sub(c);
        break;
      default:
        if (type.startsWith('preproc_') && type !== 'preproc_call') sub(s);
    }
  }

  private makeStmt(s: Node, type: string): Stmt {
    const text = s.text;
    let core = s;
    let coreType = type;
    let coreText = text;
    let guard: Node | null = null;
    let ifConsequence: Node | null = null;
    let ifAlternative: Node | null = null;
    if (type === 'if_statement') {
      ifAlternative = s.childForFieldName('alternative');
      ifConsequence = s.childForFieldName('consequence');
    }
    if (type === 'if_statement' && !ifAlternative) {
      const cons = ifConsequence;
      const cond = s.childForFieldName('condition');
      if (cons && cond) {
        let inner: Node | null = cons;
        if (cons.type === 'compound_statement') {
          const k = namedKids(cons);
          inner = k.length === 1 ? k[0] : null;
        }
        if (inner) {
          core = inner;
          coreType = inner.type;
          coreText = inner.text;
          guard = cond;
        }
      }
    }
    const isSync = type === 'expression_statement' && SYNC_RE.test(text);
    const eligible = type !== 'ERROR' && !type.startsWith('preproc_') && !(this.checkErrors && s.hasError);
    return {
      node: s,
      type,
      text,
      row: s.startPosition.row,
      core,
      coreType,
      coreText,
      guard,
      guardText: guard ? guard.text : null,
      eligible,
      isSync,
      ifConsequence,
      ifAlternative,
    };
  }

  /** Tracks thread-index variables and `N * threadIdx`-style coarsened indices. */
  private collectDecl(s: Node, type: string, text: string): void {
    if (type === 'expression_statement' && !/^\s*[A-Za-z_]\w*\s*=(?!=)/.test(text)) return;
    const relevant =
      /\bthreadIdx\b/.test(text) ||
      mentionsAny(text, this.threadVars) ||
      this.coarse.some(c => mentions(text, c.name) || mentionsAny(text, c.derived));
    if (!relevant) return;
    // thread indices are integers: `float dy = coory - atom.y` is not one
    const integral = type === 'expression_statement' || INTEGRAL_DECL_RE.test(text);
    // fast path (no tree access): one declarator or assignment whose value cannot be an N-fold
    // thread index; only the names are tracked
    const m = (type === 'declaration' ? SIMPLE_DECL_RE : SIMPLE_ASSIGN_RE).exec(text);
    if (m && !/[,{}]/.test(m[2]) && !(integral && this.maybeScaledThreadTerm(m[2]))) {
      this.noteValue(m[1], m[2], null, s.startPosition.row, integral);
      return;
    }
    const pairs: Array<[string, Node]> = [];
    if (type === 'declaration') {
      for (const d of namedKids(s)) {
        if (d.type !== 'init_declarator') continue;
        const value = d.childForFieldName('value');
        let id = d.childForFieldName('declarator');
        for (let i = 0; id && id.type !== 'identifier' && i < 8; i++) id = id.childForFieldName('declarator');
        if (id && value) pairs.push([id.text, value]);
      }
    } else {
      const e = s.namedChild(0);
      if (e && e.type === 'assignment_expression' && opOf(e) === '=') {
        const l = e.childForFieldName('left');
        const r = e.childForFieldName('right');
        if (l && r && l.type === 'identifier') pairs.push([l.text, r]);
      }
    }
    for (const [name, value] of pairs) this.noteValue(name, value.text, value, s.startPosition.row, integral);
  }

  private noteValue(name: string, t: string, value: Node | null, row: number, integral: boolean): void {
    if (integral && this.isThreadTerm(t)) {
      const f = value ? this.threadTermFactor(value) : 0;
      if (f >= 2) {
        this.coarse.push({ name, factor: f, row, text: squash(`${name} = ${t}`, 80), derived: new Set() });
        return;
      }
      this.threadVars.add(name);
    }
    for (const c of this.coarse) {
      if (c.name !== name && (mentions(t, c.name) || mentionsAny(t, c.derived))) c.derived.add(name);
    }
  }

  /**
   * Could `text` hold a thread index times a factor (`4 * threadIdx.x`, `tid << 2`,
   * `2 * (blockIdx.x * blockDim.x + threadIdx.x)`)? A textual test that spares the linear form
   * for the usual `blockIdx.x * blockDim.x + threadIdx.x`.
   */
  private maybeScaledThreadTerm(text: string): boolean {
    const re = /\*|<</g;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (this.isThreadTerm(operandBefore(text, m.index)) || this.isThreadTerm(operandAfter(text, m.index + m[0].length))) return true;
    }
    return false;
  }

  isThreadTerm(text: string): boolean {
    return /\bthreadIdx\b/.test(text) || mentionsAny(text, this.threadVars);
  }

  private threadTermFactor(value: Node): number {
    let best = 0;
    for (const [k, c] of this.an.lin(value).t) {
      const ac = Math.abs(c);
      if (ac >= 2 && ac <= 64 && this.isThreadTerm(k)) best = Math.max(best, ac);
    }
    return best;
  }
}
