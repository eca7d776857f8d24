// `unroll-lens sass`: SASS cost of a file as written, and of each unroll factor of one loop.
import * as path from 'path';
import {
  CudaDocuments,
  ListingError,
  LoopReport,
  NotInstantiatedError,
  SassStalls,
  UnrollFactor,
  VariantInspector,
  chooseArch,
  describeRejectedFlag,
  detectToolchain,
  parseVariantFactor,
  readSassStallsFile,
  renderListing,
  withStalls,
  type FileAnalysis,
} from '../engine';
import { SETTINGS } from '../settings';
import { macroTableFor } from './macros';
import { RANGES } from '../schema/ranges';
import { defineCommand, factorsOption, lineListOption, numberOption, stringOption } from './args';
import { cancelOnSignals, CliIO, EXIT, UsageError } from './io';
import { buildPathFor, checkArchOption, compileFlagsFor, readSourceFile } from './inputs';
import { limitTools, TOOL_TIMEOUT_OPTIONS, toolTimeoutOptions } from './gpuOptions';
import { Progress } from './progress';
import {
  headerUnit,
  inspectorFor,
  nextInstantiatingUnit,
  otherInstantiatingUnits,
  SassArgs,
  sassLoopIcache,
  unitFunctions,
} from './sassBuild';
import { listingJson, toSassJson } from './sassJson';
import { fileWithLoopAhead } from './loopAhead';
import { sassArchs } from './sassMultiArch';
import { compileFailureDetail, renderFile, renderLoop } from './sassText';

export const sassCommand = defineCommand({
  name: 'sass',
  summary: 'Compile with nvcc and count SASS per kernel; with --loop, build one variant per unroll factor of that loop.',
  synopsis: '<file> [--loop LINE] [options]',
  description:
    'Compiles the file with nvcc (flags from compile_commands.json when it has an entry for the file; stderr says which\n' +
    'database and entry, or where it looked) and reports each\n' +
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
      default: 'one where the loop runs more times than the largest factor (trip counts from template arguments or SASS)',
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
    'compile-commands': {
      type: 'string',
      value: 'PATH',
      help: 'the compile_commands.json (or its folder) to take the flags from, before any found by the search',
      default: "the file's folders up to the working directory, each with its compile_commands.json (or a link to one), build*/ and out/",
    },
    tu: {
      type: 'string',
      value: 'FILE',
      help: 'for a header: the translation unit (.cu including it) to build it through',
      default: "a compile_commands.json entry that includes the header and whose text instantiates the loop's function",
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
  argsOf({ options, positionals }): SassArgs {
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
    return {
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
      compileCommands: options['compile-commands'] ?? null,
      cacheMaxGB: numberOption('cache-max-gb', options['cache-max-gb'], SETTINGS.cache.maxSizeGB),
      json: !!options.json,
      listing: listingFactor,
      normalise: !!options.normalise,
      stalls: stalls ? { stalls, file: options.stalls! } : null,
    };
  },
  run: sass,
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

/** At most this many units are tried for a header when the chosen one turns out to hold no code of the loop. */
const UNIT_TRIES = 3;

async function sass(a: SassArgs, io: CliIO): Promise<number> {
  if (a.archs.length > 1) return sassArchs(a, io);
  // A header's default unit is a textual guess (which template arguments it uses is not known
  // before the build): one that builds but holds no code of the loop gives way to the next
  // candidate whose text instantiates the function, never one the user named with --tu.
  const tried: string[] = [];
  for (let args = a; ;) {
    const r = await sassThrough(args, io, tried);
    if (typeof r === 'number') return r;
    io.err(
      `unroll-lens: ${path.relative(process.cwd(), tried[tried.length - 1])} holds no code of this loop; trying ${path.relative(process.cwd(), r.next)}\n`,
    );
    args = { ...args, tu: r.next };
  }
}

/** The toolchain, the compile flags (the unit's for a header) and the inspector of one architecture. */
async function sassInspector(a: SassArgs, io: CliIO, file: string, tu: string | null) {
  const toolchain = limitTools(await detectToolchain({}), a.timeouts, a.file, io);
  if (a.arch) await checkArchOption(a.arch, toolchain);
  const flags = compileFlagsFor(tu ?? file, io, a.compileCommands);
  const { arch } = chooseArch(a.arch, flags.arch, toolchain.gpus);
  return { toolchain, flags, inspector: inspectorFor(arch, { toolchain, flags, tu, args: a, io }) };
}

async function sassThrough(a: SassArgs, io: CliIO, tried: string[]): Promise<number | { next: string }> {
  const file = path.resolve(a.file);
  const text = readSourceFile(a.file);
  const built = buildPathFor(file, a.file, io);
  const docs = await CudaDocuments.create();
  const analysis = docs.analyzeOnce(text, built, macroTableFor(file, text, a.arch ?? null));
  // A header's default unit: one whose text instantiates the loop's function (or the file's kernels).
  const functions = unitFunctions(analysis, a.loop);
  const tu = headerUnit(file, a.tu, { compileCommands: a.compileCommands, functions });
  const chosenByUs = a.tu === null || tried.length > 0;
  if (tu) tried.push(tu);
  if (tu) io.err(`unroll-lens: building ${path.relative(process.cwd(), file) || file} through ${path.relative(process.cwd(), tu) || tu}\n`);
  const { toolchain, flags, inspector } = await sassInspector(a, io, file, tu);
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
    const progress = new Progress('nvcc', a.loop !== null ? a.factors.size + 3 : 2, io.isTTY ? io.err : null);
    const { fileReport, ahead } = await fileWithLoopAhead(
      inspector,
      { file: built, text, analysis, line: a.loop, factors: a.factors, kernel: a.kernel ?? undefined },
      { signal: ac.signal, onFileProgress: () => progress.tick('file as written'), onLoopProgress: key => progress.tick(key) },
    );
    if (fileReport.status !== 'ok') {
      await ahead?.abandon();
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
      await ahead?.abandon();
      progress.done();
      throw new UsageError(
        `--kernel ${a.kernel}: no kernel of that name in ${a.file} (matched against the mangled names and inside the demangled ones); ` +
          `its kernels: ${fileReport.kernels.map(k => k.demangled).join('; ') || 'none'}`,
      );
    }
    let loopReport: LoopReport | null = null;
    if (ahead) {
      try {
        loopReport = await ahead.result();
      } catch (e) {
        if (!(e instanceof NotInstantiatedError)) throw e;
        progress.done();
        const next =
          tu && chosenByUs && tried.length < UNIT_TRIES
            ? nextInstantiatingUnit(file, tried, { compileCommands: a.compileCommands, functions })
            : null;
        if (next) return { next };
        io.err(
          `unroll-lens: ${e.message}${tu ? otherInstantiatingUnits(file, tu, { compileCommands: a.compileCommands, functions }) : ''}\n`,
        );
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
