// Compiler-backed facts for open CUDA files: the file as written (and rolled) is compiled in
// the background on open and save; one loop's unroll variants are built on request. Results
// feed hover, CodeLens and diagnostics; builds report $/progress and can be cancelled.
import * as crypto from 'crypto';
import * as os from 'os';
import * as path from 'path';
import { fileURLToPath } from 'url';
import { CancellationToken, Connection, Diagnostic, DiagnosticSeverity, Range } from 'vscode-languageserver/node';
import type { FileAnalysis } from '../engine/parse/model';
import { chooseArch, detectToolchain, Toolchain, toolchainSummary } from '../engine/toolchain/toolchain';
import { MissingToolError } from '../engine/toolchain/discover';
import { resolveCompileFlags } from '../engine/toolchain/flags';
import type { CompilerMessage } from '../engine/toolchain/nvccErrors';
import { VariantBuilder } from '../engine/variants/build';
import { FileSassReport, LoopReport, VariantInspector } from '../engine/variants/inspect';
import { parseFactorList, UnrollFactor, writtenFactor } from '../engine/variants/rewrite';
import { Settings, ToolchainStatus, ToolchainStatusNotification } from '../protocol';
import { benchLoop, BenchReport } from '../engine/profile/bench';
import { icacheBudget } from '../engine/profile/icache';

export interface SassState {
  file: FileSassReport | null;
  /** Loop line → variants report, for the text they were built from. */
  loops: Map<number, LoopReport>;
  /** Loop line → GPU benchmark of its variants. */
  benches: Map<number, BenchReport>;
  textHash: string;
}

function hashText(text: string): string {
  return crypto.createHash('sha1').update(text).digest('hex');
}

function uriToPath(uri: string): string | null {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : null;
  } catch {
    return null;
  }
}

export class SassService {
  private toolchain: Promise<Toolchain> | null = null;
  private readonly states = new Map<string, SassState>();
  private readonly running = new Map<string, AbortController>();
  private problem: string | null = null;

  constructor(
    private readonly connection: Connection,
    private readonly settings: () => Settings,
    private readonly workspaceRoots: () => string[],
    private readonly cacheDir: () => string,
    private readonly onChange: (uri: string) => void,
  ) {}

  /** Settings changed: tools may be elsewhere now. */
  reset(): void {
    this.toolchain = null;
    this.problem = null;
  }

  private log(msg: string): void {
    this.connection.console.log(`[sass] ${msg}`);
  }

  private async tools(): Promise<Toolchain> {
    if (!this.toolchain) {
      const s = this.settings();
      const paths: Record<string, string> = {};
      if (s.toolchain.nvccPath) paths.nvcc = s.toolchain.nvccPath;
      if (s.toolchain.cuobjdumpPath) paths.cuobjdump = s.toolchain.cuobjdumpPath;
      if (s.toolchain.nvdisasmPath) paths.nvdisasm = s.toolchain.nvdisasmPath;
      if (s.toolchain.ncuPath) paths.ncu = s.toolchain.ncuPath;
      this.toolchain = detectToolchain({ paths, cudaHome: s.toolchain.cudaHome || undefined });
      this.toolchain.then(
        t => {
          this.problem = !t.nvdisasm && !t.cuobjdump
            ? 'neither nvdisasm nor cuobjdump found: counts come from the cubin, without per-loop attribution. Install the CUDA Toolkit or run `npm run setup:cuda-tools`.'
            : !t.nvdisasm ? 'nvdisasm not found: effective unroll needs its line info. Install the CUDA Toolkit or run `npm run setup:cuda-tools`.' : null;
          this.log(`nvcc ${t.nvcc.version} at ${t.nvcc.path}; nvdisasm ${t.nvdisasm?.path ?? 'missing'}; cuobjdump ${t.cuobjdump?.path ?? 'missing'}; GPUs: ${t.gpus.map(g => `${g.name} (${g.arch})`).join(', ') || 'none'}`);
          this.sendStatus(null);
        },
        e => {
          this.problem = e instanceof MissingToolError ? e.message : `cannot detect the CUDA toolchain: ${e}`;
          this.log(this.problem);
          this.sendStatus(null);
        },
      );
    }
    return this.toolchain;
  }

  private sendStatus(building: string | null): void {
    void this.toolchain?.then(
      t => {
        const status: ToolchainStatus = { summary: toolchainSummary(t, this.archFor(t, null)), problem: this.problem, building };
        this.connection.sendNotification(ToolchainStatusNotification, status);
      },
      () => {
        const status: ToolchainStatus = { summary: null, problem: this.problem, building };
        this.connection.sendNotification(ToolchainStatusNotification, status);
      },
    );
  }

  private archFor(t: Toolchain, fromFlags: string | null): string {
    return chooseArch(this.settings().arch || null, fromFlags, t.gpus).arch;
  }

  /** compile_commands.json for the file, else the settings' flags. */
  private flagsFor(file: string) {
    const s = this.settings();
    return resolveCompileFlags(file, this.workspaceRoots(), { nvccArgs: s.nvccArgs, includePaths: s.includePaths, defines: s.defines, arch: s.arch || null });
  }

  private async inspector(file: string): Promise<VariantInspector> {
    const t = await this.tools();
    const s = this.settings();
    const flags = this.flagsFor(file);
    for (const w of flags.warnings) this.log(`${path.basename(file)}: ${w}`);
    const arch = this.archFor(t, flags.arch);
    const builder = new VariantBuilder({ nvcc: t.nvcc, arch, flags, cacheDir: this.cacheDir(), concurrency: s.jobs > 0 ? s.jobs : os.cpus().length, runner: t.runner });
    return new VariantInspector({ toolchain: t, builder, arch });
  }

  state(uri: string, text: string): SassState | null {
    const st = this.states.get(uri);
    return st && st.textHash === hashText(text) ? st : null;
  }

  /** Background build of the file as written (on open/save). A newer request cancels an older one. */
  async buildFile(uri: string, text: string, analysis: FileAnalysis): Promise<void> {
    if (!this.settings().buildOnSave) return;
    const file = uriToPath(uri);
    if (!file || !analysis.kernels.length) return;
    this.running.get(uri)?.abort();
    const ac = new AbortController();
    this.running.set(uri, ac);
    const hash = hashText(text);
    const progress = await this.connection.window.createWorkDoneProgress();
    progress.begin('Unroll Lens: compiling', 0, path.basename(file), true);
    progress.token.onCancellationRequested(() => ac.abort());
    this.sendStatus(path.basename(file));
    try {
      const inspector = await this.inspector(file);
      const t0 = Date.now();
      const report = await inspector.inspectFile(file, text, analysis, {
        signal: ac.signal,
        onProgress: (done, total) => progress.report(Math.round((done / total) * 100), `${path.basename(file)}: ${done}/${total} builds`),
      });
      if (ac.signal.aborted) return;
      this.log(`${path.basename(file)}: ${report.status}, ${report.kernels.length} kernels in ${Date.now() - t0} ms${report.cached ? ' (cached)' : ''}`);
      const prev = this.states.get(uri);
      const same = prev && prev.textHash === hash;
      this.states.set(uri, { file: report, loops: same ? prev.loops : new Map(), benches: same ? prev.benches : new Map(), textHash: hash });
      this.onChange(uri);
    } catch (e) {
      this.log(`${path.basename(file)}: ${e instanceof Error ? e.message : e}`);
    } finally {
      progress.done();
      if (this.running.get(uri) === ac) this.running.delete(uri);
      this.sendStatus(null);
    }
  }

  /** Builds one loop's variants; cancellation through the LSP token or the progress UI. */
  async buildLoop(uri: string, text: string, analysis: FileAnalysis, line: number, factorTexts: string[] | undefined,
    token: CancellationToken, workDoneToken?: string | number): Promise<LoopReport> {
    const file = uriToPath(uri);
    if (!file) throw new Error('only files on disk can be compiled (save the file first)');
    const factors: UnrollFactor[] = parseFactorList((factorTexts ?? this.settings().unrollFactors).join(','));
    const ac = new AbortController();
    token.onCancellationRequested(() => ac.abort());
    const progress = this.connection.window.attachWorkDoneProgress(workDoneToken);
    progress.begin('Unroll Lens: building unroll variants', 0, `line ${line}`, true);
    this.sendStatus(`${path.basename(file)}:${line}`);
    try {
      const inspector = await this.inspector(file);
      const report = await inspector.inspectLoop(file, text, analysis, line, factors, {
        signal: ac.signal,
        onProgress: (done, total, key) => progress.report(Math.round((done / total) * 100), `${done}/${total}: ${key}`),
      });
      const hash = hashText(text);
      const st = this.states.get(uri);
      if (st && st.textHash === hash) st.loops.set(line, report);
      else this.states.set(uri, { file: null, loops: new Map([[line, report]]), benches: new Map(), textHash: hash });
      this.onChange(uri);
      return report;
    } finally {
      progress.done();
      this.sendStatus(null);
    }
  }

  /** GPU benchmark of one loop's variants (build, check, time, stalls), cancellable. */
  async benchLoop(uri: string, text: string, analysis: FileAnalysis, line: number, factorTexts: string[] | undefined,
    token: CancellationToken, workDoneToken?: string | number): Promise<BenchReport> {
    const file = uriToPath(uri);
    if (!file) throw new Error('only files on disk can be benchmarked');
    if (!/\bmain\s*\(/.test(text) && !this.settings().profile.compileCommand.length) {
      throw new Error('this file has no main(): set unrollLens.profile.compileCommand (e.g. your make/nvcc line with {source} and {output}) and, if needed, runCommand, so Unroll Lens can build and run your program');
    }
    const factors: UnrollFactor[] = parseFactorList((factorTexts ?? this.settings().unrollFactors).join(','));
    const ac = new AbortController();
    token.onCancellationRequested(() => ac.abort());
    const progress = this.connection.window.attachWorkDoneProgress(workDoneToken);
    progress.begin('Unroll Lens: benchmarking unroll variants on the GPU', 0, `line ${line}`, true);
    this.sendStatus(`GPU ${path.basename(file)}:${line}`);
    try {
      const t = await this.tools();
      const s = this.settings();
      const flags = this.flagsFor(file);
      const total = factors.length + 1;
      const report = await benchLoop(file, text, analysis, {
        toolchain: t, arch: this.archFor(t, flags.arch), flags, cacheDir: this.cacheDir(), loops: [line], factors,
        args: s.profile.args, samples: s.profile.samples, warmup: s.profile.warmup, clockControl: s.profile.clockControl,
        timeoutMs: s.profile.timeoutSeconds * 1000, launcher: s.profile.launcher,
        runTemplate: s.profile.runCommand.length ? s.profile.runCommand : undefined,
        compileTemplate: s.profile.compileCommand.length ? s.profile.compileCommand : undefined,
        checkTemplate: s.profile.checkCommand.length ? s.profile.checkCommand : undefined,
        sourceCounters: s.profile.sourceStalls, signal: ac.signal,
        onProgress: (msg, done) => progress.report(Math.round((Math.min(done, total) / total) * 100), msg),
      });
      const hash = hashText(text);
      const st = this.states.get(uri);
      if (st && st.textHash === hash) st.benches.set(line, report);
      else this.states.set(uri, { file: null, loops: new Map(), benches: new Map([[line, report]]), textHash: hash });
      this.onChange(uri);
      return report;
    } finally {
      progress.done();
      this.sendStatus(null);
    }
  }

  close(uri: string): void {
    this.running.get(uri)?.abort();
    this.running.delete(uri);
    this.states.delete(uri);
  }

  /** Compiler-backed diagnostics for the file as written. */
  diagnostics(uri: string, text: string, analysis: FileAnalysis): Diagnostic[] {
    const st = this.state(uri, text);
    const r = st?.file;
    if (!r) return [];
    const file = uriToPath(uri);
    const out: Diagnostic[] = [];
    const at = (line: number) => Range.create(Math.max(0, line - 1), 0, Math.max(0, line - 1), 1000);
    if (r.failure) {
      for (const m of r.failure.messages) {
        if (m.severity === 'remark') continue;
        const mine = m.file && file && path.resolve(m.file) === path.resolve(file);
        out.push(messageDiagnostic(m, mine ? m.line : null, r.failure.kind));
      }
      return out;
    }
    for (const k of r.kernels) {
      if (k.spillStores > 0 || k.spillLoads > 0) {
        const base = k.demangled.replace(/\(.*$/, '').replace(/<.*$/, '').split(/\s|::/).pop();
        const src = analysis.kernels.find(x => x.name === base);
        out.push({
          range: at(src?.line ?? 1), severity: DiagnosticSeverity.Warning, source: 'unroll-lens', code: 'register-spills',
          message: `${k.demangled}: ${k.registers} registers, spills ${k.spillStores} bytes stored / ${k.spillLoads} bytes loaded to local memory (${r.arch}). Unrolling less may remove the spills.`,
        });
      }
    }
    const calibrated = icacheBudget(r.arch);
    const budget = this.settings().icacheBudgetBytes || calibrated.bytes;
    const budgetNote = this.settings().icacheBudgetBytes ? 'unrollLens.icacheBudgetBytes' : `${r.arch}, ${calibrated.status}`;
    for (const k of analysis.kernels) {
      for (const loop of k.loops) {
        const m = r.loops.find(x => x.line === loop.line);
        if (!m) continue;
        const asked = writtenFactor(loop);
        if (typeof asked === 'number' && m.effectiveUnroll !== null && m.effectiveUnroll !== asked && !(m.fullyUnrolled && typeof loop.tripCount === 'number' && asked >= loop.tripCount)) {
          out.push({
            range: loop.pragma ? Range.create(loop.pragma.span.line - 1, loop.pragma.span.column, loop.pragma.span.endLine - 1, loop.pragma.span.endColumn) : at(loop.line),
            severity: DiagnosticSeverity.Warning, source: 'unroll-lens', code: 'unroll-not-applied',
            message: `\`#pragma ${loop.pragma?.text}\` requested ×${asked}, but nvcc unrolled this loop ×${m.effectiveUnroll} (${r.arch}, from the SASS).`,
          });
        }
        if (m.loopInstructions !== null && m.loopInstructions * 16 > budget && loop.depth === 0) {
          out.push({
            range: at(loop.line), severity: DiagnosticSeverity.Warning, source: 'unroll-lens', code: 'icache-budget',
            message: `Loop body ${(m.loopInstructions * 16 / 1024).toFixed(0)} KiB of SASS (${m.loopInstructions} instructions) > ~${(budget / 1024).toFixed(0)} KiB instruction-cache budget (${budgetNote}): expect instruction-fetch stalls (ncu: no_instruction) at low occupancy.`,
          });
        }
      }
    }
    return out;
  }
}

function messageDiagnostic(m: CompilerMessage, line: number | null, kind: string): Diagnostic {
  const l = Math.max(0, (line ?? 1) - 1);
  const col = m.column ? m.column - 1 : 0;
  return {
    range: Range.create(l, line ? col : 0, l, line ? col + 1 : 1000),
    severity: m.severity === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    source: 'nvcc',
    code: m.code ?? kind,
    message: line ? m.message : `${m.file ? `${m.file}${m.line ? `(${m.line})` : ''}: ` : ''}${m.message}`,
  };
}
