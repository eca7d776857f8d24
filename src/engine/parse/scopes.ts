// Scope-aware name lookup for constant evaluation (constEval.ts), following C++'s rules closely
// enough for loop bounds in template-library code:
//
// - an unqualified name inside a member function is looked up in the function (locals,
//   parameters), then in the enclosing classes innermost first (their members, template
//   parameters and base classes), then at namespace scope: never in an unrelated class or in a
//   later specialisation of the same template;
// - `S::k` and `S<8>::k` find the class S (the explicit specialisation whose arguments match
//   wins over the primary template, whose parameters are then bound to the arguments);
// - anything that involves a template parameter is "dependent", anything this file cannot see
//   (a header's constant, an unknown function) is "unknown": only values that provably exist at
//   run time (parameters, non-const locals, non-static data members, threadIdx) are "runtime".
//
// Nodes are only read, never kept past the analysis of the tree they belong to.
import type { Node } from './parser';
import { combine, evalConst, mentionsAny, type ConstScope, type EvalResult } from './constEval';
import {
  type ClassView,
  type FileIndex,
  MemoReads,
  type Member,
  CLASS_TYPES,
  enclosingClasses,
  enclosingFunction,
  namesOutOfClassMember,
} from './fileIndex';
import { declaredName, templateParamNames } from './declaratorNames';
import { type BodyNodes, type Declared, FunctionLocals } from './localDeclarations';
import { named } from './syntaxTree';
import { orMacro } from './macroNumbers';

/** CUDA's pure integer intrinsics (32-bit), which nvcc folds on constant arguments. */
const PURE_INTRINSICS: Record<string, (...a: number[]) => number> = {
  __clz: (x: number) => Math.clz32(x),
  __popc: (x: number) => {
    let n = 0;
    for (let v = x >>> 0; v; v &= v - 1) n++;
    return n;
  },
  __ffs: (x: number) => (x === 0 ? 0 : 31 - Math.clz32((x & -x) >>> 0) + 1),
  __mul24: (a: number, b: number) => Math.imul((a << 8) >> 8, (b << 8) >> 8),
  __umul24: (a: number, b: number) => Math.imul(a & 0xffffff, b & 0xffffff) >>> 0,
};

const MAX_DEPTH = 48;

// ---------------------------------------------------------------------------------------------
// Lookup

/** Where an expression is evaluated: a function body (locals, parameters) inside classes. */
export interface EvalContext {
  /** Enclosing classes, innermost first, with their template parameters' bindings. */
  classes: ClassView[];
  /** The function whose locals and parameters are visible, if any. */
  fn: Node | null;
  /** Names with known values (namespace constants, bound template parameters, const locals). */
  values: Map<string, number>;
  /** Template parameters without a binding. */
  unbound: Set<string>;
}

type TypeResult = ClassView | 'dependent' | 'unknown' | 'runtime-scalar';

const CUTE_SIZE_FUNCTIONS = new Set(['size', 'rank', 'depth', 'cosize']);
/** Built-in vector types and dim3: their members are run-time values. */
const SCALAR_TYPE =
  /^(u?(char|short|int|long|longlong)|float|double|half|__half|bfloat16|__nv_bfloat16)[1-4]$|^dim3$|^__half2$|^__nv_bfloat162$/;

function isClassView(t: TypeResult): t is ClassView {
  return typeof t === 'object';
}

function bindingKey(b: Map<string, number>): string {
  return [...b].map(([k, v]) => `${k}=${v}`).join(',');
}

export class ScopeLookup {
  /** The locals, parameters and writes of the functions looked into. */
  private readonly locals = new FunctionLocals();
  private memo = new Map<string, EvalResult>();
  /** What computing each memo entry (and classInsts') asked the file: a function reusing one asked it too. */
  private readonly memoReads: MemoReads;
  private active = new Set<string>();
  /** classInstantiations by class node id. */
  private classInsts = new Map<number, Map<string, number>[]>();

  /** Start offsets of the file's __global__ functions: their parameters are launch arguments, run-time values. */
  readonly kernelStarts = new Set<number>();

  constructor(readonly index: FileIndex) {
    this.memoReads = new MemoReads(index.reads);
  }

  /** A memo entry, its names noted as asked again. */
  private recall(key: string): EvalResult | undefined {
    const r = this.memo.get(key);
    if (r !== undefined) this.memoReads.reused(key);
    return r;
  }

  /** The scope evalConst needs for this context. */
  scope(ctx: EvalContext): ConstScope {
    return {
      values: ctx.values,
      unboundTemplateParams: ctx.unbound,
      resolve: (node, depth) => this.resolve(node, ctx, depth),
      initializer: node => {
        if (node.type !== 'identifier' || ctx.values.has(node.text)) return null;
        const d = this.locals.declared(node.text, node.startIndex, ctx.fn);
        if (d?.kind === 'param') return this.locals.lastPlainWrite(ctx.fn, node.text, node.startIndex);
        return d?.init && (d.kind === 'const' || d.unmodified) ? d.init : null;
      },
      callee: call => {
        const f = call.childForFieldName('function');
        const name = f?.type === 'identifier' || f?.type === 'qualified_identifier' ? f.text.split('::').pop()! : null;
        if (!name || ctx.values.has(name)) return null;
        const d = f!.type === 'identifier' ? this.locals.declared(name, f!.startIndex, ctx.fn) : null;
        if (d) return d.init?.type === 'lambda_expression' && (d.kind === 'const' || d.unmodified) ? d.init : null;
        const defs = this.index.functionsNamed(name);
        return defs.length === 1 ? defs[0] : null;
      },
    };
  }

  /** The classes around a function: lexically, or `Foo<T>::f` defined outside its class. */
  classesOf(fn: Node, bindings: Map<string, number> = new Map()): ClassView[] {
    let infos = enclosingClasses(fn);
    if (!infos.length) {
      const decl = fn.childForFieldName('declarator');
      const inner = decl?.type === 'function_declarator' ? decl.childForFieldName('declarator') : null;
      const scopeNode = inner?.type === 'qualified_identifier' ? inner.childForFieldName('scope') : null;
      if (scopeNode) {
        const name = scopeNode.type === 'template_type' ? scopeNode.childForFieldName('name')?.text : scopeNode.text;
        const found = name ? this.index.classesNamed(name).filter(c => !c.specArgs) : [];
        if (found.length === 1) infos = [found[0]];
      }
    }
    return infos.map(info => ({ info, bindings }));
  }

  /**
   * The context of a function: namespace values, without names that the enclosing classes
   * declare (a member hides a namespace constant), plus the members' known values.
   */
  functionContext(fn: Node, fileValues: Map<string, number>, unbound: Set<string>, classes: ClassView[]): EvalContext {
    const values = new Map(fileValues);
    const allUnbound = new Set(unbound);
    for (let i = classes.length - 1; i >= 0; i--) {
      const view = classes[i];
      for (const p of view.info.templateParams) {
        values.delete(p);
        const b = view.bindings.get(p);
        if (b !== undefined) values.set(p, b);
        else allUnbound.add(p);
      }
      for (const name of this.index.membersOf(view.info).keys()) values.delete(name);
    }
    const ctx: EvalContext = { classes, fn, values, unbound: allUnbound };
    // Members with a value go into the map, so that text evaluation (pragma arguments) sees them too.
    for (let i = classes.length - 1; i >= 0; i--) {
      for (const [name, m] of this.index.membersOf(classes[i].info)) {
        if (m.kind === 'type' || m.kind === 'class') continue;
        const v = this.memberValue(classes.slice(i), m, name, 0);
        if (typeof v === 'number') values.set(name, v);
      }
    }
    return ctx;
  }

  /** The context inside a class (member initialisers): its template parameters and members. */
  private classContext(classes: ClassView[]): EvalContext {
    const values = new Map(this.index.fileValues);
    const unbound = new Set<string>();
    for (let i = classes.length - 1; i >= 0; i--) {
      for (const p of classes[i].info.templateParams) {
        values.delete(p);
        const b = classes[i].bindings.get(p);
        if (b !== undefined) values.set(p, b);
        else unbound.add(p);
      }
      for (const name of this.index.membersOf(classes[i].info).keys()) values.delete(name);
    }
    return { classes, fn: null, values, unbound };
  }

  /**
   * Template arguments of the innermost class template of `classes` wherever the file names it
   * (`Merge<8> m;`, `Merge<16>::run(…)`), by parameter; an argument we cannot evaluate leaves its
   * parameter unbound. Explicit specialisations and the template's own body do not count.
   */
  classInstantiations(classes: ClassView[]): Map<string, number>[] {
    const info = classes[0]?.info;
    if (!info || !info.templateParams.length || info.specArgs) return [];
    // The same for every member function of the class (read from the places that name it): each
    // of a class template's members asked again, a walk of every `tvec<T, N>` in the file each
    // (tiny-cuda-nn's vec.h). Kept only when asked outside any evaluation, whose recursion guard
    // could have left an argument unevaluated.
    const cached = this.classInsts.get(info.node.id);
    if (cached) {
      this.memoReads.reused(info.node.id);
      return cached;
    }
    const out = this.memoReads.run(info.node.id, () => this.readClassInstantiations(info));
    if (!this.active.size) this.classInsts.set(info.node.id, out);
    return out;
  }

  private readClassInstantiations(info: ClassView['info']): Map<string, number>[] {
    const out: Map<string, number>[] = [];
    const seen = new Set<string>();
    for (const n of this.index.templateTypesNamed(info.name)) {
      if (n.parent && CLASS_TYPES.has(n.parent.type) && n.parent.childForFieldName('name')?.id === n.id) continue;
      if (n.startIndex >= info.node.startIndex && n.endIndex <= info.node.endIndex) continue;
      if (namesOutOfClassMember(n)) continue;
      const args = named(n.childForFieldName('arguments'));
      const key = args.map(a => a.text.replace(/\s+/g, '')).join(',');
      if (seen.has(key)) continue;
      seen.add(key);
      const ctx = this.classContext(enclosingClasses(n).map(c => ({ info: c, bindings: new Map<string, number>() })));
      const binding = new Map<string, number>();
      info.templateParams.forEach((p, i) => {
        const a = args[i];
        if (!a || a.type === 'type_descriptor') return;
        const v = this.evalIn(a, ctx, 0);
        if (typeof v === 'number') binding.set(p, v);
      });
      out.push(binding);
      if (out.length >= 32) break;
    }
    return out;
  }

  private chainOf(view: ClassView): ClassView[] {
    const out: ClassView[] = [view];
    for (let o = view.info.outer; o; o = o.outer) out.push({ info: o, bindings: view.bindings });
    return out;
  }

  resolve(node: Node, ctx: EvalContext, depth: number): EvalResult | undefined {
    if (depth > MAX_DEPTH) return 'unknown';
    switch (node.type) {
      case 'identifier':
        return orMacro(this.lookupName(node.text, node.startIndex, ctx, depth), node.text);
      case 'qualified_identifier':
        return this.resolveQualified(node, ctx, depth);
      case 'field_expression':
        return this.resolveField(node, ctx, depth);
      case 'call_expression':
        return this.resolveCall(node, ctx, depth);
      case 'compound_literal_expression':
        return this.integralConstant(node.childForFieldName('type'), ctx, depth) ?? 'unknown';
      case 'template_function':
        return 'unknown';
    }
    return undefined;
  }

  // ---- Unqualified names -------------------------------------------------------------------

  /** A function body's nodes (FunctionLocals.bodyNodes): its analysis reads them too. */
  bodyNodes(body: Node): BodyNodes {
    return this.locals.bodyNodes(body);
  }

  lookupName(name: string, at: number, ctx: EvalContext, depth: number): EvalResult {
    const v = ctx.values.get(name);
    if (v !== undefined) return v;
    if (ctx.unbound.has(name)) return 'dependent';
    const d = this.locals.declared(name, at, ctx.fn);
    if (d) {
      // `int width = 32;` / `auto M = size<1>(A);` that nothing writes afterwards: nvcc folds it,
      // so it is as constant as its initialiser (a full unroll over it works).
      if (d.kind === 'param' && d.lambda) return this.lambdaParameterValue(d.lambda, ctx, depth);
      if (d.kind === 'param') {
        // `shape_k = SHAPE_K != 0 ? SHAPE_K : shape_k;` before the use: the value is that, not the caller's
        const w = this.locals.lastPlainWrite(ctx.fn, name, at);
        return w ? this.evalIn(w, ctx, depth + 1) : this.parameterValue(name, ctx, depth);
      }
      if (!d.init || (d.kind !== 'const' && !d.unmodified)) return 'runtime';
      const r = this.evalIn(d.init, ctx, depth + 1);
      return r;
    }
    for (let i = 0; i < ctx.classes.length; i++) {
      const view = ctx.classes[i];
      if (view.info.templateParams.includes(name)) return view.bindings.get(name) ?? 'dependent';
      const r = this.memberLookup(ctx.classes.slice(i), name, depth);
      if (r !== undefined) return r;
    }
    const fv = this.index.fileValues.get(name);
    if (fv !== undefined) return fv;
    if (this.index.isGlobalVariable(name)) return 'runtime';
    return 'unknown';
  }

  /**
   * A parameter is a run-time value in a kernel. In a __device__ function it is whatever its
   * callers pass: nvcc inlines or propagates a constant argument (`load_stages(b, kStages, …)`)
   * and then fully unrolls a loop bounded by the parameter (checked with nvcc 13.0, sm_90, even
   * for a __noinline__ function). So a call in this file that passes something not provably
   * run-time makes the parameter not evaluated; calls that all pass run-time values, or none
   * visible, leave it a run-time value.
   */
  private parameterValue(name: string, ctx: EvalContext, depth: number): EvalResult {
    const fn = ctx.fn;
    const body = fn?.childForFieldName('body');
    if (!fn || !body || depth > MAX_DEPTH / 2) return 'runtime';
    if (this.kernelStarts.has(fn.startIndex) || /\b__global__\b/.test(fn.text.slice(0, body.startIndex - fn.startIndex))) return 'runtime';
    const declarator = fn.childForFieldName('declarator');
    const fname = (declarator?.type === 'function_declarator' ? declarator.childForFieldName('declarator') : null)?.text.split('::').pop();
    const params = named(declarator?.childForFieldName('parameters')).filter(p => /parameter_declaration$/.test(p.type));
    const index = params.findIndex(p => declaredName(p.childForFieldName('declarator')) === name);
    if (!fname || index < 0) return 'runtime';
    const key = `param|${fn.id}|${index}`;
    const cached = this.recall(key);
    if (cached !== undefined) return cached;
    if (this.active.has(key)) return 'runtime';
    this.active.add(key);
    let r: EvalResult = 'runtime';
    this.memoReads.begin();
    try {
      for (const call of this.index.callsNamed(fname)) {
        if (call.startIndex >= fn.startIndex && call.endIndex <= fn.endIndex) continue; // recursion
        const args = named(call.childForFieldName('arguments'));
        const arg = args[index] ?? params[index].childForFieldName('default_value');
        if (!arg) continue;
        const caller = enclosingFunction(call);
        const callerCtx = caller
          ? this.functionContext(
              caller,
              this.index.fileValues,
              new Set(templateParamNames(caller.parent?.type === 'template_declaration' ? caller.parent : null)),
              this.classesOf(caller),
            )
          : this.classContext([]);
        if (this.evalIn(arg, callerCtx, depth + 1) !== 'runtime') {
          r = 'unknown';
          break;
        }
      }
    } finally {
      this.active.delete(key);
      this.memoReads.end(key);
    }
    this.memo.set(key, r);
    return r;
  }

  /**
   * A parameter of a lambda written in the function (`auto body = [&](int count) {…}; body(4);`):
   * nvcc inlines the call and carries the constant in, so it is what the calls of the lambda's
   * variable in this function pass: not evaluated when one passes anything but a run-time value.
   * A lambda no call of which is visible (handed to other code, `parallel_for(n, body)`) keeps
   * its parameters run-time values, as before, unless it is handed to a template instantiated
   * with arguments (a compile-time recursion such as `unroll<6>{}(body)`): not evaluated.
   */
  private lambdaParameterValue(lambda: NonNullable<Declared['lambda']>, ctx: EvalContext, depth: number): EvalResult {
    const holder = lambda.node.parent;
    const variable = holder?.type === 'init_declarator' ? declaredName(holder.childForFieldName('declarator')) : null;
    const body = ctx.fn?.childForFieldName('body');
    if (!variable || !body || depth > MAX_DEPTH / 2) return 'runtime';
    const key = `lambda|${lambda.node.id}|${lambda.index}`;
    const cached = this.recall(key);
    if (cached !== undefined) return cached;
    const r = this.memoReads.run(key, () => this.lambdaCalls(lambda, variable, body, ctx, depth));
    this.memo.set(key, r);
    return r;
  }

  /** lambdaParameterValue's reading of the calls of the lambda's variable in `body`. */
  private lambdaCalls(lambda: NonNullable<Declared['lambda']>, variable: string, body: Node, ctx: EvalContext, depth: number): EvalResult {
    let r: EvalResult = 'runtime';
    for (const call of body.descendantsOfType('call_expression')) {
      if (!call) continue;
      // Handed to a template instantiated with arguments (`ggml_cuda_unroll<6>{}(body, …)`,
      // `apply<N>(body)`): a compile-time recursion calls it with values we cannot see.
      const callee = call.childForFieldName('function');
      if (callee?.text !== variable) {
        if (callee && /<[^<>]+>/.test(callee.text) && named(call.childForFieldName('arguments')).some(a => a.text === variable)) {
          r = 'unknown';
          break;
        }
        continue;
      }
      if (call.startIndex >= lambda.node.startIndex && call.endIndex <= lambda.node.endIndex) continue; // recursion
      const arg = named(call.childForFieldName('arguments'))[lambda.index];
      if (!arg || this.evalIn(arg, ctx, depth + 1) !== 'runtime') {
        r = 'unknown';
        break;
      }
    }
    return r;
  }

  private evalIn(node: Node, ctx: EvalContext, depth: number): EvalResult {
    return evalConst(node, this.scope(ctx), depth + 1);
  }

  /** A member of the innermost class of `chain`, or of its bases; undefined when not declared there. */
  private memberLookup(chain: ClassView[], name: string, depth: number): EvalResult | undefined {
    if (depth > MAX_DEPTH) return 'unknown';
    const view = chain[0];
    const m = this.index.membersOf(view.info).get(name);
    if (m) return this.memberValue(chain, m, name, depth);
    return this.baseLookup(chain, name, depth);
  }

  private baseLookup(chain: ClassView[], name: string, depth: number): EvalResult | undefined {
    const clause = named(chain[0].info.node).find(c => c.type === 'base_class_clause');
    if (!clause) return undefined;
    const ctx = this.classContext(chain);
    let fallback: EvalResult | undefined;
    for (const b of named(clause)) {
      if (b.type === 'access_specifier' || b.type === 'virtual') continue;
      const t = this.resolveType(b, ctx, depth + 1);
      if (isClassView(t)) {
        if (t.info.node.id === chain[0].info.node.id) continue;
        const r = this.memberLookup(this.chainOf(t), name, depth + 1);
        if (r !== undefined) return r;
      } else if (t === 'dependent') fallback = 'dependent';
      else if (t === 'unknown' && fallback === undefined) fallback = 'unknown';
    }
    return fallback;
  }

  private memberValue(chain: ClassView[], m: Member, name: string, depth: number): EvalResult {
    if (m.kind === 'type' || m.kind === 'class') return 'unknown';
    const view = chain[0];
    const key = `${view.info.node.id}|${bindingKey(view.bindings)}|${name}`;
    const cached = this.recall(key);
    if (cached !== undefined) return cached;
    if (this.active.has(key)) return 'unknown';
    this.active.add(key);
    let r: EvalResult;
    this.memoReads.begin();
    try {
      const ctx = this.classContext(chain);
      if (m.kind === 'enumerator') {
        const base = m.base ? this.evalIn(m.base, ctx, depth + 1) : 0;
        r = typeof base === 'number' ? base + m.offset : base;
      } else if (!m.isStatic && !m.isConst) r = 'runtime';
      else if (!m.value) r = 'unknown';
      else if (!m.isStatic)
        r = 'unknown'; // a const data member: per object, but may fold
      else r = this.evalIn(m.value, ctx, depth + 1);
    } finally {
      this.active.delete(key);
      this.memoReads.end(key);
    }
    this.memo.set(key, r);
    return r;
  }

  // -------------------------------------------------------------------------------------------
  // Types

  resolveType(node: Node | null, ctx: EvalContext, depth: number): TypeResult {
    if (!node || depth > MAX_DEPTH) return 'unknown';
    switch (node.type) {
      case 'type_descriptor':
        return this.resolveType(node.childForFieldName('type'), ctx, depth + 1);
      case 'dependent_type':
      case 'dependent_name':
        return this.resolveType(named(node)[0] ?? null, ctx, depth + 1);
      case 'primitive_type':
      case 'sized_type_specifier':
        return 'runtime-scalar';
      case 'qualified_identifier': {
        const scope = node.childForFieldName('scope');
        const name = node.childForFieldName('name');
        const outer = scope ? this.resolveType(scope, ctx, depth + 1) : 'unknown';
        if (!isClassView(outer)) {
          // `ns::Type`: namespaces are not modelled; look the rest up as if unqualified.
          return outer === 'dependent' ? 'dependent' : this.resolveType(name, { ...ctx, classes: [] }, depth + 1);
        }
        return this.memberType(outer, name, depth + 1);
      }
      case 'type_identifier':
      case 'namespace_identifier':
      case 'template_type':
      case 'identifier':
        return this.resolveTypeName(node, ctx, depth + 1);
    }
    return 'unknown';
  }

  private resolveTypeName(node: Node, ctx: EvalContext, depth: number): TypeResult {
    const name = node.type === 'template_type' ? (node.childForFieldName('name')?.text ?? '') : node.text;
    const args = node.type === 'template_type' ? node.childForFieldName('arguments') : null;
    if (SCALAR_TYPE.test(name)) return 'runtime-scalar';
    if (ctx.unbound.has(name)) return 'dependent';
    if (ctx.fn) {
      // A local `using X = …` is not modelled.
      const d = this.locals.declared(name, Number.MAX_SAFE_INTEGER, ctx.fn);
      if (d) return 'unknown';
    }
    for (let i = 0; i < ctx.classes.length; i++) {
      const view = ctx.classes[i];
      if (view.info.templateParams.includes(name)) return 'dependent';
      if (view.info.name === name && !args) return view;
      const m = this.index.membersOf(view.info).get(name);
      if (m) return this.memberType(view, node, depth + 1, ctx.classes.slice(i));
    }
    const candidates = this.index.classesNamed(name);
    if (!candidates.length) return 'unknown';
    if (!args) {
      const plain = candidates.filter(c => !c.specArgs);
      return plain.length === 1 ? { info: plain[0], bindings: new Map() } : 'unknown';
    }
    const argNodes = named(args);
    const argValues = argNodes.map(a => (a.type === 'type_descriptor' ? ('type' as const) : this.evalIn(a, ctx, depth + 1)));
    if (argValues.some(v => v === 'dependent' || v === 'unknown' || v === 'runtime')) {
      return argValues.includes('dependent') ? 'dependent' : 'unknown';
    }
    const norm = (t: string) => t.replace(/\s+/g, '');
    const argTexts = argNodes.map(a => norm(a.text));
    // An explicit specialisation whose arguments match wins.
    for (const c of candidates) {
      if (!c.specArgs || c.templateParams.length) continue;
      const spec = named(c.specArgs);
      if (spec.length !== argNodes.length) continue;
      const same = spec.every((s, i) => {
        if (norm(s.text) === argTexts[i]) return true;
        if (argValues[i] === 'type') return false;
        const sv = this.evalIn(s, this.classContext([]), depth + 1);
        return typeof sv === 'number' && sv === argValues[i];
      });
      if (same) return { info: c, bindings: new Map() };
    }
    // A partial specialisation could match: we do not match patterns.
    if (candidates.some(c => c.specArgs && c.templateParams.length)) return 'unknown';
    const primary = candidates.filter(c => !c.specArgs);
    if (primary.length !== 1) return 'unknown';
    const bindings = new Map<string, number>();
    primary[0].templateParams.forEach((p, i) => {
      const v = argValues[i];
      if (typeof v === 'number') bindings.set(p, v);
    });
    return { info: primary[0], bindings };
  }

  /** `Outer::Name`: a nested class or type alias of a class. */
  private memberType(view: ClassView, nameNode: Node | null, depth: number, chain: ClassView[] = this.chainOf(view)): TypeResult {
    if (!nameNode || depth > MAX_DEPTH) return 'unknown';
    if (nameNode.type === 'qualified_identifier') {
      const first = this.memberType(view, nameNode.childForFieldName('scope'), depth + 1, chain);
      return isClassView(first) ? this.memberType(first, nameNode.childForFieldName('name'), depth + 1) : first;
    }
    const name = nameNode.type === 'template_type' ? (nameNode.childForFieldName('name')?.text ?? '') : nameNode.text;
    const m = this.index.membersOf(view.info).get(name);
    if (m?.kind === 'class') return { info: m.info, bindings: view.bindings };
    if (m?.kind === 'type') return this.resolveType(m.type, this.classContext(chain), depth + 1);
    if (m) return 'unknown';
    // Inherited member types.
    const clause = named(view.info.node).find(c => c.type === 'base_class_clause');
    if (!clause) return 'unknown';
    const ctx = this.classContext(chain);
    for (const b of named(clause)) {
      const t = this.resolveType(b, ctx, depth + 1);
      if (t === 'dependent') return 'dependent';
      if (isClassView(t) && t.info.node.id !== view.info.node.id) {
        const r = this.memberType(t, nameNode, depth + 1);
        if (r !== 'unknown') return r;
      }
    }
    return 'unknown';
  }

  // -------------------------------------------------------------------------------------------
  // Qualified names, members, calls

  private resolveQualified(node: Node, ctx: EvalContext, depth: number): EvalResult {
    const scope = node.childForFieldName('scope');
    const name = node.childForFieldName('name');
    if (!name) return 'unknown';
    if (!scope)
      return name.type === 'identifier' ? this.lookupName(name.text, node.startIndex, { ...ctx, classes: [], fn: null }, depth) : 'unknown';
    const t = this.resolveType(scope, ctx, depth + 1);
    // `Int<8>::value`, `integral_constant<int, 8>::value`.
    if (name.text === 'value') {
      const c = this.integralConstant(scope, ctx, depth + 1);
      if (c !== null) return c;
    }
    if (t === 'dependent') return 'dependent';
    if (isClassView(t)) {
      if (name.type === 'qualified_identifier') {
        const inner = this.memberType(t, name.childForFieldName('scope'), depth + 1);
        if (inner === 'dependent') return 'dependent';
        if (!isClassView(inner)) return 'unknown';
        const last = name.childForFieldName('name');
        return last ? (this.memberLookup(this.chainOf(inner), last.text, depth + 1) ?? 'unknown') : 'unknown';
      }
      return this.memberLookup(this.chainOf(t), name.text, depth + 1) ?? 'unknown';
    }
    // A namespace (not modelled): `ns::kWarp` is the namespace constant of that name, if any.
    if (name.type === 'qualified_identifier') return this.resolveQualified(name, { ...ctx, classes: [], fn: null }, depth + 1);
    if (name.type === 'identifier') {
      const v = this.index.fileValues.get(name.text);
      if (v !== undefined) return v;
    }
    return 'unknown';
  }

  /** The type an object name was declared with (a local, a parameter or a data member). */
  private typeOfObject(obj: Node, ctx: EvalContext): { type: Node | null; init: Node | null; ctx: EvalContext } | null {
    if (obj.type !== 'identifier') return null;
    const d = this.locals.declared(obj.text, obj.startIndex, ctx.fn);
    if (d) return { type: d.type, init: d.init, ctx };
    for (let i = 0; i < ctx.classes.length; i++) {
      const m = this.index.membersOf(ctx.classes[i].info).get(obj.text);
      if (m?.kind === 'value') return { type: m.type, init: m.value, ctx: this.classContext(ctx.classes.slice(i)) };
    }
    return null;
  }

  private resolveField(node: Node, ctx: EvalContext, depth: number): EvalResult {
    const arg = node.childForFieldName('argument');
    const field = node.childForFieldName('field')?.text ?? '';
    if (!arg) return 'unknown';
    if (arg.type === 'this') {
      for (let i = 0; i < ctx.classes.length; i++) {
        const r = this.memberLookup(ctx.classes.slice(i), field, depth + 1);
        if (r !== undefined) return r;
      }
      return 'unknown';
    }
    const decl = this.typeOfObject(arg, ctx);
    if (!decl) return 'unknown';
    const typeText = decl.type?.text ?? '';
    const t = this.resolveType(decl.type, decl.ctx, depth + 1);
    if (t === 'dependent') return 'dependent';
    if (t === 'runtime-scalar') return 'runtime';
    if (isClassView(t)) return this.memberLookup(this.chainOf(t), field, depth + 1) ?? 'unknown';
    // wmma::fragment<…>::num_elements is an enumerator of <mma.h>: compile-time, value by architecture.
    if (field === 'num_elements' && /\bfragment\s*</.test(typeText)) return mentionsAny(typeText, ctx.unbound) ? 'dependent' : 'unknown';
    return 'unknown';
  }

  private resolveCall(node: Node, ctx: EvalContext, depth: number): EvalResult {
    const fnNode = node.childForFieldName('function');
    const args = named(node.childForFieldName('arguments'));
    if (!fnNode) return 'unknown';
    if (fnNode.type === 'field_expression') return 'unknown'; // `x.size()`: a method we cannot see into
    if (fnNode.type === 'primitive_type' || fnNode.type === 'sized_type_specifier')
      return args.length === 1 ? this.evalIn(args[0], ctx, depth) : 'unknown';
    const full = fnNode.type === 'template_function' ? (fnNode.childForFieldName('name')?.text ?? '') : fnNode.text;
    const name = full.split('::').pop() ?? '';
    const targs = fnNode.type === 'template_function' ? named(fnNode.childForFieldName('arguments')) : [];
    if (/^(static_cast|int|unsigned|size_t)$/.test(name) && args.length === 1) return this.evalIn(args[0], ctx, depth);
    if (CUTE_SIZE_FUNCTIONS.has(name) && args.length === 1) {
      const v = name === 'size' ? this.cuteSize(args[0], targs, ctx, depth) : null;
      return v ?? (mentionsAny(args[0].text, ctx.unbound) ? 'dependent' : 'unknown');
    }
    if (PURE_INTRINSICS[name] && args.length === PURE_INTRINSICS[name].length) {
      // A pure bit intrinsic folds when its arguments do (`__clz(W - 1)` with W a template argument).
      const vals = args.map(a => this.evalIn(a, ctx, depth + 1));
      const bad = vals.reduce<EvalResult | null>((acc, v) => (typeof v === 'number' ? acc : combine(acc ?? v, v)), null);
      return bad ?? PURE_INTRINSICS[name](...(vals as number[]));
    }
    if (/^(__|atomic)/.test(name)) return 'runtime';
    const defs = this.index.functionsNamed(name);
    if (defs.length === 1 && !targs.length) return this.callConstexpr(defs[0], args, ctx, depth);
    return 'unknown';
  }

  /** A function whose body is one `return expr;`, with its parameters bound to the arguments. */
  private callConstexpr(def: Node, args: Node[], ctx: EvalContext, depth: number): EvalResult {
    const body = def.childForFieldName('body');
    const stmts = named(body).filter(s => s.type !== 'comment');
    if (stmts.length !== 1 || stmts[0].type !== 'return_statement') return 'unknown';
    const expr = named(stmts[0])[0];
    if (!expr) return 'unknown';
    const params = named(def.childForFieldName('declarator')?.childForFieldName('parameters')).filter(p =>
      /parameter_declaration$/.test(p.type),
    );
    const calleeCtx = this.classContext(enclosingClasses(def).map(info => ({ info, bindings: new Map<string, number>() })));
    const values = new Map(calleeCtx.values);
    let bad: EvalResult | null = null;
    params.forEach((p, i) => {
      const pname = declaredName(p.childForFieldName('declarator'));
      const a = args[i] ?? p.childForFieldName('default_value');
      if (!pname) return;
      const v = a ? this.evalIn(a, ctx, depth + 1) : 'unknown';
      if (typeof v === 'number') values.set(pname, v);
      else bad = combine(bad ?? v, v);
    });
    if (bad) return bad;
    return this.evalIn(expr, { ...calleeCtx, values }, depth + 1);
  }

  /** `Int<8>`, `C<8>`, `_8`, `integral_constant<int, 8>`: the constant they carry, or null. */
  private integralConstant(type: Node | null, ctx: EvalContext, depth: number): EvalResult | null {
    if (!type) return null;
    if (type.type === 'type_identifier' || type.type === 'identifier') {
      const m = /^_(\d+)$/.exec(type.text);
      return m ? Number(m[1]) : null;
    }
    if (type.type === 'qualified_identifier') return this.integralConstant(type.childForFieldName('name'), ctx, depth);
    if (type.type !== 'template_type') return null;
    const name = type.childForFieldName('name')?.text ?? '';
    const args = named(type.childForFieldName('arguments'));
    if (/^(Int|C|constant|Int32|Int64|Index)$/.test(name) && args.length === 1) return this.evalIn(args[0], ctx, depth + 1);
    if (/^(integral_constant|constant)$/.test(name) && args.length === 2) return this.evalIn(args[1], ctx, depth + 1);
    return null;
  }

  // -------------------------------------------------------------------------------------------
  // CuTe static shapes: `Tensor t = make_tensor<float>(Shape<_4, _8>{}); size<0>(t)`

  private cuteSize(arg: Node, targs: Node[], ctx: EvalContext, depth: number): number | null {
    const shape = this.shapeOfObject(arg, ctx, depth);
    if (!shape) return null;
    const product = (s: Shape): number => (typeof s === 'number' ? s : s.reduce<number>((a, x) => a * product(x), 1));
    if (!targs.length) return product(shape);
    let s: Shape = shape;
    for (const t of targs) {
      const i = this.evalIn(t, ctx, depth + 1);
      if (typeof i !== 'number' || typeof s === 'number' || i < 0 || i >= s.length) return null;
      s = s[i];
    }
    return product(s);
  }

  private shapeOfObject(arg: Node, ctx: EvalContext, depth: number): Shape | null {
    if (arg.type !== 'identifier') return this.shapeOf(arg, ctx, depth);
    const d = this.locals.declared(arg.text, arg.startIndex, ctx.fn);
    return d?.init ? this.shapeOf(d.init, ctx, depth + 1) : null;
  }

  private shapeOf(n: Node, ctx: EvalContext, depth: number): Shape | null {
    if (depth > MAX_DEPTH) return null;
    switch (n.type) {
      case 'identifier':
        return this.shapeOfObject(n, ctx, depth + 1);
      case 'compound_literal_expression':
        return this.shapeOfType(n.childForFieldName('type'), ctx, depth + 1);
      case 'call_expression': {
        const f = n.childForFieldName('function');
        const name = (f?.type === 'template_function' ? f.childForFieldName('name')?.text : f?.text)?.split('::').pop() ?? '';
        const args = named(n.childForFieldName('arguments'));
        if (name === 'make_shape') {
          const modes = args.map(a => this.shapeOf(a, ctx, depth + 1) ?? this.scalar(a, ctx, depth));
          return modes.every(m => m !== null) ? (modes as Shape[]) : null;
        }
        if (/^(make_tensor|make_layout|make_fragment_like|make_identity_tensor)$/.test(name) && args.length >= 1) {
          return this.shapeOf(args[args.length === 1 ? 0 : name === 'make_tensor' ? 1 : 0], ctx, depth + 1);
        }
        return null;
      }
    }
    return null;
  }

  private scalar(n: Node, ctx: EvalContext, depth: number): number | null {
    const v = this.evalIn(n, ctx, depth + 1);
    return typeof v === 'number' ? v : null;
  }

  private shapeOfType(type: Node | null, ctx: EvalContext, depth: number): Shape | null {
    if (!type) return null;
    const c = this.integralConstant(type, ctx, depth);
    if (typeof c === 'number') return c;
    if (type.type !== 'template_type' || !/^(Shape|Layout|tuple)$/.test(type.childForFieldName('name')?.text ?? '')) return null;
    const args = named(type.childForFieldName('arguments')).map(a => (a.type === 'type_descriptor' ? a.childForFieldName('type') : a));
    const name = type.childForFieldName('name')?.text;
    if (name === 'Layout') return args[0] ? this.shapeOfType(args[0], ctx, depth + 1) : null;
    const modes = args.map(a => (a ? this.shapeOfType(a, ctx, depth + 1) : null));
    return modes.every(m => m !== null) ? (modes as Shape[]) : null;
  }
}

type Shape = number | Shape[];
