// Stage 1, build: each variant as a cubin (the SASS side: which kernel holds the loop, its
// instructions and registers) and as a whole program for the GPU stages, through the build cache.
import type { FileAnalysis } from '../../parse/model';
import { ScanInputError } from '../../parse/scan';
import { BuildRequest, BuildResult, VariantBuilder } from '../../variants/build';
import { LoopVariant, VariantInspector } from '../../variants/inspect';
import { variantSource, VariantFactors, variantKey } from '../../variants/rewrite';
import type { BenchOptions, RunStatus } from '../bench';

/** One variant to benchmark: the loop factors it sets (none for the file as written). */
export interface BenchVariant {
  label: string;
  factors: VariantFactors;
}

/** The file the variants are made from and the loop they study. */
export interface BenchSource {
  file: string;
  text: string;
  analysis: FileAnalysis;
  /** Line of the loop the SASS side measures. */
  focus: number;
}

export interface BuiltVariant {
  variant: BenchVariant;
  /** The whole program, or why it did not build. */
  program: BuildResult;
  /** The loop's kernel in this variant's cubin. */
  sass: LoopVariant | undefined;
}

export type BuildOptions = Pick<
  BenchOptions,
  'toolchain' | 'arch' | 'flags' | 'cacheDir' | 'compileCommand' | 'kernel' | 'signal' | 'onProgress' | 'nvccTimeoutMs'
>;

/** The kernels to time: every instantiation holding the loop. */
export interface BenchTarget {
  /** The kernel the variants' rows report (always kernels[0]). */
  kernel: string;
  kernels: string[];
}

function cubinInspector(o: Pick<BuildOptions, 'toolchain' | 'arch' | 'flags' | 'cacheDir' | 'nvccTimeoutMs'>): VariantInspector {
  const t = o.toolchain;
  const builder = new VariantBuilder({
    nvcc: t.nvcc,
    arch: o.arch,
    flags: o.flags,
    cacheDir: o.cacheDir,
    runner: t.runner,
    timeoutMs: o.nvccTimeoutMs,
  });
  return new VariantInspector({ toolchain: t, builder, arch: o.arch });
}

/** Builds the variants' cubins (SASS side), then their programs; results in variant order. */
export async function buildVariants(src: BenchSource, variants: BenchVariant[], o: BuildOptions): Promise<BuiltVariant[]> {
  const t = o.toolchain;
  const reqs: BuildRequest[] = variants.map(v => ({
    key: variantKey(v.factors),
    source: variantSource(src.text, src.analysis, v.factors, src.file),
    originalPath: src.file,
  }));
  const programBuilder = new VariantBuilder({
    mode: 'program',
    nvcc: t.nvcc,
    arch: o.arch,
    flags: o.flags,
    cacheDir: o.cacheDir,
    runner: t.runner,
    compileTemplate: o.compileCommand,
    timeoutMs: o.nvccTimeoutMs,
  });
  o.onProgress?.('building variants', 0, variants.length);
  const factors = variants.map(v => v.factors);
  const sass = await cubinInspector(o).inspectVariants(src.file, src.text, src.analysis, src.focus, factors, {
    signal: o.signal,
    kernel: o.kernel,
  });
  const programs = await programBuilder.buildAll(reqs, {
    signal: o.signal,
    onProgress: p => o.onProgress?.(`built ${p.key}`, p.done, p.total),
  });
  return variants.map((variant, i) => ({ variant, program: programs[i], sass: sass[i] }));
}

/**
 * Every kernel whose code holds the loop (template instantiations), most of the loop first, or
 * those matching o.kernel (a mangled name or a substring of the demangled one); throws when none is found.
 */
export async function findTargetKernels(
  src: BenchSource,
  built: BuiltVariant[],
  o: Pick<BuildOptions, 'toolchain' | 'arch' | 'flags' | 'cacheDir' | 'kernel' | 'signal' | 'nvccTimeoutMs'>,
): Promise<BenchTarget> {
  const holding = await cubinInspector(o).kernelsHoldingLoop(src.file, src.text, src.analysis, src.focus, { signal: o.signal });
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
  const kernel = kernels[0] ?? built.find(b => b.sass?.kernel)?.sass?.kernel ?? null;
  if (!kernel) throw new Error(`could not find the kernel holding line ${src.focus} in the cubin (is it launched/instantiated?)`);
  if (!kernels.length) kernels.push(kernel);
  return { kernel, kernels };
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
