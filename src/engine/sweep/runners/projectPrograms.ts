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
import type { ProjectBuildOutcome, ProjectRun, ProjectTree } from '../../variants/projectTree';

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

/** One copy of the project and the variant it holds. */
interface Copy {
  tree: ProjectTree;
  /** The variant (key) written into it last; null: the source as synced. */
  current: string | null;
}

export class ProjectPrograms {
  /** Copies no point holds, and points waiting for one. */
  private readonly free: Copy[];
  private readonly waiting: ((c: Copy) => void)[] = [];
  /** The copy each point holds, by point id, until release. */
  private readonly held = new Map<string, Copy>();
  /** Points done before their turn came (cancelled, copies): never built. */
  private readonly done = new Set<string>();
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
  ) {
    this.free = o.project.trees.map(tree => ({ tree, current: null }));
  }

  /** A free copy (one that holds `key` already first), once one is released. */
  private acquire(key?: string): Promise<Copy> {
    const i = Math.max(
      0,
      this.free.findIndex(c => c.current === key),
    );
    const c = this.free.splice(i, 1)[0];
    return c ? Promise.resolve(c) : new Promise(r => this.waiting.push(r));
  }

  private give(c: Copy): void {
    const next = this.waiting.shift();
    if (next) next(c);
    else this.free.push(c);
  }

  /**
   * Every point's program, the file as written first: each built in a free copy once its own SASS
   * is in (copies and failures are not built), as many at once as there are copies, each copy
   * held until the point's GPU work is done.
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
      const builds: Promise<void>[] = [];
      for (const i of order) {
        const id = pointId(points[i]);
        const s = await sass[i].catch(() => null);
        if (signal.aborted || !s || s.status !== 'ok' || s.identicalTo || this.done.has(id)) {
          ready[i].resolve(undefined);
          continue;
        }
        const copy = await this.acquire();
        if (this.done.has(id) || signal.aborted) {
          this.give(copy);
          ready[i].resolve(undefined);
          continue;
        }
        this.held.set(id, copy);
        builds.push(
          this.buildPoint(points[i], copy, ctx, signal).then(
            r => ready[i].resolve(r),
            () => ready[i].resolve(undefined),
          ),
        );
      }
      await Promise.all(builds);
    })();
    return { programs: ready.map(r => r.promise), building };
  }

  /** The point's GPU work is over: its copy may take the next variant. */
  release(point: SweepPoint): void {
    const id = pointId(point);
    this.done.add(id);
    const c = this.held.get(id);
    this.held.delete(id);
    if (c) this.give(c);
  }

  /**
   * The point's program again, later (more samples): its variant rebuilt in a copy (the build's
   * own incremental build, nothing when that copy holds it still) and held until release.
   */
  async again(point: SweepPoint, ctx: Pick<RunnerContext, 'onPhase'>, signal?: AbortSignal): Promise<BuildResult | undefined> {
    const copy = await this.acquire(variantKey(variantFactorsOf(point)));
    const id = pointId(point);
    this.done.delete(id);
    this.held.set(id, copy);
    try {
      return await this.buildPoint(point, copy, ctx, signal);
    } catch {
      return undefined;
    }
  }

  private async buildPoint(point: SweepPoint, copy: Copy, ctx: Pick<RunnerContext, 'onPhase'>, signal?: AbortSignal): Promise<BuildResult> {
    const factors = variantFactorsOf(point);
    const key = variantKey(factors);
    const label = variantLabel(point);
    if (copy.current !== key) {
      copy.tree.writeVariant(this.o.file, variantSource(this.o.text, this.o.analysis, factors, this.o.file));
      copy.current = key;
    }
    ctx.onPhase?.(point, 'build', 'project build');
    const r = await copy.tree.build(this.o.project.commands.build, {
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
      outputPath: r.status === 'ok' ? copy.tree.dir : null,
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
    return projectBuildsNote(this.builds, this.o.project.trees);
  }
}

/**
 * What the builds cost, the first and each further one; with one copy and builds waiting for each
 * other, how to build two at once (on ggml a second bench went from 0.53–0.63× to 0.30–0.33× of the
 * hand loop: docs/measurements.md).
 */
export function projectBuildsNote(builds: ProjectPrograms['builds'], trees: Pick<ProjectTree, 'root' | 'dir'>[]): string | null {
  if (!builds.length) return null;
  const [first, ...rest] = builds;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const serial =
    trees.length === 1 && rest.length >= 2
      ? `; the builds ran one after another in one copy: --build-copies 2 (setting unrollLens.project.buildCopies) builds two ` +
        `variants at once, in a second copy whose first bench builds the whole project once more and which takes as much disk`
      : '';
  return (
    `built by the project's build command in ${trees.length > 1 ? `${trees.length} copies` : 'a copy'} of ${trees[0].root} ` +
    `(${trees.map(t => t.dir).join(', ')}): first build ${s(first.ms)}` +
    (rest.length ? `, then ${rest.map(b => `${b.label} ${s(b.ms)}`).join(', ')}` : '') +
    serial
  );
}
