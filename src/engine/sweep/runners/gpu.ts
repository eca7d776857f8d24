// GPU evaluation, on the bench stages (profile/stages/): per point, the SASS side first (the
// static runner: instructions, registers, occupancy, and the code hash), then — unless the
// machine code is identical to a variant already timed with the same parameters, whose
// measurement it then reuses — a program build with the point's factors and -D values, a plain
// run checked against the file as written's checksums, and kernel durations and stall shares
// under ncu. Programs of a batch build in parallel; runs go one after another (one GPU).
import * as path from 'path';
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
import { variantSource, variantKey } from '../../variants/rewrite';
import { AS_WRITTEN_ID, defineArgs, pointId, substituteArgs, SweepPoint, templateArgs, variantFactorsOf } from '../space';
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
  | 'runDir'
>;

export interface GpuRunnerOptions extends StaticRunnerOptions {
  gpu: GpuSettings;
  /** Names of the swept macros: a project compile command cannot take -D values. */
  params: string[];
  /** Every swept parameter's value for the file as written: `{NAME}` in its program arguments. */
  paramDefaults?: Record<string, string>;
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
  /** The file as written's program: run once more per template instantiation for that instantiation's reference output. */
  private baselineProgram: string | null = null;
  /** Reference output per template instantiation (JSON of its values), the as-written one included. */
  private readonly references = new Map<string, Promise<BaselineOutput>>();
  private kernel: string | null = null;
  /** Every kernel timed: one per instantiation when template parameters are swept. */
  private readonly timed = new Set<string>();

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
      ...(this.timed.size > 1 ? [`timed kernels: ${[...this.timed].join(', ')}`] : this.kernel ? [`timed kernel: ${this.kernel}`] : []),
      ...this.sass.notes(),
    ];
  }

  private programBuilder(params: Record<string, string>): VariantBuilder {
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
      const key = defineArgs(p.params, this.o.templateParams).join(' ');
      if (runs[i]) groups.set(key, [...(groups.get(key) ?? []), i]);
    });
    await Promise.all(
      [...groups.values()].map(async idx => {
        idx.forEach(i => ctx.onPhase?.(points[i], 'build', 'program'));
        const built = await this.programBuilder(points[idx[0]].params).buildAll(
          idx.map(i => ({
            key: variantKey(variantFactorsOf(points[i])),
            source: variantSource(this.o.text, this.o.analysis, variantFactorsOf(points[i]), this.o.file),
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
    // With template parameters swept each point times its own instantiation (the static side
    // found it); otherwise the first kernel measured, for every point.
    const templates = this.o.templateParams ?? [];
    const kernel = templates.length ? v.kernel : (this.kernel ??= v.kernel ?? this.o.kernelFilter ?? null);
    if (!kernel)
      return { ...v, status: 'profile', message: `the kernel ${this.o.kernel} is not in the build: is it instantiated and launched?` };
    this.timed.add(kernel);
    const p: VariantProgram = { label: labelOf(point), program: program!.outputPath!, file: this.o.file };
    // `{NAME}` in the program arguments: the point's value (the file as written: the defaults).
    const args = substituteArgs(this.o.gpu.args, { ...(this.o.paramDefaults ?? {}), ...point.params });
    // ncu reports go where a launcher's nodes see them: beside the build cache, never the local temp folder.
    const runDir = this.o.gpu.runDir ?? (this.o.gpu.launcher.length ? path.join(path.dirname(this.o.cacheDir), 'runs') : undefined);
    const stage = { ...this.o.gpu, args, runDir, toolchain: this.o.toolchain, signal: ctx.signal, loops: this.o.loops };
    const progress = (phase: 'check' | 'time') => (m: string) =>
      ctx.onPhase?.(point, phase, m.startsWith(`${p.label}: `) ? m.slice(p.label.length + 2) : m);
    const isBaseline = v.id === AS_WRITTEN_ID;
    // Every variant is checked against the file as written's checksums, whatever became of that
    // run: with template parameters swept, against the file as written running the same
    // instantiation (the as-written program run once more with this point's arguments).
    const reference = isBaseline ? null : await this.referenceFor(point, stage, progress('check'));
    const check = await checkVariant(p, reference, stage, progress('check'));
    if (isBaseline) {
      this.baseline = { checksums: check.checksums, stdout: check.status === 'ok' ? check.stdout : null };
      this.baselineProgram = p.program;
      this.references.set(this.instantiationKey(point), Promise.resolve(this.baseline));
    }
    if (check.status !== 'ok') return { ...v, status: check.status, message: check.message };
    const timing = await timeVariant(p, { kernel, kernels: [kernel] }, stage, progress('time'));
    const primary = timing.groups.get(kernel) ?? [...timing.groups.values()][0];
    Object.assign(v, summarize(primary?.durations ?? []));
    v.stallShare = primary?.last?.stallShare ?? null;
    v.achievedOccupancy = primary?.last?.achievedOccupancy ?? null;
    // A profile that failed part-way still reports what it collected.
    if (timing.status !== 'ok') return { ...v, status: timing.status, message: timing.message };
    if (!v.samples) return { ...v, status: 'profile', message: `ncu returned no durations for ${kernel}` };
    return v;
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
      ref = checkVariant(program, null, stage, progress).then(c => ({
        checksums: c.checksums,
        stdout: c.status === 'ok' ? c.stdout : null,
      }));
      this.references.set(key, ref);
    }
    return ref;
  }
}
