// The search space of a kernel sweep: one axis per swept loop (its unroll factors) and one per
// extra parameter: a macro (values passed as -D) or a template parameter of the swept kernel
// (values pick which of the file's instantiations is measured). A point is one value per axis; its id is the
// stable name results, caches and the panel use (documented on SweepVariant.id in protocol.ts).
import type { FactorValue } from '../../schema/types';
import type { FileAnalysis, Kernel, Loop } from '../parse/model';
import { UnrollFactor, UnrollFactors, writtenFactor } from '../variants/factors';
import type { VariantFactors } from '../variants/rewrite';

export class SweepSpaceError extends Error {}

/** One sweep point: a factor per swept loop (keyed by loop line) and a value per parameter. */
export interface SweepPoint {
  factors: Record<string, FactorValue>;
  params: Record<string, string>;
}

interface LoopAxis {
  kind: 'loop';
  /** The loops this axis sets: one, or every swept loop when they are tied (a benchmark of several loops at one factor). */
  lines: number[];
  values: readonly UnrollFactor[];
}

export interface ParamAxis {
  kind: 'param';
  name: string;
  values: string[];
  /**
   * True when the name is a template parameter of the swept kernel: no -D; each value selects
   * the instantiation `kernel<…value…>` already in the file. Otherwise a macro (-DNAME=value).
   */
  template: boolean;
}

export type Axis = LoopAxis | ParamAxis;

/** The file as written: no factor changed, no -D added. The baseline of every sweep. */
export const AS_WRITTEN: SweepPoint = { factors: {}, params: {} };
export const AS_WRITTEN_ID = 'as-written';

/** A C identifier: what `-DNAME=…` can define. */
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Values are restricted to characters that mean nothing to a shell or to nvcc's option parser:
 * nvcc hands -D values to the host compiler through `sh`, so `$(…)`, quotes, spaces, `;`, `|`
 * or backquotes in a value could run commands. Numbers, identifiers and `1.5f`/`-2` pass.
 */
const PARAM_VALUE = /^[A-Za-z0-9_.+-]+$/;

function factorText(f: FactorValue): string {
  return String(f);
}

/** `40=4,52=full`, `40=4|BLOCK=8`, or `as-written`. Loops by line, params by name. */
export function pointId(p: SweepPoint): string {
  const loops = Object.entries(p.factors)
    .sort((a, b) => Number(a[0]) - Number(b[0]))
    .map(([l, f]) => `${l}=${factorText(f)}`);
  const params = Object.entries(p.params)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([n, v]) => `${n}=${v}`);
  if (!loops.length && !params.length) return AS_WRITTEN_ID;
  // Parameters only (no loop axis): `BLOCK=8`; names are identifiers, loop keys numbers, so no `|` is needed.
  if (!loops.length) return params.join(',');
  return params.length ? `${loops.join(',')}|${params.join(',')}` : loops.join(',');
}

function factorLabelShort(f: FactorValue): string {
  return typeof f === 'number' ? `×${f}` : f;
}

/** `×4`, `full`, `default` for one loop; `L40 ×4 · L52 full · BLOCK=8` otherwise; `as written`. */
export function pointLabel(p: SweepPoint): string {
  const loops = Object.entries(p.factors).sort((a, b) => Number(a[0]) - Number(b[0]));
  const params = Object.entries(p.params)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([n, v]) => `${n}=${v}`);
  if (!loops.length && !params.length) return 'as written';
  const loopParts = loops.length === 1 ? [factorLabelShort(loops[0][1])] : loops.map(([l, f]) => `L${l} ${factorLabelShort(f)}`);
  return [...loopParts, ...params].join(' · ');
}

/** The rewrite's factor map of a point. */
export function variantFactorsOf(p: SweepPoint): VariantFactors {
  return new Map(Object.entries(p.factors).map(([l, f]) => [Number(l), f]));
}

/**
 * `-DNAME=value` arguments of a point, in name order (stable build hashes). Template parameters
 * (`templates`) are not macros: they are left out.
 */
export function defineArgs(params: Record<string, string>, templates: readonly string[] = []): string[] {
  return Object.keys(params)
    .filter(n => !templates.includes(n))
    .sort()
    .map(n => `-D${n}=${params[n]}`);
}

/** The template-parameter values of a point (by name), over `defaults` for the ones it lacks (the file as written). */
export function templateArgs(
  params: Record<string, string>,
  templates: readonly string[],
  defaults: Record<string, string> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of templates) {
    const v = params[n] ?? defaults[n];
    if (v !== undefined) out[n] = v;
  }
  return out;
}

/**
 * Program arguments with each `{NAME}` of a swept parameter replaced by the point's value
 * (`--body {BODY}`); `values` also holds the defaults for the file as written. Other braces stay.
 */
export function substituteArgs(args: readonly string[], values: Record<string, string>): string[] {
  return args.map(a => a.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (m, n: string) => (Object.hasOwn(values, n) ? values[n] : m)));
}

/** Parses `NAME=v1,v2,…` (the CLI's --param); throws SweepSpaceError with the reason. */
export function parseParamSpec(spec: string): { name: string; values: string[] } {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new SweepSpaceError(`bad parameter '${spec}': use NAME=v1,v2,… (e.g. BLOCK=8,16,32)`);
  const name = spec.slice(0, eq).trim();
  const values = spec
    .slice(eq + 1)
    .split(',')
    .map(v => v.trim())
    .filter(Boolean);
  checkParam(name, values);
  return { name, values: [...new Set(values)] };
}

function checkParam(name: string, values: string[]): void {
  if (!PARAM_NAME.test(name))
    throw new SweepSpaceError(`bad parameter name '${name}': a macro or template parameter name is a C identifier (letters, digits, _)`);
  if (!values.length) throw new SweepSpaceError(`parameter ${name} has no values`);
  for (const v of values) {
    if (!PARAM_VALUE.test(v)) {
      throw new SweepSpaceError(
        `bad value '${v}' for ${name}: values may hold only letters, digits and _ . + - (they reach the host compiler through a shell)`,
      );
    }
  }
}

export interface SpaceOptions {
  /** Source name of the kernel; default: the kernel holding the first listed loop, or the only kernel with loops. */
  kernel?: string;
  /** Loop lines to sweep; default: every loop of the kernel. */
  loops?: number[];
  /** The factors of each loop axis, as parsed where they came in. Default: UnrollFactors.DEFAULT. Unused without loop axes. */
  factors?: UnrollFactors;
  /**
   * Sweep the parameters only (no loop axis), even when the kernel has loops (the CLI's
   * `--factors none`). A kernel without loops is swept this way whatever this says.
   */
  paramsOnly?: boolean;
  /**
   * Extra axes: name → values. A template parameter of the kernel picks that instantiation per
   * value; any other name is a macro (each value becomes -DNAME=value).
   */
  params?: Record<string, string[]>;
  /** One factor axis for all the swept loops together (each point sets every loop to the same factor), as `bench --loop L1,L2` does. */
  tied?: boolean;
}

/**
 * The validated space. Axes: loops in line order, then parameters in the order given. Points
 * are addressed by index vectors (one value index per axis), which is what strategies see.
 */
export class SweepSpace {
  readonly axes: Axis[];

  constructor(
    readonly kernel: Kernel,
    readonly loops: Loop[],
    readonly factors: UnrollFactors,
    readonly params: ParamAxis[],
    readonly tied = false,
  ) {
    const loopAxes = tied ? [loops.map(l => l.line)] : loops.map(l => [l.line]);
    this.axes = [...loopAxes.map(lines => ({ kind: 'loop' as const, lines, values: factors.values })), ...params];
  }

  /** Names of the template-parameter axes, in axis order. */
  get templateParams(): string[] {
    return this.params.filter(p => p.template).map(p => p.name);
  }

  /** Names of the macro axes. */
  get macroParams(): string[] {
    return this.params.filter(p => !p.template).map(p => p.name);
  }

  /** The parameter values the file as written is measured and run with: each axis at its start (see start()). */
  defaults(text: string): Record<string, string> {
    return { ...this.point(this.start(text)).params };
  }

  get sizes(): number[] {
    return this.axes.map(a => a.values.length);
  }

  get size(): number {
    return this.sizes.reduce((a, b) => a * b, 1);
  }

  point(index: number[]): SweepPoint {
    const p: SweepPoint = { factors: {}, params: {} };
    this.axes.forEach((a, i) => {
      if (a.kind === 'loop') for (const line of a.lines) p.factors[String(line)] = a.values[index[i]];
      else p.params[a.name] = a.values[index[i]];
    });
    return p;
  }

  /** Index vector of a point of this space, or null when a value is not on its axis. */
  indexOf(p: SweepPoint): number[] | null {
    const idx = this.axes.map(a => (a.kind === 'loop' ? tiedIndex(a, p) : a.values.indexOf(p.params[a.name])));
    return idx.every(i => i >= 0) ? idx : null;
  }

  /** Every point, first axis slowest (so ids come out grouped by the first loop). */
  *points(): Generator<SweepPoint> {
    const sizes = this.sizes;
    const idx = sizes.map(() => 0);
    if (sizes.some(s => s === 0)) return;
    for (;;) {
      yield this.point(idx);
      let a = sizes.length - 1;
      while (a >= 0 && ++idx[a] === sizes[a]) idx[a--] = 0;
      if (a < 0) return;
    }
  }

  /**
   * The point closest to the file as written: each loop at its written factor when the factor
   * set holds it (else `default`), each macro at its `#define` value in the file when listed
   * (else its first value), each template parameter at its first value. Local searches start here.
   */
  start(text: string): number[] {
    return this.axes.map(a => {
      if (a.kind === 'loop') {
        const written = writtenFactor(this.loops.find(l => l.line === a.lines[0])!);
        const i = a.values.findIndex(v => String(v) === String(written));
        const d = a.values.indexOf('default');
        return i >= 0 ? i : d >= 0 ? d : 0;
      }
      if (a.template) return 0;
      const m = new RegExp(`^[ \\t]*#[ \\t]*define[ \\t]+${a.name}[ \\t]+(\\S+)`, 'm').exec(text);
      const i = m ? a.values.indexOf(m[1]) : -1;
      return i >= 0 ? i : 0;
    });
  }
}

/** The axis value every loop of a (tied) loop axis has in `p`; -1 when they differ or one is off the axis. */
function tiedIndex(a: LoopAxis, p: SweepPoint): number {
  const at = a.lines.map(l => a.values.findIndex(v => String(v) === String(p.factors[String(l)])));
  return at.every(i => i === at[0]) ? at[0] : -1;
}

function describeKernel(k: Kernel): string {
  return `${k.name} (line ${k.line})`;
}

/** Validates sweep options against the file's analysis and builds the space. Throws SweepSpaceError. */
export function resolveSpace(analysis: FileAnalysis, file: string, o: SpaceOptions): SweepSpace {
  const allLoops = new Map<number, Kernel>();
  for (const k of analysis.kernels) for (const l of k.loops) allLoops.set(l.line, k);
  if (o.paramsOnly && o.loops?.length)
    throw new SweepSpaceError('a sweep of parameters only sweeps no loop: leave out the loop lines or give factors');
  for (const line of o.loops ?? []) {
    if (!Number.isInteger(line) || line < 1) throw new SweepSpaceError(`bad loop line '${line}': a 1-based line number`);
    if (!allLoops.has(line)) {
      const near = [...allLoops.keys()]
        .sort((a, b) => Math.abs(a - line) - Math.abs(b - line))
        .slice(0, 3)
        .sort((a, b) => a - b);
      throw new SweepSpaceError(
        `no loop at line ${line} of ${file}${near.length ? ` (loops at lines ${near.join(', ')} nearby)` : ' (the file has no loops in device code)'}`,
      );
    }
  }
  const k = chooseKernel(analysis, file, o, allLoops);
  for (const line of o.loops ?? []) {
    const owner = allLoops.get(line)!;
    if (owner !== k) throw new SweepSpaceError(`the loop at line ${line} belongs to ${describeKernel(owner)}, not to ${describeKernel(k)}`);
  }
  // Parameters only: asked for, or the kernel has no loop (its template or macro values are all there is to sweep).
  const lines = o.paramsOnly ? [] : o.loops?.length ? [...new Set(o.loops)].sort((a, b) => a - b) : k.loops.map(l => l.line);
  const params: ParamAxis[] = [];
  for (const [name, values] of Object.entries(o.params ?? {})) {
    checkParam(name, values);
    params.push({ kind: 'param', name, values: [...new Set(values)], template: k.templateParameters.includes(name) });
  }
  if (!lines.length && !params.length) {
    throw new SweepSpaceError(
      o.paramsOnly
        ? `a sweep of parameters only needs values: give --param NAME=v1,v2 to sweep ${k.name}'s template or macro values`
        : `${k.name} has no loops; give --param NAME=v1,v2 to sweep its template or macro values`,
    );
  }
  return new SweepSpace(
    k,
    lines.map(l => k.loops.find(x => x.line === l)!),
    lines.length ? loopFactors(o.factors) : UnrollFactors.NONE,
    params,
    !!o.tied,
  );
}

/**
 * The swept kernel: the one named, else the one holding the first listed loop, else the only one
 * with loops; a file with no loops at all (or a sweep of parameters only) takes the only kernel
 * with every named template parameter, else the file's only __global__ kernel.
 */
function chooseKernel(analysis: FileAnalysis, file: string, o: SpaceOptions, allLoops: Map<number, Kernel>): Kernel {
  if (o.kernel) {
    const named = analysis.kernels.filter(k => k.name === o.kernel);
    if (!named.length) {
      throw new SweepSpaceError(
        `no kernel or device function named ${o.kernel} in ${file}; have ${analysis.kernels.map(k => k.name).join(', ') || 'none'}`,
      );
    }
    return named.find(k => (o.loops ?? []).every(l => allLoops.get(l) === k)) ?? named[0];
  }
  if (o.loops?.length) return allLoops.get(o.loops[0])!;
  const withLoops = analysis.kernels.filter(k => k.loops.length);
  if (withLoops.length === 1 && !o.paramsOnly) return withLoops[0];
  if (withLoops.length > 1 && !o.paramsOnly)
    throw new SweepSpaceError(`which kernel? ${file} has loops in ${withLoops.map(describeKernel).join(', ')}`);
  const names = Object.keys(o.params ?? {});
  const templated = analysis.kernels.filter(k => names.length && names.every(n => k.templateParameters.includes(n)));
  const global = analysis.kernels.filter(k => k.qualifier === 'global');
  const only = templated.length === 1 ? templated : global.length === 1 ? global : null;
  if (only) return only[0];
  if (!analysis.kernels.length) throw new SweepSpaceError(`no kernels in ${file}`);
  throw new SweepSpaceError(`which kernel? ${file} has ${(global.length ? global : analysis.kernels).map(describeKernel).join(', ')}`);
}

/** The factors of the loop axes: checked where they came in, so only an empty list (a sweep of parameters only) is refused. */
function loopFactors(given: UnrollFactors | undefined): UnrollFactors {
  if (given?.size === 0) throw new SweepSpaceError('empty factor list');
  return given ?? UnrollFactors.DEFAULT;
}
