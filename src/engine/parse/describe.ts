// Human-facing text about loops and kernels, shared by CodeLens, hover and the CLI table so
// that every surface says the same thing in the same words.
import * as path from 'path';
import type { Kernel, Loop, MacroOrigin, ManualUnroll, ManualUnrollPattern, UnrollPragma } from './model';

function pragmaSummary(p: UnrollPragma | null): string {
  if (!p) return 'no unroll pragma';
  switch (p.kind) {
    case 'full':
      return 'full unroll requested';
    case 'disable':
      return 'unroll 1 (disabled)';
    case 'count':
      return `unroll ${p.factor} requested`;
    case 'expr': {
      const expr = p.text.replace(/^unroll\s*/, '');
      return p.factor !== null ? `unroll ${expr} = ${p.factor} requested` : `unroll ${expr} requested`;
    }
  }
}

/** Where a macro's meaning came from: `compiler.h:192` or `built-in table (CCCL)`. */
function macroOriginText(o: MacroOrigin): string {
  return o.kind === 'builtin' ? `built-in table (${o.library})` : `${path.basename(o.file)}:${o.line}`;
}

function code(s: string): string {
  return `\`${s.replace(/`/g, "'")}\``;
}

/**
 * How the pragma is written: `#pragma unroll 4`, or for a macro
 * `_CCCL_PRAGMA_UNROLL_FULL()` (expands to `#pragma unroll`, compiler.h:192).
 */
export function pragmaAsWritten(p: UnrollPragma): string {
  const pragma = code(`#pragma ${p.text}`);
  if (p.form !== 'macro' || !p.macro) return pragma;
  return `${code(p.macro.written)} (expands to ${pragma}, ${macroOriginText(p.macro.origin)})`;
}

/** The expansion of a pragma macro step by step, for hover: `A()` → `B(unroll)` → `_Pragma("unroll")`. */
function pragmaExpansionText(p: UnrollPragma): string | null {
  if (p.form !== 'macro' || !p.macro) return null;
  const steps = [p.macro.written, ...(p.macro.chain ?? [])].map(code);
  if (!p.macro.chain?.length) steps.push(code(`#pragma ${p.text}`));
  const o = p.macro.origin;
  const where = o.kind === 'builtin' ? `no header defining it was readable: ${macroOriginText(o)}` : `defined at ${o.file}:${o.line}`;
  return `${steps.join(' → ')} (${where})`;
}

export function tripCountSummary(loop: Loop): string {
  return `trip count ${tripCountText(loop)}`;
}

/**
 * A trip count as a reader should take it: a number; "runtime"; per instantiation where the
 * file's instantiations give different ones; "depends on N" where a template argument decides
 * it; "not evaluated" for a value we cannot derive here (a header's constant, a CuTe shape).
 */
function tripCountText(loop: Loop): string {
  // Said where numbers are given: those are the first instantiations' (not where none evaluates).
  const numbers = typeof loop.tripCount === 'number' || loop.tripCountByInstantiation?.some(b => typeof b.tripCount === 'number');
  const first =
    loop.instantiationsCapped && numbers ? ` (the first ${loop.instantiationsCapped} instantiations read; the file shows more)` : '';
  return tripCountWords(loop) + first;
}

function tripCountWords(loop: Loop): string {
  if (loop.tripCount !== 'dependent') return String(loop.tripCount);
  const byInst = loop.tripCountByInstantiation;
  const known = byInst?.filter(b => b.tripCount !== 'dependent') ?? [];
  if (byInst && known.length) {
    const rest = byInst.length - known.length;
    return known.map(b => `${b.tripCount} (${instantiationText(b.instantiation)})`).join(' · ') + (rest ? ` · ${rest} not evaluated` : '');
  }
  const names = loop.tripDependsOn ?? [];
  return names.length ? `depends on ${names.join(', ')}` : 'not evaluated';
}

function instantiationText(inst: Record<string, number>): string {
  return Object.entries(inst)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}

export function manualUnrollSummary(m: ManualUnroll): string {
  const guard = m.pattern === 'strided-body' ? (m.guarded ? ', guarded' : ', no remainder guard') : '';
  const vector = m.pattern === 'vector-load' && m.vectorType ? `, ${m.vectorType}` : '';
  const grid = m.pattern === 'block-level' && m.gridDivisor ? `, grid / ${m.gridDivisor}` : '';
  return `manual unroll ×${m.factor} (${m.pattern}${guard}${vector}${grid})`;
}

/** What each manual-unroll pattern is, in a sentence (hover); one entry per pattern. */
export const MANUAL_UNROLL_PATTERN_TEXT: Readonly<Record<ManualUnrollPattern, string>> = {
  'strided-body': 'a loop stepping by U whose body repeats one statement U times at offsets 0..U-1',
  'offset-run': 'straight-line statements that are copies of one another, stepping an index',
  'warp-tail': 'reduction steps written out with the offset halved each time, down to 1',
  coarsening: 'each thread computes N elements of an index scaled by N (thread coarsening)',
  'multi-declarator': 'one declaration with several declarators, each loading the next element',
  'element-assignments': 'assignments to consecutive array elements, each with the matching value',
  'accumulate-chain': 'one accumulation per copy, into the same target or into elements of an accumulator array',
  'expression-sum': 'copies of one term added up in a single expression',
  'vector-load': 'one wide load through a vector-pointer cast whose components are then used one by one',
  'block-level': 'each thread block reduces N data blocks, one block size apart, so the host launches grid / N blocks',
};

/** Manual unrolls that start on the loop's line or inside its body. */
function manualUnrollsOf(kernel: Kernel, loop: Loop): ManualUnroll[] {
  return kernel.manualUnrolls.filter(m => m.line === loop.line);
}

/** The CodeLens summary above a loop, e.g. "unroll 4 requested · trip count runtime". */
export function loopLensSummary(kernel: Kernel, loop: Loop): string {
  const parts = [pragmaSummary(loop.pragma), tripCountSummary(loop)];
  for (const m of manualUnrollsOf(kernel, loop)) parts.push(manualUnrollSummary(m));
  return parts.join(' · ');
}

export function kernelLabel(k: Kernel): string {
  const tpl = k.templateParameters.length ? `<${k.templateParameters.join(', ')}>` : '';
  return `${k.qualifier === 'global' ? '__global__' : '__device__'} ${k.name}${tpl}`;
}

/** `_CCCL_DEVICE` → `__device__` (execution_space.h:27), … each with where its meaning comes from. */
function qualifierMacrosText(kernel: Pick<Kernel, 'qualifierMacros' | 'qualifierMacroUses'>): string {
  const uses = kernel.qualifierMacroUses ?? (kernel.qualifierMacros ?? []).map(name => ({ name, expandsTo: '', origin: null }));
  return uses
    .map(u => (u.expandsTo ? `${code(u.name)} → ${code(u.expandsTo)}` : code(u.name)) + (u.origin ? ` (${macroOriginText(u.origin)})` : ''))
    .join(', ');
}

/** Markdown for hovering a loop or its pragma. */
/**
 * `Unroll Lens could not evaluate \`type\` in the instantiations in this file`: why the instantiations the file
 * shows give no trip count (loop.unevaluatedInstantiations), naming what they leave open. No
 * count: one instantiation written inside another template stands for as many as that template
 * has in other files, and the file's own are read up to a cap, so a number here would be a guess.
 */
export function unevaluatedInstantiationsText(loop: Loop): string {
  // Said of what Unroll Lens could read, never of the file: the file may well fix `nwarps`
  // through a constexpr function or a header's enum that is not read here.
  const open = loop.unevaluatedParameters;
  if (!open) return 'Unroll Lens could not evaluate the arguments of the instantiations in this file';
  return open.length
    ? `Unroll Lens could not evaluate ${open.map(x => `\`${x}\``).join(', ')} in the instantiations in this file`
    : 'the instantiations in this file bind what the trip count names, but Unroll Lens could not evaluate a value it uses';
}

export function loopHoverMarkdown(kernel: Kernel, loop: Loop): string {
  const rows: [string, string][] = [];
  rows.push([
    'Loop',
    `\`${loop.kind}\` at line ${loop.line}` + (loop.conditionText ? ` — \`${loop.conditionText.replace(/`/g, "'")}\`` : ''),
  ]);
  rows.push(['Requested unroll', loop.pragma ? `${pragmaAsWritten(loop.pragma)} → ${pragmaSummary(loop.pragma)}` : 'none (nvcc decides)']);
  const expansion = loop.pragma ? pragmaExpansionText(loop.pragma) : null;
  if (expansion) rows.push(['Macro expansion', expansion]);
  let trip = String(loop.tripCount);
  if (loop.tripCount === 'runtime') trip = 'runtime (not a compile-time constant)';
  if (loop.tripCount === 'dependent')
    trip = loop.tripCountByInstantiation?.length
      ? `by instantiation: ${tripCountText(loop)}`
      : loop.tripDependsOn?.length
        ? loop.unevaluatedInstantiations
          ? `${tripCountText(loop)} (${unevaluatedInstantiationsText(loop)})`
          : `${tripCountText(loop)} (template parameters with no instantiation visible in this file)`
        : 'not evaluated: a value this file does not let Unroll Lens derive (a constant from a header it could not read, a CuTe shape, wmma `num_elements`); nothing shows it to be a run-time value';
  rows.push(['Trip count', trip]);
  rows.push(['Nesting', loop.depth === 0 ? 'outermost loop' : `depth ${loop.depth}, inside the loop at line ${loop.parentLine}`]);
  rows.push(['Kernel', `\`${kernelLabel(kernel)}\` (line ${kernel.line})`]);
  if (kernel.qualifierMacros?.length) rows.push(['Qualified by', qualifierMacrosText(kernel)]);
  for (const m of manualUnrollsOf(kernel, loop))
    rows.push(['Manual unroll', `×${m.factor}, ${m.pattern}${m.guarded ? ', guarded' : ''} — ${m.detail}`]);
  if (kernel.instantiations.length) {
    rows.push([
      'Instantiations',
      kernel.instantiations
        .map(
          i =>
            `<${Object.entries(i)
              .map(([k, v]) => `${k}=${v}`)
              .join(', ')}>`,
        )
        .join(' '),
    ]);
  }
  const table = ['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v.replace(/\|/g, '\\|')} |`)].join('\n');
  return `**Unroll Lens** · ${loop.kind} loop, ${tripCountSummary(loop)}\n\n${table}`;
}

export function manualUnrollHoverMarkdown(kernel: Kernel, m: ManualUnroll): string {
  const what = MANUAL_UNROLL_PATTERN_TEXT[m.pattern];
  return `**Unroll Lens** · ${manualUnrollSummary(m)}${what ? ` — ${what}` : ''}\n\nLines ${m.line}–${m.endLine} in \`${kernelLabel(kernel)}\`: ${m.detail}`;
}
