// Static evaluation: each point is built as a cubin (its loops' pragmas rewritten, its macro
// parameters as -D flags) and measured from the SASS of the kernel (for template parameters:
// of the instantiation with the point's values): kernel size, per-loop instructions and
// effective unroll, registers, spills, theoretical occupancy. No GPU needed.
import * as os from 'os';
import type { RunTiming, SweepVariant } from '../../../schema/types';
import type { FileAnalysis } from '../../parse/model';
import type { CompileFlags } from '../../toolchain/flags';
import type { ProcessRunner } from '../../toolchain/process';
import type { Toolchain } from '../../toolchain/toolchain';
import { VariantBuilder } from '../../variants/build';
import type { InstantiationChoice, KernelVariant } from '../../variants/reports';
import type { KernelFilter } from '../../variants/kernelChoice';
import { VariantInspector } from '../../variants/inspect';
import { instantiationNote } from '../../variants/instantiation';
import { VariantFactors, variantKey, variantSource } from '../../variants/rewrite';
import { AS_WRITTEN_ID, defineArgs, pointId, SweepPoint, templateArgs, variantFactorsOf } from '../space';
import { isInstantiation, notInstantiatedMessage } from '../template';
import { compilerMessage, emptyVariant } from '../variant';
import type { RunnerContext, SweepRunner } from './runner';

export interface StaticRunnerOptions {
  file: string;
  text: string;
  analysis: FileAnalysis;
  /** Source name of the kernel and the swept loops' lines. */
  kernel: string;
  loops: number[];
  toolchain: Toolchain;
  arch: string;
  flags: CompileFlags;
  cacheDir: string;
  /** Parallel nvcc processes over all parameter values together; default: cores. */
  jobs?: number;
  /** Mangled name or demangled substring: which instantiation to measure (templates). */
  kernelFilter?: string;
  /** Per compile, milliseconds. */
  timeoutMs?: number;
  /** Swept parameters that are template parameters of the kernel (not macros): each value picks an instantiation. */
  templateParams?: string[];
  /** Their values for the file as written (a point without them). */
  templateDefaults?: Record<string, string>;
  /**
   * What "identical code" compares: the measured kernel's machine code (default), or every
   * function of the cubin (a benchmark, which times every instantiation holding the loop).
   */
  identity?: 'kernel' | 'cubin';
  /** A header's variants are built through this unit (it includes the header), as `sass --tu` builds them. */
  translationUnit?: string;
}

/** At most `n` processes of `runner` at once, however many builders share it. */
export function limitProcesses(runner: ProcessRunner, n: number): ProcessRunner {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (command, args, options) => {
    if (running < n) running++;
    else await new Promise<void>(r => waiting.push(r)); // the finishing process hands over its slot
    try {
      return await runner(command, args, options);
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** The static measurement of one built variant, as the sweep reports it. */
function staticVariant(p: SweepPoint, kv: KernelVariant, missing?: () => string): SweepVariant {
  const v = emptyVariant(p);
  v.status = kv.status === 'ok' ? 'ok' : kv.status === 'cancelled' ? 'cancelled' : kv.status === 'timeout' ? 'timeout' : 'compile';
  if (kv.failure) v.message = compilerMessage(kv.failure.messages, kv.failure.kind);
  v.kernel = kv.kernel;
  v.instantiation = kv.demangled;
  v.kernelInstructions = kv.kernelInstructions;
  v.kernelBytes = kv.kernelBytes;
  v.registers = kv.registers;
  v.spillStores = kv.spillStores;
  v.spillLoads = kv.spillLoads;
  v.occupancy = kv.occupancy;
  v.compileMs = kv.status === 'cancelled' ? null : kv.compileMs;
  for (const [line, m] of Object.entries(kv.loops)) {
    v.loopInstructions[line] = m.loopInstructions;
    v.effectiveUnroll[line] = m.effectiveUnroll;
    v.fullyUnrolled[line] = m.fullyUnrolled;
    (v.hotCode ??= {})[line] = m.icache ?? null;
  }
  if (kv.status === 'ok' && !kv.kernel) {
    // A template value naming no instantiation measures nothing: that point fails.
    if (missing) return { ...v, status: 'compile', message: missing() };
    v.message = 'the kernel is not in the cubin: is it instantiated (templates) and compiled for this arch?';
  }
  return v;
}

export class StaticRunner implements SweepRunner {
  readonly static = true;
  readonly gpu = null;
  private readonly limited: ProcessRunner;
  private readonly jobs: number;
  private readonly inspectors = new Map<string, VariantInspector>();
  /** Code hash of each measured variant, by id (the GPU runner reads it). */
  readonly codeHashes = new Map<string, string | null>();
  /** Each measured variant's functions → SASS instructions, by id (the GPU runner's per-instantiation rows). */
  readonly kernelSizes = new Map<string, Record<string, number>>();
  /** Which disassembler the measurements used ('nvdisasm' gives effective unroll). */
  disassembler: 'nvdisasm' | 'cuobjdump' | 'elf' = 'elf';
  /**
   * The function each group of template values measures, chosen by the sweep's first builds of
   * those values (the file as written first) and kept for every later point: rows of one sweep
   * never compare different instantiations unless a template parameter is swept.
   */
  private readonly pinned = new Map<string, InstantiationChoice>();
  /** o.kernelFilter, or the kernel a benchmark found it times (narrowTo) before its first measure. */
  private kernelFilter: string | undefined;

  constructor(private readonly o: StaticRunnerOptions) {
    this.jobs = Math.max(1, o.jobs || os.cpus().length);
    this.limited = limitProcesses(o.toolchain.runner, this.jobs);
    this.kernelFilter = o.kernelFilter;
  }

  /** Measure this kernel (mangled): the one a benchmark times, known only once the file as written is built. */
  narrowTo(kernel: string): void {
    this.kernelFilter = kernel;
  }

  /** One builder per parameter combination: its -D flags are part of the flags (and of the cache key). */
  private readonly builders = new Map<string, VariantBuilder>();
  /** Points (and build hashes) whose cubin's nvcc time startBuilds counted already. */
  private readonly counted = new Set<string>();

  /** The inspector (and its builder) of one parameter combination: a benchmark's kernel search shares the file as written's build with it. */
  inspectorFor(params: Record<string, string>): VariantInspector {
    const defines = defineArgs(params, this.o.templateParams);
    const key = defines.join(' ');
    let inspector = this.inspectors.get(key);
    if (!inspector) {
      const flags: CompileFlags = { ...this.o.flags, args: [...this.o.flags.args, ...defines] };
      const builder = new VariantBuilder({
        nvcc: this.o.toolchain.nvcc,
        arch: this.o.arch,
        flags,
        cacheDir: this.o.cacheDir,
        concurrency: this.jobs,
        runner: this.limited,
        timeoutMs: this.o.timeoutMs,
        translationUnit: this.o.translationUnit,
      });
      inspector = new VariantInspector({ toolchain: this.o.toolchain, builder, arch: this.o.arch });
      this.inspectors.set(key, inspector);
      this.builders.set(key, builder);
    }
    return inspector;
  }

  /** nvcc time of the cubins built for this sweep (cache hits cost nothing). */
  compileMs = 0;

  cost(): Omit<RunTiming, 'wallS'> {
    return { compileS: this.compileMs / 1000, checkS: 0, profileS: 0, gpuIdleS: 0, gpuRuns: 0, gpus: [] };
  }

  notes(): string[] {
    // without a swept loop there is no effective unroll to miss
    const notes =
      this.disassembler === 'nvdisasm' || !this.o.loops.length
        ? []
        : ['effective unroll needs nvdisasm (line info): only instruction counts are available'];
    const why = instantiationNote([...this.pinned.values()], (this.o.templateParams ?? []).length > 0, !!this.kernelFilter);
    return why ? [why, ...notes] : notes;
  }

  async measure(points: SweepPoint[], ctx: RunnerContext): Promise<SweepVariant[]> {
    // The file as written alone first: it pins the instantiation every later point measures (and
    // the others' cubins and the rolled baselines build meanwhile, so nvcc never waits for it).
    const first = points.findIndex(p => pointId(p) === AS_WRITTEN_ID);
    if (first >= 0 && points.length > 1) {
      const rest = points.filter((_, i) => i !== first);
      void this.prefetch(rest, ctx.signal);
      const [asWritten] = await this.measureBatch([points[first]], ctx);
      const others = await this.measureBatch(rest, ctx);
      return points.map((_, i) => (i === first ? asWritten : others[i < first ? i : i - 1]));
    }
    return this.measureBatch(points, ctx);
  }

  /**
   * The points' cubins and each group's rolled baseline (every swept loop at 1: effective unroll
   * is read against it), started now, the file as written first, so that they build while a
   * benchmark searches the file as written for its kernels and its programs build; settles when
   * every one has. measure() joins builds under way (the builder compiles the same source once).
   */
  prefetch(points: SweepPoint[], signal: AbortSignal | undefined): Promise<void> {
    const rolled: VariantFactors = new Map(this.o.loops.map(l => [l, 1]));
    const builds = points.map(p => ({ params: p.params, factors: variantFactorsOf(p), id: pointId(p) }));
    const asWritten = builds.filter(b => b.id === AS_WRITTEN_ID);
    const groups = new Map(points.map(p => [defineArgs(p.params, this.o.templateParams).join(' '), p.params]));
    const baselines = [...groups].map(([defines, params]) => ({ params, factors: rolled, id: `rolled ${defines}` }));
    const order = [...asWritten, ...baselines, ...builds.filter(b => b.id !== AS_WRITTEN_ID)];
    return Promise.all(this.startBuilds(order, signal)).then(() => undefined);
  }

  /** The points' cubins, started now (the builder joins a build already under way when the same source is asked for again). */
  private startBuilds(
    builds: { params: Record<string, string>; factors: VariantFactors; id: string }[],
    signal: AbortSignal | undefined,
  ): Promise<void>[] {
    return builds.map(({ params, factors, id }) => {
      this.inspectorFor(params);
      const builder = this.builders.get(defineArgs(params, this.o.templateParams).join(' '))!;
      const req = {
        key: variantKey(factors),
        source: variantSource(this.o.text, this.o.analysis, factors, this.o.file),
        originalPath: this.o.file,
      };
      return builder
        .buildAll([req], { signal })
        .then(([b]) => {
          // its nvcc time, counted here once (its measurement may find it in the cache by then)
          // (a build joined by two requests, the same source, is one compile)
          if (b && !b.cached && b.status !== 'cancelled' && !this.counted.has(id)) {
            if (!this.counted.has(b.hash)) this.compileMs += b.compileMs;
            this.counted.add(id).add(b.hash);
          }
        })
        .catch(() => undefined); // its measurement reports any failure
    });
  }

  private async measureBatch(points: SweepPoint[], ctx: RunnerContext): Promise<SweepVariant[]> {
    const out: (SweepVariant | undefined)[] = new Array(points.length);
    const hashes: (string | null)[] = new Array(points.length);
    let next = 0;
    // Hand results on in point order, as soon as every earlier point is done, so identical code
    // is always attributed to the earlier point whatever order the builds finish in.
    const flush = () => {
      while (next < points.length && out[next]) {
        const v = out[next]!;
        if (v.status !== 'cancelled') {
          const same = ctx.registry.claim(hashes[next], v);
          if (same) v.identicalTo = same.id;
          ctx.onVariant?.(v);
        }
        next++;
      }
    };
    // One group per -D set and template instantiation: a group's builds share a builder, and
    // groups differing only in template values share the builds themselves (the same source).
    const templates = this.o.templateParams ?? [];
    const groups = new Map<string, number[]>();
    points.forEach((p, i) => {
      const t = templateArgs(p.params, templates, this.o.templateDefaults);
      const k = `${defineArgs(p.params, templates).join(' ')}|${JSON.stringify(Object.entries(t))}`;
      groups.set(k, [...(groups.get(k) ?? []), i]);
    });
    await Promise.all(
      [...groups.values()].map(async idx => {
        const params = points[idx[0]].params;
        const tvalues = templateArgs(params, templates, this.o.templateDefaults);
        const kernel = this.o.analysis.kernels.find(
          k => k.name === this.o.kernel && this.o.loops.every(l => k.loops.some(x => x.line === l)),
        );
        const parameters = kernel?.templateParameters ?? [];
        const filter: KernelFilter | undefined = Object.keys(tvalues).length
          ? (_mangled, demangled) => isInstantiation(demangled, this.o.kernel, parameters, tvalues)
          : this.kernelFilter;
        const byKey = new Map(idx.map(i => [variantKey(variantFactorsOf(points[i])), i]));
        const pinKey = JSON.stringify(Object.entries(tvalues));
        await this.inspectorFor(params).inspectKernelVariants(
          this.o.file,
          this.o.text,
          this.o.analysis,
          this.o.kernel,
          this.o.loops,
          idx.map(i => variantFactorsOf(points[i])),
          {
            signal: ctx.signal,
            kernel: filter,
            instantiation: this.pinned.get(pinKey)?.name,
            onInstantiation: c => {
              if (!this.pinned.has(pinKey)) this.pinned.set(pinKey, c);
            },
            defines: Object.fromEntries(Object.entries(params).filter(([n]) => !templates.includes(n))),
            onProgress: (_d, _t, key, cached) => {
              const i = byKey.get(key);
              if (i !== undefined) ctx.onPhase?.(points[i], 'disassemble', cached ? 'cached build' : 'built');
            },
            onMeasured: (j, kv) => {
              const i = idx[j];
              // counted once, whichever of this and a started build's own count comes first
              if (!kv.cached && kv.status !== 'cancelled' && !this.counted.has(pointId(points[i]))) {
                this.compileMs += kv.compileMs;
                this.counted.add(pointId(points[i]));
              }
              hashes[i] = this.o.identity === 'cubin' ? (kv.machineCode ?? null) : kv.codeHash;
              this.codeHashes.set(pointId(points[i]), hashes[i]);
              if (kv.kernelSizes) this.kernelSizes.set(pointId(points[i]), kv.kernelSizes);
              out[i] = staticVariant(
                points[i],
                kv,
                Object.keys(tvalues).length
                  ? () => notInstantiatedMessage(this.o.kernel, parameters, tvalues, kv.functions ?? [])
                  : undefined,
              );
              flush();
            },
          },
        );
        this.disassembler = this.inspectors.get(defineArgs(params, templates).join(' '))!.disassembler;
      }),
    );
    flush();
    return out.map((v, i) => v ?? { ...emptyVariant(points[i]), status: 'cancelled' });
  }
}
