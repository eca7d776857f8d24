// Input files of the subcommands, checked before anything reads them: a FIFO, a device
// (/dev/zero) or a socket named x.cu would block a read or never end, and a source of hundreds
// of megabytes is not CUDA anyone wrote by hand. Both get a clear error instead of a hang.
import { MAX_SOURCE_BYTES } from '../schema/ranges';
import * as fs from 'fs';
import * as path from 'path';
import {
  BoundedReadError,
  CompileFlags,
  ScanInputError,
  fileKind,
  flagsOriginText,
  readBoundedText,
  resolveCompileFlags,
  type Toolchain,
} from '../engine';
import { CliIO, UsageError } from './io';

/** Throws ScanInputError unless `file` (symlinks followed) is a regular file of at most `maxBytes`. */
export function checkInputFile(file: string, maxBytes: number | null = MAX_SOURCE_BYTES): fs.Stats {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    throw new ScanInputError(`no such file: ${file}`);
  }
  if (!st.isFile()) throw new ScanInputError(`${file} is ${fileKind(st)}, not a regular file: refusing to read it`);
  if (maxBytes !== null && st.size > maxBytes)
    throw new ScanInputError(
      `${file} is ${(st.size / 1024 / 1024).toFixed(1)} MiB; source files over ${maxBytes / 1024 / 1024} MiB are refused (is it really CUDA source?)`,
    );
  return st;
}

/** What nvcc builds as CUDA or C++ (a .c, .cpp or .cc may be compiled with -x cu) and the headers it includes. */
const SOURCE_NAME = /\.(cu|cuh|h|hh|hpp|hxx|inl|inc|ipp|tcc|cpp|cc|cxx|c\+\+|c)$/i;

/** A README.md or a .txt handed to a command that compiles is a slip: say so instead of showing nvcc's parse errors. */
function checkSourceName(file: string): void {
  if (!SOURCE_NAME.test(file))
    throw new ScanInputError(`${file} is not CUDA source: give a .cu file (or a header, .cuh/.h/.hpp/.inl, or a C++ source nvcc compiles)`);
}

/**
 * A source file's text. Opened without blocking and checked on the open descriptor, so a file
 * swapped for a FIFO after the check cannot hang the read either (engine/base/boundedRead.ts).
 */
export function readSourceFile(file: string, maxBytes = MAX_SOURCE_BYTES): string {
  checkSourceName(file);
  checkInputFile(file, maxBytes);
  try {
    return readBoundedText(file, { maxBytes, what: 'source file' });
  } catch (e) {
    throw new ScanInputError(e instanceof BoundedReadError ? e.message : `cannot read file: ${file}`);
  }
}

/**
 * Checks an `--arch` value against the architectures this nvcc can build for (`nvcc
 * --list-gpu-code`; sm_90a and sm_100f count as their base sm_XX). Skipped when nvcc cannot list
 * them (an older toolkit): the build then says what is wrong.
 */
export async function checkArchOption(arch: string, toolchain: Pick<Toolchain, 'nvcc' | 'runner'>): Promise<void> {
  const r = await toolchain.runner(toolchain.nvcc.path, ['--list-gpu-code'], { timeoutMs: 20_000 });
  const supported = r.exitCode === 0 ? r.stdout.split(/\s+/).filter(a => /^sm_\d+[a-z]?$/.test(a)) : [];
  if (!supported.length) return;
  const base = arch.replace(/[a-z]$/, '');
  if (supported.includes(arch) || supported.includes(base)) return;
  throw new UsageError(
    `--arch ${arch}: nvcc ${toolchain.nvcc.version ?? ''} cannot build for it; it supports ${supported.join(', ')} ` +
      '(give one of those, optionally with an a or f suffix, e.g. sm_90a)',
  );
}

/** Characters of a file name that nvcc's `#line` directive and ptxas's `.file` cannot carry. */
const UNCARRIABLE = /["\\\n\r]/g;

/**
 * The path variants are built under: the file's own path, or, when its name holds a quote, a
 * backslash or a line break, the same folder with those characters replaced by `_` (that name is
 * only written into the `#line` directive of the shadow copies; nothing is created under it, and
 * the folder stays on the include path). A folder name with such characters is refused.
 */
export function buildPathFor(abs: string, shown: string, io: CliIO): string {
  const dir = path.dirname(abs);
  if (UNCARRIABLE.test(dir)) {
    UNCARRIABLE.lastIndex = 0;
    throw new ScanInputError(
      `${JSON.stringify(dir)}: a folder name with a quote, backslash or line break cannot be passed to nvcc; move or rename the folder`,
    );
  }
  const base = path.basename(abs);
  const safe = base.replace(UNCARRIABLE, '_');
  if (safe === base) return abs;
  io.err(
    `unroll-lens: note: ${JSON.stringify(shown)} has a quote, backslash or line break in its name, which nvcc's #line and ptxas cannot carry; ` +
      `its variants are built as ${safe} (compiler messages use that name)\n`,
  );
  return path.join(dir, safe);
}

/**
 * The flags `file` is compiled with (compile_commands.json from the working directory down, else
 * none), saying on stderr which database and entry they came from, or that none had one and
 * where the search looked; then each warning about them. `compileCommands`: --compile-commands.
 */
export function compileFlagsFor(file: string, io: CliIO, compileCommands?: string | null): CompileFlags {
  if (compileCommands && !fs.existsSync(compileCommands))
    throw new UsageError(`--compile-commands: no such file or folder: ${compileCommands}`);
  const flags = resolveCompileFlags(file, [process.cwd()], { compileCommands: compileCommands ?? null });
  io.err(`unroll-lens: ${flagsOriginText(flags, file)}\n`);
  const said = new Set(flags.search?.tried ?? []);
  for (const w of flags.warnings) if (!said.has(w)) io.err(`unroll-lens: ${w}\n`);
  return flags;
}
