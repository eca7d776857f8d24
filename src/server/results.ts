// Kernel sweeps and the results they leave: runs a sweep with live updates for the panel, saves
// every finished result under the workspace (.unroll-lens/results/), lists, loads and exports
// saved ones, and turns a chosen variant into pragma edits of the user's document (Apply, and the
// loop's quick fix). The document itself is only ever changed by the client applying those edits.
import * as path from 'path';
import { CancellationToken, CodeAction, CodeActionKind, Connection, Range, TextEdit } from 'vscode-languageserver/node';
import {
  applyTargetProblem,
  gpuBlocker,
  listResults,
  loadResult,
  parseParamSpec,
  resultsDir,
  runSweep,
  saveResult,
  sweepCsv,
  sweepT4,
  unrollPragmaEdit,
  type ConvertContext,
  type FileAnalysis,
  type ProcessRunner,
} from '../engine';
import { runConfigFromSettings } from './runOptions';
import { lineStallNotes } from './wire';
import { EDITOR_GPU_BLOCKER_TEXT } from './gpuReadinessText';
import { checkAppliedFactors, checkSweepResult, SchemaError } from '../schema/result';
import { applyBestOffer, intervalText } from '../schema/applyBest';
import {
  ExportResultParams,
  FactorValue,
  PragmaEditsParams,
  ListResultsResult,
  PragmaEditsResult,
  Settings,
  SweepParams,
  SweepResult,
  SweepRunResult,
  SweepUpdateNotification,
  WireTextEdit,
} from '../protocol';
import type { DocumentFactsStore } from './facts';
import type { ServerToolchain } from './toolchain';
import { uriToPath } from './uri';
import { requestedFactors } from './unrollFactors';
import { slurmProblem, slurmRunnerFromSettings } from './slurm';

/** Live panel updates: at most this often while variants stream in (the last one always goes). */
const UPDATE_INTERVAL_MS = 250;

export class ResultsService {
  constructor(
    private readonly connection: Connection,
    private readonly toolchain: ServerToolchain,
    private readonly facts: DocumentFactsStore,
    private readonly settings: () => Settings,
    private readonly cacheDir: () => string,
    private readonly workspaceRoots: () => string[],
    /** Stands in for sbatch, squeue, sacct and scancel (tests); absent: the real ones. */
    private readonly slurmProcess?: ProcessRunner,
  ) {}

  /** The workspace folder holding `file` (the deepest), else the file's own folder. */
  private folderFor(file: string): string {
    const roots = this.workspaceRoots().filter(r => file === r || file.startsWith(r.endsWith(path.sep) ? r : r + path.sep));
    return roots.sort((a, b) => b.length - a.length)[0] ?? path.dirname(file);
  }

  /** Saves a finished result; a result that cannot be saved is still shown, with why in the log. */
  save(result: SweepResult): string | null {
    try {
      return saveResult(this.folderFor(result.file), result);
    } catch (e) {
      this.toolchain.log(`could not save the result of ${result.kernel}: ${e instanceof Error ? e.message : e}`);
      return null;
    }
  }

  /** The context that turns one loop's variants or benchmark into a panel result. */
  async convertContext(file: string, analysis: FileAnalysis): Promise<ConvertContext> {
    const t = await this.toolchain.tools();
    const s = this.settings();
    return {
      file,
      analysis,
      arch: this.toolchain.archFor(t, this.toolchain.flagsFor(file).arch),
      nvcc: t.nvcc.version,
      icacheBudgetBytes: s.icacheBudgetBytes,
    };
  }

  /** Keeps a result with the document's facts: the loop quick fix offers its best variant. */
  remember(uri: string, text: string, result: SweepResult): void {
    if (result.best)
      this.facts.record(uri, text, f => {
        f.results = [result, ...f.results.filter(r => !sameLoops(r, result))];
      });
  }

  async sweep(p: SweepParams, text: string, analysis: FileAnalysis, token: CancellationToken): Promise<SweepRunResult> {
    const file = uriToPath(p.uri);
    if (!file) throw new Error('only files on disk can be compiled (save the file first)');
    const kernel = analysis.kernels.find(k => k.line === p.kernelLine);
    if (!kernel) throw new Error(`no kernel or device function at line ${p.kernelLine}`);
    const s = this.settings();
    // no factors: a sweep of parameters only (the editor's sweep of a kernel without loops)
    const factors = requestedFactors(p.factors, s, true);
    const params = Object.fromEntries(
      (p.params ?? [])
        .filter(x => x.trim())
        .map(parseParamSpec)
        .map(x => [x.name, x.values]),
    );
    const work = {
      title: `Unroll Lens: sweeping ${kernel.name}`,
      message: `${path.basename(file)}:${kernel.line}`,
      building: `sweep ${kernel.name}`,
      token,
      workDoneToken: p.workDoneToken,
    };
    // on a Slurm cluster (unrollLens.profile.slurm.enabled): built here, measured by a job array
    const slurm = s.profile.slurm.enabled && !p.static;
    const refused = slurm ? slurmProblem(s.profile) : null;
    if (refused) throw new Error(refused);
    return this.toolchain.runRequest(work, async (signal, report) => {
      const t = await this.toolchain.tools(file);
      const flags = this.toolchain.flagsFor(file);
      const arch = this.toolchain.archFor(t, flags.arch);
      const gpu = this.gpuProblem(t.ncu !== null, t.gpus.length, text, !!p.static, slurm);
      // Several GPUs (unrollLens.profile.gpus) and shared storage (sharedDirectory), as the bench uses them;
      // on Slurm the nodes' GPUs, and a static sweep none
      const gpusHere = gpu === null && !slurm ? t.gpus.length : null;
      const { cacheDir, config } = runConfigFromSettings(s.profile, { cacheDir: this.cacheDir(), gpusHere });
      let last = 0;
      let pending: SweepResult | null = null;
      let timer: NodeJS.Timeout | null = null;
      let progress: { message: string; done: number; total: number; atMost?: boolean } | null = null;
      const flush = () => {
        timer = null;
        if (pending) this.connection.sendNotification(SweepUpdateNotification, { runId: p.runId, result: pending, progress });
        pending = null;
        last = Date.now();
      };
      const result = await runSweep(
        {
          file,
          text,
          analysis,
          kernel: kernel.name,
          loops: p.loops,
          factors,
          params,
          strategy: p.strategy,
          toolchain: t,
          arch,
          flags,
          cacheDir,
          jobs: s.jobs > 0 ? s.jobs : undefined,
          icacheBudgetBytes: s.icacheBudgetBytes,
          compileTimeoutMs: s.toolchain.nvccTimeoutSeconds * 1000,
          signal,
          ...(slurm && gpu === null ? { runner: slurmRunnerFromSettings(s.profile, this.slurmProcess) } : {}),
          gpu: gpu === null ? config : undefined,
        },
        {
          onProgress: pr => {
            progress = { message: pr.message, done: pr.done, total: pr.total, ...(pr.atMost ? { atMost: true } : {}) };
            report(Math.round((Math.min(pr.done, pr.total) / Math.max(1, pr.total)) * 100), pr.message);
          },
          onVariant: (_v, partial) => {
            pending = partial;
            if (!timer) timer = setTimeout(flush, Math.max(0, UPDATE_INTERVAL_MS - (Date.now() - last)));
          },
        },
      );
      if (timer) clearTimeout(timer);
      if (gpu) result.notes.push(`static sweep: ${gpu}`);
      // A cancelled sweep is shown but not saved: a saved result is a finished one.
      const savedPath = result.complete ? this.save(result) : null;
      this.connection.sendNotification(SweepUpdateNotification, { runId: p.runId, result, progress: null });
      if (result.complete) this.remember(p.uri, text, result);
      return { result, savedPath, lineStalls: lineStallNotes(result.lineStalls ?? []) };
    });
  }

  /** Why this sweep cannot run on a GPU, or null when it can (the rule: engine/gpu/readiness.ts). */
  private gpuProblem(hasNcu: boolean, gpus: number, text: string, staticAsked: boolean, slurm: boolean): string | null {
    const s = this.settings();
    const blocker = gpuBlocker({
      staticAsked,
      // on Slurm the GPUs and ncu are the nodes': this machine's say nothing about them
      hasNcu: hasNcu || slurm,
      timer: s.profile.timer,
      gpus,
      launcher: slurm ? ['sbatch'] : s.profile.launcher,
      text,
      compileCommand: s.profile.compileCommand,
    });
    return blocker && EDITOR_GPU_BLOCKER_TEXT[blocker];
  }

  list(): ListResultsResult {
    const out: ListResultsResult = { results: [], skipped: [] };
    const folders = [...new Set(this.workspaceRoots())];
    for (const folder of folders) {
      const { results, skipped } = listResults(folder);
      for (const r of results) {
        out.results.push({
          path: r.path,
          kernel: r.kernel,
          file: r.source,
          createdAt: r.createdAt,
          origin: r.origin,
          static: r.static,
          best: r.best,
        });
      }
      for (const k of skipped) out.skipped.push({ path: path.join(resultsDir(folder), k.file), reason: k.reason });
    }
    out.results.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    return out;
  }

  load(file: string): SweepResult {
    return loadResult(file);
  }

  exportResult(p: ExportResultParams): { text: string; fileName: string } {
    // From the panel (a restored or planted result): exported only when every number is possible.
    p = { ...p, result: checkSweepResult(p.result) };
    const base = `${p.result.kernel.replace(/[^A-Za-z0-9_.-]+/g, '_')}-${p.result.createdAt.slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}`;
    return p.format === 'csv'
      ? { text: sweepCsv(p.result), fileName: `${base}.csv` }
      : { text: JSON.stringify(sweepT4(p.result), null, 2) + '\n', fileName: `${base}.t4.json` };
  }

  /** Edits writing each loop's factor into `text`; loops that moved or vanished are reported, not guessed. */
  pragmaEdits(text: string, analysis: FileAnalysis, factors: Record<string, FactorValue>): PragmaEditsResult {
    // The factors come from a result file or the panel: nothing is edited unless every one is an
    // unroll factor nvcc honours, on a line that is a number (src/schema/result.ts).
    let checked: Record<string, FactorValue>;
    try {
      checked = checkAppliedFactors(factors);
    } catch (e) {
      if (e instanceof SchemaError) return { edits: [], problems: [`${e.message}: nothing applied`] };
      throw e;
    }
    const loops = analysis.kernels.flatMap(k => k.loops);
    const edits: WireTextEdit[] = [];
    const problems: string[] = [];
    const lines = lineOffsets(text);
    for (const [line, factor] of Object.entries(checked)) {
      const loop = loops.find(l => l.line === Number(line));
      if (!loop) {
        problems.push(`no loop at line ${line} any more: the file changed since the result was measured`);
        continue;
      }
      const e = unrollPragmaEdit(text, loop, factor);
      if (e) edits.push({ range: { start: position(lines, e.startOffset), end: position(lines, e.endOffset) }, newText: e.newText });
    }
    return { edits, problems };
  }

  /** Quick fixes on a loop: write the best factor of the last sweep or benchmark that covered it. */
  codeActions(uri: string, text: string, analysis: FileAnalysis, range: Range): CodeAction[] {
    const facts = this.facts.get(uri, text);
    if (!facts?.results.length) return [];
    const actions: CodeAction[] = [];
    const loops = analysis.kernels
      .flatMap(k => k.loops)
      .filter(l => l.span.line - 1 <= range.end.line && l.span.endLine - 1 >= range.start.line);
    const seen = new Set<string>();
    for (const result of facts.results) {
      const best = result.variants.find(v => v.id === result.best);
      // not offered while the best is within noise of the file as written (issue 25: applyBestOffer)
      if (!best || !Object.keys(best.factors).length || !applyBestOffer(result).offer) continue;
      if (!loops.some(l => String(l.line) in best.factors) || seen.has(best.id)) continue;
      seen.add(best.id);
      const { edits } = this.pragmaEdits(text, analysis, best.factors);
      if (!edits.length) continue;
      const c = result.confidence;
      const ci = c?.ratioLow != null && c.ratioHigh != null ? `, ${intervalText(c.level, c.ratioLow, c.ratioHigh).slice(1, -1)}` : '';
      const how =
        best.speedup !== null && !result.static
          ? ` (${best.speedup.toFixed(2)}× vs as written on ${result.gpu ?? 'the GPU'}${ci})`
          : ' (static rule)';
      actions.push({
        title: `Apply ${best.label}: best of the last ${result.origin === 'sweep' ? 'sweep' : result.origin === 'bench' ? 'benchmark' : 'variant build'}${how}`,
        kind: CodeActionKind.QuickFix,
        isPreferred: actions.length === 0,
        edit: { changes: { [uri]: edits.map(e => TextEdit.replace(e.range, e.newText)) } },
      });
    }
    return actions;
  }
}

function sameLoops(a: SweepResult, b: SweepResult): boolean {
  return a.origin === b.origin && a.loops.map(l => l.line).join(',') === b.loops.map(l => l.line).join(',');
}

/** Offsets of each line start, for offset → LSP position. */
function lineOffsets(text: string): number[] {
  const out = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') out.push(i + 1);
  return out;
}

function position(lines: number[], offset: number): { line: number; character: number } {
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lines[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo, character: offset - lines[lo] };
}

/**
 * Why Apply's edits for `p` must not be made to the open document `file` (null: they may). The
 * request names the result its factors come from; a planted result naming another file, a file
 * outside the workspace, or a text that changed since the measurement gets a problem, no edits.
 */
export function applyProblem(
  p: PragmaEditsParams,
  file: string | null,
  text: string,
  analysis: FileAnalysis,
  roots: string[],
): string | null {
  const m = p.measured as Partial<PragmaEditsParams['measured']> | undefined;
  if (!m || typeof m !== 'object' || typeof m.file !== 'string') return 'Apply needs the result its factors come from';
  if (!file) return 'only files on disk can be edited by Apply';
  const loops = Array.isArray(m.loops) ? m.loops.filter(l => l && typeof l.line === 'number') : [];
  return applyTargetProblem({
    resultFile: m.file,
    sourceSha256: m.sourceSha256,
    loops,
    documentPath: file,
    documentText: text,
    analysis,
    workspaceFolders: roots,
  });
}
