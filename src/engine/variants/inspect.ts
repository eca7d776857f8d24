// Builds a file (as written, or with one loop's unroll factor varied), disassembles each
// cubin and reports what each variant costs: per kernel SASS instructions, bytes, registers,
// spills; per loop the instructions attributed to its lines and the unroll factor nvcc really
// applied.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { FileAnalysis, Kernel, Loop } from '../parse/model';
import {
  classHistogram,
  classifyInstruction,
  findSassLoops,
  parseCuobjdumpSass,
  parseNvdisasm,
  parsePtxasVerbose,
  readCubin,
  instructionCountFromElf,
  theoreticalOccupancy,
} from '../sass';
import type { SassClass, SassFunction, SassInstruction, SassListing, SassLoop } from '../sass';
import type { PtxasFunctionUsage } from '../sass/ptxas';
import { demangle, Toolchain } from '../toolchain/toolchain';
import type { CompilerMessage } from '../toolchain/nvccErrors';
import { BuildRequest, BuildResult, VariantBuilder } from './build';
import { factorLabel, variantSource, UnrollFactor, VariantFactors, variantKey, writtenFactor } from './rewrite';
import type { SassListingData } from '../../schema/sassListing';
import { annotateListing } from './listing';
import type { IcacheLoopFacts } from '../icache/types';
import { issueProfile } from '../sass/issueRate';
import { appliedUnroll, AppliedUnroll } from './appliedUnroll';

export interface KernelSass {
  name: string;
  demangled: string;
  instructions: number;
  bytes: number;
  registers: number;
  spillStores: number;
  spillLoads: number;
  sharedBytes: number;
  stackBytes: number;
  /** Instructions per opcode class (FP32, LOAD_GLOBAL, …); empty without a disassembler. */
  classes: Partial<Record<SassClass, number>>;
  /** Theoretical occupancy at `blockSize` threads (launch bounds, else 256), when known. */
  occupancy: { blockSize: number; occupancy: number; limiter: string } | null;
}

export interface VariantFailure {
  kind: string;
  messages: CompilerMessage[];
}

export interface LoopVariant {
  factor: UnrollFactor;
  key: string;
  status: BuildResult['status'];
  /** Mangled name of the kernel whose code holds the loop (the one with most of its instructions). */
  kernel: string | null;
  kernelInstructions: number | null;
  kernelBytes: number | null;
  /** Instructions whose line info falls inside the loop (nested loops included). */
  loopInstructions: number | null;
  /** Copies of one source iteration in the hottest machine-code loop covering the source loop. */
  effectiveUnroll: number | null;
  /** No machine-code loop is left for this source loop: it was unrolled completely. */
  fullyUnrolled: boolean;
  /** Beside the main machine loop: copies per pass of the loop's other machine loops and straight-line copies (null when unrolled completely or unknown). */
  remainder?: { loops: number[]; straight: number } | null;
  registers: number | null;
  spillStores: number | null;
  spillLoads: number | null;
  /** An earlier variant in the list whose kernel code is identical, instruction for instruction. */
  identicalTo: UnrollFactor | null;
  cached: boolean;
  compileMs: number;
  failure: VariantFailure | null;
  /** Instructions of every function in this variant's cubin (other instantiations included). */
  kernelSizes?: Record<string, number>;
  /** Hash of every kernel's machine code in the cubin: equal hashes run the same code (the bench measures them once). */
  machineCode?: string | null;
  /** The loop's hot machine code for the instruction-cache model (icache/model.ts); null when it runs once or is unknown. */
  icache?: IcacheLoopFacts | null;
  /** Theoretical resident warps per SM at the launch-bounds block size (else 256): the i-cache prediction's occupancy before a GPU run. */
  warpsPerSm?: number | null;
}

export interface LoopReport {
  line: number;
  kernel: string;
  /**
   * The function every row measures: the one holding most of the loop's code in the rolled build
   * (or the one --kernel names); `of`: how many functions hold some of it. Null when unknown.
   */
  instantiation?: { name: string; demangled: string; of: number } | null;
  /** The factor the loop has as written. */
  written: UnrollFactor;
  /** The architecture the variants were built for. */
  arch: string;
  variants: LoopVariant[];
  /** Plain-language notes: requested factors nvcc ignored or capped. */
  notes: string[];
  /** Why effective unroll is unknown, when it is (no disassembler with line info). */
  limitation: string | null;
}

export interface FileSassReport {
  arch: string;
  nvcc: string | null;
  status: BuildResult['status'];
  kernels: KernelSass[];
  failure: VariantFailure | null;
  /** Per loop (line) in the file as written: effective unroll vs the rolled build. */
  loops: {
    line: number;
    kernel: string | null;
    loopInstructions: number | null;
    effectiveUnroll: number | null;
    fullyUnrolled: boolean;
    /** The loop's hot machine code for the instruction-cache model; null when it runs once or is unknown. */
    icache?: IcacheLoopFacts | null;
    /**
     * Every function whose code holds the loop, most of its code first, each measured on its own,
     * when there are several (template instantiations); `kernel` above is the first.
     */
    instantiations?: LoopInstantiation[];
  }[];
  cached: boolean;
  disassembler: 'nvdisasm' | 'cuobjdump' | 'elf';
  /** Why the loops' instructions and effective unroll are unknown, when they are (no nvdisasm listing). */
  limitation?: string | null;
}

/** One instantiation's measure of a loop in the file as written. */
export interface LoopInstantiation {
  name: string;
  demangled: string;
  loopInstructions: number;
  effectiveUnroll: number | null;
  fullyUnrolled: boolean;
}

export interface InspectorOptions {
  toolchain: Toolchain;
  builder: VariantBuilder;
  arch: string;
}

interface Disassembly {
  listing: SassListing | null;
  /** Per function: instruction count and bytes even without a disassembler (ELF). */
  sizes: Map<string, { instructions: number; bytes: number }>;
  source: FileSassReport['disassembler'];
  /** Why the disassembler gave no listing (its first error line, or that it timed out), when it did not. */
  failure?: string;
}

export { WORK_CLASSES, INTEGER_WORK_CLASSES } from './appliedUnroll';
import { WORK_CLASSES } from './appliedUnroll';

function sha256(data: string | Uint8Array): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** Why a listing cannot be made (the build failed, no nvdisasm, no code of the loop): a message for the user. */
export class ListingError extends Error {
  constructor(
    message: string,
    readonly cancelled = false,
  ) {
    super(message);
  }
}

/** A header's loop whose function the translation unit never calls: nothing to measure. */
export class NotInstantiatedError extends Error {}

export class VariantInspector {
  constructor(private readonly o: InspectorOptions) {}

  /** The architecture this inspector builds for. */
  get arch(): string {
    return this.o.arch;
  }

  private get t(): Toolchain {
    return this.o.toolchain;
  }

  /**
   * Disassembles a cubin with the best tool available, caching the listing next to it. The cached
   * listing's name carries the tool's path and version and the cubin's hash (a new disassembler or
   * a rebuilt cubin is a miss); a hash file beside it catches a truncated or damaged listing.
   */
  async disassemble(outputPath: string, signal?: AbortSignal): Promise<Disassembly> {
    const sizes = new Map<string, { instructions: number; bytes: number }>();
    const bytes = fs.readFileSync(outputPath);
    const cubin = readCubin(bytes);
    for (const s of cubin.textSections) sizes.set(s.kernel, { instructions: instructionCountFromElf(s.size), bytes: s.size });
    // Beside the entry the build came from (the caller holds a leased link to its output).
    const dir = this.o.builder.cache.entryOf(outputPath);
    const tool = this.t.nvdisasm ? 'nvdisasm' : this.t.cuobjdump ? 'cuobjdump' : null;
    if (!tool) return { listing: null, sizes, source: 'elf' };
    const info = tool === 'nvdisasm' ? this.t.nvdisasm! : this.t.cuobjdump!;
    const key = sha256(JSON.stringify([tool, info.path, info.version, sha256(bytes)])).slice(0, 16);
    const cacheFile = path.join(dir, `${tool === 'nvdisasm' ? 'nvdisasm-c-gi' : 'cuobjdump-sass'}-${key}.txt`);
    // Checked on read (size and hash); written whole, or not at all (see cache.ts).
    let text: string | null = this.o.builder.cache.readSidecar(cacheFile);
    let failure: string | undefined;
    if (text === null) {
      const r =
        tool === 'nvdisasm'
          ? await this.t.runner(info.path, ['-c', '-gi', outputPath], { timeoutMs: 120_000, signal })
          : await this.t.runner(info.path, ['-sass', outputPath], { timeoutMs: 120_000, signal });
      if (r.exitCode === 0 && !r.signal) {
        text = r.stdout;
        this.o.builder.cache.writeSidecar(cacheFile, text); // an uncached listing is still a listing
      } else {
        failure = r.timedOut
          ? 'it timed out'
          : (r.stderr
              .split('\n')
              .map(l => l.trim())
              .find(l => l) ?? `it exited with ${r.signal ?? `code ${r.exitCode}`}`);
      }
    }
    if (text === null) return { listing: null, sizes, source: 'elf', ...(failure ? { failure } : {}) };
    const listing = tool === 'nvdisasm' ? parseNvdisasm(text) : parseCuobjdumpSass(text);
    return { listing, sizes, source: tool };
  }

  private async kernelsOf(build: BuildResult, dis: Disassembly, analysis: FileAnalysis): Promise<KernelSass[]> {
    const usage = parsePtxasVerbose(build.ptxasLog, { arch: this.o.arch });
    const names = [...dis.sizes.keys()].filter(n => usage.get(n)?.entry ?? true);
    const demangled = await demangle(names, this.t);
    const byName = new Map((dis.listing?.functions ?? []).map(f => [f.name, f]));
    return names.map(name => {
      const u = usage.get(name);
      const fn = byName.get(name);
      const size = dis.sizes.get(name)!;
      const dm = demangled.get(name) ?? name;
      const blockSize = launchBlockSize(analysis, dm);
      const occ = u
        ? theoreticalOccupancy({
            registersPerThread: u.registers,
            sharedBytesPerBlock: u.sharedBytes,
            threadsPerBlock: blockSize,
            arch: this.o.arch,
          })
        : null;
      return {
        name,
        demangled: dm,
        instructions: fn ? fn.instructions.length : size.instructions,
        bytes: fn ? fn.bytes : size.bytes,
        registers: u?.registers ?? 0,
        spillStores: u?.spillStoreBytes ?? 0,
        spillLoads: u?.spillLoadBytes ?? 0,
        sharedBytes: u?.sharedBytes ?? 0,
        stackBytes: u?.stackBytes ?? 0,
        classes: fn ? classHistogram(fn) : {},
        occupancy: occ ? { blockSize, occupancy: occ.occupancy, limiter: occ.limiter } : null,
      };
    });
  }

  /** The file as written plus, to measure effective unroll, the same file with every loop rolled. */
  async inspectFile(
    file: string,
    text: string,
    analysis: FileAnalysis,
    opts: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void } = {},
  ): Promise<FileSassReport> {
    const loops = analysis.kernels.flatMap(k => k.loops);
    const rolled: VariantFactors = new Map(loops.map(l => [l.line, 1]));
    const reqs: BuildRequest[] = [{ key: 'as-written', source: variantSource(text, analysis, new Map(), file), originalPath: file }];
    if (loops.length) reqs.push({ key: 'all-rolled', source: variantSource(text, analysis, rolled, file), originalPath: file });
    const [asWritten, allRolled] = await this.o.builder.buildAll(reqs, {
      signal: opts.signal,
      onProgress: p => opts.onProgress?.(p.done, p.total),
    });
    const report: FileSassReport = {
      arch: this.o.arch,
      nvcc: this.t.nvcc.version,
      status: asWritten.status,
      kernels: [],
      failure: null,
      loops: [],
      cached: asWritten.cached && (allRolled?.cached ?? true),
      disassembler: 'elf',
    };
    if (asWritten.status !== 'ok' || !asWritten.outputPath) {
      report.failure = { kind: asWritten.failureKind ?? 'internal', messages: asWritten.messages };
      return report;
    }
    const dis = await this.disassemble(asWritten.outputPath, opts.signal);
    report.disassembler = dis.source;
    report.limitation = loops.length ? this.limitation(dis.source, dis.failure) : null;
    report.kernels = await this.kernelsOf(asWritten, dis, analysis);
    const base = allRolled?.status === 'ok' && allRolled.outputPath ? await this.disassemble(allRolled.outputPath, opts.signal) : null;
    const demangled = dis.listing
      ? await demangle(
          dis.listing.functions.map(f => f.name),
          this.t,
        )
      : new Map<string, string>();
    for (const k of analysis.kernels) {
      for (const loop of k.loops) {
        const m = dis.listing ? measureLoop(dis.listing, base?.listing ?? null, file, k, loop) : null;
        const each = dis.listing ? measureInstantiations(dis.listing, base?.listing ?? null, file, k, loop, demangled) : [];
        report.loops.push({
          line: loop.line,
          kernel: m?.kernel ?? null,
          loopInstructions: m?.loopInstructions ?? null,
          effectiveUnroll: m?.effectiveUnroll ?? null,
          fullyUnrolled: m?.fullyUnrolled ?? false,
          icache: m?.icache ?? null,
          ...(each.length > 1 ? { instantiations: each } : {}),
        });
      }
    }
    return report;
  }

  /** Variants of one loop: each factor with every other loop as written, plus a rolled baseline. */
  async inspectLoop(
    file: string,
    text: string,
    analysis: FileAnalysis,
    line: number,
    factors: UnrollFactor[],
    opts: { signal?: AbortSignal; onProgress?: (done: number, total: number, key: string) => void; kernel?: string } = {},
  ): Promise<LoopReport> {
    const kernel = analysis.kernels.find(k => k.loops.some(l => l.line === line));
    const loop = kernel?.loops.find(l => l.line === line);
    if (!kernel || !loop) throw new Error(`no loop at line ${line} in device code of ${file}`);
    const variants = await this.inspectVariants(
      file,
      text,
      analysis,
      line,
      factors.map(f => new Map([[line, f]])),
      opts,
    );
    const tu = this.o.builder.translationUnit;
    if (
      tu &&
      variants.some(v => v.status === 'ok') &&
      variants.every(v => v.status !== 'ok' || (v.kernel === null && v.loopInstructions === null))
    ) {
      // A header's function exists in the cubin only where the unit calls (instantiates) it.
      throw new NotInstantiatedError(
        `the translation unit ${tu} does not instantiate ${kernel.name} (${path.basename(file)}:${line}): its SASS holds no code of this loop. Choose a translation unit that calls ${kernel.name}.`,
      );
    }
    return {
      line,
      kernel: kernel.name,
      instantiation: this.lastInstantiation,
      written: writtenFactor(loop),
      arch: this.o.arch,
      variants,
      notes: explainVariants(variants, loop),
      limitation: this.limitation(this.lastDisassembler, this.lastDisassemblyFailure),
    };
  }

  /**
   * Why a loop's own columns (loop instructions, nvcc's unroll) are empty when the SASS did not
   * come from nvdisasm: its line table is what maps machine code to source loops. Names the
   * missing tool, where the kernel counts came from instead, and how to get nvdisasm.
   */
  limitation(source: Disassembly['source'], failure?: string): string | null {
    if (source === 'nvdisasm') return null;
    const counts = source === 'cuobjdump' ? 'kernel counts come from cuobjdump' : 'kernel counts come from the cubin';
    if (!this.t.nvdisasm)
      return (
        `nvdisasm not found: loop instructions and nvcc's unroll need its line table and are unknown here (${counts}). ` +
        'Install the CUDA Toolkit, run `npm run setup:cuda-tools` in the Unroll Lens folder, or set unrollLens.toolchain.nvdisasmPath.'
      );
    if (failure && /cannot decode architecture/i.test(failure))
      return (
        `nvdisasm ${this.t.nvdisasm.version ?? ''} (${this.t.nvdisasm.path}) cannot read ${this.o.arch} code ("${failure}"): ` +
        `loop instructions and nvcc's unroll for ${this.o.arch} are unknown (${counts}). ` +
        "Put the nvdisasm of a CUDA Toolkit that knows this architecture (nvcc's own) first on PATH, or set unrollLens.toolchain.nvdisasmPath."
      );
    return `nvdisasm (${this.t.nvdisasm.path}) gave no listing (${failure ?? 'it failed or timed out'}): loop instructions and nvcc's unroll are unknown (${counts}).`;
  }

  private lastDisassembler: Disassembly['source'] = 'elf';
  private lastInstantiation: LoopReport['instantiation'] = null;
  private lastDisassemblyFailure: string | undefined;

  /** Kernels of the file as written whose code holds the loop's lines, most of them first. */
  async kernelsHoldingLoop(
    file: string,
    text: string,
    analysis: FileAnalysis,
    line: number,
    opts: { signal?: AbortSignal } = {},
  ): Promise<{ name: string; demangled: string; instructions: number }[]> {
    const kernel = analysis.kernels.find(k => k.loops.some(l => l.line === line));
    const loop = kernel?.loops.find(l => l.line === line);
    if (!kernel || !loop) return [];
    const [b] = await this.o.builder.buildAll(
      [{ key: 'as-written', source: variantSource(text, analysis, new Map(), file), originalPath: file }],
      { signal: opts.signal },
    );
    if (b.status !== 'ok' || !b.outputPath) return [];
    const dis = await this.disassemble(b.outputPath, opts.signal);
    const demangled = await demangle([...dis.sizes.keys()], this.t);
    if (!dis.listing) {
      const name = pickKernelByName(dis, kernel.name, demangled);
      return name ? [{ name, demangled: demangled.get(name) ?? name, instructions: 0 }] : [];
    }
    return dis.listing.functions
      .map(fn => ({
        name: fn.name,
        demangled: demangled.get(fn.name) ?? fn.name,
        instructions: fn.instructions.filter(ins => lineIn(ins, file, loop.span.line, loop.span.endLine)).length,
      }))
      .filter(k => k.instructions > 0)
      .sort((a, b2) => b2.instructions - a.instructions || a.name.localeCompare(b2.name));
  }

  /**
   * Builds arbitrary variants (loop line → factor maps) and measures the loop at `line` in each.
   * A rolled build of that loop is added when none is given, as the effective-unroll baseline.
   * `factor` of each result is the focus loop's factor.
   */
  async inspectVariants(
    file: string,
    text: string,
    analysis: FileAnalysis,
    line: number,
    specs: VariantFactors[],
    opts: { signal?: AbortSignal; onProgress?: (done: number, total: number, key: string) => void; kernel?: string } = {},
  ): Promise<LoopVariant[]> {
    const kernel = analysis.kernels.find(k => k.loops.some(l => l.line === line));
    const loop = kernel?.loops.find(l => l.line === line);
    if (!kernel || !loop) throw new Error(`no loop at line ${line} in device code of ${file}`);
    const rolledKey = variantKey(new Map([[line, 1]]));
    let baselineIdx = specs.findIndex(f => variantKey(f) === rolledKey);
    const all = baselineIdx === -1 ? [...specs, new Map<number, UnrollFactor>([[line, 1]])] : specs;
    if (baselineIdx === -1) baselineIdx = all.length - 1;
    const reqs: BuildRequest[] = all.map(vf => ({
      key: variantKey(vf),
      source: variantSource(text, analysis, vf, file),
      originalPath: file,
    }));
    // Disassemble each cubin as soon as it is built, overlapping the remaining compiles.
    const pending: Promise<Disassembly | null>[] = all.map(() => Promise.resolve(null));
    const builds = await this.o.builder.buildAll(reqs, {
      signal: opts.signal,
      onProgress: p => opts.onProgress?.(p.done, p.total, p.key),
      onResult: (i, b) => {
        if (b.status === 'ok' && b.outputPath) pending[i] = this.disassemble(b.outputPath, opts.signal);
      },
    });
    const disassemblies = await Promise.all(pending);
    this.lastDisassembler = disassemblies.find(d => d)?.source ?? 'elf';
    this.lastDisassemblyFailure = disassemblies.find(d => d?.failure)?.failure;
    const baseline = disassemblies[baselineIdx]?.listing ?? null;
    const demangled = await demangle([...new Set(disassemblies.flatMap(d => (d ? [...d.sizes.keys()] : [])))], this.t);
    // One function for every row: the instantiation holding most of the loop's code over all the
    // variants (among those --kernel names), so that no row measures another instantiation than the rest.
    const listings = disassemblies.flatMap(d => (d?.listing ? [d.listing] : []));
    const fixed = busiestFunction(listings, file, loop, opts.kernel, demangled);
    const filter = fixed?.name ?? opts.kernel;
    this.lastInstantiation = fixed ? { name: fixed.name, demangled: demangled.get(fixed.name) ?? fixed.name, of: fixed.of } : null;
    const variants: LoopVariant[] = [];
    const codeHashes: (string | null)[] = [];
    for (let i = 0; i < specs.length; i++) {
      const b = builds[i];
      const dis = disassemblies[i];
      const v: LoopVariant = {
        factor: specs[i].get(line) ?? 'default',
        key: b.key,
        status: b.status,
        kernel: null,
        kernelInstructions: null,
        kernelBytes: null,
        loopInstructions: null,
        effectiveUnroll: null,
        fullyUnrolled: false,
        registers: null,
        spillStores: null,
        spillLoads: null,
        identicalTo: null,
        cached: b.cached,
        compileMs: b.compileMs,
        failure: b.status === 'ok' ? null : { kind: b.failureKind ?? 'internal', messages: b.messages },
      };
      codeHashes.push(null);
      if (b.status === 'ok' && b.outputPath) v.machineCode = machineCodeHash(b.outputPath);
      if (dis) {
        v.kernelSizes = Object.fromEntries([...dis.sizes].map(([n, sz]) => [n, sz.instructions]));
        const m = dis.listing ? measureLoop(dis.listing, baseline, file, kernel, loop, filter, demangled) : null;
        const kname = m?.kernel ?? pickKernelByName(dis, kernel.name, demangled, filter);
        v.kernel = kname;
        if (kname) {
          const usage: PtxasFunctionUsage | undefined = parsePtxasVerbose(b.ptxasLog, { arch: this.o.arch }).get(kname);
          const fn = dis.listing?.functions.find(f => f.name === kname);
          const size = dis.sizes.get(kname);
          v.kernelInstructions = fn ? fn.instructions.length : (size?.instructions ?? null);
          v.kernelBytes = fn ? fn.bytes : (size?.bytes ?? null);
          v.registers = usage?.registers ?? null;
          v.spillStores = usage?.spillStoreBytes ?? null;
          v.spillLoads = usage?.spillLoadBytes ?? null;
          if (usage) {
            const occ = theoreticalOccupancy({
              registersPerThread: usage.registers,
              sharedBytesPerBlock: usage.sharedBytes,
              threadsPerBlock: launchBlockSize(analysis, demangled.get(kname) ?? kname),
              arch: this.o.arch,
            });
            v.warpsPerSm = occ?.activeWarpsPerSM ?? null;
          }
          codeHashes[i] = fn ? codeHash(fn) : hashFile(b.outputPath!, kname);
        }
        if (m) {
          v.loopInstructions = m.loopInstructions;
          v.effectiveUnroll = m.effectiveUnroll;
          v.fullyUnrolled = m.fullyUnrolled;
          v.remainder = m.remainder;
          v.icache = m.icache;
        }
      }
      const same = codeHashes.findIndex((h, j) => j < i && h !== null && h === codeHashes[i]);
      if (same !== -1) v.identicalTo = specs[same].get(line) ?? 'default';
      variants.push(v);
    }
    return variants;
  }

  /**
   * Variants of one kernel with several loops' factors set at once (a sweep point), measuring
   * every listed loop in each. A build with all listed loops rolled is added as the
   * effective-unroll baseline unless one is given. `defines` only informs the occupancy estimate
   * (a `__launch_bounds__` macro); the builder carries the -D flags themselves.
   * `onMeasured` fires as each variant is measured (any order), so callers can stream results.
   */
  async inspectKernelVariants(
    file: string,
    text: string,
    analysis: FileAnalysis,
    kernelName: string,
    lines: number[],
    specs: VariantFactors[],
    opts: {
      signal?: AbortSignal;
      kernel?: KernelFilter;
      /**
       * The function (mangled) every variant measures, chosen before (a sweep's first builds): kept
       * wherever the rolled build holds it. Otherwise the function holding most of the loops' code
       * over every build of this call (the rule of `sass --loop`), the same for every variant.
       */
      instantiation?: string;
      /** The function chosen for this call's variants, once known (before any onMeasured). */
      onInstantiation?: (choice: InstantiationChoice) => void;
      defines?: Record<string, string>;
      onProgress?: (done: number, total: number, key: string, cached: boolean) => void;
      onMeasured?: (index: number, variant: KernelVariant) => void;
    } = {},
  ): Promise<KernelVariant[]> {
    const kernel = analysis.kernels.find(k => k.name === kernelName && lines.every(l => k.loops.some(x => x.line === l)));
    if (!kernel) throw new Error(`no kernel ${kernelName} holding loops at lines ${lines.join(', ')} in ${file}`);
    const loops = lines.map(l => kernel.loops.find(x => x.line === l)!);
    const rolled: VariantFactors = new Map(lines.map(l => [l, 1]));
    const rolledKey = variantKey(rolled);
    let baselineIdx = specs.findIndex(f => variantKey(f) === rolledKey);
    const all = baselineIdx === -1 ? [...specs, rolled] : specs;
    if (baselineIdx === -1) baselineIdx = all.length - 1;
    const reqs: BuildRequest[] = all.map(vf => ({
      key: variantKey(vf),
      source: variantSource(text, analysis, vf, file),
      originalPath: file,
    }));
    const disassembled: Promise<Disassembly | null>[] = all.map(() => Promise.resolve(null));
    const built: Promise<BuildResult>[] = [];
    const settle: ((b: BuildResult) => void)[] = [];
    for (let i = 0; i < all.length; i++) built.push(new Promise<BuildResult>(r => settle.push(r)));
    // A build's disassembly once it exists (onResult replaces the placeholder before settling).
    const disassemblyOf = async (i: number) => (await built[i], await disassembled[i]);
    const choice = this.chooseInstantiation(file, kernel, loops, all.length, baselineIdx, disassemblyOf, opts);
    choice.then(c => c && opts.onInstantiation?.(c)).catch(() => undefined); // a failed build run rejects through `results` too
    const results: Promise<KernelVariant>[] = specs.map((_, i) =>
      (async () => {
        const b = await built[i];
        const dis = await disassembled[i];
        const base = (await disassemblyOf(baselineIdx))?.listing ?? null;
        const chosen = await choice;
        const v = await this.measureKernelVariant(file, analysis, kernel, loops, b, dis, base, chosen, opts);
        opts.onMeasured?.(i, v);
        return v;
      })(),
    );
    const buildAll = this.o.builder.buildAll(reqs, {
      signal: opts.signal,
      onProgress: p => opts.onProgress?.(p.done, p.total, p.key, p.cached),
      onResult: (i, b) => {
        // Disassemble as soon as each cubin exists, overlapping the remaining compiles.
        if (b.status === 'ok' && b.outputPath) disassembled[i] = this.disassemble(b.outputPath, opts.signal).catch(() => null);
        settle[i](b);
      },
    });
    await buildAll;
    const variants = await Promise.all(results);
    const done = await Promise.all(disassembled);
    this.lastDisassembler = done.find(d => d)?.source ?? this.lastDisassembler;
    if (done.some(d => d)) this.lastDisassemblyFailure = done.find(d => d?.failure)?.failure;
    return variants;
  }

  /**
   * The one function every variant of a kernel sweep measures: `opts.instantiation` when the
   * rolled build holds it (variants then stream as they finish); otherwise, once every build is
   * disassembled, the one holding most of the loops' code over them (as `sass --loop` chooses).
   * `of`: how many functions (the filter allows) hold some of that code.
   */
  private async chooseInstantiation(
    file: string,
    kernel: Kernel,
    loops: Loop[],
    count: number,
    baselineIdx: number,
    disassemblyOf: (i: number) => Promise<Disassembly | null>,
    opts: { kernel?: KernelFilter; instantiation?: string },
  ): Promise<InstantiationChoice | null> {
    const holders = (listings: SassListing[], demangled: Map<string, string>) =>
      new Set(
        listings.flatMap(l =>
          l.functions
            .filter(
              fn =>
                matchesFilter(opts.kernel, fn.name, demangled.get(fn.name)) &&
                fn.instructions.some(ins => loops.some(x => lineIn(ins, file, x.span.line, x.span.endLine))),
            )
            .map(fn => fn.name),
        ),
      ).size;
    const base = await disassemblyOf(baselineIdx);
    if (opts.instantiation && base?.sizes.has(opts.instantiation)) {
      const demangled = await demangle([...base.sizes.keys()], this.t);
      const name = opts.instantiation;
      return {
        name,
        demangled: demangled.get(name) ?? name,
        of: base.listing ? Math.max(1, holders([base.listing], demangled)) : 1,
        pinned: true,
      };
    }
    const every = await Promise.all(Array.from({ length: count }, (_, i) => disassemblyOf(i)));
    const present = every.filter((d): d is Disassembly => d !== null);
    if (!present.length) return null;
    const demangled = await demangle([...new Set(present.flatMap(d => [...d.sizes.keys()]))], this.t);
    const listings = present.flatMap(d => (d.listing ? [d.listing] : []));
    const best = listings.length ? busiestFunction(listings, file, loops, opts.kernel, demangled) : null;
    const name = best?.name ?? pickKernelByName(present[0], kernel.name, demangled, opts.kernel);
    if (!name) return null;
    return { name, demangled: demangled.get(name) ?? name, of: best?.of ?? 1, pinned: false };
  }

  private async measureKernelVariant(
    file: string,
    analysis: FileAnalysis,
    kernel: Kernel,
    loops: Loop[],
    b: BuildResult,
    dis: Disassembly | null,
    baseline: SassListing | null,
    chosen: InstantiationChoice | null,
    opts: { kernel?: KernelFilter; defines?: Record<string, string> },
  ): Promise<KernelVariant> {
    const v: KernelVariant = {
      key: b.key,
      status: b.status,
      kernel: null,
      demangled: null,
      instantiations: null,
      kernelInstructions: null,
      kernelBytes: null,
      registers: null,
      spillStores: null,
      spillLoads: null,
      occupancy: null,
      loops: {},
      codeHash: null,
      cached: b.cached,
      compileMs: b.compileMs,
      failure: b.status === 'ok' ? null : { kind: b.failureKind ?? 'internal', messages: b.messages },
    };
    if (!dis) return v;
    const demangled = await demangle([...dis.sizes.keys()], this.t);
    // Every variant measures the one function chosen for them all; a cubin without it measures nothing.
    const name = chosen && dis.sizes.has(chosen.name) ? chosen.name : null;
    v.kernel = name;
    if (!name) {
      v.functions = [...dis.sizes.keys()].map(n => demangled.get(n) ?? n);
      return v;
    }
    v.demangled = demangled.get(name) ?? chosen!.demangled;
    v.instantiations = chosen!.of;
    const usage = parsePtxasVerbose(b.ptxasLog, { arch: this.o.arch }).get(name);
    const fn = dis.listing?.functions.find(f => f.name === name);
    const size = dis.sizes.get(name);
    v.kernelInstructions = fn ? fn.instructions.length : (size?.instructions ?? null);
    v.kernelBytes = fn ? fn.bytes : (size?.bytes ?? null);
    v.registers = usage?.registers ?? null;
    v.spillStores = usage?.spillStoreBytes ?? null;
    v.spillLoads = usage?.spillLoadBytes ?? null;
    if (usage) {
      const occ = theoreticalOccupancy({
        registersPerThread: usage.registers,
        sharedBytesPerBlock: usage.sharedBytes,
        arch: this.o.arch,
        threadsPerBlock: launchBlockSize(analysis, demangled.get(name) ?? name, opts.defines),
      });
      v.occupancy = occ?.occupancy ?? null;
    }
    v.codeHash = fn ? codeHash(fn) : hashFile(b.outputPath!, name);
    for (const loop of loops) {
      const m = dis.listing ? measureLoop(dis.listing, baseline, file, kernel, loop, name, demangled) : null;
      v.loops[String(loop.line)] = {
        loopInstructions: m?.loopInstructions ?? null,
        effectiveUnroll: m?.effectiveUnroll ?? null,
        fullyUnrolled: m?.fullyUnrolled ?? false,
        icache: m?.icache ?? null,
      };
    }
    return v;
  }

  /**
   * The annotated SASS listing of one variant of the loop at `line`: the kernel holding most of
   * the loop's code, grouped by source line, with the loop's machine-code pieces. The rolled
   * build is the per-iteration baseline of each piece's unroll. Needs nvdisasm (its line table).
   */
  async listing(
    file: string,
    text: string,
    analysis: FileAnalysis,
    line: number,
    factor: UnrollFactor | 'as-written',
    opts: { signal?: AbortSignal; kernel?: KernelFilter; onProgress?: (done: number, total: number, key: string) => void } = {},
  ): Promise<SassListingData> {
    const kernel = analysis.kernels.find(k => k.loops.some(l => l.line === line));
    const loop = kernel?.loops.find(l => l.line === line);
    if (!kernel || !loop) throw new ListingError(`no loop in device code at line ${line} of ${path.basename(file)}`);
    const specs: VariantFactors[] = [factor === 'as-written' ? new Map() : new Map([[line, factor]])];
    if (factor !== 1) specs.push(new Map([[line, 1]]));
    const reqs: BuildRequest[] = specs.map(vf => ({
      key: variantKey(vf),
      source: variantSource(text, analysis, vf, file),
      originalPath: file,
    }));
    const builds = await this.o.builder.buildAll(reqs, {
      signal: opts.signal,
      onProgress: p => opts.onProgress?.(p.done, p.total, p.key),
    });
    const b = builds[0];
    if (b.status !== 'ok' || !b.outputPath) {
      const msg = b.messages
        .filter(m => m.severity === 'error')
        .map(m => `${m.file ? `${path.basename(m.file)}:${m.line ?? ''}: ` : ''}${m.message.split('\n')[0]}`);
      throw new ListingError(
        `the ${factor === 'as-written' ? 'file as written' : factorLabel(factor)} build ${b.status === 'failed' ? 'does not compile' : b.status === 'timeout' ? 'timed out' : 'was ' + b.status}${msg.length ? `: ${msg.slice(0, 3).join('; ')}` : ''}`,
        b.status === 'cancelled',
      );
    }
    const dis = await this.disassemble(b.outputPath, opts.signal);
    if (dis.source !== 'nvdisasm' || !dis.listing)
      throw new ListingError(this.limitation(dis.source, dis.failure) ?? 'no nvdisasm listing');
    const base = builds[1]?.status === 'ok' && builds[1].outputPath ? await this.disassemble(builds[1].outputPath, opts.signal) : dis;
    const demangled = await demangle([...dis.sizes.keys()], this.t);
    const fn = chooseFunction(dis.listing, file, kernel, loop, opts.kernel, demangled);
    if (!fn) {
      const names = dis.listing.functions.map(f => demangled.get(f.name) ?? f.name);
      throw new ListingError(
        `no machine code of the loop at line ${line} in the cubin${opts.kernel ? ` (kernel filter ${typeof opts.kernel === 'string' ? opts.kernel : 'given'})` : ''}; its functions: ${names.join('; ') || 'none'}`,
      );
    }
    const baseFn = base.listing?.functions.find(f => f.name === fn.name) ?? null;
    const usage = parsePtxasVerbose(b.ptxasLog, { arch: this.o.arch }).get(fn.name);
    return annotateListing(fn, baseFn, {
      file,
      kernel,
      loop,
      arch: this.o.arch,
      nvcc: this.t.nvcc.version,
      factor: String(factor),
      demangled: demangled.get(fn.name) ?? fn.name,
      registers: usage?.registers ?? null,
    });
  }

  /** Which disassembler the last measurement used (effective unroll needs nvdisasm's line info). */
  get disassembler(): FileSassReport['disassembler'] {
    return this.lastDisassembler;
  }
}

/** The function every variant of a kernel sweep measures, and how many hold the loops' code. */
export interface InstantiationChoice {
  name: string;
  demangled: string;
  of: number;
  /** Kept from an earlier choice (a sweep's first builds) rather than chosen from this call's builds. */
  pinned: boolean;
}

/** One loop's measurement inside a variant (see measureLoop). */
export interface LoopMeasurement {
  loopInstructions: number | null;
  effectiveUnroll: number | null;
  fullyUnrolled: boolean;
  icache?: IcacheLoopFacts | null;
}

/** A variant of a whole kernel: several loops' factors at once, every listed loop measured. */
export interface KernelVariant {
  key: string;
  status: BuildResult['status'];
  /** Mangled name of the function measured: the same for every variant of one call (see chooseInstantiation). */
  kernel: string | null;
  /** Its demangled name (template arguments): the instantiation the row measured. */
  demangled: string | null;
  /** How many functions hold some of the loops' code (several: template instantiations). */
  instantiations: number | null;
  kernelInstructions: number | null;
  kernelBytes: number | null;
  registers: number | null;
  spillStores: number | null;
  spillLoads: number | null;
  /** Theoretical occupancy (0..1) at the launch-bounds block size (else 256). */
  occupancy: number | null;
  /** Loop line → measurement; empty when the build failed. */
  loops: Record<string, LoopMeasurement>;
  /** When no function matched: the cubin's functions, demangled (what could have been measured). */
  functions?: string[];
  /** Hash of the kernel's machine code: equal hashes mean identical code. */
  codeHash: string | null;
  cached: boolean;
  compileMs: number;
  failure: VariantFailure | null;
}

/**
 * The source name of a function from its demangled name: `void hot_loop<2048>(…)` → hot_loop,
 * `ns::k(float*)` → k (a template's demangled name starts with its return type).
 */
export function sourceNameOf(demangled: string): string {
  return demangled.replace(/\(.*$/, '').replace(/<.*$/, '').split('::').pop()?.trim().split(/\s+/).pop() ?? '';
}

/** A mangled name (c++filt missing) holds the source name as <length><name>: _Z8hot_loopILi2048EEvPKmPmi. */
function mangledHolds(mangled: string, source: string): boolean {
  return mangled.startsWith('_Z') && new RegExp(`(?<!\\d)${source.length}${source.replace(/[^\w]/g, '\\$&')}`).test(mangled.slice(2));
}

function launchBlockSize(analysis: FileAnalysis, demangled: string, defines: Record<string, string> = {}): number {
  const base = sourceNameOf(demangled);
  const k = analysis.kernels.find(x => x.name === base);
  const lb = k?.launchBounds?.[0]?.trim();
  // `__launch_bounds__(BLOCK)` with BLOCK swept as a -D macro: the block size is that value.
  const n = lb ? Number(defines[lb] ?? lb) : NaN;
  return Number.isFinite(n) && n > 0 ? n : 256;
}

function codeHash(fn: SassFunction): string {
  const h = crypto.createHash('sha1');
  // nvdisasm numbers branch labels (.L_x_12) across the whole cubin: renumbered per function in
  // order of use, so the same code in two functions (template instantiations) hashes the same.
  const labels = new Map<string, string>();
  const label = (l: string) => labels.get(l) ?? (labels.set(l, `.L${labels.size}`), labels.get(l)!);
  for (const ins of fn.instructions) {
    const operands = ins.operands.replace(/\.L_x_\d+/g, label);
    h.update(`${ins.predicate ?? ''} ${ins.opcode}.${ins.modifiers.join('.')} ${operands}\n`);
  }
  return h.digest('hex');
}

/** Every code section of the cubin, by kernel name: the same hash means the same machine code throughout. */
function machineCodeHash(cubin: string): string | null {
  try {
    const buf = fs.readFileSync(cubin);
    const h = crypto.createHash('sha256');
    const sections = [...readCubin(buf).textSections].sort((a, b) => (a.kernel < b.kernel ? -1 : a.kernel > b.kernel ? 1 : 0));
    for (const s of sections) h.update(`${s.kernel}\0`).update(buf.subarray(s.offset, s.offset + s.size));
    return sections.length ? h.digest('hex') : null;
  } catch {
    return null;
  }
}

/** Without a disassembler: the kernel's machine code bytes from the cubin. */
function hashFile(outputPath: string, kernel: string): string | null {
  const buf = fs.readFileSync(outputPath);
  const s = readCubin(buf).textSections.find(x => x.kernel === kernel);
  return s
    ? crypto
        .createHash('sha1')
        .update(buf.subarray(s.offset, s.offset + s.size))
        .digest('hex')
    : null;
}

/**
 * Which function to measure: a mangled name or demangled substring, or a test of the mangled and
 * demangled names (a sweep's template axis picks one instantiation).
 */
export type KernelFilter = string | ((mangled: string, demangled: string) => boolean);

function matchesFilter(filter: KernelFilter | undefined, name: string, demangled: string | undefined): boolean {
  if (!filter) return true;
  if (typeof filter === 'function') return filter(name, demangled ?? name);
  return name === filter || (demangled ?? '').includes(filter);
}

function pickKernelByName(dis: Disassembly, source: string, demangled: Map<string, string>, filter?: KernelFilter): string | null {
  const names = [...dis.sizes.keys()].filter(n => {
    const d = demangled.get(n) ?? n;
    const named = d === n ? mangledHolds(n, source) || n === source : sourceNameOf(d) === source;
    return named && matchesFilter(filter, n, d);
  });
  return names.sort()[0] ?? null;
}

/**
 * The function holding most instructions of the loop's lines summed over the listings (ties: the
 * first name), among those the filter accepts; `of`: how many functions hold some of them.
 */
function busiestFunction(
  listings: SassListing[],
  file: string,
  loop: Loop | Loop[],
  filter: KernelFilter | undefined,
  demangled: Map<string, string>,
): { name: string; of: number } | null {
  const loops = Array.isArray(loop) ? loop : [loop];
  const total = new Map<string, number>();
  for (const l of listings)
    for (const fn of l.functions) {
      if (!matchesFilter(filter, fn.name, demangled.get(fn.name))) continue;
      const n = fn.instructions.filter(ins => loops.some(x => lineIn(ins, file, x.span.line, x.span.endLine))).length;
      if (n > 0) total.set(fn.name, (total.get(fn.name) ?? 0) + n);
    }
  const best = [...total].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
  return best ? { name: best[0], of: total.size } : null;
}

// ---------------------------------------------------------------------------------------------
// Attribution of machine code to a source loop

export function sameFile(a: string, b: string): boolean {
  return a === b || path.resolve(a) === path.resolve(b);
}

/** Does any frame of the instruction's location (own line or call sites) fall in [from, to] of file? */
export function lineIn(ins: SassInstruction, file: string, from: number, to: number, exclude?: (line: number) => boolean): boolean {
  const s = ins.source;
  if (!s) return false;
  const frames = [{ file: s.file, line: s.line }, ...(s.inlinedAt ?? [])];
  for (const f of frames) {
    if (f.line >= from && f.line <= to && sameFile(f.file, file)) return !(exclude && exclude(f.line));
  }
  return false;
}

interface LoopMeasure {
  kernel: string;
  loopInstructions: number;
  effectiveUnroll: number | null;
  fullyUnrolled: boolean;
  remainder: AppliedUnroll['remainder'];
  icache: IcacheLoopFacts | null;
}

/**
 * The machine code the instruction cache must hold while the loop runs: the hottest machine-code
 * loop of its work, or (unrolled completely) the innermost machine-code loop around most of its
 * instructions. Null when the loop's code runs once (no loop repeats it: nothing to re-fetch).
 */
export function hotCodeFacts(fn: SassFunction, file: string, loop: Loop, hot: SassLoop | null): IcacheLoopFacts | null {
  let chosen = hot;
  if (!chosen) {
    const mine = fn.instructions.filter(ins => lineIn(ins, file, loop.span.line, loop.span.endLine));
    if (!mine.length) return null;
    let bestCount = 0;
    for (const l of findSassLoops(fn)) {
      if (!l.natural) continue;
      const n = mine.filter(ins => ins.address >= l.headAddress && ins.address <= l.branchAddress).length;
      // Most of the loop's instructions; on a tie the inner (smaller) loop.
      if (n * 2 > mine.length && (n > bestCount || (n === bestCount && chosen && l.instructions < chosen.instructions))) {
        chosen = l;
        bestCount = n;
      }
    }
  }
  if (!chosen) return null;
  const code = fn.instructions.filter(ins => ins.address >= chosen!.headAddress && ins.address <= chosen!.branchAddress);
  return { bytes: chosen.branchAddress - chosen.headAddress + 16, issue: issueProfile(code) };
}

/** Lines of the loop that belong to it and not to a nested loop (header and own statements). */
export function ownLineFilter(kernel: Kernel, loop: Loop): (line: number) => boolean {
  const nested = kernel.loops.filter(
    l => l !== loop && l.span.line >= loop.span.line && l.span.endLine <= loop.span.endLine && l.line !== loop.line,
  );
  return line => nested.some(n => line >= n.span.line && line <= n.span.endLine);
}

/** Work-instruction counts per opcode inside [head, branch] attributed to the loop's own lines. */
export function workCounts(
  fn: SassFunction,
  range: SassLoop | null,
  file: string,
  loop: Loop,
  exclude: (line: number) => boolean,
  classes = WORK_CLASSES,
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const ins of fn.instructions) {
    if (range && (ins.address < range.headAddress || ins.address > range.branchAddress)) continue;
    if (!lineIn(ins, file, loop.span.line, loop.span.endLine, exclude)) continue;
    if (!classes.has(classifyInstruction(ins))) continue;
    const key = `${ins.opcode}.${ins.modifiers.join('.')}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Does the machine-code loop hold instructions of `loop`'s own lines (not its nested loops')? */
export function containsOwnLines(fn: SassFunction, range: SassLoop, file: string, kernel: Kernel, loop: Loop): boolean {
  const exclude = ownLineFilter(kernel, loop);
  return fn.instructions.some(
    ins =>
      ins.address >= range.headAddress &&
      ins.address <= range.branchAddress &&
      lineIn(ins, file, loop.span.line, loop.span.endLine, exclude),
  );
}

/** The machine-code loop holding most of the source loop's own work: the hot (main) loop. */
export function hottestLoop(
  fn: SassFunction,
  file: string,
  loop: Loop,
  exclude: (line: number) => boolean,
  classes: Set<string>,
): { sassLoop: SassLoop; work: number } | null {
  let best: { sassLoop: SassLoop; work: number } | null = null;
  for (const l of findSassLoops(fn)) {
    if (!l.natural) continue;
    let work = 0;
    for (const c of workCounts(fn, l, file, loop, exclude, classes).values()) work += c;
    if (work === 0) continue;
    // Prefer more work; on a tie the inner (smaller) loop, which is the one that repeats.
    if (!best || work > best.work || (work === best.work && l.instructions < best.sassLoop.instructions)) best = { sassLoop: l, work };
  }
  return best;
}

export function chooseFunction(
  listing: SassListing,
  file: string,
  kernel: Kernel,
  loop: Loop,
  filter?: KernelFilter,
  demangled?: Map<string, string>,
): SassFunction | null {
  let best: { fn: SassFunction; n: number } | null = null;
  void kernel;
  for (const fn of listing.functions) {
    if (!matchesFilter(filter, fn.name, demangled?.get(fn.name))) continue;
    let n = 0;
    for (const ins of fn.instructions) if (lineIn(ins, file, loop.span.line, loop.span.endLine)) n++;
    if (n > 0 && (!best || n > best.n || (n === best.n && fn.name < best.fn.name))) best = { fn, n };
  }
  return best?.fn ?? null;
}

/**
 * Source iterations in a stretch of machine code: per opcode one rolled iteration executes, the
 * stretch's count over the iteration's, median over those opcodes (the median resists address
 * arithmetic that unrolling folds away). 0 when `perIteration` is empty.
 */
export function iterationsPerPass(perIteration: Map<string, number>, counts: Map<string, number>): number {
  const ratios: number[] = [];
  for (const [op, n] of perIteration) ratios.push((counts.get(op) ?? 0) / n);
  if (!ratios.length) return 0;
  ratios.sort((a, b) => a - b);
  const h = ratios.length >> 1;
  return ratios.length % 2 ? ratios[h] : (ratios[h - 1] + ratios[h]) / 2;
}

/**
 * Applied unroll from the machine code's loop structure (appliedUnroll.ts): the source loop's own
 * machine loops (by their back edges), the copies of one iteration in the main one against the
 * rolled build, the remainder beside it; no machine loop left: unrolled completely, its trip count.
 */
export function measureLoop(
  listing: SassListing,
  baseline: SassListing | null,
  file: string,
  kernel: Kernel,
  loop: Loop,
  filter?: KernelFilter,
  demangled?: Map<string, string>,
): LoopMeasure | null {
  const fn = chooseFunction(listing, file, kernel, loop, filter, demangled);
  if (!fn) return null;
  const baseFn = baseline?.functions.find(f => f.name === fn.name) ?? null;
  const a = appliedUnroll(fn, baseFn, file, kernel, loop, demangled?.get(fn.name));
  return {
    kernel: fn.name,
    loopInstructions: a.instructions,
    effectiveUnroll: a.copies,
    fullyUnrolled: a.fullyUnrolled,
    remainder: a.remainder,
    icache: hotCodeFacts(fn, file, loop, a.loops[0] ?? null),
  };
}

/**
 * The loop measured in every function whose code holds it (template instantiations), most of
 * the loop's instructions first (ties: by name, as chooseFunction breaks them).
 */
export function measureInstantiations(
  listing: SassListing,
  baseline: SassListing | null,
  file: string,
  kernel: Kernel,
  loop: Loop,
  demangled: Map<string, string>,
): LoopInstantiation[] {
  const out: { n: number; x: LoopInstantiation }[] = [];
  for (const fn of listing.functions) {
    const n = fn.instructions.filter(ins => lineIn(ins, file, loop.span.line, loop.span.endLine)).length;
    if (!n) continue;
    const m = measureLoop(listing, baseline, file, kernel, loop, fn.name, demangled);
    if (!m) continue;
    const x = {
      name: fn.name,
      demangled: demangled.get(fn.name) ?? fn.name,
      loopInstructions: m.loopInstructions,
      effectiveUnroll: m.effectiveUnroll,
      fullyUnrolled: m.fullyUnrolled,
    };
    out.push({ n, x });
  }
  return out.sort((a, b) => b.n - a.n || (a.x.name < b.x.name ? -1 : 1)).map(o => o.x);
}

/** Requested factors nvcc ignored (identical code) or capped (fewer copies than asked). */
export function explainVariants(variants: LoopVariant[], loop: Loop): string[] {
  const notes: string[] = [];
  const trip = typeof loop.tripCount === 'number' ? loop.tripCount : null;
  for (const v of variants) {
    if (v.status !== 'ok') continue;
    const asked = typeof v.factor === 'number' ? v.factor : null;
    const honoured = (asked !== null && v.effectiveUnroll === asked) || (v.factor === 'full' && v.fullyUnrolled);
    if (v.identicalTo !== null && v.identicalTo !== v.factor) {
      const same = `same code as ${factorLabel(v.identicalTo)}`;
      if (v.factor === 'full' && !v.fullyUnrolled) {
        notes.push(
          `full unroll requested but the trip count is not a compile-time constant: ${same}${v.effectiveUnroll ? ` (×${v.effectiveUnroll})` : ''}`,
        );
      } else if (honoured) {
        notes.push(
          `${factorLabel(v.factor)}: ${same} (nvcc already ${asked === null ? 'unrolls it completely' : `unrolls ×${asked}`} there)`,
        );
      } else {
        notes.push(`${factorLabel(v.factor)} ignored by nvcc: ${same}`);
      }
      continue;
    }
    if (asked !== null && v.effectiveUnroll !== null && !honoured) {
      if (trip !== null && asked >= trip && v.fullyUnrolled) continue; // asked for ≥ trips: a full unroll is right
      if (v.fullyUnrolled) notes.push(`${factorLabel(v.factor)} requested, nvcc unrolled the loop completely (×${v.effectiveUnroll})`);
      else if (v.effectiveUnroll === 1 && asked > 1)
        notes.push(`${factorLabel(v.factor)} ignored by nvcc: its machine loop holds one iteration per pass (×1)`);
      else
        notes.push(
          `${factorLabel(v.factor)} requested, nvcc unrolled ×${v.effectiveUnroll}${v.effectiveUnroll < asked ? ' (capped)' : ''}`,
        );
    }
    if (v.factor === 'full' && !v.fullyUnrolled && v.effectiveUnroll !== null) {
      notes.push(`full unroll requested, but a loop remains (×${v.effectiveUnroll} per machine-code iteration)`);
    }
  }
  return notes;
}
