// The analysis of one device function: its loops with trip counts and pragmas, manual unrolls
// and stray pragmas.
import type { Node } from './parser';
import type { Kernel, Loop, ManualUnroll, StrayPragma, TripCount } from './model';
import { ConstScope, evalConst } from './constEval';
import { findManualUnrolls } from './manualUnroll';
import type { ClassView } from './fileIndex';
import type { EvalContext, ScopeLookup } from './scopes';
import { activeMacros, qualifierMacrosIn } from './macroContext';
import { FunctionInfo } from './deviceFunctions';
import { Instantiation, TRUNCATED, bindInstantiation } from './instantiations';
import { forLoopShape } from './loopShape';
import { buildPragma } from './pragmas';
import { RawLoop, collectLocalConsts, collectLoops, collectPragmas, countStatements, depthOf } from './bodyLoops';
import { constantExtent, namesInLoopHeader, tripCountUnder, UNQUALIFIED_NAME } from './tripCount';
import { spanOf } from './syntaxTree';

function qualifierMacrosOf(text: string, headMacros: string | undefined): Pick<Kernel, 'qualifierMacros' | 'qualifierMacroUses'> {
  const brace = text.indexOf('{');
  const names = qualifierMacrosIn((headMacros ? headMacros + ' ' : '') + (brace === -1 ? text : text.slice(0, brace)));
  if (!names.length) return {};
  const uses = names.map(n => activeMacros().qualifier(n)!).map(q => ({ name: q.name, expandsTo: q.expandsTo, origin: q.origin }));
  return { qualifierMacros: names, qualifierMacroUses: uses };
}

export interface FunctionResult {
  kernel: Kernel;
  stray: StrayPragma[];
}

export function analyzeFunction(
  fn: FunctionInfo,
  fileScope: ConstScope,
  instantiationArgs: string[][] | undefined,
  lookup: ScopeLookup,
): FunctionResult {
  const body = fn.node.childForFieldName('body');
  const templateNames = new Set(fn.templateParams.map(p => p.name));
  // Names resolve by C++ scope rules: locals, then the enclosing classes (members, template
  // parameters, bases), then namespace constants (scopes.ts).
  const classes = lookup.classesOf(fn.node);
  const ctx = lookup.functionContext(fn.node, fileScope.values, templateNames, classes);
  for (const n of templateNames) ctx.values.delete(n);
  const baseScope: ConstScope = lookup.scope(ctx);
  const instantiations = instantiationsOf(fn, fileScope, instantiationArgs, lookup, classes, templateNames);

  const byType = body ? lookup.bodyNodes(body) : new Map<string, Node[]>();
  const rawLoops = body ? collectLoops(body, byType) : [];
  const locals = body ? collectLocalConsts(body, byType, baseScope) : [];
  const scopes: FunctionScopes = { lookup, ctx, baseScope, locals };
  const loops = analyzeLoops(rawLoops, scopes, instantiations, new Set(fn.templateParams.map(p => p.name)));
  const manualUnrolls = body ? manualUnrollsIn(body, scopes) : [];

  const attached = new Set(rawLoops.flatMap(l => (l.pragma ? [l.pragma, ...l.alternatives] : [])).map(p => p.node.id));
  const stray: StrayPragma[] = (body ? collectPragmas(byType) : [])
    .filter(p => !attached.has(p.node.id))
    .map(p => ({ pragma: buildPragma(p, baseScope, instantiations), reason: 'not followed by a loop: nvcc ignores it' }));

  return {
    kernel: {
      name: fn.name,
      qualifier: fn.qualifier,
      line: fn.node.startPosition.row + 1,
      span: spanOf(fn.node),
      templateParameters: fn.templateParams.map(p => p.name),
      ...qualifierMacrosOf(fn.text, fn.headMacros),
      launchBounds: fn.launchBounds,
      instantiations: instantiations.map(inst => Object.fromEntries(inst)),
      loops,
      manualUnrolls,
    },
    stray,
  };
}

/** Where a function's expressions are evaluated: its context, and its const locals by position. */
interface FunctionScopes {
  lookup: ScopeLookup;
  ctx: EvalContext;
  baseScope: ConstScope;
  /** const/constexpr locals in source order (collectLocalConsts). */
  locals: { at: number; name: string; value: number }[];
}

/** The scope at an offset of the body: the const locals declared before it are known. */
function scopeAt(scopes: FunctionScopes, index: number): ConstScope {
  const values = new Map(scopes.baseScope.values);
  for (const c of scopes.locals) if (c.at < index) values.set(c.name, c.value);
  return scopes.lookup.scope({ ...scopes.ctx, values });
}

/** A scope with one instantiation's template arguments bound. */
function instScope(scopes: FunctionScopes, scope: ConstScope, inst: Instantiation): ConstScope {
  const unbound = new Set([...scope.unboundTemplateParams].filter(n => !inst.has(n)));
  const instCtx = { ...scopes.ctx, values: new Map([...scope.values, ...inst]), unbound };
  return scopes.lookup.scope(instCtx);
}

/** Instantiations a function is analysed for; CAPPED: the lists that had more (their notes say "the first 64"). */
const MAX_BINDINGS = 64;
const CAPPED = new WeakSet<Instantiation[]>();

/**
 * The instantiations of a function that the file shows: its own (or its defaults), times those
 * of the class template it is a member of.
 */
function instantiationsOf(
  fn: FunctionInfo,
  fileScope: ConstScope,
  instantiationArgs: string[][] | undefined,
  lookup: ScopeLookup,
  classes: ClassView[],
  templateNames: Set<string>,
): Instantiation[] {
  // One binding once: `<(64), 1>` and `<64, (1)>` are one instantiation, and so are lists that
  // differ only in arguments this file cannot evaluate (an enum from a header).
  const distinct = new Map<string, Instantiation>();
  let capped = false;
  for (const a of instantiationArgs ?? []) {
    const b = bindInstantiation(fn, a, fileScope);
    const key = JSON.stringify([...b]);
    if (distinct.has(key)) continue;
    if (distinct.size === MAX_BINDINGS) {
      capped = true;
      break;
    }
    distinct.set(key, b);
  }
  const instantiations: Instantiation[] = [...distinct.values()];
  if (capped || (instantiationArgs && TRUNCATED.has(instantiationArgs))) CAPPED.add(instantiations);
  if (!instantiations.length && fn.templateParams.length && fn.templateParams.every(p => p.defaultValue)) {
    instantiations.push(bindInstantiation(fn, [], fileScope));
  }
  // A member of a class template: each instantiation of the class seen in the file binds its parameters.
  const classParams = classes.flatMap(c => c.info.templateParams).filter(p => !templateNames.has(p));
  if (classParams.length) {
    const classInsts = lookup.classInstantiations(classes);
    if (classInsts.length) {
      const own = instantiations.length ? instantiations.splice(0) : [new Map<string, number>()];
      for (const c of classInsts)
        for (const o of own)
          if (instantiations.length < MAX_BINDINGS) instantiations.push(new Map([...c, ...o]));
          else CAPPED.add(instantiations);
    }
  }
  return instantiations;
}

function analyzeLoops(rawLoops: RawLoop[], scopes: FunctionScopes, instantiations: Instantiation[], ownParams: Set<string>): Loop[] {
  // In each copy of a fully unrolled loop with a compile-time trip count, its induction variable
  // is a compile-time constant: inner bounds that use it (`j < i`, `j = 1 & i`) are not run-time.
  const trips = new Map<number, TripCount>();
  const unrolledVariables = (raw: RawLoop): string[] => {
    const out: string[] = [];
    for (let p = raw.parent; p; p = p.parent) {
      const t = trips.get(p.node.id);
      if (p.pragma?.pragma.kind !== 'full' || t === undefined || t === 'runtime' || p.node.type !== 'for_statement') continue;
      const v = forLoopShape(p.node, scopes.baseScope.callee)?.variable;
      if (v) out.push(v);
    }
    return out;
  };
  const loops: Loop[] = rawLoops.map(raw => {
    let scope = scopes.locals.length ? scopeAt(scopes, raw.startIndex) : scopes.baseScope;
    // a loop that declares its own counter of the same name (`for (int i …)` in `for (int i …)`) hides the outer one
    const own = raw.node.type === 'for_statement' ? forLoopShape(raw.node, scope.callee)?.variable : undefined;
    const outer = unrolledVariables(raw).filter(v => v !== own || !declaresOwnCounter(raw.node));
    // The lookup's own context too: a local initialised from the outer counter (`c1 = c0 + CH`)
    // is evaluated through it, and must see the counter as a per-copy constant as well.
    if (outer.length)
      scope = scopes.lookup.scope({ ...scopes.ctx, values: scope.values, unbound: new Set([...scope.unboundTemplateParams, ...outer]) });
    let trip = tripCountUnder(raw.node, raw.kind, scope);
    let byInstantiation: Loop['tripCountByInstantiation'];
    const byTemplate = trip === 'dependent' && instantiations.length > 0;
    if (byTemplate) {
      // Instantiations that agree on every argument the count can read give the same count: each
      // is evaluated once (ggml's flash-attention kernels: 64 bindings, 4 arguments read).
      const reads = tripArguments(raw.node, scope, ownParams, instantiations);
      const byKey = new Map<string, TripCount>();
      const perInst = instantiations.map(inst => {
        const key = reads ? [...reads].map(n => `${n}=${inst.get(n) ?? '?'}`).join(',') : null;
        const known = key === null ? undefined : byKey.get(key);
        if (known !== undefined) return known;
        const t = tripCountUnder(raw.node, raw.kind, instScope(scopes, scope, inst));
        if (key !== null) byKey.set(key, t);
        return t;
      });
      trip = new Set(perInst).size === 1 ? perInst[0] : 'dependent';
      // Shown one by one where at least one instantiation gives an answer.
      if (trip === 'dependent' && perInst.some(t => t !== 'dependent'))
        byInstantiation = instantiations.map((inst, i) => ({ instantiation: Object.fromEntries(inst), tripCount: perInst[i] }));
    }
    trips.set(raw.node.id, trip);
    const loop = loopRecord(raw, scope, trip, byInstantiation, instantiations);
    if (byTemplate && CAPPED.has(instantiations)) loop.instantiationsCapped = MAX_BINDINGS;
    // (not when an enclosing unrolled counter is what keeps each instantiation's count open)
    if (trip === 'dependent' && !byInstantiation && instantiations.length && !loop.tripDependsOn?.some(n => outer.includes(n))) {
      loop.unevaluatedInstantiations = instantiations.length;
      // What every instantiation leaves open is what stops the count (`type` from a macro-written
      // instantiation, where `J` is bound by all but one); else what some leave open.
      const open = (loop.tripDependsOn ?? []).filter(n => instantiations.some(inst => !inst.has(n)));
      const everywhere = open.filter(n => instantiations.every(inst => !inst.has(n)));
      loop.unevaluatedParameters = everywhere.length ? everywhere : open;
    }
    return loop;
  });
  loops.sort((a, b) => a.line - b.line || a.span.column - b.span.column);
  return loops;
}

/**
 * The template arguments a loop's header can read, by name: those its text names, and those the
 * initialisers of the locals it uses name, followed to the end (null when that takes more than 8
 * steps: not sure). A class template's parameters are always in: a member reads them without
 * naming them (`kSize`).
 */
function tripArguments(loop: Node, scope: ConstScope, own: Set<string>, insts: Instantiation[]): Set<string> | null {
  const params = new Set<string>();
  for (const i of insts) for (const k of i.keys()) params.add(k);
  const out = new Set([...params].filter(n => !own.has(n)));
  const seen = new Set<number>();
  let frontier: Node[] = ['initializer', 'condition', 'update'].flatMap(f => loop.childForFieldName(f) ?? []);
  for (let level = 0; frontier.length; level++) {
    if (level === 8) return null;
    const next: Node[] = [];
    for (const part of frontier) {
      for (const n of part.text.match(/[A-Za-z_]\w*/g) ?? []) if (params.has(n)) out.add(n);
      for (const id of [part, ...part.descendantsOfType('identifier')]) {
        if (!id || id.type !== 'identifier') continue;
        const init = scope.initializer?.(id);
        if (!init || seen.has(init.id)) continue;
        seen.add(init.id);
        next.push(init);
      }
    }
    frontier = next;
  }
  return out;
}

function loopRecord(
  raw: RawLoop,
  scope: ConstScope,
  trip: TripCount,
  byInstantiation: Loop['tripCountByInstantiation'],
  instantiations: Instantiation[],
): Loop {
  const dependsOn = trip === 'dependent' ? dependsOnNames(raw.node, scope) : [];
  const shape = raw.node.type === 'for_statement' ? forLoopShape(raw.node, scope.callee) : null;
  return {
    line: raw.node.startPosition.row + 1,
    kind: raw.kind,
    depth: depthOf(raw),
    pragma: raw.pragma ? buildPragma(raw.pragma, scope, instantiations) : null,
    ...(raw.alternatives.length ? { alternativePragmas: raw.alternatives.map(p => buildPragma(p, scope, instantiations)) } : {}),
    ...(raw.unknownMacro ? { unknownMacro: raw.unknownMacro } : {}),
    tripCount: trip,
    ...(trip === 'dependent' ? { tripDependsOn: dependsOn } : {}),
    ...(byInstantiation ? { tripCountByInstantiation: byInstantiation } : {}),
    span: spanOf(raw.node),
    inductionVariable: shape?.variable ?? null,
    conditionText: (raw.node.childForFieldName('condition')?.text ?? '').replace(/^\((.*)\)$/s, '$1').replace(/\s+/g, ' '),
    ...initTextOf(raw.node),
    parentLine: raw.parent ? raw.parent.node.startPosition.row + 1 : null,
    bodyStatements: countStatements(raw.node.childForFieldName('body')),
    constantExtent: constantExtent(raw.node, scope),
  };
}

function initTextOf(node: Node): Pick<Loop, 'initText'> {
  const init = node.type === 'for_statement' ? node.childForFieldName('initializer')?.text : undefined;
  const text = init?.replace(/;\s*$/, '').replace(/\s+/g, ' ').trim();
  return text ? { initText: text } : {};
}

/** `for (int i = …)`: the loop declares its counter (rather than assigning an outer variable). */
function declaresOwnCounter(loop: Node): boolean {
  return loop.childForFieldName('initializer')?.type === 'declaration';
}

/**
 * The template parameters (and enclosing unrolled counters) a dependent trip count comes from: those
 * the loop's header names, and those named by the initialisers of the constants it names
 * (`i0 < DVp/2` with `constexpr int DVp = (DV + …)`), four levels deep (DeepGEMM: `num_sfb` from
 * `shape_k_scales` from `shape_k` from `SHAPE_K`).
 */
function dependsOnNames(loop: Node, scope: ConstScope): string[] {
  const unbound = scope.unboundTemplateParams;
  const header = namesInLoopHeader(loop).filter(n => unbound.has(n));
  const out = new Set(header);
  let frontier: Node[] = ['initializer', 'condition', 'update'].flatMap(f => {
    const n = loop.childForFieldName(f);
    return n ? [n] : [];
  });
  for (let level = 0; level < 4 && frontier.length; level++) {
    const next: Node[] = [];
    for (const part of frontier)
      for (const id of [part, ...part.descendantsOfType('identifier')]) {
        if (!id || id.type !== 'identifier' || unbound.has(id.text)) continue;
        const init = scope.initializer?.(id);
        // a lambda the update calls (`advance(k)`): its body is no part of the bound
        if (!init || init.type === 'lambda_expression') continue;
        for (const n of init.text.match(UNQUALIFIED_NAME) ?? []) if (unbound.has(n)) out.add(n);
        next.push(init);
      }
    frontier = next;
  }
  // the header's own names first, as before; names reached through its constants after them
  return [...header, ...[...out].filter(n => !header.includes(n))];
}

function manualUnrollsIn(body: Node, scopes: FunctionScopes): ManualUnroll[] {
  try {
    return findManualUnrolls(body, (n: Node) => {
      const v = evalConst(n, scopes.locals.length ? scopeAt(scopes, n.startIndex) : scopes.baseScope);
      return typeof v === 'number' ? v : null;
    });
  } catch {
    return []; // detectors are best effort; never break the whole analysis
  }
}
