// Stage 1, build: which kernels a benchmark times (every instantiation holding the loop, from
// the file as written's cubin) and why a variant's program cannot run. The programs themselves
// are built by the sweep's GPU runner (sweep/runners/gpu.ts), through the build cache.
import type { FileAnalysis } from '../../parse/model';
import { ScanInputError } from '../../parse/scan';
import type { CompileFlags } from '../../toolchain/flags';
import { fileDoesNotCompile } from '../../toolchain/rejectedFlag';
import type { Toolchain } from '../../toolchain/toolchain';
import { BuildResult, VariantBuilder } from '../../variants/build';
import { VariantInspector } from '../../variants/inspect';
import { sourceNameOf } from '../../../schema/kernelNames';
import type { RunStatus } from '../options';
import { instantiationLabel } from '../../../schema/kernelNames';

/** The file the variants are made from and the loop they study. */
export interface BenchSource {
  file: string;
  text: string;
  analysis: FileAnalysis;
  /** Line of the loop whose kernels are timed. */
  focus: number;
}

/**
 * Which kernels a GPU sweep times in every program run, each in the variants' `instantiations`:
 * every kernel holding the loop at `focus` (a benchmark; `kernel` narrows them), or the kernels
 * `named` (a comparison of kernels, each with every instantiation).
 */
export type TimedKernels = { focus: number; kernel?: string } | { named: string[] };

/** The kernels to time: every instantiation holding the loop. */
export interface BenchTarget {
  /** The kernel the variants' rows report (always kernels[0]). */
  kernel: string;
  kernels: string[];
  /** Mangled → demangled name (template arguments) of each kernel that holds the loop. */
  demangled?: Record<string, string>;
  /**
   * A project's run: it launches whichever of `kernels` its tests reach, each one that ran is a
   * row, and only a run that launches none of them fails ("built but never launched").
   */
  anyLaunched?: boolean;
  /**
   * A project's run: the kernel templates (sameTemplate.ts keys) of the kernel that holds the loop
   * in its own body. A launched kernel instantiating one of them, built by another unit of the
   * project, holds the loop too and is timed with a row of its own (its SASS unknown: the SASS
   * side reads one unit).
   */
  sameTemplate?: string[];
  /** Mangled → spill bytes of each kernel compared, from ptxas -v of the file as written (a comparison). */
  spills?: Record<string, { stores: number | null; loads: number | null }>;
}

interface TargetOptions {
  toolchain: Toolchain;
  arch: string;
  flags: CompileFlags;
  cacheDir: string;
  /** Mangled name or a substring of the demangled one: time only the kernels it names. */
  kernel?: string;
  signal?: AbortSignal;
  nvccTimeoutMs?: number;
  /** A header's unit (it includes the header and instantiates its kernels). */
  translationUnit?: string;
  /** Build and read through this inspector (the SASS side's, whose build of the file as written may be under way). */
  inspector?: VariantInspector;
}

function inspectorOf(o: TargetOptions): VariantInspector {
  return (
    o.inspector ??
    new VariantInspector({
      toolchain: o.toolchain,
      builder: new VariantBuilder({
        nvcc: o.toolchain.nvcc,
        arch: o.arch,
        flags: o.flags,
        cacheDir: o.cacheDir,
        runner: o.toolchain.runner,
        timeoutMs: o.nvccTimeoutMs,
        translationUnit: o.translationUnit,
      }),
      arch: o.arch,
    })
  );
}

/**
 * Every kernel whose code holds the loop (template instantiations), most of the loop first, or
 * those matching o.kernel (a mangled name or a substring of the demangled one). Throws when
 * o.kernel names none of them, and when the file as written does not build (naming the
 * compiler's complaint); no kernel at all (kernels empty) when none holds the loop's lines.
 */
export async function findTargetKernels(src: BenchSource, o: TargetOptions): Promise<BenchTarget> {
  const inspector = inspectorOf(o);
  const { holding, asWritten } = await inspector.kernelsHoldingLoop(src.file, src.text, src.analysis, src.focus, { signal: o.signal });
  const kernels = o.kernel
    ? holding.filter(k => k.name === o.kernel || k.demangled.includes(o.kernel!)).map(k => k.name)
    : holding.map(k => k.name);
  if (o.kernel && /^_Z/.test(o.kernel) && !kernels.includes(o.kernel)) kernels.unshift(o.kernel);
  // A --kernel naming nothing that holds the loop is a mistake to report, not a reason to profile another kernel.
  if (o.kernel && !kernels.length && holding.length && !o.signal?.aborted)
    throw new ScanInputError(
      `--kernel ${o.kernel}: no kernel of that name holds the loop at line ${src.focus} of ${src.file}; ` +
        `kernels holding it: ${holding.map(k => k.demangled).join('; ')}`,
    );
  const kernel = kernels[0] ?? null;
  if (!kernel) {
    // Nothing to measure when the file as written does not build: say why (a rejected flag named), not "internal error".
    if (asWritten && asWritten.status === 'failed')
      throw fileDoesNotCompile(src.file, { kind: asWritten.failureKind ?? 'internal', messages: asWritten.messages }, o.flags);
    // No function's lines hold the loop (no line info, or the loop compiled away): the caller's own choice stands.
    return { kernel: '', kernels: [] };
  }
  return { kernel, kernels, demangled: Object.fromEntries(holding.map(k => [k.name, k.demangled])) };
}

/**
 * The kernels a comparison times: every instantiation of each named kernel in the file as written,
 * in the order named. Throws when a name is no kernel of the file (naming those it has) and when
 * the file as written does not build (naming the compiler's complaint).
 */
export async function findNamedKernels(
  src: Omit<BenchSource, 'focus'>,
  names: string[],
  o: Omit<TargetOptions, 'kernel'>,
): Promise<BenchTarget> {
  const inspector = inspectorOf(o);
  const { kernels, available, asWritten } = await inspector.kernelsNamed(src.file, src.text, src.analysis, names, { signal: o.signal });
  if (asWritten.status === 'failed')
    throw fileDoesNotCompile(src.file, { kind: asWritten.failureKind ?? 'internal', messages: asWritten.messages }, o.flags);
  if (o.signal?.aborted || asWritten.status !== 'ok') return { kernel: '', kernels: [] };
  const missing = names.filter(n => !kernels.some(k => sourceNameOf(k.demangled) === n));
  if (missing.length)
    throw new ScanInputError(
      `no kernel named ${missing.join(', ')} in the build of ${src.file}` +
        ` (a template must be instantiated to be built); its kernels: ${available.join(', ') || 'none'}`,
    );
  return {
    kernel: kernels[0].name,
    kernels: kernels.map(k => k.name),
    demangled: Object.fromEntries(kernels.map(k => [k.name, k.demangled])),
    spills: Object.fromEntries(kernels.map(k => [k.name, { stores: k.spillStores, loads: k.spillLoads }])),
  };
}

/** A benchmark's instantiations, named: which one the rows show and why (a comparison's kernels are its rows: nothing to say). */
export function targetNotes(t: BenchTarget, comparison: boolean): string[] {
  if (t.kernels.length < 2 || comparison) return [];
  const name = (k: string) => instantiationLabel(t.demangled?.[k] ?? k);
  return [
    `${t.kernels.length} instantiations hold the loop (${t.kernels.map(name).join(', ')}); ` +
      `this view shows ${name(t.kernel)}, the one with most of the loop's code in the file as written`,
  ];
}

/** Why a variant's program cannot run, or null when it built. */
export function buildFailure(b: BuildResult): { status: RunStatus; message: string | null } | null {
  if (b.status === 'ok' && b.outputPath) return null;
  return {
    status: b.status === 'cancelled' ? 'cancelled' : b.status === 'timeout' ? 'timeout' : 'compile',
    message:
      b.messages
        .filter(m => m.severity === 'error')
        .map(m => `${m.file ?? ''}${m.line ? `:${m.line}` : ''} ${m.message}`)
        .join('\n') || (b.status === 'timeout' ? 'nvcc ran past its time limit (--nvcc-timeout) and was killed' : b.failureKind),
  };
}

/** A project's variant that built and ran but never reached the loop's kernels. */
export function neverLaunched(target: BenchTarget, warmup: number): string {
  const n = target.kernels.length;
  return (
    `built, but the run command launched none of the ${n} kernel${n > 1 ? 's' : ''} holding the loop more than ${warmup} times (the warm-up)` +
    ` (${target.kernels.slice(0, 3).join(', ')}${n > 3 ? ', …' : ''}): does the run reach this code? (--run, --kernel)`
  );
}
