// Trip counts: a number where the bounds are compile-time constants, else 'dependent' (on a
// template parameter or a value this file cannot see) or 'runtime'.
import type { Node } from './parser';
import type { LoopKind, TripCount } from './model';
import { ConstScope, EvalResult, combine, evalConst } from './constEval';
import { LoopShape, bodyWritesVariable, forLoopCondition, forLoopShape } from './loopShape';
import { pragmaFromNode } from './pragmas';
import { isComment, named } from './syntaxTree';

/** Iteration cap when simulating multiplicative/shift loops; beyond it we call the count runtime. */
const MAX_SIMULATED_TRIPS = 1 << 20;

function countTrips(start: number, bound: number, op: string, updateOp: LoopShape['updateOp'], step: number): number | null {
  const holds = (i: number) => {
    switch (op) {
      case '<':
        return i < bound;
      case '<=':
        return i <= bound;
      case '>':
        return i > bound;
      case '>=':
        return i >= bound;
      case '!=':
        return i !== bound;
    }
    return false;
  };
  if (!holds(start)) return 0;
  if ((updateOp === '+' || updateOp === '-') && op !== '!=') {
    const delta = updateOp === '+' ? step : -step;
    if (delta === 0) return null;
    if ((op === '<' || op === '<=') && delta < 0) return null;
    if ((op === '>' || op === '>=') && delta > 0) return null;
    const span = op === '<' ? bound - start : op === '<=' ? bound - start + 1 : op === '>' ? start - bound : start - bound + 1;
    return Math.ceil(span / Math.abs(delta));
  }
  let i = start;
  for (let n = 0; n < MAX_SIMULATED_TRIPS; n++) {
    if (!holds(i)) return n;
    switch (updateOp) {
      case '+':
        i += step;
        break;
      case '-':
        i -= step;
        break;
      case '*':
        if (Math.abs(step) <= 1) return null;
        i *= step;
        break;
      case '/':
        if (Math.abs(step) <= 1) return null;
        i = Math.trunc(i / step);
        break;
      case '<<':
        if (step <= 0) return null;
        i = i * 2 ** step;
        break;
      case '>>':
        if (step <= 0) return null;
        i = Math.floor(i / 2 ** step);
        break;
    }
  }
  return null;
}

/**
 * For an additive loop with constant bounds, the number of unit-step positions it covers
 * (`for (k = 0; k < 100; k += 4)` covers 100): lets us tell whether a manual unroll divides it.
 */
export function constantExtent(loop: Node, scope: ConstScope): number | null {
  if (loop.type !== 'for_statement') return null;
  const shape = forLoopShape(loop, scope.callee);
  if (!shape || shape.updateOp !== '+' || !shape.start || !shape.bound) return null;
  const a = evalConst(shape.start, scope);
  const b = evalConst(shape.bound, scope);
  if (typeof a !== 'number' || typeof b !== 'number') return null;
  if (shape.op === '<') return b - a;
  if (shape.op === '<=') return b - a + 1;
  return null;
}

/**
 * `int k = 0; for (; k + B <= N; k += B)`: the value the variable starts with when the loop has
 * no initializer, from the statement just before it (a declaration or an assignment).
 */
function startBefore(loop: Node, variable: string): Node | null {
  let prev = loop.previousNamedSibling;
  while (
    prev &&
    (isComment(prev) ||
      prev.type === 'preproc_call' ||
      pragmaFromNode(prev) ||
      (prev.type === 'expression_statement' && prev.text.trim() === ''))
  ) {
    prev = prev.previousNamedSibling;
  }
  if (prev?.type === 'declaration') {
    const d = named(prev).find(c => c.type === 'init_declarator' && c.childForFieldName('declarator')?.text === variable);
    return d?.childForFieldName('value') ?? null;
  }
  const e = prev?.type === 'expression_statement' ? named(prev)[0] : null;
  if (
    e?.type === 'assignment_expression' &&
    e.childForFieldName('operator')?.text === '=' &&
    e.childForFieldName('left')?.text === variable
  ) {
    return e.childForFieldName('right');
  }
  return null;
}

/** A condition that is not `i < bound`: evaluated for each value of the variable in turn. */
function simulateTrips(loop: Node, shape: LoopShape, start: Node, scope: ConstScope): TripCount {
  const cond = loop.childForFieldName('condition');
  const a = evalConst(start, scope);
  const s = shape.stepValue ?? evalConst(shape.step, scope);
  const values = new Map(scope.values);
  const probe: ConstScope = { ...scope, values };
  const category = (v: EvalResult): TripCount => (v === 'runtime' ? 'runtime' : 'dependent');
  if (typeof a !== 'number') return category(combine(a, s) ?? a);
  values.set(shape.variable, a);
  const first = evalConst(cond, probe);
  if (typeof s !== 'number' || typeof first !== 'number') return category(combine(first, s) ?? first);
  let i = a;
  for (let n = 0; n < 1 << 16; n++) {
    values.set(shape.variable, i);
    const c = evalConst(cond, probe);
    if (typeof c !== 'number') return category(c);
    if (!c) return n;
    const next = stepOnce(i, shape.updateOp, s);
    if (next === null || next === i) return 'runtime';
    i = next;
  }
  return 'runtime';
}

function stepOnce(i: number, op: LoopShape['updateOp'], s: number): number | null {
  switch (op) {
    case '+':
      return i + s;
    case '-':
      return i - s;
    case '*':
      return i * s;
    case '/':
      return s ? Math.trunc(i / s) : null;
    case '<<':
      return i * 2 ** s;
    case '>>':
      return Math.floor(i / 2 ** s);
  }
  return null;
}

/**
 * The trip count under a scope. A bound that may be a compile-time constant we cannot evaluate
 * (a header's constant, a CuTe shape, wmma `num_elements`) counts as "dependent", never
 * "runtime": only provably run-time values make a trip count "runtime".
 */
export function tripCountUnder(loop: Node, kind: LoopKind, scope: ConstScope): TripCount {
  const notRuntime = (v: EvalResult) => v === 'dependent' || v === 'unknown';
  if (kind === 'do' || kind === 'while') {
    const cond = kind === 'do' ? loop.childForFieldName('condition') : loop.childForFieldName('condition');
    const c = evalConst(cond, scope);
    if (c === 0) return kind === 'do' ? 1 : 0;
    return notRuntime(c) ? 'dependent' : 'runtime';
  }
  if (loop.type === 'for_range_loop') {
    // `for (int w : {1, 2, 4, 8})`: as many trips as elements. Over an array, a CuTe tensor or
    // a container the count is its size, which this file may not show: not evaluated.
    const right = loop.childForFieldName('right');
    return right?.type === 'initializer_list' ? named(right).filter(n => !isComment(n)).length : 'dependent';
  }
  const shape = forLoopShape(loop, scope.callee);
  // An update this reader does not follow (`k = next(k)`, a call it cannot see into): the trip
  // count is not evaluated, unless the bound is a run-time value.
  if (!shape) {
    const c = forLoopCondition(loop);
    return c?.bound && evalConst(c.bound, scope) !== 'runtime' ? 'dependent' : 'runtime';
  }
  const start = shape.start ?? startBefore(loop, shape.variable);
  if (!start) {
    return shape?.bound && notRuntime(evalConst(shape.bound, scope)) ? 'dependent' : 'runtime';
  }
  if (bodyWritesVariable(loop.childForFieldName('body'), shape.variable)) return 'runtime';
  if (!shape.bound) return simulateTrips(loop, shape, start, scope);
  const a = evalConst(start, scope);
  const b = evalConst(shape.bound, scope);
  const s = shape.stepValue ?? evalConst(shape.step, scope);
  if (a === 'runtime' && b !== 'runtime' && s !== 'runtime' && upperBoundUnrollable(loop, shape, b, s)) return 'dependent';
  if (s !== 'runtime' && boundedByConstant(shape, start, a, b, s, scope)) return 'dependent';
  // `for (uint32_t i = threadIdx.x; i < min(BLOCK, n - base) * K; i += T)`: both rules at once
  if (a === 'runtime' && b === 'runtime' && s !== 'runtime') {
    const limit = upperBound(shape.bound!, scope, 0, true);
    if (limit !== null && upperBoundUnrollable(loop, shape, limit === 'bounded' ? 'dependent' : limit, s)) return 'dependent';
  }
  for (const v of [a, b, s]) if (v === 'runtime') return 'runtime';
  for (const v of [a, b, s]) if (notRuntime(v)) return 'dependent';
  const n = countTrips(a as number, b as number, shape.op, shape.updateOp, s as number);
  return n === null ? 'runtime' : n;
}

/**
 * `for (unsigned i = tid; i < 256; i += 32)`: an unsigned counter that counts up to a
 * compile-time bound cannot take more than bound/step trips whatever it starts at, and nvcc
 * fully unrolls such a loop to that many guarded copies (checked with nvcc 13.0, sm_90: 8, 16
 * and 33 copies; a 64-trip bound stayed a loop). A signed counter (`int i = threadIdx.x`) may
 * start below zero and is not unrolled. Whether nvcc unrolls it is not decidable here where the
 * bound or step is unknown or the bound is below 64 trips: not a run-time trip count to warn of.
 */
function upperBoundUnrollable(loop: Node, shape: LoopShape, bound: EvalResult, step: EvalResult): boolean {
  const init = loop.childForFieldName('initializer');
  const type = init?.type === 'declaration' ? init.childForFieldName('type')?.text.replace(/\s+/g, ' ') : undefined;
  if (!type || !/^(unsigned( (int|long|long long|short|char))?|uint(8|16|32|64)?_t|size_t|uint|unsigned long long int)$/.test(type))
    return false;
  if ((shape.op !== '<' && shape.op !== '<=') || shape.updateOp !== '+') return false;
  if (typeof bound !== 'number' || typeof step !== 'number') return true;
  return step > 0 && Math.ceil((bound + (shape.op === '<=' ? 1 : 0)) / step) < 64;
}

/**
 * `for (k = 0; k < c; ++k)` or `for (k = c; k > 0; --k)` with `int c = min(K_PIPE, k_tile_count)`:
 * the trip count is a run-time value but no more than a compile-time constant, and nvcc fully
 * unrolls such a loop to that many guarded copies (checked with nvcc 13.0, sm_90, counting up
 * to `min(4, n)` and down from `min(4, n) - 1`). Not a run-time trip count to warn of, unless
 * the constant is known and too large (64 trips stayed a loop in upperBoundUnrollable's check).
 */
function boundedByConstant(shape: LoopShape, start: Node, a: EvalResult, b: EvalResult, s: EvalResult, scope: ConstScope): boolean {
  const small = (limit: number | 'bounded', from: EvalResult, step: EvalResult) =>
    limit === 'bounded' || typeof from !== 'number' || typeof step !== 'number' || step <= 0 || Math.abs(limit - from) / step < 64;
  if ((shape.op === '<' || shape.op === '<=' || shape.op === '!=') && shape.updateOp === '+' && a !== 'runtime' && b === 'runtime') {
    const limit = upperBound(shape.bound!, scope, 0);
    return limit !== null && small(limit, a, s);
  }
  if ((shape.op === '>' || shape.op === '>=') && shape.updateOp === '-' && a === 'runtime' && b !== 'runtime') {
    const limit = upperBound(start, scope, 0);
    return limit !== null && small(limit, b, s);
  }
  return false;
}

/**
 * A compile-time upper bound of a run-time value (`min(8, n)`, `min(K, n) - 1`, `c ? 4 : 8`): the
 * number, 'bounded' when not evaluated, else null. For an unsigned counter from a run-time start
 * also `min(K, n) * 4` and `c ? min(K, n) : 2`: nvcc 13.0 (sm_90) fully unrolled those there, but
 * left `int k = 0; k < min(4, n) * 2` and `k < (c ? min(m, 3) : 5)` rolled (`c ? 4 : 8`: unrolled).
 */
function upperBound(n: Node, scope: ConstScope, depth: number, unsignedCounter = false): number | 'bounded' | null {
  if (depth > 8) return null;
  switch (n.type) {
    case 'parenthesized_expression': {
      const inner = named(n).filter(c => !isComment(c));
      return inner.length === 1 ? upperBound(inner[0], scope, depth + 1, unsignedCounter) : null;
    }
    case 'cast_expression': {
      const v = n.childForFieldName('value');
      return v ? upperBound(v, scope, depth + 1, unsignedCounter) : null;
    }
    case 'identifier': {
      const init = scope.initializer?.(n);
      return init ? upperBound(init, scope, depth + 1, unsignedCounter) : null;
    }
    case 'binary_expression': {
      const op = n.childForFieldName('operator')?.text ?? '';
      let left = n.childForFieldName('left');
      let rightNode = n.childForFieldName('right');
      // `K * min(B, n)`: the constant factor on either side
      if (op === '*' && evalConst(left, scope) !== 'runtime') [left, rightNode] = [rightNode, left];
      const right = evalConst(rightNode, scope);
      if (!left || right === 'runtime' || !['+', '-', '*', '/', '>>'].includes(op) || (op === '*' && !unsignedCounter)) return null;
      if (op === '*' && typeof right === 'number' && right < 0) return null;
      const l = upperBound(left, scope, depth + 1, unsignedCounter);
      if (l === null) return null;
      if (l === 'bounded' || typeof right !== 'number') return 'bounded';
      return op === '+'
        ? l + right
        : op === '-'
          ? l - right
          : op === '*'
            ? l * right
            : op === '/'
              ? right > 0
                ? Math.trunc(l / right)
                : null
              : Math.floor(l / 2 ** right);
    }
    case 'conditional_expression': {
      // `c ? 1 : 2`: no more than the larger branch
      const branches = ['consequence', 'alternative'].map(f => n.childForFieldName(f));
      const bounds = branches.map(b => {
        const v = b ? evalConst(b, scope) : 'runtime';
        return typeof v === 'number'
          ? v
          : v !== 'runtime'
            ? 'bounded'
            : b && unsignedCounter
              ? upperBound(b, scope, depth + 1, true)
              : null;
      });
      if (bounds.includes(null)) return null;
      return bounds.includes('bounded') ? 'bounded' : Math.max(...(bounds as number[]));
    }
    case 'call_expression': {
      const f = n.childForFieldName('function');
      const name = (f?.type === 'template_function' ? f.childForFieldName('name')?.text : f?.text)?.split('::').pop();
      const args = named(n.childForFieldName('arguments')).filter(c => !isComment(c));
      if (f?.type === 'primitive_type' && args.length === 1) return upperBound(args[0], scope, depth + 1, unsignedCounter);
      if (name !== 'min' || args.length < 2) return null;
      let best: number | 'bounded' | null = null;
      for (const arg of args) {
        const v = evalConst(arg, scope);
        const u = typeof v === 'number' ? v : v !== 'runtime' ? 'bounded' : upperBound(arg, scope, depth + 1, unsignedCounter);
        if (u === null) continue;
        best = best === null || best === 'bounded' ? u : u === 'bounded' ? best : Math.min(best, u);
      }
      return best;
    }
  }
  return null;
}

/** The distinct identifiers of a loop's header (initializer, condition, update), in order. */
export function namesInLoopHeader(loop: Node): string[] {
  const text = ['initializer', 'condition', 'update'].map(f => loop.childForFieldName(f)?.text ?? '').join(' ');
  return [...new Set(text.match(UNQUALIFIED_NAME) ?? [])];
}

/**
 * A name that is not a member (`tile_A::J`, `cfg.J`, `p->J`): a class's `J` is not the template
 * parameter `J` of the function around it (ggml's mmq-vec-dot.cuh: `MMQ_TILE_NE_K / tile_A::J`).
 */
export const UNQUALIFIED_NAME = /(?<!(?:::|\.|->)\s*)\b[A-Za-z_]\w*\b/g;
