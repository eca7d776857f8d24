// How the GPU runner times a variant with the timer the run options chose (gpu/timer.ts): under
// ncu (gpu/stages/time.ts), or in the program's own runs with the CUPTI timer (gpu/cupti/), which
// keeps what its runs share within one runner: the timer library (built once; its path keys the
// measurements), first runs started ahead of their turn, the program runs an earlier variant of
// the same arguments needed, and the file as written's PC samples for its per-line stalls.
import type { BenchTarget } from '../../gpu/stages/build';
import type { VariantProgram } from '../../gpu/stages/program';
import { TimeOptions, TimeResult, timeVariant } from '../../gpu/stages/time';
import { timeNative } from '../../gpu/cupti/timeNative';
import { cachedPcSourceStalls, PcSourceOptions } from '../../gpu/cupti/pcSourceStalls';
import { privateTimerCopy, TimerUnavailableError, verifiedTimerLibrary, type VerifiedLibrary } from '../../gpu/cupti/timerLibrary';
import type { LineStallsResult } from '../../gpu/stages/lineStalls';
import { MeasuredWith, MeasurementCache, measurementKeyFor } from '../../gpu/measurementCache';
import type { GpuRunConfig } from '../../gpu/options';
import type { KernelTimer } from '../../gpu/timer';
import type { Toolchain } from '../../toolchain/toolchain';
import { withCuptiPermissionHelp } from '../../profile/permissionHelp';
import type { BuildResult } from '../../variants/build';
import { AheadRuns } from './pipelining';
import { withCounters } from './counters';

/** How one point's program runs on one GPU slot (the runner's stageFor). */
export type TimingStage = TimeOptions & Pick<GpuRunConfig, 'timer' | 'counters'>;

/** The PC samples of a timed run (CUPTI timer): the file as written's give its per-line stalls. */
export type PcSamples = NonNullable<TimeResult['pcSampling']>;

/** What a runner's timing needs from the runner: where the library is built, and a library built elsewhere (a Slurm task). */
export interface TimingContext {
  toolchain: Toolchain;
  cacheDir: string;
  /** The library build's limit (the runner's compile limit). */
  timeoutMs?: number;
  launcher: readonly string[];
  /** The launches a first round takes per variant: a later round (adaptive sampling) takes no run started ahead. */
  samples: number;
  counters?: boolean;
  cache: MeasurementCache | null;
  built?: () => Promise<VerifiedLibrary>;
}

export interface VariantTiming {
  /** Starts what every timing needs (the CUPTI timer's library) beside the program builds; its failure is each point's. */
  prepare(signal?: AbortSignal): void;
  /** What keys a measurement besides the stage (the CUPTI timer's library path); undefined for ncu. */
  libraryKey(signal?: AbortSignal): Promise<string | undefined>;
  /** One variant's kernel timings. */
  time(p: VariantProgram, target: BenchTarget, stage: TimingStage, progress: (m: string) => void): Promise<TimeResult>;
  /**
   * Starts the point's first timed run now, held at its first launch, when the timer can (the
   * CUPTI timer, its library built) and no cache answers for it; absent: the timer cannot.
   */
  startAhead?(p: VariantProgram, stage: TimingStage, kernels: string[], gpu: number | null): void;
  /** Stops the runs started ahead for this build and not taken (with `args`: only those with these arguments). */
  drop(built: BuildResult | undefined, args?: readonly string[]): Promise<void>;
  /**
   * The file as written's stalls per source line from its timed run's PC samples; null when the
   * timer takes none (ncu: an ncu run of its source page gives them).
   */
  sourceLineStalls(
    samples: PcSamples | null,
    p: VariantProgram,
    kernel: string,
    text: string,
    o: PcSourceOptions & MeasuredWith,
    cache: { store: MeasurementCache | null; gpu: number | null },
  ): Promise<(LineStallsResult & { cached: boolean }) | null>;
}

/** ncu times each launch in its own process: nothing is shared between timings. */
class NcuTiming implements VariantTiming {
  prepare(): void {}
  libraryKey(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
  time(p: VariantProgram, target: BenchTarget, stage: TimingStage, progress: (m: string) => void): Promise<TimeResult> {
    return timeVariant(p, target, stage, progress);
  }
  drop(): Promise<void> {
    return Promise.resolve();
  }
  sourceLineStalls(): Promise<null> {
    return Promise.resolve(null);
  }
}

class CuptiTiming implements VariantTiming {
  /** First runs started ahead of their turn (one GPU each), by program path. */
  private readonly ahead = new AheadRuns();
  /** The timer library once built (startAhead needs it at once): its path in the cache, which keys measurements. */
  private libraryPath: string | null = null;
  /** What programs load: a private copy of it, checked against its hash (the cache folder may be shared), or it with a launcher. */
  private libraryLoad: string | null = null;
  private library: Promise<string> | null = null;
  /** Program runs a timing needed, by program arguments. */
  private readonly runsByArgs = new Map<string, number>();

  constructor(private readonly c: TimingContext) {}

  prepare(signal?: AbortSignal): void {
    this.timerLibrary(signal).catch(() => undefined);
  }

  libraryKey(signal?: AbortSignal): Promise<string | undefined> {
    return this.timerLibrary(signal).catch(() => undefined);
  }

  /**
   * Built once per runner (and once per toolkit on disk); the sweep's cancel stops its nvcc (a
   * cancelled build leaves no file). Its path keys measurements; programs run here load a private
   * copy made from the bytes that passed its hash check, so a library swapped in a shared folder
   * after the check is never loaded (with a launcher the program may run elsewhere: it loads the
   * checked path itself).
   */
  private timerLibrary(signal?: AbortSignal): Promise<string> {
    const o = { toolchain: this.c.toolchain, cacheDir: this.c.cacheDir, timeoutMs: this.c.timeoutMs, signal };
    return (this.library ??= (this.c.built ? this.c.built() : verifiedTimerLibrary(o)).then(l => {
      this.libraryLoad = this.c.launcher.length ? l.path : privateTimerCopy(l);
      return (this.libraryPath = l.path);
    }));
  }

  /** What a timing of this stage runs with: the same for a run started ahead and the timing that takes it. */
  private nativeOptions(stage: TimingStage, library: string) {
    return { ...stage, library, stallSampling: stage.stalls !== false, expectedRuns: this.runsByArgs.get(JSON.stringify(stage.args)) };
  }

  async time(p: VariantProgram, target: BenchTarget, stage: TimingStage, progress: (m: string) => void): Promise<TimeResult> {
    let library: string;
    try {
      library = await this.timerLibrary(stage.signal);
    } catch (e) {
      if (!(e instanceof TimerUnavailableError)) throw e;
      return { status: 'profile', message: e.message, groups: new Map(), stdout: null, programFailed: null };
    }
    // runs a variant of these arguments needed before: the next variant starts its second run early;
    // its first may have been started ahead (startAhead), with these same options
    const args = JSON.stringify(stage.args);
    const firstRound = stage.samples === this.c.samples;
    const ahead = firstRound ? this.ahead.take(p.program, stage.env, stage.args) : undefined;
    let r = await timeNative(p, target, { ...this.nativeOptions(stage, this.libraryLoad ?? library), ahead }, progress);
    if (r.status === 'ok' && r.runs && firstRound) this.runsByArgs.set(args, r.runs);
    if (r.status === 'ok' && this.c.counters) {
      const c = await withCounters(r, p, target, stage, progress);
      r = { ...c.timing, countersProblem: c.problem };
    }
    // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: how to allow profiling, said once (profile/permissionHelp.ts)
    return r.message === null ? r : { ...r, message: withCuptiPermissionHelp(r.message) };
  }

  startAhead(p: VariantProgram, stage: TimingStage, kernels: string[], gpu: number | null): void {
    if (!this.libraryPath || stage.signal?.aborted) return;
    // the measurement cache answers for it: nothing to run
    if (this.c.cache?.get(measurementKeyFor({ ...stage, timerLibrary: this.libraryPath }, p.program, gpu, kernels))) return;
    this.ahead.start(p, this.nativeOptions(stage, this.libraryLoad ?? this.libraryPath));
  }

  drop(built: BuildResult | undefined, args?: readonly string[]): Promise<void> {
    return this.ahead.drop(built, args);
  }

  async sourceLineStalls(
    samples: PcSamples | null,
    p: VariantProgram,
    kernel: string,
    text: string,
    o: PcSourceOptions & MeasuredWith,
    cache: { store: MeasurementCache | null; gpu: number | null },
  ): Promise<(LineStallsResult & { cached: boolean }) | null> {
    if (o.stalls === false) return null;
    return cachedPcSourceStalls(samples, p, kernel, text, { ...o, timerLibrary: this.libraryPath ?? undefined }, cache);
  }
}

/** The runner's timing with this timer: one per runner, holding what its timings share. */
export function timingFor(timer: KernelTimer, c: TimingContext): VariantTiming {
  return timer.loadsTimerLibrary ? new CuptiTiming(c) : new NcuTiming();
}
