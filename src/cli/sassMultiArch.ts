// `unroll-lens sass --arch sm_80,sm_90`: the same builds once per architecture, shown side by side.
import * as path from 'path';
import {
  CudaDocuments,
  FileSassReport,
  ListingError,
  LoopReport,
  NotInstantiatedError,
  Toolchain,
  UnrollFactor,
  VariantInspector,
  detectToolchain,
  factorLabel,
  renderListing,
  withStalls,
  type CompileFlags,
  type FileAnalysis,
  type VariantIcache,
} from '../engine';
import type { SassListingData } from '../protocol';
import { macroTableFor } from './macros';
import { cancelOnSignals, CliIO, EXIT, UsageError } from './io';
import { buildPathFor, checkArchOption, compileFlagsFor, readSourceFile } from './inputs';
import { limitTools } from './gpuOptions';
import { Progress } from './progress';
import { headerUnit, unitFunctions, inspectorFor, SassArgs, sassLoopIcache } from './sassBuild';
import { listingJson, toSassJson } from './sassJson';
import { fileWithLoopAhead } from './loopAhead';
import { compileFailureDetail, icacheLines, pad } from './sassText';

/** One architecture's results with several --arch values: its reports, or why it has none. */
interface ArchResult {
  arch: string;
  nvcc: string | null;
  file: FileSassReport | null;
  loop: LoopReport | null;
  /** The instruction-cache prediction per variant of `loop`. */
  icache?: (VariantIcache | null)[];
  listing: SassListingData | null;
  /** Why this architecture has no results (it does not compile, no loop code, …), for stderr. */
  error: string | null;
  /** The same for --json: nvcc's error messages one a line, else the message. */
  jsonError?: string;
}

/**
 * `--arch sm_80,sm_90`: the same work once per architecture, one after the other (each with
 * every --jobs), then one table with a column set per architecture (or one listing after the
 * other). An architecture that fails is reported and the others still printed; the exit code is
 * then 1.
 */
export async function sassArchs(a: SassArgs, io: CliIO): Promise<number> {
  const s = await prepareArchs(a, io);
  const ac = new AbortController();
  const stopSignals = cancelOnSignals(ac);
  const perArch = a.listing !== null ? 2 : a.loop !== null ? a.factors.size + 3 : 2;
  const progress = new Progress('nvcc', perArch * a.archs.length, io.isTTY ? io.err : null);
  const results: ArchResult[] = [];
  try {
    for (const [i, arch] of a.archs.entries()) {
      const inspector = inspectorFor(arch, { toolchain: s.toolchain, flags: s.flags, tu: s.tu, args: a, io });
      const r: ArchResult = { arch, nvcc: s.toolchain.nvcc.version, file: null, loop: null, listing: null, error: null };
      results.push(r);
      const tick = (key: string) => progress.tick(`${arch} ${key}`);
      const goOn = await inspectArch(r, s.analyses[i], { a, s, inspector, signal: ac.signal, tick, progress, io });
      if (!goOn) break;
    }
    progress.done();
    if (ac.signal.aborted) {
      io.err('unroll-lens: cancelled\n');
      return EXIT.cancelled;
    }
    return printArchResults(results, a, s.text, io);
  } finally {
    stopSignals();
  }
}

/** What every architecture shares: the source, where it is built, its analyses, toolchain and flags. */
interface ArchsSetup {
  text: string;
  built: string;
  /** One per --arch value, in order. */
  analyses: FileAnalysis[];
  tu: string | null;
  toolchain: Toolchain;
  flags: CompileFlags;
}

/** One architecture's run: the command's arguments, what they share, its inspector and progress. */
interface ArchRun {
  a: SassArgs;
  s: ArchsSetup;
  inspector: VariantInspector;
  signal: AbortSignal;
  /** One build of this architecture done (the key names it). */
  tick: (key: string) => void;
  progress: Progress;
  io: CliIO;
}

function holdsLoop(analysis: FileAnalysis, line: number | null): boolean {
  return analysis.kernels.some(k => k.loops.some(l => l.line === line));
}

/** Reads and analyses the file per architecture, finds the toolchain and flags; a loop no architecture has is a usage error. */
async function prepareArchs(a: SassArgs, io: CliIO): Promise<ArchsSetup> {
  const file = path.resolve(a.file);
  const text = readSourceFile(a.file);
  const built = buildPathFor(file, a.file, io);
  const docs = await CudaDocuments.create();
  // The macro table (and so the loops the parser sees) may depend on __CUDA_ARCH__.
  const analyses = a.archs.map(arch => docs.analyzeOnce(text, built, macroTableFor(file, text, arch)));
  const tu = headerUnit(file, a.tu, { compileCommands: a.compileCommands, functions: unitFunctions(analyses[0], a.loop) });
  if (tu) io.err(`unroll-lens: building ${path.relative(process.cwd(), file) || file} through ${path.relative(process.cwd(), tu) || tu}\n`);
  const toolchain = limitTools(await detectToolchain({}), a.timeouts, a.file, io);
  for (const arch of a.archs) await checkArchOption(arch, toolchain);
  const flags = compileFlagsFor(tu ?? file, io, a.compileCommands);
  if (a.loop !== null && !analyses.some(x => holdsLoop(x, a.loop))) {
    throw new UsageError(
      `no loop in device code at line ${a.loop} of ${a.file} (loops at ${analyses[0].kernels.flatMap(k => k.loops.map(l => l.line)).join(', ') || 'none'})`,
    );
  }
  return { text, built, analyses, tu, toolchain, flags };
}

/** One architecture's builds, into `r`; false when cancelled (the architectures after it are not built). */
async function inspectArch(r: ArchResult, analysis: FileAnalysis, c: ArchRun): Promise<boolean> {
  const { a, s, inspector, signal } = c;
  if (a.loop !== null && !holdsLoop(analysis, a.loop)) {
    r.error = `no loop in device code at line ${a.loop} with the macros of ${r.arch}`;
    return true;
  }
  if (a.listing !== null && a.loop !== null) return listArch(r, analysis, a.loop, a.listing, c);
  const { fileReport, ahead } = await fileWithLoopAhead(
    inspector,
    { file: s.built, text: s.text, analysis, line: a.loop, factors: a.factors, kernel: a.kernel ?? undefined },
    { signal, onFileProgress: () => c.tick('file as written'), onLoopProgress: key => c.tick(key) },
  );
  r.file = fileReport;
  if (r.file.status !== 'ok' || (a.kernel !== null && !r.file.kernels.some(k => k.name === a.kernel || k.demangled.includes(a.kernel!))))
    await ahead?.abandon();
  if (r.file.status !== 'ok') {
    if (r.file.status === 'cancelled') return false;
    r.error = `does not compile (${r.file.failure?.kind}):\n${compileFailureDetail(r.file, a.timeouts)}`;
    r.jsonError =
      r.file.failure?.messages
        .filter(m => m.severity === 'error')
        .map(m => m.message)
        .join('\n') || `does not compile (${r.file.failure?.kind})`;
    return true;
  }
  // As with one architecture: a --kernel matching nothing is a usage error, found before the loop's builds.
  if (a.kernel !== null && !r.file.kernels.some(k => k.name === a.kernel || k.demangled.includes(a.kernel!))) {
    c.progress.done();
    throw new UsageError(
      `--kernel ${a.kernel}: no kernel of that name in ${a.file} for ${r.arch} (matched against the mangled names and inside the demangled ones); ` +
        `its kernels: ${r.file.kernels.map(k => k.demangled).join('; ') || 'none'}`,
    );
  }
  if (ahead) {
    try {
      r.loop = await ahead.result();
      r.icache = sassLoopIcache(r.loop, {
        file: r.file,
        text: s.text,
        analysis,
        warpsPerSm: a.warpsPerSm,
        gpuName: s.toolchain.gpus[0]?.name ?? null,
        tu: s.tu,
      });
    } catch (e) {
      if (!(e instanceof NotInstantiatedError)) throw e;
      r.error = e.message;
    }
  }
  return true;
}

/** `--listing` on one architecture: its variant's annotated SASS, into `r`; false when cancelled. */
async function listArch(
  r: ArchResult,
  analysis: FileAnalysis,
  line: number,
  factor: UnrollFactor | 'as-written',
  c: ArchRun,
): Promise<boolean> {
  const { a, s, io } = c;
  try {
    r.listing = await c.inspector.listing(s.built, s.text, analysis, line, factor, {
      signal: c.signal,
      kernel: a.kernel ?? undefined,
      onProgress: (_d, _t, key) => c.tick(key),
    });
    // The samples are of one GPU's run: attached where the machine code is the same, else the note says why.
    if (a.stalls) {
      r.listing = withStalls(r.listing, a.stalls.stalls, path.basename(a.stalls.file));
      if (!r.listing.stalls) io.err(`unroll-lens: ${r.arch}: ${r.listing.stallsNote}\n`);
    }
  } catch (e) {
    if (!(e instanceof ListingError)) throw e;
    if (e.cancelled || c.signal.aborted) return false;
    r.error = e.message;
  }
  return true;
}

/** Each architecture's error on stderr, then the listings, the JSON or the tables; 1 when any failed. */
function printArchResults(results: ArchResult[], a: SassArgs, text: string, io: CliIO): number {
  const ok = results.filter(r => r.file?.status === 'ok');
  for (const r of results) if (r.error) io.err(`unroll-lens: ${a.file} on ${r.arch}: ${r.error}\n`);
  if (a.listing !== null) {
    if (a.json)
      io.out(
        JSON.stringify(
          results.map(r => (r.listing ? listingJson(r.listing) : { arch: r.arch, error: r.error })),
          null,
          2,
        ) + '\n',
      );
    else
      io.out(
        results
          .filter(r => r.listing)
          .map(r => renderListing(r.listing!, { normalise: a.normalise, sourceText: text }).text)
          .join('\n'),
      );
  } else if (a.json) {
    io.out(
      JSON.stringify(
        {
          archs: results.map(r =>
            r.file?.status === 'ok' ? toSassJson(r.file, r.loop, r.icache) : { arch: r.arch, nvcc: r.nvcc, error: r.jsonError ?? r.error },
          ),
        },
        null,
        2,
      ) + '\n',
    );
  } else if (ok.length) {
    io.out(renderFiles(results, a.loop === null) + (a.loop !== null ? renderLoops(results) : ''));
  }
  return results.some(r => r.error) ? EXIT.failed : EXIT.ok;
}

/** The kernel table with one column set (instr, bytes, regs, spills) per architecture. */
function renderFiles(results: ArchResult[], withNotes: boolean): string {
  const ok = results.filter(r => r.file?.status === 'ok');
  const source = ok.map(r => `${r.arch}: counts from ${r.file!.disassembler}${r.file!.cached ? ' (cached)' : ''}`).join(' · ');
  const lines = [`nvcc ${ok[0]?.file?.nvcc ?? results[0]?.nvcc ?? '?'} · ${source}`];
  const group = 35;
  lines.push(`${pad('', 60)}${results.map(r => ` ${pad(`${r.arch} ${'─'.repeat(group - r.arch.length - 1)}`, group)}`).join('')}`);
  lines.push(
    `${pad('kernel', 60)}${results.map(() => ` ${pad('instr', 7, true)} ${pad('bytes', 8, true)} ${pad('regs', 5, true)} ${pad('spill st/ld', 12, true)}`).join('')}`,
  );
  const names: { name: string; demangled: string }[] = [];
  for (const r of ok) for (const k of r.file!.kernels) if (!names.some(n => n.name === k.name)) names.push(k);
  for (const n of names) {
    const cells = results.map(r => {
      const k = r.file?.status === 'ok' ? r.file.kernels.find(x => x.name === n.name) : undefined;
      return k
        ? ` ${pad(String(k.instructions), 7, true)} ${pad(String(k.bytes), 8, true)} ${pad(String(k.registers), 5, true)} ${pad(`${k.spillStores}/${k.spillLoads}`, 12, true)}`
        : ` ${pad('-', 7, true)} ${pad('-', 8, true)} ${pad('-', 5, true)} ${pad('-', 12, true)}`;
    });
    lines.push(`${pad(n.demangled.length > 60 ? n.demangled.slice(0, 59) + '…' : n.demangled, 60)}${cells.join('')}`);
  }
  for (const r of results) {
    if (r.error) lines.push(`${r.arch}: ${r.error.split('\n')[0]} (nvcc's messages on stderr)`);
    else if (withNotes && r.file?.limitation && r.file.loops.length) lines.push(`note (${r.arch}): ${r.file.limitation}`);
  }
  return lines.join('\n') + '\n';
}

/** The factor table of one loop with one column set per architecture, then each one's notes. */
function renderLoops(results: ArchResult[]): string {
  const loops = results.filter(r => r.loop);
  const first = loops[0]?.loop;
  if (!first) return '';
  const lines = [`\nloop at line ${first.line} in ${first.kernel} (as written: ${factorLabel(first.written)})`];
  const group = 48;
  lines.push(`${pad('', 10)}${results.map(r => ` ${pad(`${r.arch} ${'─'.repeat(group - r.arch.length - 1)}`, group)}`).join('')}`);
  lines.push(
    `${pad('factor', 10)}${results.map(() => ` ${pad('kernel instr', 12, true)} ${pad('loop instr', 10, true)} ${pad('nvcc unroll', 11, true)} ${pad('regs', 5, true)} ${pad('spills', 6, true)}`).join('')}`,
  );
  const factors: string[] = [];
  for (const r of loops) for (const v of r.loop!.variants) if (!factors.includes(String(v.factor))) factors.push(String(v.factor));
  const failures: string[] = [];
  for (const f of factors) {
    const cells = results.map(r => {
      const v = r.loop?.variants.find(x => String(x.factor) === f);
      if (!v) return ` ${pad('-', 12, true)} ${pad('-', 10, true)} ${pad('-', 11, true)} ${pad('-', 5, true)} ${pad('-', 6, true)}`;
      const eff =
        v.status !== 'ok' ? v.status : v.effectiveUnroll === null ? '?' : `×${v.effectiveUnroll}${v.fullyUnrolled ? ' (full)' : ''}`;
      if (v.failure)
        for (const m of v.failure.messages.filter(x => x.severity === 'error').slice(0, 3))
          failures.push(`    ${r.arch} ${f}: ${v.failure.kind}: ${m.file ? `${m.file}:${m.line ?? ''}: ` : ''}${m.message.split('\n')[0]}`);
      return ` ${pad(String(v.kernelInstructions ?? '-'), 12, true)} ${pad(String(v.loopInstructions ?? '-'), 10, true)} ${pad(eff, 11, true)} ${pad(String(v.registers ?? '-'), 5, true)} ${pad(String(v.spillStores ?? '-'), 6, true)}`;
    });
    lines.push(`${pad(f, 10)}${cells.join('')}`);
  }
  lines.push(...failures);
  for (const r of results) if (r.loop) lines.push(...icacheLines(r.loop, r.icache ?? [], r.arch));
  for (const r of results) {
    if (r.loop) {
      for (const n of r.loop.notes) lines.push(`note (${r.arch}): ${n}`);
      if (r.loop.limitation) lines.push(`note (${r.arch}): ${r.loop.limitation}`);
    } else if (r.error && r.file?.status === 'ok') lines.push(`${r.arch}: ${r.error}`);
  }
  return lines.join('\n') + '\n';
}
