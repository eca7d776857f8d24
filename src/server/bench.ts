// "Benchmark this loop" on the server: build, check, time and profile every unroll factor of one
// loop on the GPU. One run at a time per request; cancellable through the request's token.
import * as path from 'path';
import { CancellationToken, ProgressToken } from 'vscode-languageserver/node';
import {
  KernelComparison,
  ProjectError,
  SweepSpaceError,
  closeProjectRun,
  openProjectRun,
  type ProjectRun,
  benchLabelOfId,
  benchLoop,
  benchStopsAt,
  compareKernels,
  gpuBlocker,
  splitCommandLine,
  type FileAnalysis,
} from '../engine';
import type { SweepProgress } from '../schema/progress';
import type { SweepResult } from '../schema/types';
import { runConfigFromSettings } from './runOptions';
import { EDITOR_GPU_BLOCKER_TEXT } from './gpuReadinessText';
import type { Settings } from '../protocol';
import { DocumentFactsStore, recordBench } from './facts';
import type { ServerToolchain } from './toolchain';
import { uriToPath } from './uri';
import { requestedFactors } from './unrollFactors';
import { projectRunConfigured } from './features';

/** A bench step as the work-done progress message: `4 · time 12/20 · GPU 1 · ~20 s left`. */
export function benchWorkMessage(p: SweepProgress): string {
  const parts: string[] = [];
  if (p.variant !== null) parts.push(benchLabelOfId(p.variant));
  parts.push(
    (p.phase === 'time' || p.phase === 'stalls') && p.samplesWanted
      ? `${p.phase} ${p.samples ?? 0}/${p.samplesWanted}`
      : p.phase === 'source-stalls'
        ? 'source-line stalls'
        : p.phase,
  );
  if (p.gpu !== null && p.gpu !== undefined) parts.push(`GPU ${p.gpu}`);
  if (p.etaS !== null && p.etaS !== undefined) parts.push(`~${Math.max(0, Math.round(p.etaS))} s left`);
  return parts.join(' · ');
}

/** Work-done percentage: variants finished of all, 0 to 100. */
export function benchWorkPercent(p: Pick<SweepProgress, 'done' | 'total'>): number {
  return p.total > 0 ? Math.round((Math.min(Math.max(p.done, 0), p.total) / p.total) * 100) : 0;
}

export class BenchService {
  constructor(
    private readonly toolchain: ServerToolchain,
    private readonly facts: DocumentFactsStore,
    private readonly settings: () => Settings,
    private readonly cacheDir: () => string,
    /** A header's translation unit (chosen, or from compile_commands.json): its SASS is built through it. */
    private readonly unitFor: (file: string) => string | null = () => null,
    private readonly workspaceRoots: () => string[] = () => [],
  ) {}

  async benchLoop(
    uri: string,
    text: string,
    analysis: FileAnalysis,
    line: number,
    factorTexts: string[] | undefined,
    token: CancellationToken,
    workDoneToken?: ProgressToken,
  ): Promise<SweepResult> {
    const file = uriToPath(uri);
    if (!file) throw new Error('only files on disk can be benchmarked');
    const s = this.settings();
    const factors = requestedFactors(factorTexts, s);
    const work = {
      title: 'Unroll Lens: benchmarking unroll variants on the GPU',
      message: `line ${line}`,
      building: `GPU ${path.basename(file)}:${line}`,
      token,
      workDoneToken,
    };
    return this.toolchain.runRequest(work, async (signal, progress) => {
      const run = await this.gpuRun(file, text);
      const project = this.openProject(file, run.cacheDir, signal);
      try {
        const report = await benchLoop(file, text, analysis, {
          ...run,
          loops: [line],
          factors,
          signal,
          progress: p => progress(benchWorkPercent(p), benchWorkMessage(p)),
          project,
        });
        this.facts.record(uri, text, f => recordBench(f, line, report));
        return report;
      } finally {
        closeProjectRun(project);
      }
    });
  }

  /**
   * "Compare kernels in this file" (issue 26): the named kernels of the file's program timed side
   * by side from the same runs, as `unroll-lens compare` does, under the bench's settings and rules.
   */
  async compareKernels(
    uri: string,
    text: string,
    analysis: FileAnalysis,
    p: { kernels: string[]; baseline?: string; args?: string },
    token: CancellationToken,
    workDoneToken?: ProgressToken,
  ): Promise<KernelComparison> {
    const file = uriToPath(uri);
    if (!file) throw new Error('only files on disk can be benchmarked');
    const work = {
      title: 'Unroll Lens: comparing kernels on the GPU',
      message: p.kernels.join(', '),
      building: `GPU ${path.basename(file)}: compare`,
      token,
      workDoneToken,
    };
    return this.toolchain.runRequest(work, async (signal, progress) => {
      const run = await this.gpuRun(file, text);
      const project = this.openProject(file, run.cacheDir, signal);
      try {
        return await compareKernels(file, text, analysis, {
          ...run,
          project,
          // typed by the user in the command's prompt: words as a shell would split them, no shell
          ...(p.args !== undefined ? { args: splitCommandLine(p.args) } : {}),
          kernels: p.kernels,
          baseline: p.baseline,
          signal,
          progress: pr => progress(benchWorkPercent(pr), benchWorkMessage(pr)),
        });
      } catch (e) {
        // a name that is no kernel of the file, or a baseline that is none of the compared: said as it is
        if (e instanceof SweepSpaceError) throw new Error(e.message);
        throw e;
      } finally {
        closeProjectRun(project);
      }
    });
  }

  /**
   * The copy of the project the run builds in (unrollLens.project.*; settings restricted under
   * Workspace Trust), locked and brought up to date; undefined without a project build and run.
   */
  private openProject(file: string, cacheDir: string, signal: AbortSignal): ProjectRun | undefined {
    const s = this.settings();
    if (!projectRunConfigured(s)) return undefined;
    const roots = this.workspaceRoots();
    const holding = roots.filter(r => file.startsWith(r + path.sep)).sort((a, b) => b.length - a.length)[0];
    const root = s.project.root ? path.resolve(roots[0] ?? path.dirname(file), s.project.root) : (holding ?? path.dirname(file));
    const commands = { root, build: s.project.buildCommand, run: s.project.runCommand, check: s.project.checkCommand.trim() || null };
    try {
      const buildTimeoutMs = s.project.buildTimeoutSeconds * 1000;
      return openProjectRun(commands, { file, cacheDir, copies: s.project.buildCopies, buildTimeoutMs, signal }).run;
    } catch (e) {
      // a bad setting or a tree that cannot be copied: said as it is (unrollLens.project.*)
      if (e instanceof ProjectError) throw new Error(`unrollLens.project: ${e.message}`);
      throw e;
    }
  }

  /** What a GPU run of the file's program needs, from the settings; throws when the GPU rules stop it (no main, no timer, …). */
  private async gpuRun(file: string, text: string) {
    const s = this.settings();
    const t = await this.toolchain.tools(file);
    // The sweep's rule, and the bench's stop (engine/gpu/readiness.ts), as on the command line.
    const blocker = gpuBlocker({
      hasNcu: t.ncu !== null,
      timer: s.profile.timer,
      gpus: t.gpus.length,
      launcher: s.profile.launcher,
      text,
      compileCommand: s.profile.compileCommand,
      project: projectRunConfigured(s),
    });
    if (blocker && benchStopsAt(blocker)) throw new Error(EDITOR_GPU_BLOCKER_TEXT[blocker]);
    // a header's SASS (which kernels hold the loop, each variant's code) comes through its unit
    const tu = this.unitFor(file);
    const flags = this.toolchain.flagsFor(tu ?? file);
    const { cacheDir, config } = runConfigFromSettings(s.profile, { cacheDir: this.cacheDir(), gpusHere: t.gpus.length });
    return {
      ...config,
      toolchain: t,
      arch: this.toolchain.archFor(t, flags.arch),
      flags,
      cacheDir,
      // nvcc itself is also held to it by the toolchain's runner; this covers compileCommand (make, cmake).
      nvccTimeoutMs: s.toolchain.nvccTimeoutSeconds * 1000,
      translationUnit: tu ?? undefined,
    };
  }
}
