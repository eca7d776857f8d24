// The programs of a GPU sweep's points: one runnable executable per point (its loops' pragmas
// rewritten, its macro parameters as -D flags), built in parallel through the build cache, one
// builder per -D set. The GPU runner builds them beside the SASS side; a Slurm sweep builds them
// all on the submitting machine before anything is queued (its tasks only run them).
import type { FileAnalysis } from '../../parse/model';
import type { CompileFlags } from '../../toolchain/flags';
import type { ProcessRunner } from '../../toolchain/process';
import type { Toolchain } from '../../toolchain/toolchain';
import { BuildResult, VariantBuilder } from '../../variants/build';
import { variantKey, variantSource } from '../../variants/rewrite';
import { defineArgs, SweepPoint, variantFactorsOf } from '../space';
import type { RunnerContext } from './runner';
import type { StaticRunner } from './static';
import type { VerifiedLibrary } from '../../gpu/cupti/timerLibrary';

export interface ProgramBuildOptions {
  file: string;
  text: string;
  analysis: FileAnalysis;
  toolchain: Toolchain;
  arch: string;
  flags: CompileFlags;
  cacheDir: string;
  timeoutMs?: number;
  templateParams?: string[];
  /** A project's compile command (unrollLens.profile.compileCommand) instead of nvcc. */
  compileCommand?: string[];
}

/** A point's program once built (undefined: its build threw, which the point reports as cancelled or failed). */
export type ProgramPromise = Promise<BuildResult | undefined>;

export class ProgramBuilds {
  private readonly builders = new Map<string, VariantBuilder>();
  /** nvcc time of the programs built (cache hits cost nothing). */
  compileMs = 0;

  constructor(
    private readonly o: ProgramBuildOptions,
    /** Shared with the SASS side's builds: at most that many processes at once. */
    private readonly runner: ProcessRunner,
  ) {}

  private builder(params: Record<string, string>): VariantBuilder {
    const defines = defineArgs(params, this.o.templateParams);
    const key = defines.join(' ');
    let b = this.builders.get(key);
    if (!b) {
      const flags: CompileFlags = { ...this.o.flags, args: [...this.o.flags.args, ...defines] };
      b = new VariantBuilder({
        mode: 'program',
        nvcc: this.o.toolchain.nvcc,
        arch: this.o.arch,
        flags,
        cacheDir: this.o.cacheDir,
        runner: this.runner,
        compileTemplate: this.o.compileCommand,
        timeoutMs: this.o.timeoutMs,
      });
      this.builders.set(key, b);
    }
    return b;
  }

  /** Every point's program, built in parallel (a group per -D set); each resolves as soon as its own build ends. */
  start(
    points: SweepPoint[],
    ctx: Pick<RunnerContext, 'onPhase'>,
    signal: AbortSignal,
  ): { programs: ProgramPromise[]; building: Promise<void> } {
    const ready = points.map(() => {
      let resolve!: (b: BuildResult | undefined) => void;
      const promise = new Promise<BuildResult | undefined>(r => (resolve = r));
      return { promise, resolve };
    });
    const groups = new Map<string, number[]>();
    points.forEach((p, i) => {
      const key = defineArgs(p.params, this.o.templateParams).join(' ');
      groups.set(key, [...(groups.get(key) ?? []), i]);
    });
    const building = Promise.all(
      [...groups.values()].map(async idx => {
        idx.forEach(i => ctx.onPhase?.(points[i], 'build', 'program'));
        try {
          const built = await this.builder(points[idx[0]].params).buildAll(
            idx.map(i => ({
              key: variantKey(variantFactorsOf(points[i])),
              source: variantSource(this.o.text, this.o.analysis, variantFactorsOf(points[i]), this.o.file),
              originalPath: this.o.file,
            })),
            {
              signal,
              onResult: (j, r) => {
                if (!r.cached && r.status !== 'cancelled') this.compileMs += r.compileMs;
                ready[idx[j]].resolve(r);
              },
            },
          );
          idx.forEach((i, j) => ready[i].resolve(built[j]));
        } catch {
          // a build that threw is no program: its point says cancelled or failed
        } finally {
          idx.forEach(i => ready[i].resolve(undefined));
        }
      }),
    ).then(() => undefined);
    return { programs: ready.map(r => r.promise), building };
  }
}

/**
 * What a runner that only runs programs is given (a Slurm task, whose programs were built on the
 * submitting machine): the SASS side's variants, each point's program, the CUPTI timer library.
 */
export interface PreparedPrograms {
  sass: Pick<StaticRunner, 'measure' | 'cost' | 'notes' | 'kernelSizes'>;
  programs(points: SweepPoint[]): ProgramPromise[];
  /** The CUPTI timer library's path and the sha256 it was checked with (or TimerUnavailableError with why not). */
  timerLibrary?: () => Promise<VerifiedLibrary>;
}
