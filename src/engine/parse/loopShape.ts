// The shape of a `for` loop's header: its induction variable, start, bound, comparison and update.
import type { Node } from './parser';
import { repairLessThan } from './misparse';
import { named } from './syntaxTree';
import { declaredName } from './declaratorNames';
import { parseNumberLiteral } from './constEval';

export interface LoopShape {
  variable: string;
  start: Node | null;
  bound: Node | null;
  /** Comparison with the induction variable on the left: <, <=, >, >=, != */
  op: string;
  /** The update as a function of the variable, with its step expression node. */
  updateOp: '+' | '-' | '*' | '/' | '<<' | '>>';
  step: Node | null;
  stepValue: number | null;
}

const FLIP: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '!=': '!=' };

/** What a call in the update goes to (ConstScope.callee): a lambda or a function definition. */
type CalleeOf = (call: Node) => Node | null;

/**
 * The loop's header; `callee` lets an update that is a call (`advance(k)`, the counter passed by
 * reference to a lambda or function that increments it) be read through (stepThroughCall).
 */
export function forLoopShape(loop: Node, callee?: CalleeOf): LoopShape | null {
  const init = loop.childForFieldName('initializer');
  const cond = loop.childForFieldName('condition');
  let update = loop.childForFieldName('update');
  if (!cond || !update) return null;
  const declared = counterName(init, update);
  const compared = comparison(cond, declared);
  if (!compared) return null;
  const { variable, bound, op } = compared;
  // `ii += 2, reg >>= 8`: the one part of a comma expression that writes the variable is the update.
  if (update.type === 'comma_expression') {
    update = onlyWriteOf(update, variable);
    if (!update) return null;
  }
  const stepping = update.type === 'call_expression' ? stepThroughCall(update, variable, callee) : updateStep(update, variable);
  if (!stepping) return null;
  return { variable, start: startValue(init, variable), bound, op, ...stepping };
}

/** The condition alone (`k < n`) of a loop whose update forLoopShape does not read. */
export function forLoopCondition(loop: Node): Pick<LoopShape, 'variable' | 'bound' | 'op'> | null {
  const cond = loop.childForFieldName('condition');
  const update = loop.childForFieldName('update');
  return cond && update ? comparison(cond, counterName(loop.childForFieldName('initializer'), update)) : null;
}

/**
 * The variable the loop counts with: declared or assigned in the initializer, else the one the update writes.
 * `int task = first, cum = 0, e = 0; e < N; e++`: of several declarators, the one the update writes.
 */
function counterName(init: Node | null, update: Node): string | undefined {
  const declarators =
    init?.type === 'declaration'
      ? named(init)
          .filter(c => c.type === 'init_declarator')
          .map(c => c.childForFieldName('declarator')?.text)
      : [];
  return init?.type === 'declaration'
    ? (declarators.find(name => name && updateWrites(update, name)) ?? declarators[0])
    : init?.type === 'assignment_expression'
      ? init.childForFieldName('left')?.text
      : update.type === 'update_expression'
        ? update.childForFieldName('argument')?.text
        : update.type === 'assignment_expression'
          ? update.childForFieldName('left')?.text
          : undefined;
}

/** The condition as `variable op bound` (`i < b` or `b > i`); null when it does not test the variable. */
function comparison(cond: Node, declared: string | undefined): Pick<LoopShape, 'variable' | 'bound' | 'op'> | null {
  const isCounter = (n: Node | null) => n?.type === 'identifier' && (!declared || n.text === declared);
  if (cond.type === 'binary_expression') {
    const l = cond.childForFieldName('left');
    const r = cond.childForFieldName('right');
    const o = cond.childForFieldName('operator')?.text ?? '';
    // `k < size<2>(t) - 1` is read as `(k<size < 2>(t)) - 1`: not a comparison at the top; the
    // repair below undoes it.
    if (!(o in FLIP)) {
      /* not `i < bound` */
    } else if (isCounter(l)) {
      return { variable: l!.text, bound: r, op: o };
    } else if (isCounter(r)) {
      return { variable: r!.text, bound: l, op: FLIP[o] };
    }
  }
  // `i < Traits<8>::kCount` read as a template-id named `i` (misparse.ts).
  const repaired = declared ? repairLessThan(cond, declared) : null;
  if (repaired) return { variable: declared!, bound: repaired, op: '<' };
  // Any other condition (`BASE + STEP <= N`): the variable is the one the update writes;
  // tripCountUnder simulates the condition.
  if (declared && /^[A-Za-z_]\w*$/.test(declared) && new RegExp(`\\b${declared}\\b`).test(cond.text))
    return { variable: declared, bound: null, op: '' };
  return null;
}

/** The one part of a comma expression that writes the variable; null when none or several do. */
function onlyWriteOf(update: Node, variable: string): Node | null {
  const parts: Node[] = [];
  const flatten = (n: Node | null) => {
    if (n?.type === 'comma_expression') {
      flatten(n.childForFieldName('left'));
      flatten(n.childForFieldName('right'));
    } else if (n) parts.push(n);
  };
  flatten(update);
  const writes = parts.filter(p => bodyWritesVariable(p, variable) || writesItself(p, variable));
  return writes.length === 1 ? writes[0] : null;
}

/** Update: i++ / ++i / i-- / i += s / i -= s / i *= s / i <<= s / i = i + s */
function updateStep(update: Node, variable: string): Pick<LoopShape, 'updateOp' | 'step' | 'stepValue'> | null {
  let updateOp: LoopShape['updateOp'] | null = null;
  let step: Node | null = null;
  let stepValue: number | null = null;
  if (update.type === 'update_expression') {
    if (update.childForFieldName('argument')?.text !== variable) return null;
    updateOp = update.text.includes('++') ? '+' : '-';
    stepValue = 1;
  } else if (update.type === 'assignment_expression') {
    if (update.childForFieldName('left')?.text !== variable) return null;
    const aop = update.childForFieldName('operator')?.text ?? '';
    const right = update.childForFieldName('right');
    const map: Record<string, LoopShape['updateOp']> = { '+=': '+', '-=': '-', '*=': '*', '/=': '/', '<<=': '<<', '>>=': '>>' };
    if (map[aop]) {
      updateOp = map[aop];
      step = right;
    } else if (aop === '=' && right?.type === 'binary_expression') {
      const rl = right.childForFieldName('left');
      const ro = right.childForFieldName('operator')?.text ?? '';
      if (rl?.text === variable && ['+', '-', '*', '/', '<<', '>>'].includes(ro)) {
        updateOp = ro as LoopShape['updateOp'];
        step = right.childForFieldName('right');
      }
    }
  }
  return updateOp ? { updateOp, step, stepValue } : null;
}

/**
 * `advance(k)` with `auto advance = [&](uint32_t& k) { ++k; … };` (or a `__device__` function
 * taking `int& k`): the step the callee moves its by-reference parameter by. Only one
 * unconditional `++k`, `--k`, `k += c` or `k -= c` with `c` a constant, in the callee's own body
 * before any `return`, and nothing else that writes `k` (no other assignment, no `&k`, no call it
 * is passed to); else null (not read: the trip count is not evaluated, see tripCountUnder).
 */
function stepThroughCall(call: Node, variable: string, callee?: CalleeOf): Pick<LoopShape, 'updateOp' | 'step' | 'stepValue'> | null {
  const args = named(call.childForFieldName('arguments')).filter(a => a.type !== 'comment');
  const at = args.findIndex(a => a.type === 'identifier' && a.text === variable);
  if (at < 0 || args.some((a, i) => i !== at && new RegExp(`\\b${variable}\\b`).test(a.text))) return null;
  const def = callee?.(call);
  const declarator = def?.type === 'lambda_expression' ? def.childForFieldName('declarator') : def?.childForFieldName('declarator');
  const params = named(declarator?.childForFieldName('parameters')).filter(p => p.type === 'parameter_declaration');
  const ref = params[at]?.childForFieldName('declarator');
  const param = ref?.type === 'reference_declarator' ? named(ref).find(n => n.type === 'identifier')?.text : undefined;
  const body = def?.childForFieldName('body');
  if (!param || !body || (param !== variable && bodyWritesVariable(body, variable))) return null;
  const uses = body.descendantsOfType('identifier').filter(n => n?.text === param) as Node[];
  const writes = uses.filter(n => !readOnly(n));
  if (writes.length !== 1 || uses.some(n => n.parent?.type === 'declaration' || n.parent?.type === 'init_declarator')) return null;
  const statement = writes[0].parent?.parent;
  if (statement?.type !== 'expression_statement' || statement.parent?.id !== body.id) return null;
  if (body.descendantsOfType('return_statement').some(r => r && r.startIndex < statement.startIndex)) return null;
  const stepping = updateStep(writes[0].parent!, param);
  if (!stepping || (stepping.updateOp !== '+' && stepping.updateOp !== '-')) return null;
  if (stepping.stepValue !== null) return stepping;
  const c = stepping.step?.type === 'number_literal' ? parseNumberLiteral(stepping.step.text) : null;
  return c === null ? null : { updateOp: stepping.updateOp, step: stepping.step, stepValue: c };
}

/** Is this use of a name a plain read (not written, not passed on, not its address taken)? */
function readOnly(n: Node): boolean {
  const p = n.parent;
  if (!p) return true;
  if (p.type === 'update_expression' || p.type === 'argument_list') return false;
  if (p.type === 'assignment_expression') return p.childForFieldName('left')?.id !== n.id;
  return !(p.type === 'pointer_expression' && p.childForFieldName('operator')?.text === '&');
}

/** Start: declaration `int i = a` or assignment `i = a`; an empty initializer starts at an unknown value. */
function startValue(init: Node | null, variable: string): Node | null {
  if (init?.type === 'declaration') {
    const d = named(init).find(c => c.type === 'init_declarator' && c.childForFieldName('declarator')?.text === variable);
    return d?.childForFieldName('value') ?? null;
  } else if (init?.type === 'assignment_expression' && init.childForFieldName('left')?.text === variable) {
    return init.childForFieldName('right');
  }
  return null;
}

/** Does the update expression (or one part of a comma expression) write the variable? */
function updateWrites(update: Node, variable: string): boolean {
  if (update.type === 'comma_expression')
    return [update.childForFieldName('left'), update.childForFieldName('right')].some(n => n && updateWrites(n, variable));
  return writesItself(update, variable);
}

/** Is the node itself an assignment or increment of the variable? */
function writesItself(n: Node, variable: string): boolean {
  if (n.type === 'assignment_expression') return n.childForFieldName('left')?.text === variable;
  if (n.type === 'update_expression') return n.childForFieldName('argument')?.text === variable;
  return false;
}

/**
 * Does the loop body assign to the induction variable? Then its trip count is not static. A write
 * to a variable of the same name declared inside the body (a nested loop's own `int i`, a block's
 * declaration before it) is another variable's.
 */
export function bodyWritesVariable(body: Node | null, variable: string): boolean {
  if (!body || !body.text.includes(variable)) return false;
  for (const n of body.descendantsOfType(['assignment_expression', 'update_expression'])) {
    if (!n) continue;
    const target = n.type === 'assignment_expression' ? n.childForFieldName('left') : n.childForFieldName('argument');
    if (target?.text === variable && !shadowedWithin(n, body, variable)) return true;
  }
  return false;
}

function declares(decl: Node | null, variable: string): boolean {
  return !!decl && decl.type === 'declaration' && decl.childrenForFieldName('declarator').some(d => declaredName(d) === variable);
}

/** Is `variable` at `n` a variable declared between `n` and `body` (so not the one outside)? */
function shadowedWithin(n: Node, body: Node, variable: string): boolean {
  let child = n;
  for (let a = n.parent; a && a.id !== body.parent?.id; child = a, a = a.parent) {
    if ((a.type === 'for_statement' || a.type === 'for_range_loop') && child.id !== a.childForFieldName('initializer')?.id) {
      const init = a.childForFieldName('initializer');
      if (declares(init, variable) || (a.type === 'for_range_loop' && declaredName(a.childForFieldName('declarator')) === variable))
        return true;
    }
    if (a.type === 'compound_statement') {
      for (const c of a.namedChildren) {
        if (!c || c.startIndex >= child.startIndex) break;
        if (declares(c, variable)) return true;
      }
    }
    if (a.id === body.id) break;
  }
  return false;
}
