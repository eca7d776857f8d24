// GPU evaluation, on the bench stages (profile/stages/): per point, the SASS side first (the
// static runner: instructions, registers, occupancy, and the code hash), then — unless the
// machine code is identical to a variant already timed with the same parameters, whose
// measurement it then reuses — a program build with the point's factors and -D values, a plain
// run checked against the file as written's checksums, and kernel durations and stall shares
// under ncu. Programs of a batch build in parallel; runs go one after another (one GPU).
import type { SweepVariant } from '../../../protocol';
import type { BenchOptions } from '../../profile/bench';
import { buildFailure } from '../../profile/stages/build';
import { BaselineOutput, checkVariant } from '../../profile/stages/check';
import type { VariantProgram } from '../../profile/stages/program';
import { summarize } from '../../profile/stages/summary';
import { timeVariant } from '../../profile/stages/time';
import { MissingToolError } from '../../toolchain/discover';
import type { CompileFlags } from '../../toolchain/flags';
import { BuildResult, VariantBuilder } from '../../variants/build';
import { makeVariantSource, variantKey } from '../../variants/rewrite';
import { AS_WRITTEN_ID, defineArgs, pointId, SweepPoint, variantFactorsOf } from '../space';
import { GPU_FIELDS } from '../variant';
import type { RunnerContext, SweepRunner } from './runner';
import { limitProcesses, StaticRunner, StaticRunnerOptions } from './static';

/** How programs are run and timed: the bench settings (unrollLens.profile.*). */
export type GpuSettings = Pick<
  BenchOptions,
  | 'args'
  | 'samples'
  | 'warmup'
  | 'clockControl'
  | 'timeoutMs'
  | 'launcher'
  | 'runCommand'
  | 'compileCommand'
  | 'checkCommand'
  | 'keepReportsDir'
>;

export interface GpuRunnerOptions extends StaticRunnerOptions {
  gpu: GpuSettings;
  /** Names of the swept macros: a project compile command cannot take -D values. */
  params: string[];
}

/** A point id as a file-name-safe label for ncu reports and progress. */
function labelOf(p: SweepPoint): string {
  return pointId(p).replace(/[^A-Za-z0-9_.=+-]+/g, '_');
}

export class GpuRunner implements SweepRunner {
  readonly static = false;
  readonly gpu: string | null;
  private readonly sass: StaticRunner;
  private readonly limited;
  private readonly builders = new Map<string, VariantBuilder>();
  /** Every variant measured so far, by id: identical-code points copy from here. */
  private readonly measured = new Map<string, SweepVariant>();
  private baseline: BaselineOutput | null = null;
  private kernel: string | null = null;

  constructor(private readonly o: GpuRunnerOptions) {
    if (!o.toolchain.ncu) throw new MissingToolError('ncu', []);
    if (o.params.length && o.gpu.compileCommand?.length) {
      throw new Error(
        `sweeping ${o.params.join(', ')} needs nvcc builds (-D flags): the project compile command (unrollLens.profile.compileCommand) cannot take them`,
      );
    }
    this.gpu = o.toolchain.gpus[0]?.name ?? null;
    this.sass = new StaticRunner(o);
    this.limited = limitProcesses(o.toolchain.runner, Math.max(1, o.jobs || 1));
  }

  notes(): string[] {
    return [
      `timed under ncu on ${this.gpu ?? 'the GPU'}, ${this.o.gpu.samples} launches per variant after ${this.o.gpu.warmup} warm-up, ` +
        `clocks ${this.o.gpu.clockControl === 'base' ? 'locked to base' : 'not locked (--clock-control none)'}`,
      ...(this.kernel ? [`timed kernel: ${this.kernel}`] : []),
      ...this.sass.notes(),
    ];
  }

  private programBuilder(params: Record<string, string>): VariantBuilder {
    const defines = defineArgs(params);
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
        runner: this.limited,
        compileTemplate: this.o.gpu.compileCommand,
        timeoutMs: this.o.timeoutMs,
      });
      this.builders.set(key, b);
    }
    return b;
  }

  async measure(points: SweepPoint[], ctx: RunnerContext): Promise<SweepVariant[]> {
    // 1. SASS of every point (parallel builds), identical code marked against everything so far.
    const sass = await this.sass.measure(points, { ...ctx, onVariant: undefined });
    // 2. Programs for the points that will run, built in parallel before the GPU is busy.
    // (identicalTo is only set here for the same code with the same parameters, measured earlier
    // in this batch or before: step 3 copies it, so no program is needed.)
    const runs = sass.map(v => v.status === 'ok' && !v.identicalTo);
    const programs: (BuildResult | undefined)[] = new Array(points.length);
    const groups = new Map<string, number[]>();
    points.forEach((p, i) => {
      const key = defineArgs(p.params).join(' ');
      if (runs[i]) groups.set(key, [...(groups.get(key) ?? []), i]);
    });
    await Promise.all(
      [...groups.values()].map(async idx => {
        idx.forEach(i => ctx.onPhase?.(points[i], 'build', 'program'));
        const built = await this.programBuilder(points[idx[0]].params).buildAll(
          idx.map(i => ({
            key: variantKey(variantFactorsOf(points[i])),
            source: makeVariantSource(this.o.text, this.o.analysis, variantFactorsOf(points[i]), this.o.file),
            originalPath: this.o.file,
          })),
          { signal: ctx.signal },
        );
        idx.forEach((i, j) => {
          programs[i] = built[j];
        });
      }),
    );
    // 3. One at a time on the GPU, in point order.
    const out: SweepVariant[] = [];
    for (let i = 0; i < points.length; i++) {
      const v = await this.run(points[i], sass[i], programs[i], ctx);
      if (v.status !== 'cancelled') {
        this.measured.set(v.id, v);
        ctx.onVariant?.(v);
      }
      out.push(v);
    }
    return out;
  }

  private async run(point: SweepPoint, sass: SweepVariant, program: BuildResult | undefined, ctx: RunnerContext): Promise<SweepVariant> {
    const v: SweepVariant = { ...sass };
    if (v.status !== 'ok') return v;
    if (ctx.signal?.aborted) return { ...v, status: 'cancelled' };
    const same = v.identicalTo ? this.measured.get(v.identicalTo) : undefined;
    if (same) {
      // Same machine code, same parameters: the same program. Its timing (or failure) stands for this one.
      ctx.onPhase?.(point, 'reuse', same.label);
      for (const k of GPU_FIELDS) (v as unknown as Record<string, unknown>)[k] = same[k];
      return { ...v, status: same.status, message: same.message };
    }
    const failed = program ? buildFailure(program) : { status: 'cancelled' as const, message: null };
    if (failed) return { ...v, ...failed };
    this.kernel ??= v.kernel ?? this.o.kernelFilter ?? null;
    if (!this.kernel)
      return { ...v, status: 'profile', message: `the kernel ${this.o.kernel} is not in the build: is it instantiated and launched?` };
    const p: VariantProgram = { label: labelOf(point), program: program!.outputPath!, file: this.o.file };
    const stage = { ...this.o.gpu, toolchain: this.o.toolchain, signal: ctx.signal, loops: this.o.loops };
    const progress = (phase: 'check' | 'time') => (m: string) =>
      ctx.onPhase?.(point, phase, m.startsWith(`${p.label}: `) ? m.slice(p.label.length + 2) : m);
    const isBaseline = v.id === AS_WRITTEN_ID;
    // Every variant is checked against the file as written's checksums, whatever became of that run.
    const check = await checkVariant(p, isBaseline ? null : (this.baseline ?? { checksums: {}, stdout: null }), stage, progress('check'));
    if (isBaseline) this.baseline = { checksums: check.checksums, stdout: check.status === 'ok' ? check.stdout : null };
    if (check.status !== 'ok') return { ...v, status: check.status, message: check.message };
    const timing = await timeVariant(p, { kernel: this.kernel, kernels: [this.kernel] }, stage, progress('time'));
    const primary = timing.groups.get(this.kernel) ?? [...timing.groups.values()][0];
    Object.assign(v, summarize(primary?.durations ?? []));
    v.stallShare = primary?.last?.stallShare ?? null;
    v.achievedOccupancy = primary?.last?.achievedOccupancy ?? null;
    // A profile that failed part-way still reports what it collected.
    if (timing.status !== 'ok') return { ...v, status: timing.status, message: timing.message };
    if (!v.samples) return { ...v, status: 'profile', message: `ncu returned no durations for ${this.kernel}` };
    return v;
  }
}
