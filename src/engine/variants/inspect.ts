// Builds a file (as written, or with one loop's unroll factor varied), disassembles each
// cubin and reports what each variant costs: per kernel SASS instructions, bytes, registers,
// spills; per loop the instructions attributed to its lines and the unroll factor nvcc really
// applied.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { FileAnalysis, Kernel, Loop } from '../parse/model';
import { remedies } from '../base/remedies';
import { classHistogram, parseCuobjdumpSass, parseNvdisasm, parsePtxasVerbose, readCubin, instructionCountFromElf } from '../sass';
import type { SassListing } from '../sass';
import { theoreticalOccupancy } from '../occupancy/limits';
import type { PtxasFunctionUsage } from '../sass/ptxas';
import { demangle, Toolchain } from '../toolchain/toolchain';
import { CompileFlags, flagsOriginText } from '../toolchain/flags';
import { BuildRequest, BuildResult, VariantBuilder } from './build';
import { factorLabel, UnrollFactor, UnrollFactors, writtenFactor } from './factors';
import { variantSource, VariantFactors, variantKey } from './rewrite';
import type { SassListingData } from '../../schema/sassListing';
import { annotateListing } from './listing';
import { codeHash, hashFile, machineCodeHash } from './codeHash';
import { busiestFunction, chooseFunction, KernelFilter, launchBlockSize, matchesFilter, pickKernelByName } from './kernelChoice';
import { sourceNameOf } from '../../schema/kernelNames';
import { lineIn } from './loopAttribution';
import { measureInstantiations, measureLoop } from './measureLoop';
import { localTraffic } from './appliedUnroll';
import type {
  CompileFlagsOrigin,
  FileSassReport,
  InstantiationChoice,
  KernelSass,
  KernelVariant,
  LoopReport,
  LoopVariant,
} from './reports';
import { explainVariants } from './variantNotes';
import { chooseByTripCount, instantiationTrips } from './tripChoice';

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
        localLoads: fn ? localTraffic(fn.instructions).loads : null,
        localStores: fn ? localTraffic(fn.instructions).stores : null,
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
      compileFlags: flagsOrigin(this.o.builder.flags, this.o.builder.translationUnit ?? file),
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
    factors: UnrollFactors,
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
      notes: [...(this.lastTripNote ? [this.lastTripNote] : []), ...explainVariants(variants, loop)],
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
        remedies().missingTool.nvdisasm
      );
    if (failure && /cannot decode architecture/i.test(failure))
      return (
        `nvdisasm ${this.t.nvdisasm.version ?? ''} (${this.t.nvdisasm.path}) cannot read ${this.o.arch} code ("${failure}"): ` +
        `loop instructions and nvcc's unroll for ${this.o.arch} are unknown (${counts}). ` +
        remedies().newerNvdisasm
      );
    return `nvdisasm (${this.t.nvdisasm.path}) gave no listing (${failure ?? 'it failed or timed out'}): loop instructions and nvcc's unroll are unknown (${counts}).`;
  }

  private lastDisassembler: Disassembly['source'] = 'elf';
  private lastInstantiation: LoopReport['instantiation'] = null;
  /** The last inspectVariants' note on which instantiation its rows measure and why (several hold the loop). */
  private lastTripNote: string | null = null;
  private lastDisassemblyFailure: string | undefined;

  /** Kernels of the file as written whose code holds the loop's lines, most of them first. */
  async kernelsHoldingLoop(
    file: string,
    text: string,
    analysis: FileAnalysis,
    line: number,
    opts: { signal?: AbortSignal } = {},
  ): Promise<{ holding: { name: string; demangled: string; instructions: number }[]; asWritten: BuildResult | null }> {
    const kernel = analysis.kernels.find(k => k.loops.some(l => l.line === line));
    const loop = kernel?.loops.find(l => l.line === line);
    if (!kernel || !loop) return { holding: [], asWritten: null };
    const [b] = await this.o.builder.buildAll(
      [{ key: 'as-written', source: variantSource(text, analysis, new Map(), file), originalPath: file }],
      { signal: opts.signal },
    );
    if (b.status !== 'ok' || !b.outputPath) return { holding: [], asWritten: b };
    const dis = await this.disassemble(b.outputPath, opts.signal);
    const demangled = await demangle([...dis.sizes.keys()], this.t);
    if (!dis.listing) {
      const name = pickKernelByName(dis.sizes.keys(), kernel.name, demangled);
      return { holding: name ? [{ name, demangled: demangled.get(name) ?? name, instructions: 0 }] : [], asWritten: b };
    }
    const holding = dis.listing.functions
      .map(fn => ({
        name: fn.name,
        demangled: demangled.get(fn.name) ?? fn.name,
        instructions: fn.instructions.filter(ins => lineIn(ins, file, loop.span.line, loop.span.endLine)).length,
      }))
      .filter(k => k.instructions > 0)
      .sort((a, b2) => b2.instructions - a.instructions || a.name.localeCompare(b2.name));
    return { holding, asWritten: b };
  }

  /**
   * The kernels of the file as written whose source name (the demangled name without namespace,
   * template arguments and parameters) is one of `names`, every instantiation of each, in the
   * order of `names`; `available` lists every kernel's source name, for a message when one is missing.
   */
  async kernelsNamed(
    file: string,
    text: string,
    analysis: FileAnalysis,
    names: string[],
    opts: { signal?: AbortSignal } = {},
  ): Promise<{
    kernels: { name: string; demangled: string; spillStores: number | null; spillLoads: number | null }[];
    available: string[];
    asWritten: BuildResult;
  }> {
    const [b] = await this.o.builder.buildAll(
      [{ key: 'as-written', source: variantSource(text, analysis, new Map(), file), originalPath: file }],
      { signal: opts.signal },
    );
    if (b.status !== 'ok' || !b.outputPath) return { kernels: [], available: [], asWritten: b };
    const usage = parsePtxasVerbose(b.ptxasLog, { arch: this.o.arch });
    const dis = await this.disassemble(b.outputPath, opts.signal);
    // entry points only: a device function in the cubin is no kernel to launch
    const entries = [...dis.sizes.keys()].filter(n => usage.get(n)?.entry ?? true);
    const demangled = await demangle(entries, this.t);
    // ptxas -v of this build: each kernel's spill bytes (null when ptxas did not report the function)
    const all = entries.map(name => ({
      name,
      demangled: demangled.get(name) ?? name,
      spillStores: usage.get(name)?.spillStoreBytes ?? null,
      spillLoads: usage.get(name)?.spillLoadBytes ?? null,
    }));
    const kernels = names.flatMap(n => all.filter(k => sourceNameOf(k.demangled) === n));
    return { kernels, available: [...new Set(all.map(k => sourceNameOf(k.demangled)))].sort(), asWritten: b };
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
    // One function for every row, so that no row measures another instantiation than the rest
    // (among those --kernel names): one where the loop runs more times than the largest factor,
    // else the one holding most of its code, with a note listing the trip counts (tripChoice.ts).
    const byFactor = all.map((vf, i) => ({ factor: vf.get(line) ?? ('default' as const), listing: disassemblies[i]?.listing ?? null }));
    const trips = instantiationTrips(byFactor, baseline, { file, text, kernel, loop, demangled, filter: opts.kernel });
    const pick = chooseByTripCount(
      trips,
      specs.map(f => f.get(line) ?? 'default'),
    );
    const filter = pick?.chosen.name ?? opts.kernel;
    this.lastInstantiation = pick
      ? { name: pick.chosen.name, demangled: pick.chosen.demangled, of: trips.length, trips: pick.chosen.trips }
      : null;
    this.lastTripNote = pick?.note ?? null;
    const variants: LoopVariant[] = [];
    const codeHashes: (string | null)[] = [];
    const at = { file, analysis, kernel, loop, baseline, filter, demangled };
    for (let i = 0; i < specs.length; i++) {
      const { variant: v, codeHash: hash } = this.measureLoopVariant(specs[i].get(line) ?? 'default', builds[i], disassemblies[i], at);
      codeHashes.push(hash);
      const same = codeHashes.findIndex((h, j) => j < i && h !== null && h === codeHashes[i]);
      if (same !== -1) v.identicalTo = specs[same].get(line) ?? 'default';
      variants.push(v);
    }
    return variants;
  }

  /**
   * One variant of inspectVariants: its build's kernel sizes and resources, the loop measured in
   * the function chosen for every row, and the hash of that function's code (equal hashes: the
   * same code as an earlier variant).
   */
  private measureLoopVariant(
    factor: UnrollFactor,
    b: BuildResult,
    dis: Disassembly | null,
    at: {
      file: string;
      analysis: FileAnalysis;
      kernel: Kernel;
      loop: Loop;
      baseline: SassListing | null;
      filter: string | undefined;
      demangled: Map<string, string>;
    },
  ): { variant: LoopVariant; codeHash: string | null } {
    const { file, analysis, kernel, loop, baseline, filter, demangled } = at;
    let hash: string | null = null;
    const v: LoopVariant = {
      factor,
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
    if (b.status === 'ok' && b.outputPath) v.machineCode = machineCodeHash(b.outputPath);
    if (dis) {
      v.kernelSizes = Object.fromEntries([...dis.sizes].map(([n, sz]) => [n, sz.instructions]));
      const m = dis.listing ? measureLoop(dis.listing, baseline, file, kernel, loop, filter, demangled) : null;
      const kname = m?.kernel ?? pickKernelByName(dis.sizes.keys(), kernel.name, demangled, filter);
      v.kernel = kname;
      if (kname) {
        const r = kernelResources(b, dis, kname, this.o.arch, launchBlockSize(analysis, demangled.get(kname) ?? kname));
        const fn = r.fn;
        Object.assign(v, r.counts);
        if (r.occupancy) v.warpsPerSm = r.occupancy.activeWarpsPerSM ?? null;
        hash = fn ? codeHash(fn) : hashFile(b.outputPath!, kname);
      }
      if (m) {
        v.loopInstructions = m.loopInstructions;
        v.effectiveUnroll = m.effectiveUnroll;
        v.unrollUnknown = m.unrollUnknown;
        v.unrollReadings = m.unrollReadings;
        v.fullyUnrolled = m.fullyUnrolled;
        v.remainder = m.remainder;
        if (m.copies) v.loopCopies = m.copies;
        v.localLoads = m.local.loads;
        v.localStores = m.local.stores;
        v.icache = m.icache;
        v.icacheNone = m.icacheNone;
      }
    }
    return { variant: v, codeHash: hash };
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
    const name = best?.name ?? pickKernelByName(present[0].sizes.keys(), kernel.name, demangled, opts.kernel);
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
    const r = kernelResources(b, dis, name, this.o.arch, launchBlockSize(analysis, demangled.get(name) ?? name, opts.defines));
    const fn = r.fn;
    Object.assign(v, r.counts);
    if (r.occupancy) v.occupancy = r.occupancy.occupancy ?? null;
    v.codeHash = fn ? codeHash(fn) : hashFile(b.outputPath!, name);
    v.machineCode = machineCodeHash(b.outputPath!);
    v.kernelSizes = Object.fromEntries([...dis.sizes].map(([n, sz]) => [n, sz.instructions]));
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

/**
 * A kernel's size (from the disassembly, else the cubin's symbol), registers and spills (ptxas -v)
 * and its theoretical occupancy at `threadsPerBlock`: the same facts for a loop variant and a file's kernel.
 */
function kernelResources(b: BuildResult, dis: Disassembly, name: string, arch: string, threadsPerBlock: number) {
  const usage: PtxasFunctionUsage | undefined = parsePtxasVerbose(b.ptxasLog, { arch }).get(name);
  const fn = dis.listing?.functions.find(f => f.name === name);
  const size = dis.sizes.get(name);
  const counts = {
    kernelInstructions: fn ? fn.instructions.length : (size?.instructions ?? null),
    kernelBytes: fn ? fn.bytes : (size?.bytes ?? null),
    registers: usage?.registers ?? null,
    spillStores: usage?.spillStoreBytes ?? null,
    spillLoads: usage?.spillLoadBytes ?? null,
    stackBytes: usage?.stackBytes ?? null,
  };
  const occupancy = usage
    ? theoreticalOccupancy({ registersPerThread: usage.registers, sharedBytesPerBlock: usage.sharedBytes, threadsPerBlock, arch })
    : null;
  return { fn, counts, occupancy };
}

/** Where a build's flags came from, for its report (the CLI's text and JSON, the editor's diagnostics). */
function flagsOrigin(flags: CompileFlags, compiled: string): CompileFlagsOrigin {
  return {
    database: flags.database?.path ?? null,
    entry: flags.database?.entry ?? null,
    looked: flags.database ? [] : (flags.search?.looked ?? []),
    text: flagsOriginText(flags, compiled),
  };
}
