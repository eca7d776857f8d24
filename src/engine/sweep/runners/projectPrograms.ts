// The programs of a GPU sweep built by the project's own build (issue 39): one copy of the source
// tree holds one variant at a time, so a point's program is a lease on that copy: the point's
// variant written into it and the project's build run there, held until the GPU runner has
// checked and timed it (release), then the next point's variant is written and built. Points
// whose machine code is identical to an earlier one, or whose SASS did not build, are never
// built. The run itself (the project's run command) starts in the copy's root.
import type { SweepVariant } from '../../../schema/types';
import type { FileAnalysis } from '../../parse/model';
import type { ProcessRunner } from '../../toolchain/process';
import type { BuildResult } from '../../variants/build';
import type { ProjectBuildOutcome, ProjectRun } from '../../variants/projectTree';

export type { ProjectRun };
import { variantKey, variantSource } from '../../variants/rewrite';
import { AS_WRITTEN_ID, pointId, SweepPoint, variantFactorsOf } from '../space';
import { deferred } from './pipelining';
import type { RunnerContext } from './runner';
import type { ProgramPromise } from './programs';

/** A point's label as the build sees it (UNROLL_LENS_VARIANT) and failures name it. */
function variantLabel(p: SweepPoint): string {
  const f = Object.values(p.factors);
  return f.length ? `×${f[0]}` : 'as written';
}

export class ProjectPrograms {
  /** The point whose variant the copy holds and who holds the lease, released when its GPU work is done. */
  private queue: Promise<void> = Promise.resolve();
  private readonly releases = new Map<string, () => void>();
  /** Points done before their turn came (cancelled, copies): never built. */
  private readonly done = new Set<string>();
  /** The variant (key) the copy holds now. */
  private current: string | null = null;
  /** Build time of every variant built, and how many. */
  buildMs = 0;
  builds: { label: string; ms: number; status: ProjectBuildOutcome['status'] }[] = [];

  constructor(
    private readonly o: {
      project: ProjectRun;
      file: string;
      text: string;
      analysis: FileAnalysis;
      runner: ProcessRunner;
    },
  ) {}

  /** The copy's root: every program's path (the run starts there). */
  get dir(): string {
    return this.o.project.tree.dir;
  }

  /** Waits for the lease on the copy; resolves with its release. */
  private acquire(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>(r => (release = r));
    const ready = this.queue.then(() => release);
    this.queue = this.queue.then(() => held);
    return ready;
  }

  /**
   * Every point's program in point order, the file as written first, each built once the one
   * before has been released and its own SASS is in (copies and failures are not built).
   */
  start(
    points: SweepPoint[],
    ctx: Pick<RunnerContext, 'onPhase'>,
    signal: AbortSignal,
    sass: Promise<SweepVariant>[],
  ): { programs: ProgramPromise[]; building: Promise<void> } {
    const ready = points.map(() => deferred<BuildResult | undefined>());
    const order = points
      .map((_, i) => i)
      .sort((a, b) => Number(pointId(points[b]) === AS_WRITTEN_ID) - Number(pointId(points[a]) === AS_WRITTEN_ID));
    const building = (async () => {
      for (const i of order) {
        const id = pointId(points[i]);
        const s = await sass[i].catch(() => null);
        if (signal.aborted || !s || s.status !== 'ok' || s.identicalTo || this.done.has(id)) {
          ready[i].resolve(undefined);
          continue;
        }
        const release = await this.acquire();
        if (this.done.has(id)) {
          release();
          ready[i].resolve(undefined);
          continue;
        }
        this.releases.set(id, release);
        ready[i].resolve(await this.buildPoint(points[i], ctx, signal).catch(() => undefined));
      }
    })();
    return { programs: ready.map(r => r.promise), building };
  }

  /** The point's GPU work is over: the copy may take the next variant. */
  release(point: SweepPoint): void {
    const id = pointId(point);
    this.done.add(id);
    const r = this.releases.get(id);
    this.releases.delete(id);
    r?.();
  }

  /**
   * The point's program again, later (per-line stalls of the file as written, more samples):
   * its variant rebuilt in the copy (the build's own incremental build) and held until release.
   */
  async again(point: SweepPoint, ctx: Pick<RunnerContext, 'onPhase'>, signal?: AbortSignal): Promise<BuildResult | undefined> {
    const release = await this.acquire();
    const id = pointId(point);
    this.done.delete(id);
    this.releases.set(id, release);
    try {
      return await this.buildPoint(point, ctx, signal);
    } catch {
      return undefined;
    }
  }

  private async buildPoint(point: SweepPoint, ctx: Pick<RunnerContext, 'onPhase'>, signal?: AbortSignal): Promise<BuildResult> {
    const factors = variantFactorsOf(point);
    const key = variantKey(factors);
    const label = variantLabel(point);
    if (this.current !== key) {
      this.o.project.tree.writeVariant(this.o.file, variantSource(this.o.text, this.o.analysis, factors, this.o.file));
      this.current = key;
    }
    ctx.onPhase?.(point, 'build', 'project build');
    const r = await this.o.project.tree.build(this.o.project.commands.build, {
      runner: this.o.runner,
      timeoutMs: this.o.project.buildTimeoutMs,
      signal,
      variant: label,
    });
    this.buildMs += r.ms;
    this.builds.push({ label, ms: r.ms, status: r.status });
    return {
      key,
      status: r.status,
      hash: '',
      outputPath: r.status === 'ok' ? this.dir : null,
      ptxasLog: '',
      messages:
        r.status === 'timeout'
          ? [
              {
                file: null,
                line: null,
                column: null,
                severity: 'error',
                code: null,
                kind: 'internal',
                message: `${label}: the build command ran past ${Math.round(this.o.project.buildTimeoutMs / 1000)} s (--build-timeout) and was killed`,
              },
            ]
          : r.status === 'failed'
            ? [
                {
                  file: null,
                  line: null,
                  column: null,
                  severity: 'error',
                  code: null,
                  kind: 'internal',
                  message: `${label}: the build command failed (exit ${r.exitCode}); its first errors:\n${r.firstErrors.join('\n')}`,
                },
              ]
            : [],
      failureKind: r.status === 'ok' ? null : r.status === 'failed' ? 'internal' : r.status,
      compileMs: r.ms,
      cached: false,
    };
  }

  /** One line on what the builds cost: the first and each further one. */
  note(): string | null {
    if (!this.builds.length) return null;
    const [first, ...rest] = this.builds;
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    return (
      `built by the project's build command in a copy of ${this.o.project.tree.root} (${this.dir}): first build ${s(first.ms)}` +
      (rest.length ? `, then ${rest.map(b => `${b.label} ${s(b.ms)}`).join(', ')}` : '')
    );
  }
}
