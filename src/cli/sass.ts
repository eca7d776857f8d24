// `unroll-lens sass`: SASS cost of a file as written, and of each unroll factor of one loop.
import * as path from 'path';
import * as fs from 'fs';
import { CudaDocuments } from '../engine/parse/documents';
import { detectToolchain, chooseArch, Toolchain } from '../engine/toolchain/toolchain';
import { CompileFlags, resolveCompileFlags } from '../engine/toolchain/flags';
import { describeRejectedFlag } from '../engine/toolchain/rejectedFlag';
import { defaultCacheDir, VariantBuilder } from '../engine/variants/build';
import { FileSassReport, ListingError, LoopReport, NotInstantiatedError, VariantInspector } from '../engine/variants/inspect';
import { isHeaderFile } from '../engine/variants/overlay';
import { findTranslationUnit, unitsByTextSearch } from '../engine/variants/translationUnit';
import { factorLabel, parseVariantFactor, UnrollFactor } from '../engine/variants/rewrite';
import type { FileAnalysis } from '../engine/parse/model';
import { renderListing } from '../engine/report/sassListing';
import { withStalls } from '../engine/variants/listing';
import { readSassStallsFile, SassStalls } from '../engine/profile/sassStalls';
import { SETTINGS } from '../settings';
import { icacheCell, loopIcache, VariantIcache } from '../engine/icache/report';
import { smCountOf, warpsLabel, warpsPerSmInFile } from '../engine/profile/warpsPerSm';
import { findLaunches, launchesIn } from '../engine/parse/launches';
import { sourceNameOf } from '../engine/variants/inspect';
import type { SassListingData } from '../protocol';
import { macroTableFor } from './macros';
import { RANGES } from '../schema/ranges';
import { defineCommand, factorsOption, lineListOption, numberOption, stringOption } from './args';
import { cancelOnSignals, CliIO, EXIT, UsageError } from './io';
import { buildPathFor, checkArchOption, readSourceFile } from './inputs';
import { limitTools, TOOL_TIMEOUT_OPTIONS, ToolTimeouts, toolTimeoutOptions } from './gpuOptions';
import { Progress } from './progress';

export const sassCommand = defineCommand({
  name: 'sass',
  summary: 'Compile with nvcc and count SASS per kernel; with --loop, build one variant per unroll factor of that loop.',
  synopsis: '<file> [--loop LINE] [options]',
  description:
    'Compiles the file with nvcc (flags from compile_commands.json when it has an entry for the file) and reports each\n' +
    "kernel's SASS instructions, bytes, registers and spills. With --loop LINE (the loop keyword's line), builds one variant\n" +
    "per unroll factor, in which only that loop's pragma changes, and reports the loop's instructions and the unroll factor\n" +
    'nvcc really applied. A header (.cuh, .h, .hpp, .inl) is built through a translation unit that includes it (--tu, else\n' +
    'compile_commands.json), with the header replaced through an overlay include folder. Needs nvcc; no GPU. Builds are\n' +
    'cached; Ctrl-C (or SIGTERM, SIGHUP) cancels them.',
  options: {
    arch: {
      type: 'string',
      value: 'sm_XX,…',
      help: 'target architecture; a comma list builds each and shows one column set (or listing) per architecture',
      default: "compile flags' arch, else the first GPU's, else sm_90",
    },
    loop: { type: 'string', value: 'LINE', help: '1-based line of the loop keyword: build one variant per factor of this loop' },
    factors: {
      type: 'string',
      value: 'LIST',
      setting: SETTINGS.unrollFactors,
      help: 'unroll factors to build: default (no pragma), full, or integers from 1 to 4096',
    },
    kernel: {
      type: 'string',
      value: 'NAME',
      help: 'the instantiation holding the loop (mangled name, or part of the demangled one)',
      default: "the one with most of the loop's instructions",
    },
    jobs: {
      type: 'string',
      value: 'N',
      help: `parallel nvcc processes, ${RANGES.jobs.min} to ${RANGES.jobs.max}; 0 = number of CPU cores`,
      setting: SETTINGS.jobs,
    },
    'warps-per-sm': {
      type: 'string',
      value: 'N',
      setting: SETTINGS.warpsPerSm,
      help: "with --loop: resident warps per SM for the instruction-cache prediction; 0 = from the file's launch, __launch_bounds__ or occupancy",
    },
    ...TOOL_TIMEOUT_OPTIONS,
    'cache-max-gb': {
      type: 'string',
      value: 'GB',
      setting: SETTINGS.cache.maxSizeGB,
      help: 'size cap of the build cache (least recently used builds are deleted past it); 0 = unlimited',
    },
    tu: {
      type: 'string',
      value: 'FILE',
      help: 'for a header: the translation unit (.cu including it) to build it through',
      default: 'the nearest compile_commands.json entry that includes the header',
    },
    listing: {
      type: 'boolean',
      help: "with --loop: print the annotated SASS listing of one variant (--factor) grouped by source line, with the loop's machine-code pieces",
    },
    factor: {
      type: 'string',
      value: 'F',
      help: 'with --listing: the variant to list: as-written, default, full or an integer',
      default: 'as-written',
    },
    stalls: {
      type: 'string',
      value: 'FILE',
      help: 'with --listing: warp-stall samples per instruction from a saved ncu source page (ncu --import R.ncu-rep --csv --page source --print-source sass), shown beside the instructions when they are the same machine code',
    },
    normalise: {
      type: 'boolean',
      help: 'with --listing: drop addresses and renumber registers and labels in order of use (for diffing two listings)',
    },
    json: { type: 'boolean', help: 'machine-readable output (contract: docs/cli.md)' },
  },
  exitCodes: [
    [EXIT.ok, 'done (single variants may still have failed: see their status)'],
    [
      EXIT.failed,
      "the file as written does not compile (nvcc's messages on stderr); with several --arch values: for one of them (the others are still reported)",
    ],
    [
      EXIT.usage,
      'bad usage, unreadable file, no loop at --loop, a header with no translation unit, or nvcc not found (the message says how to install it)',
    ],
    [EXIT.badInput, 'nvcc, ptxas or the host compiler rejected a compile flag (the message names it and where it came from)'],
    [EXIT.cancelled, 'cancelled (Ctrl-C, SIGTERM or SIGHUP)'],
  ],
  async run({ options, positionals }, io) {
    if (!positionals.length) throw new UsageError('sass needs a .cu file');
    if (positionals.length > 1) throw new UsageError('sass takes one file');
    let loop: number | null = null;
    if (options.loop !== undefined) {
      const lines = lineListOption('loop', options.loop);
      if (lines.length !== 1) throw new UsageError('--loop takes one 1-based line number');
      loop = lines[0];
    }
    const archs = archListOption(options.arch);
    if (options.listing && loop === null) throw new UsageError('--listing needs --loop LINE (the loop whose variant to list)');
    if (!options.listing && (options.factor !== undefined || options.normalise || options.stalls !== undefined))
      throw new UsageError('--factor, --normalise and --stalls go with --listing');
    let stalls: SassStalls | null = null;
    if (options.stalls !== undefined) {
      try {
        stalls = readSassStallsFile(options.stalls, options.kernel ?? undefined);
      } catch (e) {
        throw new UsageError(`--stalls: ${e instanceof Error ? e.message : e}`);
      }
    }
    const warpsPerSm = numberOption('warps-per-sm', options['warps-per-sm'], SETTINGS.warpsPerSm);
    if (options['warps-per-sm'] !== undefined && (loop === null || options.listing))
      throw new UsageError('--warps-per-sm goes with --loop (the instruction-cache prediction of each variant), not with --listing');
    let listingFactor: UnrollFactor | 'as-written' | null = null;
    if (options.listing) {
      try {
        listingFactor = parseVariantFactor(options.factor ?? 'as-written');
      } catch (e) {
        throw new UsageError(`--factor: ${e instanceof Error ? e.message : e}`);
      }
    }
    return sass(
      {
        file: positionals[0],
        arch: archs.length === 1 ? archs[0] : null,
        archs,
        loop,
        factors: factorsOption(options.factors),
        kernel: options.kernel ?? null,
        jobs: numberOption('jobs', options.jobs, SETTINGS.jobs),
        warpsPerSm,
        timeouts: toolTimeoutOptions(options),
        tu: options.tu ?? null,
        cacheMaxGB: numberOption('cache-max-gb', options['cache-max-gb'], SETTINGS.cache.maxSizeGB),
        json: !!options.json,
        listing: listingFactor,
        normalise: !!options.normalise,
        stalls: stalls ? { stalls, file: options.stalls! } : null,
      },
      io,
    );
  },
});

/**
 * `--arch sm_80,sm_90`: each checked like unrollLens.arch, duplicates dropped, order kept; absent:
 * none (the compile flags' or the GPU's arch is chosen later).
 */
export function archListOption(text: string | undefined): string[] {
  if (text === undefined) return [];
  const parts = text.split(',').map(x => x.trim());
  if (parts.length > 1 && parts.some(x => !x))
    throw new UsageError(`--arch takes sm_XX architectures separated by commas, not '${text}' (an empty entry)`);
  const out: string[] = [];
  for (const x of parts) {
    if (parts.length > 1 && !/^sm_\d+[af]?$/.test(x))
      throw new UsageError(`--arch takes sm_XX architectures separated by commas (e.g. sm_80,sm_90); '${x}' is not one`);
    const arch = stringOption('arch', x, SETTINGS.arch);
    if (arch && !out.includes(arch)) out.push(arch);
  }
  return out;
}

interface SassArgs {
  file: string;
  /** The one --arch value; null when none was given or several were. */
  arch: string | null;
  /** Every --arch value (several: one column set or listing per architecture). */
  archs: string[];
  loop: number | null;
  factors: UnrollFactor[];
  kernel: string | null;
  /** 0: one nvcc per CPU core. */
  jobs: number;
  /** --warps-per-sm (0: inferred per kernel). */
  warpsPerSm: number;
  timeouts: ToolTimeouts;
  /** --cache-max-gb (0: unlimited). */
  cacheMaxGB: number;
  /** A header's translation unit (--tu). */
  tu: string | null;
  json: boolean;
  /** --listing: the variant to list; null without --listing. */
  listing: UnrollFactor | 'as-written' | null;
  normalise: boolean;
  /** --stalls: samples read from a saved ncu source page. */
  stalls: { stalls: SassStalls; file: string } | null;
}

/**
 * The instruction-cache prediction of each variant of a loop (issue 13), at the warps per SM of
 * --warps-per-sm, else of the file's launch, __launch_bounds__ or occupancy.
 */
export function sassLoopIcache(
  loop: LoopReport,
  c: { file: FileSassReport; text: string; analysis: FileAnalysis; warpsPerSm: number; gpuName: string | null; tu: string | null },
): (VariantIcache | null)[] {
  // A header's kernels are launched from its translation unit.
  const launches = [...findLaunches(c.text), ...(c.tu ? launchesIn(c.tu, readSourceFile(c.tu)) : [])];
  const count = c.gpuName ? smCountOf(c.gpuName) : null;
  const sms = count && c.gpuName ? { count, gpu: c.gpuName } : null;
  return loopIcache(loop, v => {
    const k = c.file.kernels.find(x => x.name === v.kernel);
    return warpsPerSmInFile(c.text, c.analysis, {
      kernel: k ? sourceNameOf(k.demangled) : loop.kernel,
      arch: loop.arch,
      override: { warpsPerSm: c.warpsPerSm, origin: '--warps-per-sm' },
      launches,
      registers: v.registers ?? k?.registers ?? null,
      sharedBytes: k?.sharedBytes ?? null,
      sms,
    });
  });
}

function icacheJson(p: VariantIcache | null | undefined) {
  if (!p) return null;
  return {
    bytes: p.bytes,
    predictedSlowdown: p.predictedSlowdown,
    warpsPerSm: p.warpsPerSm,
    warpsRange: p.warpsRange,
    warpsSource: p.warpsSource,
    demand: p.demand,
    shape: p.shape,
    fits: p.fits,
    basis: p.basis,
    reference: p.reference,
  };
}

/** The documented `sass --json` contract (docs/cli.md). */
export function toSassJson(file: FileSassReport, loop: LoopReport | null, icache: (VariantIcache | null)[] = []) {
  return {
    arch: file.arch,
    nvcc: file.nvcc,
    kernels: file.kernels.map(k => ({
      name: k.name,
      demangled: k.demangled,
      instructions: k.instructions,
      bytes: k.bytes,
      registers: k.registers,
      spillStores: k.spillStores,
      spillLoads: k.spillLoads,
      sharedBytes: k.sharedBytes,
    })),
    ...(loop
      ? {
          loop: {
            line: loop.line,
            instantiation: loop.instantiation,
            variants: loop.variants.map((v, i) => ({
              factor: v.factor,
              status: v.status,
              kernel: v.kernel,
              kernelInstructions: v.kernelInstructions,
              loopInstructions: v.loopInstructions,
              effectiveUnroll: v.effectiveUnroll,
              fullyUnrolled: v.fullyUnrolled,
              remainder: v.remainder ?? null,
              registers: v.registers,
              spillStores: v.spillStores,
              identicalTo: v.identicalTo,
              icache: icacheJson(icache[i]),
              ...(v.failure
                ? {
                    error:
                      v.failure.messages
                        .filter(m => m.severity === 'error')
                        .map(m => m.message)
                        .join('\n') || v.failure.kind,
                  }
                : {}),
            })),
            notes: loop.notes,
            limitation: loop.limitation,
          },
        }
      : {}),
    limitation: file.limitation ?? null,
  };
}

function pad(s: string, n: number, right = false): string {
  return s.length >= n ? s : right ? ' '.repeat(n - s.length) + s : s + ' '.repeat(n - s.length);
}

function renderFile(r: FileSassReport): string {
  const lines = [`nvcc ${r.nvcc} · ${r.arch} · counts from ${r.disassembler}${r.cached ? ' (cached)' : ''}`];
  lines.push(
    `${pad('kernel', 60)} ${pad('instr', 7, true)} ${pad('bytes', 8, true)} ${pad('regs', 5, true)} ${pad('spill st/ld', 12, true)}`,
  );
  for (const k of r.kernels) {
    lines.push(
      `${pad(k.demangled.length > 60 ? k.demangled.slice(0, 59) + '…' : k.demangled, 60)} ${pad(String(k.instructions), 7, true)} ${pad(String(k.bytes), 8, true)} ${pad(String(k.registers), 5, true)} ${pad(`${k.spillStores}/${k.spillLoads}`, 12, true)}`,
    );
  }
  if (r.limitation && r.loops.length) lines.push(`note: ${r.limitation}`);
  return lines.join('\n') + '\n';
}

/** The function the rows measure: its demangled name, and which of several instantiations it is. */
export function loopHeading(r: LoopReport): string {
  const i = r.instantiation;
  if (!i) return r.kernel;
  return i.of > 1
    ? `${i.demangled} (of ${i.of} functions holding it: the one with most of its code over the variants; --kernel picks another)`
    : i.demangled;
}

/** The remainder nvcc emitted beside the main loop: "loop ×1 + 2 straight", "none", or "" when unknown. */
export function remainderLabel(r: { loops: number[]; straight: number } | null | undefined): string {
  if (!r) return '';
  const parts = r.loops.map(c => `loop ×${c}`);
  if (r.straight) parts.push(`${r.straight} straight`);
  return parts.join(' + ') || 'none';
}

function renderLoop(r: LoopReport, icache: (VariantIcache | null)[] = []): string {
  const lines = [`\nloop at line ${r.line} in ${loopHeading(r)} (as written: ${factorLabel(r.written)})`];
  const remainderWidth = Math.max(9, ...r.variants.map(v => remainderLabel(v.remainder).length));
  lines.push(
    `${pad('factor', 10)} ${pad('status', 8)} ${pad('kernel instr', 13, true)} ${pad('loop instr', 11, true)} ${pad('nvcc unroll', 12, true)} ${pad('remainder', remainderWidth)} ${pad('regs', 5, true)} ${pad('spills', 7, true)}  same as`,
  );
  for (const v of r.variants) {
    const eff = v.effectiveUnroll === null ? '?' : `×${v.effectiveUnroll}${v.fullyUnrolled ? ' (full)' : ''}`;
    lines.push(
      `${pad(String(v.factor), 10)} ${pad(v.status, 8)} ${pad(String(v.kernelInstructions ?? '-'), 13, true)} ${pad(String(v.loopInstructions ?? '-'), 11, true)} ${pad(v.status === 'ok' ? eff : '-', 12, true)} ${pad(v.status === 'ok' ? remainderLabel(v.remainder) || '-' : '-', remainderWidth)} ${pad(String(v.registers ?? '-'), 5, true)} ${pad(String(v.spillStores ?? '-'), 7, true)}  ${v.identicalTo ?? ''}`,
    );
    if (v.failure)
      for (const m of v.failure.messages.filter(x => x.severity === 'error').slice(0, 3))
        lines.push(`    ${v.failure.kind}: ${m.file ? `${m.file}:${m.line ?? ''}: ` : ''}${m.message.split('\n')[0]}`);
  }
  lines.push(...icacheLines(r, icache));
  for (const n of r.notes) lines.push(`note: ${n}`);
  if (r.limitation) lines.push(`note: ${r.limitation}`);
  return lines.join('\n') + '\n';
}

/** One line per variant with a prediction, then where warps per SM and the numbers come from (once). */
function icacheLines(r: LoopReport, icache: (VariantIcache | null)[], arch = ''): string[] {
  const shown = r.variants.map((v, i) => ({ v, p: icache[i] })).filter(x => x.p);
  if (!shown.length) return [];
  const tag = arch ? ` (${arch})` : '';
  const first = shown[0].p!;
  // Registers per variant can change how many blocks fit: a variant at other warps per SM says so.
  const lines = shown.map(
    ({ v, p }) =>
      `${pad(String(v.factor), 10)} ${icacheCell(p!)}${p!.warpsPerSm !== first.warpsPerSm ? ` (at ${p!.warpsPerSm} warps/SM)` : ''}`,
  );
  lines.unshift(
    `instruction cache${tag}: predicted slowdown at ${warpsLabel({ warpsPerSm: first.warpsPerSm, range: first.warpsRange })} warps/SM, ${first.warpsSource}`,
  );
  // The basis of the worst prediction (its demand is that variant's); none when everything fits.
  const worst = shown.filter(x => !x.p!.fits).sort((a, b) => b.p!.predictedSlowdown.high - a.p!.predictedSlowdown.high)[0];
  if (worst) lines.push(`basis${tag} (${worst.v.factor}): ${worst.p!.basis}`);
  return lines;
}

async function sass(a: SassArgs, io: CliIO): Promise<number> {
  if (a.archs.length > 1) return sassArchs(a, io);
  const file = path.resolve(a.file);
  const text = readSourceFile(a.file);
  const built = buildPathFor(file, a.file, io);
  const docs = await CudaDocuments.create();
  const analysis = docs.analyzeOnce(text, built, macroTableFor(file, text, a.arch ?? null));
  const tu = headerUnit(file, a.tu);
  if (tu) io.err(`unroll-lens: building ${path.relative(process.cwd(), file) || file} through ${path.relative(process.cwd(), tu) || tu}\n`);
  const toolchain = limitTools(await detectToolchain({}), a.timeouts, a.file, io);
  if (a.arch) await checkArchOption(a.arch, toolchain);
  const flags = resolveCompileFlags(tu ?? file, [process.cwd()], {});
  for (const w of flags.warnings) io.err(`unroll-lens: ${w}\n`);
  const { arch } = chooseArch(a.arch, flags.arch, toolchain.gpus);
  const inspector = inspectorFor(arch, { toolchain, flags, tu, args: a, io });
  const ac = new AbortController();
  const stopSignals = cancelOnSignals(ac);
  try {
    if (a.loop !== null && !analysis.kernels.some(k => k.loops.some(l => l.line === a.loop))) {
      throw new UsageError(
        `no loop in device code at line ${a.loop} of ${a.file} (loops at ${analysis.kernels.flatMap(k => k.loops.map(l => l.line)).join(', ') || 'none'})`,
      );
    }
    if (a.listing !== null && a.loop !== null)
      return await printListing(a, a.loop, a.listing, { file: built, text, analysis, inspector, signal: ac.signal }, io);
    const progress = new Progress('nvcc', a.loop !== null ? a.factors.length + 3 : 2, io.isTTY ? io.err : null);
    const fileReport = await inspector.inspectFile(built, text, analysis, {
      signal: ac.signal,
      onProgress: () => progress.tick('file as written'),
    });
    if (fileReport.status !== 'ok') {
      progress.done();
      // A flag nvcc or a tool rejected is named with where it came from: bad input (65), not a finding about the code.
      const badFlag = /^(?:flags|arch)$/.test(fileReport.failure?.kind ?? '')
        ? describeRejectedFlag(fileReport.failure!.messages, flags)
        : null;
      io.err(
        `unroll-lens: ${a.file} does not compile (${fileReport.failure?.kind}):\n${compileFailureDetail(fileReport, a.timeouts)}\n` +
          (badFlag ? `unroll-lens: ${badFlag}\n` : ''),
      );
      return fileReport.status === 'cancelled' ? EXIT.cancelled : badFlag ? EXIT.badInput : EXIT.failed;
    }
    if (a.kernel !== null && !fileReport.kernels.some(k => k.name === a.kernel || k.demangled.includes(a.kernel!))) {
      progress.done();
      throw new UsageError(
        `--kernel ${a.kernel}: no kernel of that name in ${a.file} (matched against the mangled names and inside the demangled ones); ` +
          `its kernels: ${fileReport.kernels.map(k => k.demangled).join('; ') || 'none'}`,
      );
    }
    let loopReport: LoopReport | null = null;
    if (a.loop !== null) {
      try {
        loopReport = await inspector.inspectLoop(built, text, analysis, a.loop, a.factors, {
          signal: ac.signal,
          kernel: a.kernel ?? undefined,
          onProgress: (_d, _t, key) => progress.tick(key),
        });
      } catch (e) {
        if (!(e instanceof NotInstantiatedError)) throw e;
        progress.done();
        io.err(`unroll-lens: ${e.message}\n`);
        return EXIT.failed;
      }
    }
    progress.done();
    if (ac.signal.aborted) {
      io.err('unroll-lens: cancelled\n');
      return EXIT.cancelled;
    }
    const gpuName = toolchain.gpus[0]?.name ?? null;
    const icache = loopReport
      ? sassLoopIcache(loopReport, { file: fileReport, text, analysis, warpsPerSm: a.warpsPerSm, gpuName, tu })
      : [];
    if (a.json) io.out(JSON.stringify(toSassJson(fileReport, loopReport, icache), null, 2) + '\n');
    // With a loop table, the note goes under it (once).
    else
      io.out(
        renderFile(loopReport ? { ...fileReport, limitation: null } : fileReport) + (loopReport ? renderLoop(loopReport, icache) : ''),
      );
    return EXIT.ok;
  } finally {
    stopSignals();
  }
}

/**
 * The translation unit a header is built through: --tu, else the nearest compile_commands.json
 * entry that includes it. Null for a .cu file. A header with none is a usage error naming the .cu
 * files under the working directory that include it.
 */
export function headerUnit(file: string, tuOption: string | null): string | null {
  if (!isHeaderFile(file)) {
    if (tuOption) throw new UsageError(`--tu is for headers; ${file} is compiled on its own`);
    return null;
  }
  if (tuOption) {
    const tu = path.resolve(tuOption);
    if (!fs.existsSync(tu)) throw new UsageError(`--tu: no such file: ${tuOption}`);
    return tu;
  }
  const found = findTranslationUnit(file, [process.cwd()]);
  if (found) return found;
  const candidates = unitsByTextSearch(file, [process.cwd()]).slice(0, 5);
  throw new UsageError(
    `${file} is a header: it is built through a translation unit that includes it, and no compile_commands.json entry does. ` +
      (candidates.length
        ? `Pass --tu with one of: ${candidates.map(c => path.relative(process.cwd(), c.file)).join(', ')}`
        : 'Pass --tu <file.cu> (a .cu file that includes it)'),
  );
}

/** `--listing`: one variant's annotated SASS (text, or the documented JSON). */
async function printListing(
  a: SassArgs,
  line: number,
  factor: UnrollFactor | 'as-written',
  c: { file: string; text: string; analysis: FileAnalysis; inspector: VariantInspector; signal: AbortSignal },
  io: CliIO,
): Promise<number> {
  const progress = new Progress('nvcc', 2, io.isTTY ? io.err : null);
  try {
    let listing = await c.inspector.listing(c.file, c.text, c.analysis, line, factor, {
      signal: c.signal,
      kernel: a.kernel ?? undefined,
      onProgress: (_d, _t, key) => progress.tick(key),
    });
    progress.done();
    if (a.stalls) {
      listing = withStalls(listing, a.stalls.stalls, path.basename(a.stalls.file));
      if (!listing.stalls) io.err(`unroll-lens: ${listing.stallsNote}\n`);
    }
    if (a.json) io.out(JSON.stringify(listingJson(listing), null, 2) + '\n');
    else io.out(renderListing(listing, { normalise: a.normalise, sourceText: c.text }).text);
    return EXIT.ok;
  } catch (e) {
    progress.done();
    if (!(e instanceof ListingError)) throw e;
    if (e.cancelled || c.signal.aborted) {
      io.err('unroll-lens: cancelled\n');
      return EXIT.cancelled;
    }
    io.err(`unroll-lens: ${e.message}\n`);
    return EXIT.failed;
  }
}

/** The documented `sass --listing --json` contract (docs/cli.md). */
export function listingJson(l: SassListingData) {
  return {
    kernel: l.kernel,
    demangled: l.demangled,
    arch: l.arch,
    nvcc: l.nvcc,
    factor: l.factor,
    file: l.file,
    loopLine: l.loopLine,
    instructions: l.instructions,
    bytes: l.bytes,
    registers: l.registers,
    lines: l.lines.map(x => ({
      sourceLine: x.sourceLine,
      file: x.file,
      inLoop: x.inLoop,
      opcodes: x.opcodes,
      instructions: x.instructions.map(i => ({ offset: i.offset, opcode: i.opcode, text: i.text, ...(i.stall ? { stall: i.stall } : {}) })),
    })),
    loops: l.loops.map(p => ({
      name: p.name,
      startOffset: p.startOffset,
      endOffset: p.endOffset,
      sourceLines: p.sourceLines,
      unroll: p.unroll,
      kind: p.kind,
      role: p.role,
      instructions: p.instructions,
      ...(p.perPass ? { perPass: true } : {}),
    })),
    stalls: l.stalls,
    stallsNote: l.stallsNote,
  };
}

/** nvcc's error messages for a file as written that does not compile, indented, for stderr. */
function compileFailureDetail(r: FileSassReport, timeouts: ToolTimeouts): string {
  const msgs = r.failure?.messages.filter(m => m.severity === 'error') ?? [];
  const kind = r.failure?.kind;
  return msgs.length
    ? msgs.map(m => `  ${m.file ? `${m.file}${m.line ? `:${m.line}` : ''}: ` : ''}${m.message}`).join('\n')
    : kind === 'timeout'
      ? `  nvcc ran longer than ${timeouts.nvccMs / 1000} s (--nvcc-timeout) and was killed`
      : kind === 'cancelled'
        ? '  cancelled'
        : '  (nvcc printed no message)';
}

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
async function sassArchs(a: SassArgs, io: CliIO): Promise<number> {
  const file = path.resolve(a.file);
  const text = readSourceFile(a.file);
  const built = buildPathFor(file, a.file, io);
  const docs = await CudaDocuments.create();
  // The macro table (and so the loops the parser sees) may depend on __CUDA_ARCH__.
  const analyses = a.archs.map(arch => docs.analyzeOnce(text, built, macroTableFor(file, text, arch)));
  const tu = headerUnit(file, a.tu);
  if (tu) io.err(`unroll-lens: building ${path.relative(process.cwd(), file) || file} through ${path.relative(process.cwd(), tu) || tu}\n`);
  const toolchain = limitTools(await detectToolchain({}), a.timeouts, a.file, io);
  for (const arch of a.archs) await checkArchOption(arch, toolchain);
  const flags = resolveCompileFlags(tu ?? file, [process.cwd()], {});
  for (const w of flags.warnings) io.err(`unroll-lens: ${w}\n`);
  const hasLoop = (x: FileAnalysis) => x.kernels.some(k => k.loops.some(l => l.line === a.loop));
  if (a.loop !== null && !analyses.some(hasLoop)) {
    throw new UsageError(
      `no loop in device code at line ${a.loop} of ${a.file} (loops at ${analyses[0].kernels.flatMap(k => k.loops.map(l => l.line)).join(', ') || 'none'})`,
    );
  }
  const ac = new AbortController();
  const stopSignals = cancelOnSignals(ac);
  const perArch = a.listing !== null ? 2 : a.loop !== null ? a.factors.length + 3 : 2;
  const progress = new Progress('nvcc', perArch * a.archs.length, io.isTTY ? io.err : null);
  const results: ArchResult[] = [];
  try {
    for (const [i, arch] of a.archs.entries()) {
      const inspector = inspectorFor(arch, { toolchain, flags, tu, args: a, io });
      const r: ArchResult = { arch, nvcc: toolchain.nvcc.version, file: null, loop: null, listing: null, error: null };
      results.push(r);
      const analysis = analyses[i];
      const tick = (key: string) => progress.tick(`${arch} ${key}`);
      if (a.loop !== null && !hasLoop(analysis)) {
        r.error = `no loop in device code at line ${a.loop} with the macros of ${arch}`;
        continue;
      }
      if (a.listing !== null && a.loop !== null) {
        try {
          r.listing = await inspector.listing(built, text, analysis, a.loop, a.listing, {
            signal: ac.signal,
            kernel: a.kernel ?? undefined,
            onProgress: (_d, _t, key) => tick(key),
          });
          // The samples are of one GPU's run: attached where the machine code is the same, else the note says why.
          if (a.stalls) {
            r.listing = withStalls(r.listing, a.stalls.stalls, path.basename(a.stalls.file));
            if (!r.listing.stalls) io.err(`unroll-lens: ${arch}: ${r.listing.stallsNote}\n`);
          }
        } catch (e) {
          if (!(e instanceof ListingError)) throw e;
          if (e.cancelled || ac.signal.aborted) break;
          r.error = e.message;
        }
        continue;
      }
      r.file = await inspector.inspectFile(built, text, analysis, { signal: ac.signal, onProgress: () => tick('file as written') });
      if (r.file.status !== 'ok') {
        if (r.file.status === 'cancelled') break;
        r.error = `does not compile (${r.file.failure?.kind}):\n${compileFailureDetail(r.file, a.timeouts)}`;
        r.jsonError =
          r.file.failure?.messages
            .filter(m => m.severity === 'error')
            .map(m => m.message)
            .join('\n') || `does not compile (${r.file.failure?.kind})`;
        continue;
      }
      // As with one architecture: a --kernel matching nothing is a usage error, found before the loop's builds.
      if (a.kernel !== null && !r.file.kernels.some(k => k.name === a.kernel || k.demangled.includes(a.kernel!))) {
        progress.done();
        throw new UsageError(
          `--kernel ${a.kernel}: no kernel of that name in ${a.file} for ${arch} (matched against the mangled names and inside the demangled ones); ` +
            `its kernels: ${r.file.kernels.map(k => k.demangled).join('; ') || 'none'}`,
        );
      }
      if (a.loop !== null) {
        try {
          r.loop = await inspector.inspectLoop(built, text, analysis, a.loop, a.factors, {
            signal: ac.signal,
            kernel: a.kernel ?? undefined,
            onProgress: (_d, _t, key) => tick(key),
          });
          r.icache = sassLoopIcache(r.loop, {
            file: r.file,
            text,
            analysis,
            warpsPerSm: a.warpsPerSm,
            gpuName: toolchain.gpus[0]?.name ?? null,
            tu,
          });
        } catch (e) {
          if (!(e instanceof NotInstantiatedError)) throw e;
          r.error = e.message;
        }
      }
    }
    progress.done();
    if (ac.signal.aborted) {
      io.err('unroll-lens: cancelled\n');
      return EXIT.cancelled;
    }
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
              r.file?.status === 'ok'
                ? toSassJson(r.file, r.loop, r.icache)
                : { arch: r.arch, nvcc: r.nvcc, error: r.jsonError ?? r.error },
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
  } finally {
    stopSignals();
  }
}

/** The kernel table with one column set (instr, bytes, regs, spills) per architecture. */
export function renderFiles(results: ArchResult[], withNotes: boolean): string {
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
export function renderLoops(results: ArchResult[]): string {
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

/** The builder and inspector of one architecture, with the command's cache, jobs and flags. */
function inspectorFor(
  arch: string,
  c: { toolchain: Toolchain; flags: CompileFlags; tu: string | null; args: Pick<SassArgs, 'cacheMaxGB' | 'jobs'>; io: CliIO },
): VariantInspector {
  const builder = new VariantBuilder({
    nvcc: c.toolchain.nvcc,
    arch,
    flags: c.flags,
    cacheDir: defaultCacheDir(),
    cacheMaxBytes: c.args.cacheMaxGB * 1024 ** 3,
    warn: m => c.io.err(`unroll-lens: warning: ${m}\n`),
    concurrency: c.args.jobs > 0 ? c.args.jobs : undefined,
    runner: c.toolchain.runner,
    ...(c.tu ? { translationUnit: c.tu } : {}),
  });
  return new VariantInspector({ toolchain: c.toolchain, builder, arch });
}
