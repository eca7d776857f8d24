// How `unroll-lens sass` builds: its arguments, a header's translation unit, one builder and
// inspector per architecture, and the instruction-cache prediction of a loop's variants.
import * as path from 'path';
import * as fs from 'fs';
import {
  FileSassReport,
  LoopReport,
  UnitSearch,
  VariantBuilder,
  VariantIcache,
  VariantInspector,
  defaultCacheDir,
  findLaunches,
  isHeaderFile,
  launchesIn,
  loopIcache,
  smCountOf,
  unitsByTextSearch,
  unitsFromCompileCommands,
  warpsPerSmInFile,
  type CompileFlags,
  type FileAnalysis,
  type SassStalls,
  type Toolchain,
  type UnrollFactor,
  type UnrollFactors,
} from '../engine';
import { sourceNameOf } from '../schema/kernelNames';
import { CliIO, UsageError } from './io';
import { readSourceFile } from './inputs';
import type { ToolTimeouts } from './gpuOptions';

export interface SassArgs {
  file: string;
  /** The one --arch value; null when none was given or several were. */
  arch: string | null;
  /** Every --arch value (several: one column set or listing per architecture). */
  archs: string[];
  loop: number | null;
  factors: UnrollFactors;
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
  /** --compile-commands: the database (or its folder) searched first. */
  compileCommands: string | null;
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

/**
 * The translation unit a header is built through: --tu, else the best compile_commands.json entry
 * that includes it (one whose text instantiates `search.functions` first). Null for a .cu file. A
 * header with none is a usage error naming the .cu files under the working directory that include it.
 */
export function headerUnit(file: string, tuOption: string | null, search: UnitSearch = {}): string | null {
  if (!isHeaderFile(file)) {
    if (tuOption) throw new UsageError(`--tu is for headers; ${file} is compiled on its own`);
    return null;
  }
  if (tuOption) {
    const tu = path.resolve(tuOption);
    if (!fs.existsSync(tu)) throw new UsageError(`--tu: no such file: ${tuOption}`);
    return tu;
  }
  const found = unitsFromCompileCommands(file, [process.cwd()], search);
  if (found.length && found[0].instantiates !== null) return found[0].file;
  const names = search.functions?.join(', ');
  if (found.length)
    throw new UsageError(
      `${file} is a header: it is built through a translation unit that includes it, and no compile_commands.json entry that does ` +
        `(${shownUnits(found)}) names ${names} or anything of its headers that leads to it. Pass --tu <file.cu> with a unit that instantiates it`,
    );
  const candidates = unitsByTextSearch(file, [process.cwd()]).slice(0, 5);
  throw new UsageError(
    `${file} is a header: it is built through a translation unit that includes it, and no compile_commands.json entry does. ` +
      (candidates.length ? `Pass --tu with one of: ${shownUnits(candidates)}` : 'Pass --tu <file.cu> (a .cu file that includes it)'),
  );
}

function shownUnits(list: { file: string }[]): string {
  const shown = list.slice(0, 5).map(c => path.relative(process.cwd(), c.file) || c.file);
  return shown.join(', ') + (list.length > 5 ? ` and ${list.length - 5} more` : '');
}

/**
 * For a header whose unit holds no code of the loop: the other compile_commands.json entries
 * whose text instantiates the function, for the message (empty when none is known).
 */
export function otherInstantiatingUnits(file: string, tu: string, search: UnitSearch): string {
  const others = unitsFromCompileCommands(file, [process.cwd()], search).filter(c => c.instantiates && c.file !== tu);
  return others.length
    ? ` Units whose text instantiates it: ${shownUnits(others)} (pass one with --tu).`
    : ' Pass --tu <file.cu> with a unit that calls it.';
}

/** The best compile_commands.json entry whose text instantiates the function, among those not tried yet; null when none is left. */
export function nextInstantiatingUnit(file: string, tried: string[], search: UnitSearch): string | null {
  return unitsFromCompileCommands(file, [process.cwd()], search).find(c => c.instantiates && !tried.includes(c.file))?.file ?? null;
}

/** The builder and inspector of one architecture, with the command's cache, jobs and flags. */
export function inspectorFor(
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

/** The functions a header's unit must instantiate: the one holding the loop, else every kernel of the file. */
export function unitFunctions(analysis: FileAnalysis, loop: number | null): string[] {
  const holding = loop === null ? undefined : analysis.kernels.find(k => k.loops.some(l => l.line === loop));
  return holding ? [holding.name] : analysis.kernels.map(k => k.name);
}
