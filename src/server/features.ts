// LSP features computed from one file's analysis. Pure functions (no connection) so unit
// tests and benchmarks exercise exactly what the server sends.
import { CodeLens, Command, Diagnostic, DiagnosticSeverity, Hover, MarkupKind, Position, Range } from 'vscode-languageserver';
import {
  IcacheContext,
  benchMarkdown,
  computeFindings,
  lineStallsMarkdown,
  loopHoverMarkdown,
  loopIcacheMarkdown,
  loopLensSummary,
  loopSassLensTitle,
  loopSassMarkdown,
  manualUnrollHoverMarkdown,
  writtenLoopWarps,
  type FileAnalysis,
  type FileOutline,
  type OutlineKernel,
  type Kernel,
  type Loop,
  type SassFacts,
  type SourceSpan,
} from '../engine';
import { recommendedFactorMarkdown } from './recommendHover';
import {
  BenchmarkLoopArgs,
  Commands,
  CompareKernelsArgs,
  DIAGNOSTIC_SOURCE,
  LoopSummaryLensData,
  Settings,
  ShowSassArgs,
  SweepKernelArgs,
} from '../protocol';
import type { SourceLineStalls, SweepResult } from '../schema/types';
import { HeaderUnit, NO_UNIT_HINT } from './headers';
import * as path from 'path';

/** The newest per-line stall samples for the document (from its last GPU benchmark). */
function lineStallsOf(sass: SassFacts | null): SourceLineStalls[] {
  let best: SourceLineStalls[] = [];
  for (const b of sass?.benches?.values() ?? []) if (b.lineStalls?.length) best = b.lineStalls;
  return best;
}

function toRange(span: SourceSpan): Range {
  return Range.create(span.line - 1, span.column, span.endLine - 1, span.endColumn);
}

function lineRange(line1: number): Range {
  return Range.create(line1 - 1, 0, line1 - 1, 0);
}

/**
 * `header`: the translation unit of a header (null for a .cu file). A header's loops get SASS
 * variants through it; with none known, their SASS lens offers to choose one. GPU benchmarks and
 * sweeps run a .cu file's own program, so a header has no lens for them.
 */
export function codeLenses(
  uri: string,
  analysis: FileAnalysis,
  settings: Settings,
  sass: SassFacts | null = null,
  header: HeaderUnit | null = null,
  program = false,
): CodeLens[] {
  return lensesOf(uri, analysis.kernels, settings, sass, header, program, (k, loop) => summaryCommand(uri, k, loop));
}

/**
 * The same lenses from what the parse alone gives (a file being opened, its analysis running):
 * each loop's summary, which needs the analysis, is left to codeLens/resolve (resolveCodeLens).
 */
export function outlineCodeLenses(
  uri: string,
  outline: FileOutline,
  settings: Settings,
  sass: SassFacts | null = null,
  header: HeaderUnit | null = null,
  program = false,
): CodeLens[] {
  return lensesOf(uri, outline.kernels, settings, sass, header, program, null);
}

/** A summary lens of outlineCodeLenses with its title from the analysis; as it was when the file changed since. */
export function resolveCodeLens(lens: CodeLens, analysis: FileAnalysis): CodeLens {
  const d = lens.data as LoopSummaryLensData | undefined;
  const k = d ? analysis.kernels[d.kernel] : undefined;
  const loop = k?.loops[d!.loop];
  if (!d || !k || !loop || k.line !== d.kernelLine || loop.line !== d.line) return lens;
  return { range: lens.range, command: summaryCommand(d.uri, k, loop) };
}

function summaryCommand(uri: string, k: Kernel, loop: Loop): Command {
  return { title: loopLensSummary(k, loop), command: Commands.showLoops, arguments: [{ uri, line: loop.line }] };
}

/** `summary`: the loop summary's command, or null to leave it for codeLens/resolve. */
function lensesOf<K extends OutlineKernel>(
  uri: string,
  kernels: K[],
  settings: Settings,
  sass: SassFacts | null,
  header: HeaderUnit | null,
  program: boolean,
  summary: ((k: K, loop: K['loops'][number]) => Command) | null,
): CodeLens[] {
  if (!settings.codeLensEnabled) return [];
  const lenses: CodeLens[] = [];
  // A program with several kernels (a ladder of techniques, one kernel per coarsening factor): one
  // lens, above the first kernel, times them side by side (issue 26). `program`: the file builds a
  // program (it has main, or a compile command builds one), as a GPU run needs.
  const globals = kernels.filter(k => k.qualifier === 'global');
  if (program && !header && new Set(globals.map(k => k.name)).size >= 2) {
    const args: CompareKernelsArgs = { uri };
    lenses.push({
      range: lineRange(globals[0].line),
      command: { title: 'Compare kernels in this file', command: Commands.compareKernels, arguments: [args] },
    });
  }
  kernels.forEach((k, kernel) => {
    if (k.qualifier === 'global' && !header) {
      const args: SweepKernelArgs = { uri, line: k.line, kernel: k.name };
      // a kernel without loops sweeps only its template or macro values
      const title = k.loops.length ? 'Sweep unroll factors' : 'Sweep template or macro values';
      lenses.push({ range: lineRange(k.line), command: { title, command: Commands.sweepKernel, arguments: [args] } });
    }
    k.loops.forEach((loop, index) => {
      // Put the lens above the pragma when there is one, so it does not split pragma and loop.
      const range = lineRange(loop.pragma ? Math.min(loop.pragma.line, loop.line) : loop.line);
      const args: BenchmarkLoopArgs = { uri, line: loop.line, kernel: k.name };
      // a header's loop is benchmarked through the project's own build and run (unrollLens.project.*)
      if (!header || projectRunConfigured(settings))
        lenses.push({ range, command: { title: 'Benchmark this loop', command: Commands.benchmarkLoop, arguments: [args] } });
      const data: LoopSummaryLensData = { uri, kernel, kernelLine: k.line, loop: index, line: loop.line };
      lenses.push(summary ? { range, command: summary(k, loop) } : { range, data });
      lenses.push({
        range,
        command:
          header && !header.unit
            ? { title: 'SASS: choose a translation unit for this header…', command: Commands.chooseTranslationUnit, arguments: [{ uri }] }
            : { title: loopSassLensTitle(sass, k, loop), command: Commands.sassVariants, arguments: [{ uri, line: loop.line }] },
      });
      if (!header || header.unit)
        lenses.push({
          range,
          command: { title: 'Show SASS', command: Commands.showSass, arguments: [{ uri, line: loop.line } satisfies ShowSassArgs] },
        });
    });
  });
  return lenses;
}

export function diagnostics(analysis: FileAnalysis, settings: Settings): Diagnostic[] {
  return computeFindings(analysis, { bloatThresholdStatements: settings.bloatThresholdStatements }).map(f => ({
    range: toRange(f.span),
    severity: f.severity === 'warning' ? DiagnosticSeverity.Warning : DiagnosticSeverity.Information,
    code: f.code,
    source: DIAGNOSTIC_SOURCE,
    message: f.message,
  }));
}

function within(pos: Position, span: SourceSpan): boolean {
  const line = pos.line + 1;
  if (line < span.line || line > span.endLine) return false;
  if (line === span.line && pos.character < span.column) return false;
  if (line === span.endLine && pos.character > span.endColumn) return false;
  return true;
}

/**
 * Markdown links that run "Show SASS" for a loop (the client trusts hover markdown for this
 * command only): the file as written, and each built unroll variant when there are some.
 */
function showSassLink(uri: string, line: number, factors: string[] = []): string {
  const link = (label: string, factor?: string) => {
    const args: ShowSassArgs = factor ? { uri, line, factor } : { uri, line };
    return `[${label}](command:${Commands.showSass}?${encodeURIComponent(JSON.stringify([args]))} "Open the disassembly of this loop's kernel, grouped by source line")`;
  };
  if (!factors.length) return link('Show SASS');
  return `**Show SASS**: ${[link('as written'), ...factors.map(f => link(f, f))].join(' · ')}`;
}

/**
 * The hover's predictions for a loop as written, one markdown part each (issue 13: the
 * instruction-cache prediction with where its warps per SM come from).
 */
function predictionParts(sass: SassFacts | null, loop: Loop, icache: IcacheContext | null): string[] {
  // A GPU run of the loop replaces the prediction with what it measured (issue 13).
  const measured = measuredIcacheMarkdown(sass?.benches?.get(loop.line));
  return [measured || loopIcacheMarkdown(sass?.file, loop.line, icache)];
}

/** "i-cache (measured on the GPU): the file as written 1.75× slower than ×64, no_instruction 58 % (predicted 1.48–2.39×)". */
export function measuredIcacheMarkdown(bench: SweepResult | undefined): string {
  const written = bench?.variants.find(v => Object.keys(v.factors).length === 0);
  const c = written?.icache;
  if (!c || c.shown === 'predicted' || !c.measured || !c.reference) return '';
  if (c.shown === 'not-icache') {
    const ref = /^\d+$/.test(c.reference) ? `×${c.reference}` : c.reference;
    return `**i-cache** (measured on the GPU): the file as written ${c.measured.slowdown.toFixed(2)}× the time of ${ref}, ${c.measured.attribution!.why}`;
  }
  const noInst = c.measured.noInstruction !== null ? `, no_instruction ${(c.measured.noInstruction * 100).toFixed(0)} % of stalls` : '';
  const predicted = c.predicted ? ` (predicted ${c.predicted.low.toFixed(2)}–${c.predicted.high.toFixed(2)}×)` : '';
  const reference = /^\d+$/.test(c.reference) ? `×${c.reference}` : c.reference;
  return `**i-cache** (measured on the GPU): the file as written ${c.measured.slowdown.toFixed(2)}× the time of ${reference}${noInst}${predicted}`;
}

/**
 * Hover on a loop keyword line, its pragma, or a manual unroll: the innermost match wins so
 * hovering a nested loop describes that loop rather than its parent.
 */
export function hover(
  analysis: FileAnalysis,
  pos: Position,
  sass: SassFacts | null = null,
  header: HeaderUnit | null = null,
  uri: string | null = null,
  icache: IcacheContext | null = null,
  building = false,
): Hover | null {
  const line = pos.line + 1;
  const headers: { kernel: Kernel; loop: Loop }[] = [];
  for (const k of analysis.kernels) {
    if (line < k.span.line || line > k.span.endLine) continue;
    for (const loop of k.loops) {
      if (line === loop.line || (loop.pragma !== null && within(pos, loop.pragma.span))) headers.push({ kernel: k, loop });
    }
    if (!headers.length) {
      const m = k.manualUnrolls.find(u => line >= u.line && line <= u.endLine);
      const stallPart = lineStallsMarkdown(lineStallsOf(sass), line);
      if (m)
        return { contents: { kind: MarkupKind.Markdown, value: manualUnrollHoverMarkdown(k, m) + (stallPart ? `\n\n${stallPart}` : '') } };
      if (stallPart) return { contents: { kind: MarkupKind.Markdown, value: `**Unroll Lens**\n\n${stallPart}` } };
    }
  }
  if (!headers.length) return null;
  const { kernel, loop } = headers.reduce((a, b) => (b.loop.depth > a.loop.depth ? b : a));
  const range =
    loop.pragma && within(pos, loop.pragma.span)
      ? toRange(loop.pragma.span)
      : Range.create(loop.line - 1, loop.span.column, loop.line - 1, loop.span.column + loop.kind.length);
  const parts = [loopHoverMarkdown(kernel, loop), loopSassMarkdown(sass, kernel, loop), ...predictionParts(sass, loop, icache)];
  // The build of the file as written is in flight: its SASS facts come when it ends (never waited for).
  if (building && !sass?.file)
    parts.push('_SASS: the file as written is being compiled; its instruction counts show here when the build ends._');
  // The same warps per SM as the prediction above (setting, launch, bounds or occupancy).
  const warps = sass?.file && icache ? (writtenLoopWarps(sass.file, loop.line, icache)?.warpsPerSm ?? null) : null;
  parts.push(recommendedFactorMarkdown(sass?.loops.get(loop.line), kernel, warps));
  const bench = sass?.benches?.get(loop.line);
  if (bench) parts.push(benchMarkdown(bench));
  parts.push(lineStallsMarkdown(lineStallsOf(sass), loop.line));
  if (uri && (!header || header.unit)) {
    const built = (sass?.loops.get(loop.line)?.variants ?? []).filter(v => v.status === 'ok').map(v => String(v.factor));
    parts.push(showSassLink(uri, loop.line, built));
  }
  if (header)
    parts.push(
      header.unit
        ? `_Header: variants are built through \`${path.basename(header.unit)}\` (${header.via === 'chosen' ? 'chosen' : 'compile_commands.json'}), with this header replaced by each variant._`
        : `_${NO_UNIT_HINT}_`,
    );
  return { contents: { kind: MarkupKind.Markdown, value: parts.filter(Boolean).join('\n\n') }, range };
}

/** The project's build and run are set (unrollLens.project.buildCommand and runCommand): benchmarks go through them. */
export function projectRunConfigured(s: Pick<Settings, 'project'>): boolean {
  return !!s.project.buildCommand.trim() && !!s.project.runCommand.trim();
}
