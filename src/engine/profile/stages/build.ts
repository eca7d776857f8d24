// Stage 1, build: each variant as a cubin (the SASS side: which kernel holds the loop, its
// instructions and registers) and as a whole program for the GPU stages, through the build cache.
import type { FileAnalysis } from '../../parse/model';
import { ScanInputError } from '../../parse/scan';
import { fileDoesNotCompile } from '../../toolchain/rejectedFlag';
import { BuildRequest, BuildResult, VariantBuilder } from '../../variants/build';
import type { LoopVariant } from '../../variants/reports';
import { VariantInspector } from '../../variants/inspect';
import { variantSource, VariantFactors, variantKey } from '../../variants/rewrite';
import type { BenchOptions, RunStatus } from '../types';

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

/** Builds under way: the SASS side of every variant at once, each program as soon as it is built. */
export interface StartedBuilds {
  /** The loop's kernel in each variant's cubin (undefined where it did not build). */
  sass: Promise<(LoopVariant | undefined)[]>;
  /** Each variant's whole program, or why it did not build. */
  programs: Promise<BuildResult>[];
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
  /** Mangled → demangled name (template arguments) of each kernel that holds the loop. */
  demangled?: Record<string, string>;
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

/**
 * Starts the variants' cubin builds (SASS side) and their program builds together, programs in
 * variant order (the file as written first), so the GPU can start on the first program while
 * the others still compile.
 */
export function startBuilds(src: BenchSource, variants: BenchVariant[], o: BuildOptions): StartedBuilds {
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
  const ready = variants.map(() => {
    let resolve!: (b: BuildResult) => void;
    const promise = new Promise<BuildResult>(r => (resolve = r));
    return { promise, resolve };
  });
  const all = programBuilder.buildAll(reqs, {
    signal: o.signal,
    onProgress: p => o.onProgress?.(`built ${p.key}`, p.done, p.total),
    onResult: (i, b) => ready[i].resolve(b),
  });
  // buildAll reports every request; this only matters if it throws part-way.
  all.then(
    results => results.forEach((b, i) => ready[i].resolve(b)),
    e => ready.forEach(r => r.resolve(internalFailure(String(e)))),
  );
  const factors = variants.map(v => v.factors);
  const sass = cubinInspector(o).inspectVariants(src.file, src.text, src.analysis, src.focus, factors, {
    signal: o.signal,
    kernel: o.kernel,
  });
  return { sass, programs: ready.map(r => r.promise) };
}

function internalFailure(message: string): BuildResult {
  return {
    key: '',
    status: 'failed',
    hash: '',
    outputPath: null,
    ptxasLog: '',
    messages: [{ file: null, line: null, column: null, severity: 'error', code: null, message, kind: 'internal' }],
    failureKind: 'internal',
    compileMs: 0,
    cached: false,
  };
}

/**
 * Every kernel whose code holds the loop (template instantiations), most of the loop first, or
 * those matching o.kernel (a mangled name or a substring of the demangled one); throws when none is found.
 */
export async function findTargetKernels(
  src: BenchSource,
  sass: (LoopVariant | undefined)[],
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
  const kernel = kernels[0] ?? sass.find(s => s?.kernel)?.kernel ?? null;
  if (!kernel) {
    // Nothing to measure when the file as written does not build: say why (a rejected flag named), not "internal error".
    const asWritten = sass[0];
    if (asWritten?.status === 'failed' && asWritten.failure) throw fileDoesNotCompile(src.file, asWritten.failure, o.flags);
    throw new Error(`could not find the kernel holding line ${src.focus} in the cubin (is it launched/instantiated?)`);
  }
  if (!kernels.length) kernels.push(kernel);
  return { kernel, kernels, demangled: Object.fromEntries(holding.map(k => [k.name, k.demangled])) };
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
