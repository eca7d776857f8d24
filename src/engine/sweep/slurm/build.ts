// A Slurm sweep's build stage, on the submitting machine (issue 28): before anything is queued,
// every point to submit gets its SASS side measured (cubins, disassembly, code hash: the static
// runner) and its program built (the GPU runner's program builds), through the build cache in the
// shared directory, with progress and cancel as a local sweep's builds. The tasks only run what was
// built here: nodes need no nvcc and each variant is compiled once. A point whose build fails is
// its final result, never submitted; one with the machine code of an earlier point is not
// submitted either (it takes that point's timing, as locally).
import * as os from 'os';
import { buildFailure } from '../../gpu/stages/build';
import { TimerUnavailableError, verifiedTimerLibrary } from '../../gpu/cupti/timerLibrary';
import { hashBoundedFile, READ_CAPS } from '../../base/boundedRead';
import type { GpuRunConfig } from '../../gpu/options';
import { timerFor } from '../../gpu/timer';
import { ProgramBuilds } from '../runners/programs';
import type { RunnerContext } from '../runners/runner';
import { limitProcesses, StaticRunner, StaticRunnerOptions } from '../runners/static';
import { pointId, SweepPoint } from '../space';
import { CodeRegistry } from '../variant';
import type { BuiltFile, PreparedPoint, SlurmManifest } from './manifest';

export interface SlurmBuildOptions {
  /** The sweep's SASS side (sweep.ts staticOptionsOf): the same cubins a local sweep builds. */
  static: StaticRunnerOptions;
  gpu: GpuRunConfig;
}

export class SlurmBuilds {
  private readonly sass: StaticRunner;
  private readonly programs: ProgramBuilds;
  private library: Promise<SlurmManifest['timerLibrary']> | null = null;

  constructor(private readonly o: SlurmBuildOptions) {
    this.sass = new StaticRunner(o.static);
    // as many program builds at once as the SASS side's cubins (as the GPU runner builds them)
    const runner = limitProcesses(o.static.toolchain.runner, Math.max(1, o.static.jobs || os.cpus().length));
    this.programs = new ProgramBuilds({ ...o.static, compileCommand: o.gpu.compileCommand }, runner);
  }

  /** nvcc time here (cubins and programs; cache hits cost nothing). */
  compileS(): number {
    return this.sass.cost().compileS + this.programs.compileMs / 1000;
  }

  notes(): string[] {
    return this.sass.notes();
  }

  /**
   * The points' SASS and programs (the file as written among them, first). Identical code is
   * marked against the points before it here only: the caller decides what is a copy.
   */
  async prepare(points: SweepPoint[], ctx: RunnerContext): Promise<PreparedPoint[]> {
    const local = new AbortController();
    const stop = () => local.abort();
    if (ctx.signal?.aborted) stop();
    ctx.signal?.addEventListener('abort', stop);
    try {
      const { programs, building } = this.programs.start(points, ctx, local.signal);
      const phases = { signal: ctx.signal, onPhase: ctx.onPhase, registry: new CodeRegistry(true) };
      let sass;
      try {
        sass = await this.sass.measure(points, phases);
      } finally {
        if (ctx.signal?.aborted) stop();
        await building;
      }
      const out: PreparedPoint[] = [];
      for (const [i, p] of points.entries()) {
        const built = await programs[i];
        const failed = built ? buildFailure(built) : { status: 'cancelled' as const, message: null };
        let variant = { ...sass[i], identicalTo: null };
        if (variant.status === 'ok' && failed) variant = { ...variant, ...failed };
        const program = variant.status === 'ok' && built?.outputPath ? builtFile(built.outputPath) : null;
        out.push({ point: p, variant, codeHash: this.sass.codeHashes.get(pointId(p)) ?? null, program });
      }
      return out;
    } finally {
      ctx.signal?.removeEventListener('abort', stop);
    }
  }

  /** The CUPTI timer library (timer cupti), built once here: the tasks load it, they do not build it. */
  timerLibrary(signal?: AbortSignal): Promise<SlurmManifest['timerLibrary']> {
    if (!timerFor(this.o.gpu).loadsTimerLibrary) return Promise.resolve(null);
    const s = this.o.static;
    // its hash as verified against its seal: a library swapped in the shared folder since is refused on the node
    return (this.library ??= verifiedTimerLibrary({ toolchain: s.toolchain, cacheDir: s.cacheDir, timeoutMs: s.timeoutMs, signal }).catch(
      (e: unknown) => {
        this.library = null;
        if (e instanceof TimerUnavailableError) return { problem: e.message };
        throw e;
      },
    ));
  }
}

function builtFile(p: string): BuiltFile {
  // the build cache may be on the shared folder: a regular file only, size-capped (never a FIFO planted under its name)
  return { path: p, sha256: hashBoundedFile(p, { maxBytes: READ_CAPS.executable, what: 'program', followLinks: false }) };
}
