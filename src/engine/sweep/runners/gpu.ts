// GPU evaluation, on the bench stages (gpu/stages/): per point, the SASS side first (the
// static runner: instructions, registers, occupancy, and the code hash), then — unless the
// machine code is identical to a variant already timed with the same parameters, whose
// measurement it then reuses — a program build with the point's factors and -D values, a plain
// run checked against the file as written's checksums, and kernel durations and stall shares
// under ncu. Programs of a batch build in parallel; the file as written runs first, then the
// other points spread over the selected GPUs (one process per GPU, CUDA_VISIBLE_DEVICES).
import * as os from 'os';
import type { InstantiationTiming, MeasurementConditions, RunTiming, SweepVariant } from '../../../schema/types';
import type { GpuRunConfig } from '../../gpu/options';
import { KernelTimer, timerFor } from '../../gpu/timer';
import { defaultLockRoot, GpuClock, GpuSlot, gpuSlots, GpuTurns, PROFILES_PER_GPU } from '../../gpu/slots';
import { BenchTarget, buildFailure, findNamedKernels, findTargetKernels, targetNotes, TimedKernels } from '../../gpu/stages/build';
import { otherUnitsNote, templateKeysOf } from '../../gpu/stages/sameTemplate';
import { demangle } from '../../toolchain/toolchain';
import { BaselineOutput, CheckResult, checkOutput, checkVariant, parseChecksums, reportsMismatch } from '../../gpu/stages/check';
import type { VariantProgram } from '../../gpu/stages/program';
import { cachedLineStalls } from '../../gpu/stages/lineStalls';
import { summarize } from '../../gpu/stages/summary';
import { GpuRun, KernelSamples, TimeResult } from '../../gpu/stages/time';
import { sourceLineRows } from '../../gpu/cupti/pcSourceStalls';
import { deferred, latch, settledNow, streamSass, whileRunning } from './pipelining';
import { COUNTERS, countersOf, spillsOf } from './counters';

/** Under this median a kernel record's extra ~0.6 µs a launch (H200) is over 1 % of the kernel. */
const SHORT_ON_RECORDS_MS = 0.06;

/** The short kernels timed by their records, each with its median: the ones whose times read long. */
function shortOnRecords(timings: Iterable<{ groups: Map<string, KernelSamples> }>): string[] {
  const short = new Map<string, number>();
  for (const t of timings)
    for (const [key, g] of t.groups) {
      const median = g.durationSource === 'kernel-record' ? summarize(g.durations).medianMs : null;
      if (median !== null && median < SHORT_ON_RECORDS_MS) short.set(key, Math.min(median, short.get(key) ?? Infinity));
    }
  if (!short.size) return [];
  const list = [...short].map(([k, ms]) => `${k} (${(ms * 1000).toFixed(1)} µs)`);
  return [`short kernels timed by their records, which read long by ~0.6 µs a launch (over 1 % under 60 µs): ${list.join(', ')}`];
}

/** How a variant timed by kernel records instead of gpu__time_duration is said (the note counts them). */
const GPU_TIME =
  "gpu__time_duration (the durations are CUPTI's kernel records instead: about 0.6 µs a launch longer than ncu on an H200, over 1 % of a kernel under 60 µs; docs/measurements.md)";
import { PcSamples, timingFor, TimingStage, VariantTiming } from './timing';
import { defaultRunDir } from '../../gpu/selection';
import { MeasurementCache, measuredGroups, measurementKeyFor, storedMeasurement } from '../../gpu/measurementCache';
import { MissingToolError } from '../../toolchain/discover';
import type { BuildResult } from '../../variants/build';
import { AS_WRITTEN, AS_WRITTEN_ID, pointId, substituteArgs, SweepPoint, templateArgs } from '../space';
import { GPU_FIELDS } from '../variant';
import type { RunnerContext, SweepRunner } from './runner';
import { limitProcesses, StaticRunner, StaticRunnerOptions } from './static';
import { PreparedPrograms, ProgramBuilds, ProgramPromise } from './programs';
import { ProjectPrograms, ProjectRun } from './projectPrograms';

export interface GpuRunnerOptions extends StaticRunnerOptions {
  gpu: GpuRunConfig;
  /** Names of the swept macros: a project compile command cannot take -D values. */
  params: string[];
  /** Every swept parameter's value for the file as written: `{NAME}` in its program arguments. */
  paramDefaults?: Record<string, string>;
  /**
   * Time every kernel whose code holds the loop at `focus` (template instantiations; a benchmark;
   * `kernel` narrows them: a mangled name or a substring of the demangled one), or every kernel
   * `named` (a comparison), each with its own row in the variant's `instantiations`. Absent: one
   * kernel per point.
   */
  everyKernel?: TimedKernels;
  /** The SASS side's variants and the programs, made elsewhere (a Slurm task): nothing is built here. */
  prepared?: PreparedPrograms;
  /** Build and run through the project's own commands, in a copy of its tree (projectPrograms.ts). */
  project?: ProjectRun;
}

/** A timing's stall shares; null when nothing sampled stalls (the CUPTI timer), never an empty "no stalls". */
function stallShareOf(g: KernelSamples | undefined): Record<string, number> | null {
  return g?.last && g.last.stallSource !== 'none' ? g.last.stallShare : null;
}

/** A point id as a file-name-safe label for ncu reports and progress. */
function labelOf(p: SweepPoint): string {
  return pointId(p).replace(/[^A-Za-z0-9_.=+-]+/g, '_');
}

export class GpuRunner implements SweepRunner {
  readonly static = false;
  readonly gpu: string | null;
  private sassRunner: PreparedPrograms['sass'] | null = null;
  /** The kernels a benchmark times (everyKernel), found from the file as written's cubin before its first point. */
  private target: BenchTarget | null = null;
  private readonly limited;
  /** Each point's program: built here, unless the options bring them built (a Slurm task). */
  private readonly builds: ProgramBuilds;
  /** With a project's build: the copy of its tree, leased by one point at a time. */
  private readonly project: ProjectPrograms | null;
  /** Every variant measured so far, by id: identical-code points copy from here. */
  private readonly measured = new Map<string, SweepVariant>();
  /** The batch's points by id while it runs: an identical-code point waits for its original, which may be on another GPU. */
  private readonly inflight = new Map<string, Promise<SweepVariant>>();
  /** Where points run: one slot per selected GPU (one: the default device). */
  private readonly slots: GpuSlot[];
  /** Measurements of unchanged programs (null: off). */
  private readonly cache: MeasurementCache | null;
  /** Each point's check comes from its ncu run (no template parameters swept). */
  private readonly folded: boolean;
  /** ncu processes in flight per GPU. */
  private readonly perGpu: number;
  private readonly turns = new Map<number | null, GpuTurns>();
  /** GPU runs (ncu and plain checks) and their times, per GPU. */
  private readonly clock = new GpuClock();
  private checkMs = 0;
  private baseline: BaselineOutput | null = null;
  /** The file as written's program: run once more for per-line stalls, and once more per template instantiation for that instantiation's reference output. */
  private baselineProgram: string | null = null;
  /** Reference output per template instantiation (JSON of its values), the as-written one included. */
  private readonly references = new Map<string, Promise<BaselineOutput>>();
  /**
   * The file as written has taken the GPU (its ncu run started, or it ended before): the other
   * points may start. Open (resolved) except while a batch holding the file as written runs.
   */
  private baselineStarted = latch(true);
  /** The file as written's run has ended: its output (this.baseline) is what the others are checked against. */
  private baselineDone = latch(true);
  private kernel: string | null = null;
  /** Every kernel timed: one per instantiation when template parameters are swept. */
  private readonly timed = new Set<string>();
  /** Kernels timed that another unit of the project built (sameTemplate.ts). */
  private readonly otherUnits = new Set<string>();
  /** What times the kernels (chosen once from the run options), and its timings' shared state. */
  private readonly timer: KernelTimer;
  private readonly timing: VariantTiming;
  /** The file as written's PC samples (CUPTI timer): its per-line stalls come from them. */
  private baselinePc: PcSamples | null = null;
  /** Why stall reasons or counters asked for are missing ("what\nwhy"), and for how many variants. */
  private readonly stallProblems = new Map<string, number>();
  /** The CUPTI timer's clocks of the variants timed (KernelSamples.durationSource). */
  private readonly clocks = new Set<NonNullable<KernelSamples['durationSource']>>();

  constructor(private readonly o: GpuRunnerOptions) {
    this.timer = timerFor(o.gpu);
    // the CUPTI timer needs no ncu: without it only the per-line stalls (ncu's source page) are missing, and say why
    if (!o.toolchain.ncu && this.timer.needsNcu) throw new MissingToolError('ncu', []);
    if (o.params.length && (o.gpu.compileCommand?.length || o.project)) {
      throw new Error(
        `sweeping ${o.params.join(', ')} needs nvcc builds (-D flags): the project compile command (unrollLens.profile.compileCommand) cannot take them`,
      );
    }
    // Without template parameters every point is checked against the file as written's output,
    // which its ncu run prints: no plain runs, so several ncu processes can share a GPU (ncu
    // makes them take turns at profiling). With them, each point's reference is the file as
    // written run plainly with its arguments: one process per GPU, so no plain run meets a profile.
    this.folded = !(o.templateParams ?? []).length;
    // Several ncu processes may share a GPU because ncu makes their profiles take turns; programs
    // timed by the CUPTI timer run as themselves, and two at once on one GPU would share it (the
    // kernels of a 3 ms matmul measured 1.5–1.8× longer so, on an H100): one at a time per GPU.
    this.perGpu = this.folded && this.timer.sharesGpu ? Math.max(1, o.gpu.profilesPerGpu ?? PROFILES_PER_GPU) : 1;
    this.slots = gpuSlots(o.gpu.gpus, this.perGpu, o.gpu.launcher, defaultLockRoot());
    // A project's run reads whatever its build left in the tree: nothing a measurement key could name.
    this.cache = o.gpu.measurementCacheDir && !o.project ? new MeasurementCache(o.gpu.measurementCacheDir) : null;
    this.timing = timingFor(this.timer, {
      ...o.gpu,
      toolchain: o.toolchain,
      cacheDir: o.cacheDir,
      timeoutMs: o.timeoutMs,
      cache: this.cache,
      built: o.prepared?.timerLibrary,
    });
    const first = o.gpu.gpus?.[0] ?? 0;
    this.gpu = o.toolchain.gpus[first]?.name ?? o.toolchain.gpus[0]?.name ?? null;
    // as many program builds at once as the SASS side's cubins (the bench always built in parallel)
    this.limited = limitProcesses(o.toolchain.runner, Math.max(1, o.jobs || os.cpus().length));
    this.builds = new ProgramBuilds({ ...o, compileCommand: o.gpu.compileCommand }, this.limited);
    this.project = o.project ? new ProjectPrograms({ ...o, project: o.project, runner: o.toolchain.runner }) : null;
  }

  /** The SASS side, made at the first batch: a benchmark's measures the kernel it times (narrowed to it once found). */
  private get sass(): PreparedPrograms['sass'] {
    this.sassRunner ??= this.o.prepared?.sass ?? new StaticRunner({ ...this.o, identity: this.o.everyKernel ? 'cubin' : 'kernel' });
    return this.sassRunner;
  }

  /** Points measured at once: one per GPU slot. */
  get parallel(): number {
    return this.slots.length;
  }

  /** What the result names as timed: every instantiation of a benchmark, with their demangled names. */
  get demangled(): Record<string, string> | undefined {
    return this.target?.demangled;
  }

  cost(): Omit<RunTiming, 'wallS'> {
    const sass = this.sass.cost();
    return {
      compileS: sass.compileS + (this.builds.compileMs + (this.project?.buildMs ?? 0)) / 1000,
      checkS: this.checkMs / 1000,
      profileS: this.clock.busyS('time') + this.clock.busyS('stalls'),
      gpuIdleS: this.clock.idleS(),
      gpuRuns: this.clock.count,
      gpus: [...new Set(this.slots.map(s => s.gpu))],
    };
  }

  durationSource(): MeasurementConditions['duration'] | null {
    if (this.clocks.size === 0) return null;
    return this.clocks.size > 1 ? 'mixed' : [...this.clocks][0]!;
  }

  notes(): string[] {
    return [
      this.timer.note(this.o.gpu, this.gpu),
      ...(this.gpuIndices.length > 1
        ? [
            `spread over GPUs ${this.gpuIndices.join(', ')} (CUDA device indices, ${this.perGpu} ncu process${this.perGpu > 1 ? 'es' : ''} each)`,
          ]
        : []),
      ...[...this.stallProblems].map(([m, n]) => `${m.split('\n')[0]} unknown for ${n} variant${n > 1 ? 's' : ''}: ${m.split('\n')[1]}`),
      ...shortOnRecords(this.timings.values()),
      ...(this.target ? targetNotes(this.target, !!this.o.everyKernel && 'named' in this.o.everyKernel) : []),
      ...(this.project?.note() ? [this.project.note()!] : []),
      ...(this.otherUnits.size ? [otherUnitsNote([...this.otherUnits], this.target?.demangled)] : []),
      ...(this.timed.size > 1 ? [`timed kernels: ${[...this.timed].join(', ')}`] : this.kernel ? [`timed kernel: ${this.kernel}`] : []),
      ...this.sass.notes(),
    ];
  }

  async sourceStalls(text: string, signal?: AbortSignal): ReturnType<NonNullable<SweepRunner['sourceStalls']>> {
    const base = this.measured.get(AS_WRITTEN_ID);
    if (this.project)
      return {
        lineStalls: null,
        sassStalls: null,
        problem:
          "per-line stalls are not sampled through a project's run command (its programs are the project's, not one executable built from this file)",
        cached: false,
      };
    if (!base || base.status !== 'ok' || !this.baselineProgram || !base.kernel)
      return {
        lineStalls: null,
        sassStalls: null,
        problem: 'the file as written did not run to the end: nothing to sample',
        cached: false,
      };
    const slot = this.slots[0];
    const p = { label: AS_WRITTEN_ID, program: this.baselineProgram, file: this.o.file };
    const args = this.argsFor(AS_WRITTEN);
    // the CUPTI timer's PC samples of the file as written's timed run: no ncu run (ncu when they give nothing)
    const pc = await this.timing.sourceLineStalls(
      this.baselinePc,
      p,
      base.kernel,
      text,
      { ...this.o.gpu, ...this.o, args, signal },
      { store: this.cache, gpu: slot.gpu },
    );
    if (pc?.lineStalls) return { ...pc, lineStalls: sourceLineRows(pc.lineStalls), source: 'pc-sampling' };
    if (!this.o.toolchain.ncu)
      return {
        lineStalls: null,
        sassStalls: null,
        problem:
          "stalls per source line need Nsight Compute (ncu), which was not found; the times and each variant's stall mix came from the CUPTI timer" +
          (pc?.problem ? ` (its PC samples gave none: ${pc.problem})` : ''),
        cached: false,
      };
    const runDir = this.o.gpu.runDir ?? defaultRunDir(this.o.cacheDir, this.o.gpu.launcher);
    const startMs = Date.now();
    const r = await cachedLineStalls(
      p,
      base.kernel,
      text,
      // the arguments the file as written was timed with ({NAME} → the parameters' values as written)
      { ...this.o.gpu, args, toolchain: this.o.toolchain, runDir, env: slot.env, signal },
      { store: this.cache, gpu: slot.gpu },
    );
    if (!r.cached) this.clock.add(slot.gpu, { kind: 'stalls', startMs, endMs: Date.now() });
    return { lineStalls: sourceLineRows(r.lineStalls), sassStalls: r.sassStalls, problem: r.problem, cached: r.cached, source: 'ncu' };
  }

  /** A point's program arguments: `{NAME}` replaced by its value (the file as written: the defaults). */
  private argsFor(point: SweepPoint): string[] {
    return substituteArgs(this.o.gpu.args, { ...(this.o.paramDefaults ?? {}), ...point.params });
  }

  /** The CUDA device indices in use (empty: the default device). */
  private get gpuIndices(): number[] {
    return [...new Set(this.slots.map(s => s.gpu))].filter((g): g is number => g !== null);
  }

  /** A benchmark's kernels, once, before its first point: every instantiation holding the loop in the file as written. */
  private async findTarget(signal: AbortSignal | undefined): Promise<void> {
    const every = this.o.everyKernel;
    if (!every || this.target) return;
    const src = { file: this.o.file, text: this.o.text, analysis: this.o.analysis };
    // the SASS side's inspector: its build of the file as written, already under way (prefetch), is this one
    const sass = this.sass instanceof StaticRunner ? this.sass : null;
    const inspector = sass?.inspectorFor({});
    this.target =
      'named' in every
        ? await findNamedKernels(src, every.named, { ...this.o, signal, nvccTimeoutMs: this.o.timeoutMs, inspector })
        : await findTargetKernels(
            { ...src, focus: every.focus },
            { ...this.o, kernel: every.kernel, signal, nvccTimeoutMs: this.o.timeoutMs, inspector },
          );
    if (this.target.kernel) sass?.narrowTo(this.target.kernel);
    // a project's run launches whichever of them its tests or benchmarks reach: each that ran is a
    // row, with the instantiations of the loop's own kernel template that other units built
    if (this.project && this.target.kernels.length) {
      const inKernel =
        'focus' in every && this.o.analysis.kernels.find(k => k.loops.some(l => l.line === every.focus))?.qualifier === 'global';
      this.target = { ...this.target, anyLaunched: true, ...(inKernel ? { sameTemplate: templateKeysOf(this.target.kernels) } : {}) };
    }
  }

  async measure(points: SweepPoint[], ctx: RunnerContext): Promise<SweepVariant[]> {
    // The programs of every point start building at once, beside the SASS side and the search for
    // a benchmark's kernels, so the GPU waits for nvcc only before its first point. (A point whose
    // code turns out identical to one measured before is not run: its program is built for nothing,
    // as a bench always built every variant's.) A batch that fails part-way stops its builds.
    const local = new AbortController();
    const stop = () => local.abort();
    if (ctx.signal?.aborted) stop();
    ctx.signal?.addEventListener('abort', stop);
    const prepared = this.o.prepared?.programs(points);
    // a project's programs are built one at a time in its copy, each once its SASS says it is needed (below)
    let { programs, building }: { programs: ProgramPromise[]; building: Promise<void> } = prepared
      ? { programs: prepared, building: Promise.resolve() }
      : this.project
        ? { programs: [], building: Promise.resolve() }
        : this.builds.start(points, ctx, local.signal);
    // the CUPTI timer's library builds beside the programs (once per toolkit; its failure is each point's, in time())
    this.timing.prepare(ctx.signal);
    // the cubins too, while the file as written's is searched for the kernels to time (measured on
    // an H200: the SASS side otherwise started its builds only then, and the first GPU run waited 1.7 s for them)
    const cubins = this.sass instanceof StaticRunner ? this.sass.prefetch(points, local.signal) : Promise.resolve();
    try {
      await this.findTarget(ctx.signal);
      // SASS of every point (parallel builds), identical code marked against everything so far;
      // each point goes to the GPU as soon as its own SASS (and those before it) are in.
      const sass = streamSass((ps, c) => this.sass.measure(ps, c), points, ctx);
      if (this.project && !prepared) ({ programs, building } = this.project.start(points, ctx, local.signal, sass.each));
      const out = await this.onGpus(points, sass.each, programs, ctx);
      await sass.all;
      await building;
      await cubins; // (joined by the SASS side's measurements: settled by now)
      return out;
    } catch (e) {
      stop();
      await building;
      await cubins;
      throw e;
    } finally {
      ctx.signal?.removeEventListener('abort', stop);
    }
  }

  /**
   * The points on the GPUs, in point order over the slots, the file as written first: every other
   * point is checked against its output. When a point's check is its own ncu run (folded), the
   * others start once the file as written has started and wait for its output only to compare;
   * otherwise (template instantiations' plain reference runs) it runs alone first. Results are
   * reported in point order, whichever GPU finishes first.
   */
  private async onGpus(
    points: SweepPoint[],
    sass: Promise<SweepVariant>[],
    programs: Promise<BuildResult | undefined>[],
    ctx: RunnerContext,
  ): Promise<SweepVariant[]> {
    const out: (SweepVariant | undefined)[] = new Array(points.length);
    let reported = 0;
    const settled = points.map(() => deferred<SweepVariant>()); // measure() itself rejects; a waiting copy need not
    const ids = points.map(pointId);
    ids.forEach((id, i) => this.inflight.set(id, settled[i].promise));
    // each point's program once built: a run started ahead for it and not taken is stopped when the point is done
    const programNow = settledNow(programs);
    const start = async (i: number, slot: GpuSlot): Promise<void> => {
      let v: SweepVariant;
      try {
        v = await this.run(points[i], await sass[i], programs[i], ctx, slot);
      } catch (e) {
        settled[i].reject(e);
        throw e;
      } finally {
        // a run started ahead for this point and not taken (a cache hit, a failure): stopped now; not
        // those of other points sharing its program (a template sweep's points differ in arguments only)
        await this.timing.drop(programNow[i], this.argsFor(points[i]));
        this.project?.release(points[i]);
      }
      if (v.status !== 'cancelled') this.measured.set(v.id, v);
      out[i] = v;
      settled[i].resolve(v);
      for (; reported < points.length && out[reported]; reported++) {
        if (out[reported]!.status !== 'cancelled') ctx.onVariant?.(out[reported]!);
      }
    };
    try {
      const first = ids.indexOf(AS_WRITTEN_ID);
      if (first >= 0) {
        this.baselineStarted = latch();
        this.baselineDone = latch();
      }
      if (first >= 0 && !this.folded) await start(first, this.slots[0]);
      const order = points
        .map((_, i) => i)
        .filter(i => i !== first || this.folded)
        .sort((a, b) => Number(b === first) - Number(a === first));
      // Points that need a GPU run take a slot, in point order as their SASS comes in; failures and
      // identical-code copies (which wait for their original) do not.
      const elsewhere: Promise<void>[] = [];
      let next = 0;
      await Promise.all(
        this.slots.map(async slot => {
          // the point this GPU takes next, claimed while it times the one before so that its first
          // run can start ahead on this GPU (a run started ahead is tied to its GPU)
          let mine: number | undefined;
          while (mine !== undefined || next < order.length) {
            const i = mine ?? order[next++];
            mine = undefined;
            const s = await sass[i];
            if (s.status !== 'ok' || s.identicalTo) {
              const copy = start(i, this.slots[0]);
              copy.catch(() => undefined); // awaited below, with the others
              elsewhere.push(copy);
              continue;
            }
            // the file as written takes the GPU first; the others once it has started
            if (i !== first) await this.baselineStarted.promise;
            const running = start(i, slot);
            // the next point's first run starts while this one is timed (as soon as its SASS and
            // program are in), held at its first launch until this one is done
            if (this.timing.startAhead && !this.project && next < order.length) {
              const j = (mine = order[next++]);
              whileRunning(running, sass[j], programs[j], (sv, b) => this.startAhead(points[j], sv, b, ctx, slot));
            }
            await running;
          }
        }),
      );
      await Promise.all(elsewhere);
    } finally {
      for (const id of ids) this.inflight.delete(id);
      for (const b of programNow) await this.timing.drop(b);
    }
    return out as SweepVariant[];
  }

  /** A point's measurement; the file as written's also releases the points waiting for it to start and end. */
  private async run(
    point: SweepPoint,
    sass: SweepVariant,
    built: Promise<BuildResult | undefined>,
    ctx: RunnerContext,
    slot: GpuSlot,
  ): Promise<SweepVariant> {
    if (sass.id !== AS_WRITTEN_ID) return this.runPoint(point, sass, built, ctx, slot);
    try {
      return await this.runPoint(point, sass, built, ctx, slot);
    } finally {
      this.baselineStarted.resolve();
      this.baselineDone.resolve();
    }
  }

  private async runPoint(
    point: SweepPoint,
    sass: SweepVariant,
    built: Promise<BuildResult | undefined>,
    ctx: RunnerContext,
    slot: GpuSlot,
  ): Promise<SweepVariant> {
    const v: SweepVariant = { ...sass };
    if (v.status !== 'ok') return v;
    if (ctx.signal?.aborted) return { ...v, status: 'cancelled' };
    // The original may still be running on another GPU: wait for it (a cancelled one is no measurement).
    const original = v.identicalTo ? (this.measured.get(v.identicalTo) ?? (await this.inflight.get(v.identicalTo))) : undefined;
    const same = original?.status === 'cancelled' ? undefined : original;
    if (same) {
      // Same machine code, same parameters: the same program. Its timing (or failure) stands for this one.
      ctx.onPhase?.(point, 'reuse', same.label);
      for (const k of GPU_FIELDS) (v as unknown as Record<string, unknown>)[k] = same[k];
      // the instantiation heading its row (a project's run: the first launched), as the original's
      if (this.target?.anyLaunched)
        Object.assign(v, { kernel: same.kernel, instantiation: same.instantiation, kernelInstructions: same.kernelInstructions });
      return { ...v, status: same.status, message: same.message };
    }
    const program = await built;
    const failed = program ? buildFailure(program) : { status: 'cancelled' as const, message: null };
    if (failed) return { ...v, ...failed };
    const chosen = this.targetOf(v);
    if (!chosen)
      return { ...v, status: 'profile', message: `the kernel ${this.o.kernel} is not in the build: is it instantiated and launched?` };
    const { target, every } = chosen;
    const kernel = target.kernel;
    this.kernel ??= kernel;
    for (const k of target.kernels) this.timed.add(k);
    const p: VariantProgram = {
      label: labelOf(point),
      program: program!.outputPath!,
      file: this.o.file,
      cwd: this.project ? program!.outputPath! : undefined,
    };
    // a project's check runs in the copy this variant was built in
    const stage = { ...this.stageFor(point, ctx, slot), ...(this.project ? { checkCwd: p.cwd } : {}) };
    const progress = (phase: 'check' | 'time') => (m: string) =>
      ctx.onPhase?.(point, phase, m.startsWith(`${p.label}: `) ? m.slice(p.label.length + 2) : m, { gpu: slot.gpu });
    const isBaseline = v.id === AS_WRITTEN_ID;
    // A program measured before with the same arguments and settings: its stored output is checked and its launches reused.
    // a CUPTI timing is keyed by the timer library too: a new timer source or toolkit measures again
    const timerLibrary = this.cache ? await this.timing.libraryKey(ctx.signal) : undefined;
    const key = this.cache ? measurementKeyFor({ ...stage, timerLibrary }, p.program, slot.gpu, target.kernels) : null;
    const hit = key ? this.cache!.get(key) : null;
    if (hit) ctx.onPhase?.(point, 'cached', undefined, { gpu: slot.gpu });
    let check: CheckResult;
    let timing: Pick<
      TimeResult,
      'status' | 'message' | 'groups' | 'stallProblem' | 'countersProblem' | 'pcSampling' | 'gpuTimeProblem'
    > | null = null;
    if (this.folded && !hit) {
      // The program's output in its ncu run is its check: no plain run on a GPU another process is profiling on.
      if (isBaseline) this.baselineStarted.resolve();
      const t = await this.onGpu(slot, () => this.time(p, target, stage, progress('time')));
      // compared with the file as written's output, which may still be coming from another slot
      if (!isBaseline) await this.baselineDone.promise;
      if (t.programFailed !== null || t.stdout === null) {
        const status: SweepVariant['status'] =
          t.programFailed !== null ? (reportsMismatch(t.stdout ?? '') ? 'correctness' : 'runtime') : t.status;
        if (isBaseline) this.setBaseline({ checksums: parseChecksums(t.stdout ?? ''), stdout: null }, p.program, point);
        return { ...v, status, message: t.message };
      }
      check = await this.compare(t.stdout, isBaseline ? null : (this.baseline ?? { checksums: {}, stdout: null }), stage);
      timing = t;
    } else {
      // Every variant is checked against the file as written's checksums, whatever became of that
      // run: with template parameters swept, against the file as written running the same
      // instantiation (the as-written program run once more with this point's arguments).
      if (isBaseline) this.baselineStarted.resolve();
      else await this.baselineDone.promise;
      const reference = isBaseline ? null : await this.referenceFor(point, stage, progress('check'));
      check = hit ? await this.compare(hit.stdout, reference, stage) : await this.plainCheck(p, reference, stage, progress('check'));
    }
    if (isBaseline) this.setBaseline({ checksums: check.checksums, stdout: check.status === 'ok' ? check.stdout : null }, p.program, point);
    if (check.status !== 'ok') return { ...v, status: check.status, message: check.message };
    timing ??= hit ? { status: 'ok', message: null, groups: measuredGroups(hit) } : await this.time(p, target, stage, progress('time'));
    if (isBaseline) this.baselinePc = timing.pcSampling ?? null;
    // stall reasons or counters asked for and missing: said once per reason, and not stored (a later run may get them)
    const missing = [
      timing.stallProblem && `stall reasons\n${timing.stallProblem}`,
      timing.countersProblem && `${COUNTERS}\n${timing.countersProblem}`,
      timing.gpuTimeProblem && `${GPU_TIME}\n${timing.gpuTimeProblem}`,
    ];
    for (const g of timing.groups.values()) if (g.durationSource) this.clocks.add(g.durationSource);
    for (const m of missing) if (m) this.stallProblems.set(m, (this.stallProblems.get(m) ?? 0) + 1);
    if (key && !hit && timing.status === 'ok' && !missing.some(Boolean) && check.stdout !== null)
      this.cache!.put(key, storedMeasurement(timing.groups, check.stdout));
    await this.nameOtherUnits(timing.groups, ctx.signal);
    this.fillTiming(v, timing.groups, kernel, every);
    v.cached = !!hit;
    if (timing.status === 'ok') this.timings.set(v.id, { point, program: p, target, kernel, every, groups: timing.groups });
    // A profile that failed part-way still reports what it collected.
    if (timing.status !== 'ok') return { ...v, status: timing.status, message: timing.message };
    if (!v.samples) return { ...v, status: 'profile', message: `ncu returned no durations for ${kernel}` };
    return v;
  }

  /** Instantiations of the loop's kernel template that another unit built and the run launched: demangled, and named as timed. */
  private async nameOtherUnits(groups: Map<string, KernelSamples>, signal?: AbortSignal): Promise<void> {
    const t = this.target;
    const other = [...new Set([...groups.values()].map(g => g.kernel))].filter(k => t && !t.kernels.includes(k) && !t.demangled?.[k]);
    if (!t || !other.length || signal?.aborted) return;
    const names = await demangle(other, this.o.toolchain);
    t.demangled = { ...t.demangled, ...Object.fromEntries(other.map(k => [k, names.get(k) ?? k])) };
    for (const k of other) this.otherUnits.add(k);
  }

  /** A variant's timing fields from its kernels' launches: the timed kernel's statistics and durations, every kernel's with `every`. */
  private fillTiming(v: SweepVariant, groups: Map<string, KernelSamples>, kernel: string, every: boolean): void {
    const own = groups.get(kernel);
    const primary = own ?? [...groups.values()][0];
    // a project's run launched other instantiations than the one with most of the loop: the first that ran heads the row
    if (!own && primary && this.target?.anyLaunched) {
      v.kernel = primary.kernel;
      v.instantiation = this.target.demangled?.[primary.kernel] ?? v.instantiation;
      v.kernelInstructions = this.sass.kernelSizes.get(v.id)?.[primary.kernel] ?? v.kernelInstructions;
    }
    Object.assign(v, summarize(primary?.durations ?? []));
    v.durationsMs = [...(primary?.durations ?? [])];
    v.stallShare = stallShareOf(primary);
    Object.assign(v, countersOf(primary?.last, this.o.gpu.elements));
    v.registers = primary?.last?.registers ?? v.registers;
    if (every) v.instantiations = [...groups.values()].map(g => this.instantiationTiming(g, v));
  }

  /** What timing a variant again needs: its program, kernels and every launch timed so far (ok timings only). */
  private readonly timings = new Map<
    string,
    { point: SweepPoint; program: VariantProgram; target: BenchTarget; kernel: string; every: boolean; groups: Map<string, KernelSamples> }
  >();

  /** Adaptive sampling: the programs of variants timed before, timed again over the GPU slots; their launches added to the earlier ones. */
  async measureAgain(requests: { variant: SweepVariant; samples: number }[], ctx: RunnerContext): Promise<SweepVariant[]> {
    const out = requests.map(r => r.variant);
    let next = 0;
    await Promise.all(
      this.slots.map(async slot => {
        while (next < requests.length) {
          const i = next++;
          out[i] = await this.timeAgain(requests[i].variant, requests[i].samples, ctx, slot);
        }
      }),
    );
    return out;
  }

  private async timeAgain(variant: SweepVariant, samples: number, ctx: RunnerContext, slot: GpuSlot): Promise<SweepVariant> {
    const t = this.timings.get(variant.id);
    if (!t || samples < 1 || ctx.signal?.aborted) return variant;
    // more durations only: the stall mix (ncu metrics or PC samples) came with the first round
    const stage = { ...this.stageFor(t.point, ctx, slot), samples, stalls: false };
    const own = `${t.program.label}: `;
    const progress = (m: string) =>
      ctx.onPhase?.(t.point, 'time', `again: ${m.startsWith(own) ? m.slice(own.length) : m}`, { gpu: slot.gpu });
    // a project's copy holds another variant by now: this one is built again first (incrementally)
    const rebuilt = this.project ? await this.project.again(t.point, ctx, ctx.signal) : null;
    let r: TimeResult;
    try {
      if (this.project && (!rebuilt || buildFailure(rebuilt))) return variant;
      r = await this.onGpu(slot, () => this.time(t.program, t.target, stage, progress));
    } finally {
      if (this.project) this.project.release(t.point);
    }
    // timing only (the program passed its check); a failed run adds nothing
    if (r.status !== 'ok' || !(r.groups.get(t.kernel) ?? [...r.groups.values()][0])?.durations.length) return variant;
    for (const [key, g] of r.groups) {
      const old = t.groups.get(key);
      t.groups.set(key, old ? { ...g, durations: [...old.durations, ...g.durations], last: old.last ?? g.last } : g);
    }
    const v: SweepVariant = { ...variant, cached: false };
    this.fillTiming(v, t.groups, t.kernel, t.every);
    this.measured.set(v.id, v);
    return v;
  }

  /**
   * Starts the point's first timed run now, held at its first launch (when the timer can), when its
   * SASS (not a copy) and program are ready.
   */
  private startAhead(point: SweepPoint, sass: SweepVariant, built: BuildResult | undefined, ctx: RunnerContext, slot: GpuSlot): void {
    if (sass.status !== 'ok' || sass.identicalTo || !built || buildFailure(built)) return;
    const kernels = this.targetOf(sass)?.target.kernels;
    if (!kernels) return;
    const p: VariantProgram = { label: labelOf(point), program: built.outputPath!, file: this.o.file };
    this.timing.startAhead?.(p, this.stageFor(point, ctx, slot), kernels, slot.gpu);
  }

  /**
   * What a point times: a benchmark's every instantiation; with template parameters swept, the
   * point's own instantiation (the static side found it); otherwise the first kernel measured, for
   * every point. `every`: the benchmark's target. Null: no kernel to time.
   */
  private targetOf(v: SweepVariant): { target: BenchTarget; every: boolean } | null {
    if (this.target?.kernels.length) return { target: this.target, every: true };
    const kernel = (this.o.templateParams ?? []).length ? v.kernel : (this.kernel ?? v.kernel ?? this.o.kernelFilter ?? null);
    return kernel ? { target: { kernel, kernels: [kernel] }, every: false } : null;
  }

  /** One variant's kernel timings, by the timer the run options chose. */
  private time(p: VariantProgram, target: BenchTarget, stage: TimingStage, progress: (m: string) => void): Promise<TimeResult> {
    return this.timing.time(p, target, stage, progress);
  }

  /** How a point's program runs on the slot's GPU: its arguments, where reports go, and its progress and cost accounting. */
  private stageFor(point: SweepPoint, ctx: RunnerContext, slot: GpuSlot): TimingStage & { onRun: (r: GpuRun) => void } {
    return {
      ...this.o.gpu,
      // `{NAME}` in the program arguments: the point's value (the file as written: the defaults).
      args: this.argsFor(point),
      // a project's run and check are its own shell command lines, run in the copy's root
      ...(this.o.project ? projectLaunch(this.o.project) : {}),
      // ncu reports go where a launcher's nodes see them: beside the build cache, never the local temp folder.
      runDir: this.o.gpu.runDir ?? defaultRunDir(this.o.cacheDir, this.o.gpu.launcher),
      env: slot.env,
      onRun: (run: GpuRun) => this.clock.add(slot.gpu, run),
      onSamples: (have: number, wanted: number, phase: 'time' | 'stalls') =>
        ctx.onPhase?.(point, phase, `${have}/${wanted} samples`, { gpu: slot.gpu, samples: have, samplesWanted: wanted }),
      toolchain: this.o.toolchain,
      signal: ctx.signal,
      loops: this.o.loops,
    };
  }

  /** One kernel's launches in a variant (a benchmark's row for that instantiation); speedups come from the sweep. */
  private instantiationTiming(g: KernelSamples, v: SweepVariant): InstantiationTiming {
    const sizes = this.sass.kernelSizes.get(v.id);
    return {
      kernel: g.kernel,
      blockSize: g.blockSize,
      kernelInstructions: sizes?.[g.kernel] ?? (g.kernel === v.kernel ? v.kernelInstructions : null),
      registers: g.last?.registers ?? (g.kernel === v.kernel ? v.registers : null),
      ...summarize(g.durations),
      speedup: null,
      withinNoise: null,
      stallShare: stallShareOf(g),
      ...countersOf(g.last, this.o.gpu.elements),
      ...spillsOf(this.target, g.kernel),
    };
  }

  /** A plain run of the program for its result: a GPU run, counted with its time. */
  private async plainCheck(
    p: VariantProgram,
    reference: BaselineOutput | null,
    stage: Parameters<typeof checkVariant>[2] & { onRun?: (r: GpuRun) => void },
    progress: (m: string) => void,
  ): Promise<CheckResult> {
    const startMs = Date.now();
    try {
      return await checkVariant(p, reference, stage, progress);
    } finally {
      stage.onRun?.({ kind: 'check', startMs, endMs: Date.now() });
      this.checkMs += Date.now() - startMs;
    }
  }

  /** A stored or ncu-run output against the reference: no GPU run. */
  private async compare(stdout: string, reference: BaselineOutput | null, stage: Parameters<typeof checkOutput>[2]): Promise<CheckResult> {
    const startMs = Date.now();
    try {
      return await checkOutput(stdout, reference, stage);
    } finally {
      this.checkMs += Date.now() - startMs;
    }
  }

  private setBaseline(b: BaselineOutput, program: string, point: SweepPoint): void {
    this.baseline = b;
    this.baselineProgram = program;
    this.references.set(this.instantiationKey(point), Promise.resolve(b));
  }

  /**
   * One measurement on the slot's GPU, sharing it with the GPU's other ncu processes; one that
   * fails while sharing (memory, a timeout spent waiting for ncu's lock) is run again alone.
   */
  private async onGpu(slot: GpuSlot, f: () => Promise<TimeResult>): Promise<TimeResult> {
    const turns = this.turns.get(slot.gpu) ?? (this.turns.set(slot.gpu, new GpuTurns()), this.turns.get(slot.gpu)!);
    return turns.sharedThenAlone(f, () => this.perGpu > 1);
  }

  private instantiationKey(point: SweepPoint): string {
    return JSON.stringify(Object.entries(templateArgs(point.params, this.o.templateParams ?? [], this.o.templateDefaults)));
  }

  /** The file as written's output for the point's template instantiation (its plain run with the point's arguments). */
  private referenceFor(
    point: SweepPoint,
    stage: Parameters<typeof checkVariant>[2],
    progress: (m: string) => void,
  ): Promise<BaselineOutput> {
    const none: BaselineOutput = { checksums: {}, stdout: null };
    if (!(this.o.templateParams ?? []).length || !this.baselineProgram) return Promise.resolve(this.baseline ?? none);
    const key = this.instantiationKey(point);
    let ref = this.references.get(key);
    if (!ref) {
      const program: VariantProgram = { label: `as-written_${labelOf(point)}`, program: this.baselineProgram, file: this.o.file };
      ref = this.plainCheck(program, null, stage, progress).then(c => ({
        checksums: c.checksums,
        stdout: c.status === 'ok' ? c.stdout : null,
      }));
      this.references.set(key, ref);
    }
    return ref;
  }
}

/** How a project's programs are started and checked: its run and check commands through the shell, in the copy. */
function projectLaunch(project: ProjectRun): { runCommand: string[]; args: string[]; checkCommand?: string[] } {
  const { run, check } = project.commands;
  return {
    runCommand: ['/bin/sh', '-c', run],
    args: [],
    ...(check ? { checkCommand: ['/bin/sh', '-c', check] } : {}),
  };
}
