// Compiler-backed facts for open CUDA files: the file as written (and rolled) is compiled in the
// background on open and save; one loop's unroll variants are built on request. Results feed
// hover, CodeLens and SASS diagnostics; builds report $/progress and can be cancelled.
import * as os from 'os';
import * as path from 'path';
import { CancellationToken, Connection, Diagnostic, DiagnosticSeverity, ProgressToken, Range } from 'vscode-languageserver/node';
import {
  IcacheContext,
  KernelLaunch,
  READ_CAPS,
  UnrollFactors,
  VariantBuilder,
  VariantInspector,
  findLaunches,
  launchesIn,
  parseVariantFactor,
  readBoundedText,
  renderListing,
  withStalls,
  writtenFactor,
  writtenLoopIcache,
  type CompilerMessage,
  type FileAnalysis,
  type FileSassReport,
  type LoopReport,
} from '../engine';
import type { SassListingParams, SassListingResult, Settings } from '../protocol';
import { benchSassStalls } from './facts';
import type { DocumentFactsStore } from './facts';
import type { ServerToolchain } from './toolchain';
import { uriToPath } from './uri';
import { requestedFactors } from './unrollFactors';
import { HeaderUnit, NO_UNIT_HINT } from './headers';

export class VariantService {
  /** The background build per document: a newer one cancels it. */
  private readonly running = new Map<string, AbortController>();
  /**
   * findLaunches of each document's text until it changes: they read the whole file (hundreds of
   * ms on a 5,000-line one), and hover and the diagnostics need them for every loop.
   */
  private readonly launchMemo = new Map<string, { text: string; launches: KernelLaunch[] }>();
  /** The first GPU's name, once the tools were found: its SM count sets the blocks per SM of a launch. */
  private gpuName: string | null = null;

  constructor(
    private readonly connection: Connection,
    private readonly toolchain: ServerToolchain,
    private readonly facts: DocumentFactsStore,
    private readonly settings: () => Settings,
    private readonly cacheDir: () => string,
    /** A header's translation unit (null for a .cu file; unit null when none is known). */
    private readonly headerUnit: (file: string) => HeaderUnit | null = () => null,
  ) {}

  /** Settings changed: find the tools again (the benchmark service shares them). */
  reset(): void {
    this.toolchain.reset();
  }

  private async inspector(file: string, archOverride?: string): Promise<VariantInspector> {
    const t = await this.toolchain.tools(file);
    this.gpuName = t.gpus[0]?.name ?? null;
    const s = this.settings();
    // A header is built through a translation unit that includes it, with that unit's flags.
    const header = this.headerUnit(file);
    if (header && !header.unit) throw new Error(`${path.basename(file)}: ${NO_UNIT_HINT.replace(/\*\*/g, '')}`);
    const tu = header?.unit ?? undefined;
    const flags = this.toolchain.flagsFor(tu ?? file);
    const arch = archOverride ?? this.toolchain.archFor(t, flags.arch);
    const builder = new VariantBuilder({
      nvcc: t.nvcc,
      arch,
      flags,
      cacheDir: this.cacheDir(),
      cacheMaxBytes: s.cache.maxSizeGB * 1024 ** 3,
      warn: m => this.toolchain.log(`build cache: ${m}`),
      concurrency: s.jobs > 0 ? s.jobs : os.cpus().length,
      runner: t.runner,
      ...(tu ? { translationUnit: tu } : {}),
    });
    if (tu) this.toolchain.log(`${path.basename(file)}: built through ${tu} (${header!.via})`);
    return new VariantInspector({ toolchain: t, builder, arch });
  }

  /** Background build of the file as written (on open/save). A newer request cancels an older one. */
  async buildFile(uri: string, text: string, analysis: FileAnalysis): Promise<void> {
    if (!this.settings().buildOnSave || !this.toolchain.trusted) return;
    const file = uriToPath(uri);
    if (!file || !analysis.kernels.length) return;
    // A header is built in the background only through a known translation unit.
    if (this.headerUnit(file) && !this.headerUnit(file)!.unit) return;
    this.running.get(uri)?.abort();
    const ac = new AbortController();
    this.running.set(uri, ac);
    // Nobody asked for this build, so the server creates its own progress token.
    const progress = await this.connection.window.createWorkDoneProgress();
    progress.begin('Unroll Lens: compiling', 0, path.basename(file), true);
    progress.token.onCancellationRequested(() => ac.abort());
    this.toolchain.sendStatus(path.basename(file));
    try {
      const inspector = await this.inspector(file);
      const t0 = Date.now();
      const report = await inspector.inspectFile(file, text, analysis, {
        signal: ac.signal,
        onProgress: (done, total) => progress.report(Math.round((done / total) * 100), `${path.basename(file)}: ${done}/${total} builds`),
      });
      if (ac.signal.aborted) return;
      this.toolchain.log(
        `${path.basename(file)}: ${report.status}, ${report.kernels.length} kernels in ${Date.now() - t0} ms${report.cached ? ' (cached)' : ''}`,
      );
      this.facts.record(uri, text, f => {
        f.file = report;
      });
    } catch (e) {
      this.toolchain.log(`${path.basename(file)}: ${e instanceof Error ? e.message : e}`);
    } finally {
      progress.done();
      if (this.running.get(uri) === ac) this.running.delete(uri);
      this.toolchain.sendStatus(null);
    }
  }

  /** Builds one loop's variants; cancellation through the LSP token or the progress UI. */
  async buildLoop(
    uri: string,
    text: string,
    analysis: FileAnalysis,
    line: number,
    factorTexts: string[] | undefined,
    token: CancellationToken,
    workDoneToken?: ProgressToken,
  ): Promise<LoopReport> {
    const file = uriToPath(uri);
    if (!file) throw new Error('only files on disk can be compiled (save the file first)');
    const factors = requestedFactors(factorTexts, this.settings());
    const work = {
      title: 'Unroll Lens: building unroll variants',
      message: `line ${line}`,
      building: `${path.basename(file)}:${line}`,
      token,
      workDoneToken,
    };
    return this.toolchain.runRequest(work, async (signal, report) => {
      const inspector = await this.inspector(file);
      // unrollLens.extraArchs: the same variants for each other architecture, one after the other
      // (each with every job), in the same progress and cancellation.
      const extra = [...new Set(this.settings().extraArchs)].filter(a => a !== inspector.arch);
      const steps = 1 + extra.length;
      const progressOf = (step: number, arch: string) => (done: number, total: number, key: string) =>
        report(Math.round(((step + done / total) / steps) * 100), `${extra.length ? `${arch} ` : ''}${done}/${total}: ${key}`);
      const loop = await inspector.inspectLoop(file, text, analysis, line, factors, { signal, onProgress: progressOf(0, inspector.arch) });
      const byArch = new Map<string, LoopReport>();
      for (const [i, arch] of extra.entries()) {
        if (signal.aborted) break;
        const r = await this.loopForArch(file, text, analysis, line, factors, arch, signal, progressOf(i + 1, arch));
        if (signal.aborted) break; // a cancelled architecture is not shown half built
        byArch.set(arch, r);
      }
      this.facts.record(uri, text, f => {
        f.loops.set(line, loop);
        if (byArch.size) f.extraArchLoops.set(line, byArch);
        else f.extraArchLoops.delete(line);
      });
      return loop;
    });
  }

  /**
   * One extra architecture's variants of a loop. A failure (nvcc cannot build for it, the unit
   * does not instantiate the loop there) becomes a report with no variants whose limitation says
   * why: the hover shows it beside the other architectures.
   */
  private async loopForArch(
    file: string,
    text: string,
    analysis: FileAnalysis,
    line: number,
    factors: UnrollFactors,
    arch: string,
    signal: AbortSignal,
    onProgress: (done: number, total: number, key: string) => void,
  ): Promise<LoopReport> {
    try {
      const inspector = await this.inspector(file, arch);
      return await inspector.inspectLoop(file, text, analysis, line, factors, { signal, onProgress });
    } catch (e) {
      if (signal.aborted) throw e;
      const message = e instanceof Error ? e.message : String(e);
      this.toolchain.log(`${path.basename(file)}:${line} on ${arch}: ${message}`);
      const loop = analysis.kernels.flatMap(k => k.loops.map(l => ({ k, l }))).find(x => x.l.line === line);
      return {
        line,
        kernel: loop?.k.name ?? '',
        written: loop ? writtenFactor(loop.l) : 'default',
        arch,
        variants: [],
        notes: [],
        limitation: `no variants for ${arch}: ${message}`,
      };
    }
  }

  /**
   * The annotated SASS listing of one variant of a loop (built when the cache has no build), with
   * the maps the editor navigates by. A failed build, a missing nvdisasm or a loop without code
   * is an error whose message says which.
   */
  async listing(
    uri: string,
    text: string,
    analysis: FileAnalysis,
    p: SassListingParams,
    token: CancellationToken,
  ): Promise<SassListingResult> {
    const file = uriToPath(uri);
    if (!file) throw new Error('only files on disk can be compiled (save the file first)');
    if (p.arch !== undefined && !/^sm_\d+[a-z]?$/.test(p.arch)) throw new Error(`bad arch '${p.arch}': use sm_XX, e.g. sm_90`);
    const raw = p.factor ?? 'as-written';
    const factor = parseVariantFactor(raw);
    const work = {
      title: 'Unroll Lens: SASS listing',
      message: `line ${p.line} · ${raw}${p.arch ? ` · ${p.arch}` : ''}`,
      building: `${path.basename(file)}:${p.line}`,
      token,
      workDoneToken: p.workDoneToken,
    };
    return this.toolchain.runRequest(work, async (signal, report) => {
      const inspector = await this.inspector(file, p.arch);
      const listing = await inspector.listing(file, text, analysis, p.line, factor, {
        signal,
        onProgress: (done, total, key) => report(Math.round((done / total) * 100), `${done}/${total}: ${key}`),
      });
      if (signal.aborted) throw new Error('cancelled');
      // Stall samples of the newest GPU benchmark of this text and kernel, when it sampled this code.
      const facts = this.facts.get(uri, text);
      const stalls = benchSassStalls(facts, p.line, listing.kernel);
      const shown =
        stalls && !p.normalise ? withStalls(listing, stalls, `the GPU benchmark of this file (${stalls.factor ?? 'as written'})`) : listing;
      return { listing: shown, ...renderListing(shown, { normalise: !!p.normalise, sourceText: text }) };
    });
  }

  /** What the i-cache prediction of the file as written needs from the editor (hover, diagnostics). */
  icacheContext(text: string, analysis: FileAnalysis, uri?: string): IcacheContext {
    const ctx: IcacheContext = {
      text,
      analysis,
      warpsPerSm: this.settings().warpsPerSm,
      warpsOrigin: 'unrollLens.warpsPerSm',
      gpuName: this.gpuName,
      // Scanned once per text: the hover's prediction and recommendation both read them.
      launches: this.launchesOf(uri, text),
    };
    // A header's kernels are launched from its translation unit: its launches count too.
    const file = uri ? uriToPath(uri) : null;
    const tu = file ? this.headerUnit(file)?.unit : null;
    if (tu) {
      try {
        ctx.launches = [...ctx.launches!, ...launchesIn(tu, readBoundedText(tu, { maxBytes: READ_CAPS.source, what: 'translation unit' }))];
      } catch {
        /* an unreadable unit: the header's own launches only */
      }
    }
    return ctx;
  }

  private launchesOf(uri: string | undefined, text: string): KernelLaunch[] {
    if (uri === undefined) return findLaunches(text);
    const known = this.launchMemo.get(uri);
    if (known?.text === text) return known.launches;
    const launches = findLaunches(text);
    this.launchMemo.set(uri, { text, launches });
    return launches;
  }

  /** Whether the background build of the document as written is still running (hover says so). */
  building(uri: string): boolean {
    return this.running.has(uri);
  }

  /** A closed document: stop its background build. */
  close(uri: string): void {
    this.running.get(uri)?.abort();
    this.running.delete(uri);
    this.launchMemo.delete(uri);
  }

  /** Compiler-backed diagnostics for the file as written. */
  diagnostics(uri: string, text: string, analysis: FileAnalysis): Diagnostic[] {
    const r = this.facts.get(uri, text)?.file;
    if (!r) return [];
    const file = uriToPath(uri);
    const out: Diagnostic[] = [];
    const at = (line: number) => Range.create(Math.max(0, line - 1), 0, Math.max(0, line - 1), 1000);
    if (r.failure) {
      if (r.failure.kind === 'timeout' && !r.failure.messages.some(m => m.severity === 'error')) {
        const limit = this.settings().toolchain.nvccTimeoutSeconds;
        out.push({
          range: at(1),
          severity: DiagnosticSeverity.Error,
          source: 'unroll-lens',
          code: 'timeout',
          message: `nvcc timed out after ${limit} s compiling ${file ? path.basename(file) : 'this file'} and was killed; raise unrollLens.toolchain.nvccTimeoutSeconds if it needs longer.`,
        });
      }
      for (const m of r.failure.messages) {
        if (m.severity === 'remark') continue;
        const mine = m.file && file && path.resolve(m.file) === path.resolve(file);
        out.push(messageDiagnostic(m, mine ? m.line : null, r.failure.kind));
      }
      // Which compile database and entry the failed build used, or that none had one and where
      // the search looked: the first thing to check when a header is "not found".
      if (r.compileFlags && r.failure.kind !== 'cancelled')
        out.push({
          range: at(1),
          severity: r.compileFlags.database ? DiagnosticSeverity.Information : DiagnosticSeverity.Warning,
          source: 'unroll-lens',
          code: r.compileFlags.database ? 'compile-database' : 'no-compile-database',
          message: `${r.compileFlags.text}.${r.compileFlags.database ? '' : " Set unrollLens.compileCommands to the build's compile_commands.json (or its folder)."}`,
        });
      return out;
    }
    for (const k of r.kernels) {
      if (k.spillStores > 0 || k.spillLoads > 0) {
        const base = k.demangled.replace(/\(.*$/, '').replace(/<.*$/, '').split(/\s|::/).pop();
        const src = analysis.kernels.find(x => x.name === base);
        out.push({
          range: at(src?.line ?? 1),
          severity: DiagnosticSeverity.Warning,
          source: 'unroll-lens',
          code: 'register-spills',
          message: `${k.demangled}: ${k.registers} registers, spills ${k.spillStores} bytes stored / ${k.spillLoads} bytes loaded to local memory (${r.arch}). Unrolling less may remove the spills.`,
        });
      }
    }
    const fixedBudget = this.settings().icacheBudgetBytes;
    const icache = this.icacheContext(text, analysis, uri);
    for (const k of analysis.kernels) {
      for (const loop of k.loops) {
        const m = r.loops.find(x => x.line === loop.line);
        if (!m) continue;
        const asked = writtenFactor(loop);
        if (
          typeof asked === 'number' &&
          m.effectiveUnroll !== null &&
          m.effectiveUnroll !== asked &&
          !(m.fullyUnrolled && typeof loop.tripCount === 'number' && asked >= loop.tripCount)
        ) {
          out.push({
            range: loop.pragma
              ? Range.create(loop.pragma.span.line - 1, loop.pragma.span.column, loop.pragma.span.endLine - 1, loop.pragma.span.endColumn)
              : at(loop.line),
            severity: DiagnosticSeverity.Warning,
            source: 'unroll-lens',
            code: 'unroll-not-applied',
            message: `\`#pragma ${loop.pragma?.text}\` requested ×${asked}, but nvcc unrolled this loop ×${m.effectiveUnroll} (${r.arch}, from the SASS).`,
          });
        }
        if (loop.depth !== 0) continue;
        const warning = fixedBudget > 0 ? fixedBudgetWarning(m.loopInstructions, fixedBudget) : icacheWarning(r, loop.line, icache);
        if (warning)
          out.push({
            range: at(loop.line),
            severity: DiagnosticSeverity.Warning,
            source: 'unroll-lens',
            code: 'icache-budget',
            message: warning,
          });
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

/**
 * The i-cache warning for an outermost loop as written (issue 13): the model's prediction when
 * the hot code does not fit and the predicted slowdown may reach 10 %, else null.
 */
export function icacheWarning(r: FileSassReport, line: number, ctx: IcacheContext): string | null {
  const p = writtenLoopIcache(r, line, ctx);
  if (!p || p.fits || p.predictedSlowdown.high < 1.1) return null;
  return `Instruction cache: ${p.text}; warps/SM ${p.warpsShort}${ctx.warpsPerSm > 0 ? '' : ' (set unrollLens.warpsPerSm to override)'}.`;
}

/** unrollLens.icacheBudgetBytes set: the old one-number rule, saying where the number comes from. */
function fixedBudgetWarning(loopInstructions: number | null, budget: number): string | null {
  if (loopInstructions === null || loopInstructions * 16 <= budget) return null;
  return `Loop body ${((loopInstructions * 16) / 1024).toFixed(0)} KiB of SASS (${loopInstructions} instructions) > ${(budget / 1024).toFixed(0)} KiB instruction-cache budget (unrollLens.icacheBudgetBytes, a fixed budget instead of the model): expect instruction-fetch stalls (ncu: no_instruction) at low occupancy.`;
}
