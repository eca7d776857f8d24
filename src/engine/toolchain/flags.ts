// The nvcc flags a file needs: taken from the project's compile_commands.json when there is one
// (CMake, Bear, …), otherwise built from the extension's settings. The result carries only flags
// that shape the code (include paths, defines, language level, math and codegen switches, host
// compiler options); mode, output, input, dependency and architecture flags are removed because the
// caller supplies its own (-cubin -o …, -arch=…). Nothing here runs a shell or throws on bad input.
// nvcc does run a shell with these values, so each is checked against an allow-list (see "what may
// reach nvcc's sh" below) and anything else is dropped with a warning.
import * as fs from 'fs';
import * as path from 'path';
import { BoundedReadError, READ_CAPS, ReadBudget, readBoundedText } from '../boundedRead';

export interface CompileFlags {
  /** Flags to pass to nvcc (include paths, defines, std, relaxed-constexpr, -Xcompiler …) WITHOUT output/input/mode flags. */
  args: string[];
  /** Target arch if the flags name one, normalised to "sm_90"; null when none (or -arch=native/all). */
  arch: string | null;
  /** Where they came from, for the log: "compile_commands.json (<path>)" or "settings". */
  source: string;
  /** Working directory the command ran in (compile_commands.json "directory"), for resolving relative -I. */
  directory: string;
  /** What was dropped or adapted and why (e.g. -G), for the log. */
  warnings: string[];
  /**
   * `#define` lines for -D values that are not safe on nvcc's command line (quotes, spaces, parens:
   * nvcc hands -D values to sh). The builder writes them to a header passed with -include, which
   * the preprocessor reads and no shell ever sees.
   */
  headerDefines?: string[];
}

export interface FlagSettings {
  nvccArgs?: string[];
  includePaths?: string[];
  defines?: string[];
  arch?: string | null;
}

// ---- shell-like splitting -----------------------------------------------------------------------

/**
 * Splits a command line into words the way a POSIX shell would, without running one: single quotes
 * keep everything literally, double quotes keep everything but \" \\ \$ \` and backslash-newline,
 * an unquoted backslash escapes the next character. No expansion of $VAR, ~ or globs. An
 * unterminated quote runs to the end of the string.
 */
export function splitCommandLine(command: string): string[] {
  const words: string[] = [];
  if (typeof command !== 'string') return words;
  let cur = '';
  let inWord = false;
  let quote: '' | "'" | '"' = '';
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote === "'") {
      if (c === "'") quote = '';
      else cur += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = '';
      else if (c === '\\' && i + 1 < command.length && '\\"$`\n'.includes(command[i + 1])) {
        if (command[i + 1] !== '\n') cur += command[i + 1];
        i++;
      } else cur += c;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      if (inWord) {
        words.push(cur);
        cur = '';
        inWord = false;
      }
      continue;
    }
    inWord = true;
    if (c === "'" || c === '"') quote = c;
    else if (c === '\\') {
      if (i + 1 >= command.length)
        cur += c; // a lone trailing backslash stays
      else if (command[i + 1] === '\n') {
        i++;
        if (cur === '') inWord = false;
      } // line continuation
      else {
        cur += command[i + 1];
        i++;
      }
    } else cur += c;
  }
  if (inWord) words.push(cur);
  return words;
}

// ---- finding compile_commands.json ---------------------------------------------------------------

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The real path (symlinks resolved), else the absolute one when it does not exist. */
export function realOrResolved(p: string): string {
  const abs = path.resolve(p);
  try {
    return fs.realpathSync.native(abs);
  } catch {
    return abs;
  }
}

function samePath(a: string, b: string): boolean {
  return process.platform === 'win32' || process.platform === 'darwin' ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/** Is `p` inside `root` (or equal to it)? */
function within(p: string, root: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The deepest workspace root holding `dir` (compared both as given and with symlinks resolved). */
function rootOf(dir: string, workspaceRoots: string[]): string | null {
  let best: string | null = null;
  const realDir = realOrResolved(dir);
  for (const r of workspaceRoots ?? []) {
    if (typeof r !== 'string' || !r) continue;
    const abs = path.resolve(r);
    const real = realOrResolved(r);
    let hit: string | null = null;
    if (within(dir, abs)) hit = abs;
    else if (within(realDir, real)) hit = real;
    if (hit && (!best || hit.length > best.length)) best = hit;
  }
  return best;
}

/**
 * Every compile_commands.json from the file's directory up to its workspace root, nearest first;
 * at each level <dir>/compile_commands.json, then <dir>/build/ and <dir>/out/. A file outside all
 * roots only looks in its own directory.
 */
export function compileCommandsCandidates(file: string, workspaceRoots: string[]): string[] {
  const found: string[] = [];
  try {
    const start = path.dirname(path.resolve(file));
    const root = rootOf(start, workspaceRoots);
    let dir = root && !within(start, root) ? realOrResolved(start) : start;
    for (;;) {
      for (const sub of ['', 'build', 'out']) {
        const p = path.join(dir, sub, 'compile_commands.json');
        if (isFile(p)) found.push(p);
      }
      if (!root || samePath(dir, root)) break;
      const up = path.dirname(dir);
      if (up === dir || !within(up, root)) break;
      dir = up;
    }
  } catch {
    // unreadable paths: nothing found
  }
  return found;
}

/** The nearest compile_commands.json for `file` (see compileCommandsCandidates), or null. */
export function findCompileCommands(file: string, workspaceRoots: string[]): string | null {
  return compileCommandsCandidates(file, workspaceRoots)[0] ?? null;
}

// ---- reading compile_commands.json ---------------------------------------------------------------

interface DbEntry {
  directory: string;
  file: string;
  argv: string[];
}

const dbCache = new Map<string, { mtimeMs: number; size: number; entries: DbEntry[] | null }>();

/** The entries of a compile database, or null when it cannot be read or is not one. Cached by mtime. */
function readDb(dbPath: string): DbEntry[] | null {
  let st: fs.Stats;
  try {
    st = fs.statSync(dbPath);
  } catch {
    return null;
  }
  const hit = dbCache.get(dbPath);
  if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.entries;
  let entries: DbEntry[] | null = null;
  try {
    const json: unknown = JSON.parse(readBoundedText(dbPath, { maxBytes: READ_CAPS.compileDatabase, what: 'compile database' }));
    if (Array.isArray(json)) {
      entries = [];
      const dbDir = path.dirname(path.resolve(dbPath));
      for (const e of json) {
        if (!e || typeof e !== 'object') continue;
        const o = e as Record<string, unknown>;
        if (typeof o.file !== 'string' || !o.file) continue;
        const directory = typeof o.directory === 'string' && o.directory ? path.resolve(dbDir, o.directory) : dbDir;
        let argv: string[] | null = null;
        if (Array.isArray(o.arguments) && o.arguments.every(a => typeof a === 'string')) argv = o.arguments as string[];
        else if (typeof o.command === 'string') argv = splitCommandLine(o.command);
        if (!argv || argv.length === 0) continue;
        entries.push({ directory, file: o.file, argv });
      }
    }
  } catch {
    entries = null;
  }
  dbCache.set(dbPath, { mtimeMs: st.mtimeMs, size: st.size, entries });
  return entries;
}

/** The source files a compile database names (absolute), or [] when it cannot be read. Never throws. */
export function compileDbFiles(dbPath: string): string[] {
  try {
    return [...new Set((readDb(dbPath) ?? []).map(e => path.resolve(e.directory, e.file)))];
  } catch {
    return [];
  }
}

/**
 * The flags compile_commands.json gives `file`, cleaned for nvcc -cubin (see the module comment);
 * null when the database cannot be read or has no entry for the file. Never throws.
 */
export function flagsFromCompileCommands(dbPath: string, file: string): CompileFlags | null {
  try {
    const entries = readDb(dbPath);
    if (!entries) return null;
    const want = realOrResolved(file);
    const entry = entries.find(e => samePath(realOrResolved(path.resolve(e.directory, e.file)), want));
    if (!entry) return null;
    const cleaned = cleanArgs(entry.argv, entry.directory, {
      hasCompiler: true,
      resolvePaths: true,
      fromRepo: { db: dbPath, file: path.resolve(entry.directory, entry.file), rspRoot: path.dirname(path.resolve(dbPath)) },
    });
    return {
      args: cleaned.args,
      arch: cleaned.arch,
      source: `compile_commands.json (${dbPath})`,
      directory: entry.directory,
      warnings: cleaned.warnings,
      ...(cleaned.headerDefines.length ? { headerDefines: cleaned.headerDefines } : {}),
    };
  } catch {
    return null;
  }
}

// ---- settings -----------------------------------------------------------------------------------

/** "sm_90", "compute_90", "lto_90", "90", "9.0" → "sm_90" (suffixes a/f kept); native/all/unknown → null. */
export function normaliseArch(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const s = value
    .trim()
    .toLowerCase()
    .replace(/^["']|["']$/g, '');
  let m = /^(?:sm|compute|lto)_(\d+)([af]?)$/.exec(s);
  if (m) return `sm_${m[1]}${m[2]}`;
  m = /^(\d{2,3})([af]?)$/.exec(s);
  if (m) return `sm_${m[1]}${m[2]}`;
  m = /^(\d{1,2})\.(\d)$/.exec(s);
  if (m) return `sm_${m[1]}${m[2]}`;
  return null;
}

/**
 * Flags from the extension's settings: defines ("NAME" or "NAME=VALUE") become -D, include paths
 * are resolved against the workspace root, nvccArgs are appended word for word (never split by a
 * shell) except for the flags this module always removes (arch, -G, mode and output flags).
 */
export function flagsFromSettings(s: FlagSettings, workspaceRoot: string): CompileFlags {
  const settings = s ?? {};
  const root = path.resolve(typeof workspaceRoot === 'string' && workspaceRoot ? workspaceRoot : '.');
  const warnings: string[] = [];
  // Include paths and defines go through the same checks as nvccArgs (they reach nvcc's sh alike).
  const listed = cleanArgs(
    [
      ...strings(settings.includePaths).map(p => `-I${path.resolve(root, p)}`),
      ...strings(settings.defines).map(d => `-D${d.replace(/^-D/, '')}`),
    ],
    root,
    { hasCompiler: false, resolvePaths: false },
  );
  warnings.push(...listed.warnings.map(w => `unrollLens includePaths/defines: ${w}`));
  const extra = cleanArgs(strings(settings.nvccArgs), root, { hasCompiler: false, resolvePaths: false });
  const args = [...listed.args, ...extra.args];
  const headerDefines = [...listed.headerDefines, ...extra.headerDefines];
  warnings.push(...extra.warnings.map(w => `unrollLens nvccArgs: ${w}`));
  const explicit = normaliseArch(settings.arch ?? null);
  if (settings.arch && !explicit && !/^(native|all|all-major)$/i.test(settings.arch.trim())) {
    warnings.push(`arch setting "${settings.arch}" is not an sm_XX architecture; ignored`);
  }
  return {
    args,
    arch: explicit ?? extra.arch,
    source: 'settings',
    directory: root,
    warnings,
    ...(headerDefines.length ? { headerDefines } : {}),
  };
}

function strings(a: unknown): string[] {
  return Array.isArray(a) ? a.filter((x): x is string => typeof x === 'string' && x.length > 0) : [];
}

/**
 * compile_commands.json first (the first database from the file up that has an entry for it), with
 * settings.nvccArgs appended and settings.arch taking precedence; otherwise the settings alone.
 */
export function resolveCompileFlags(file: string, workspaceRoots: string[], settings: FlagSettings): CompileFlags {
  const s = settings ?? {};
  const roots = Array.isArray(workspaceRoots) ? workspaceRoots : [];
  const notes: string[] = [];
  for (const db of compileCommandsCandidates(file, roots)) {
    const fromDb = flagsFromCompileCommands(db, file);
    if (!fromDb) {
      notes.push(readDb(db) === null ? `${db} could not be read as a compile database` : `${db} has no entry for ${file}`);
      continue;
    }
    const extra = cleanArgs(strings(s.nvccArgs), fromDb.directory, { hasCompiler: false, resolvePaths: false });
    const explicit = normaliseArch(s.arch ?? null);
    const headerDefines = [...(fromDb.headerDefines ?? []), ...extra.headerDefines];
    return {
      ...(headerDefines.length ? { headerDefines } : {}),
      args: [...fromDb.args, ...extra.args],
      arch: explicit ?? fromDb.arch ?? extra.arch,
      source: fromDb.source,
      directory: fromDb.directory,
      warnings: [...notes, ...fromDb.warnings, ...extra.warnings.map(w => `unrollLens nvccArgs: ${w}`)],
    };
  }
  const fileDir = path.dirname(path.resolve(typeof file === 'string' ? file : '.'));
  const root = rootOf(fileDir, roots) ?? (typeof roots[0] === 'string' && roots[0] ? roots[0] : fileDir);
  const fromSettings = flagsFromSettings(s, root);
  fromSettings.warnings.unshift(...notes);
  return fromSettings;
}

// ---- cleaning an argument list ------------------------------------------------------------------

type Action =
  | 'keep' // pass through as written
  | 'drop' // mode/output/dependency/link flags: the caller decides those
  | 'include' // -I: make absolute
  | 'isystem' // -isystem and friends: make absolute
  | 'preinclude' // -include/-imacros: make absolute when the file is there
  | 'ccbin'
  | 'arch'
  | 'code'
  | 'gencode'
  | 'xptxas'
  | 'rsp' // --options-file
  | 'lang' // -x cu
  | 'device-debug' // -G
  | 'device-c' // -dc: drop, but keep its -rdc=true
  | 'verbose';

interface OptSpec {
  action: Action;
  value: boolean;
}

const OPTIONS = new Map<string, OptSpec>();
function def(action: Action, value: boolean, ...names: string[]): void {
  for (const n of names) OPTIONS.set(n, { action, value });
}
// Value-taking nvcc options (from `nvcc --help`, 13.0), short and long names.
def(
  'drop',
  true,
  '-o',
  '--output-file',
  '-odir',
  '--output-directory',
  '-MF',
  '--dependency-output',
  '-MT',
  '--dependency-target-name',
  '-MQ',
  '-l',
  '--library',
  '-L',
  '--library-path',
  '-Xlinker',
  '--linker-options',
  '-Xnvlink',
  '--nvlink-options',
  '-Xarchive',
  '--archive-options',
  '-arbin',
  '--archiver-binary',
  '-keep-dir',
  '--keep-dir',
  '-time',
  '--time',
  '-fdevice-time-trace',
  '--fdevice-time-trace',
  '-run-args',
  '--run-args',
  '-e',
  '--entries',
  '-target-dir',
  '--target-directory',
  '-cudart',
  '--cudart',
  '-cudadevrt',
  '--cudadevrt',
);
def(
  'keep',
  true,
  '-D',
  '--define-macro',
  '-U',
  '--undefine-macro',
  '-ldir',
  '--libdevice-directory',
  '-opt-info',
  '--optimization-info',
  '-O',
  '--optimize',
  '-Ofc',
  '--Ofast-compile',
  '-dopt',
  '--dopt',
  '-ftemplate-backtrace-limit',
  '--ftemplate-backtrace-limit',
  '-ftemplate-depth',
  '--ftemplate-depth',
  '-Xcompiler',
  '--compiler-options',
  '-t',
  '--threads',
  '-split-compile',
  '--split-compile',
  '-split-compile-extended',
  '--split-compile-extended',
  '-idp',
  '--input-drive-prefix',
  '-ddp',
  '--dependency-drive-prefix',
  '-dp',
  '--drive-prefix',
  '-maxrregcount',
  '--maxrregcount',
  '-Werror',
  '--Werror',
  '-diag-error',
  '--diag-error',
  '-diag-suppress',
  '--diag-suppress',
  '-diag-warn',
  '--diag-warn',
  '-jtd',
  '--jump-table-density',
  '-frandom-seed',
  '--frandom-seed',
  '-sanitize',
  '--sanitize',
  '-std',
  '--std',
  '-rdc',
  '--relocatable-device-code',
  '-ftz',
  '--ftz',
  '-prec-div',
  '--prec-div',
  '-prec-sqrt',
  '--prec-sqrt',
  '-fmad',
  '--fmad',
  '-default-stream',
  '--default-stream',
  '-m',
  '--machine',
  '-static-global-template-stub',
  '--static-global-template-stub',
  '-device-entity-has-hidden-visibility',
  '--device-entity-has-hidden-visibility',
  '-hls',
  '--host-linker-script',
  '-brief-diag',
  '--brief-diagnostics',
  '-device-stack-protector',
  '--device-stack-protector',
  '-compress-mode',
  '--compress-mode',
  '-Xcudafe',
  '-Xcicc',
  '-Xfatbin',
  '-Xnvvm',
);
def('include', true, '-I', '--include-path');
def('isystem', true, '-isystem', '--system-include', '-idirafter', '-iquote');
def('preinclude', true, '-include', '--pre-include', '-imacros');
def('ccbin', true, '-ccbin', '--compiler-bindir');
def('arch', true, '-arch', '--gpu-architecture');
def('code', true, '-code', '--gpu-code');
def('gencode', true, '-gencode', '--generate-code');
def('xptxas', true, '-Xptxas', '--ptxas-options');
def('rsp', true, '-optf', '--options-file');
def('lang', true, '-x', '--x');
// Flags without a value.
def(
  'drop',
  false,
  '-c',
  '--compile',
  '-cubin',
  '--cubin',
  '-ptx',
  '--ptx',
  '-fatbin',
  '--fatbin',
  '-E',
  '--preprocess',
  '-cuda',
  '--cuda',
  '-optix-ir',
  '--optix-ir',
  '-ltoir',
  '--ltoir',
  '-M',
  '--generate-dependencies',
  '-MM',
  '--generate-nonsystem-dependencies',
  '-MD',
  '--generate-dependencies-with-compile',
  '-MMD',
  '--generate-nonsystem-dependencies-with-compile',
  '-MP',
  '--generate-dependency-targets',
  '-dw',
  '--device-w',
  '-dlink',
  '--device-link',
  '-link',
  '--link',
  '-lib',
  '--lib',
  '-run',
  '--run',
  '-objtemp',
  '--objdir-as-tempdir',
  '-dlto',
  '--dlink-time-opt',
  '-lto',
  '--lto',
  '-gen-opt-lto',
  '--gen-opt-lto',
  '-shared',
  '--shared',
  '-r',
  '--relocatable-link',
  '-dryrun',
  '--dryrun',
  '-keep',
  '--keep',
  '-save-temps',
  '--save-temps',
  '-clean',
  '--clean-targets',
  '-fdevice-syntax-only',
  '--fdevice-syntax-only',
  '-nodlink',
  '--no-device-link',
  '-arch-ls',
  '--list-gpu-arch',
  '-code-ls',
  '--list-gpu-code',
  '-h',
  '--help',
  '-V',
  '--version',
  '-pipe',
);
// nvcc flags without a value that pass through (listed so that e.g. -lineinfo is not read as -l ineinfo).
def(
  'keep',
  false,
  '-lineinfo',
  '--generate-line-info',
  '-g',
  '--debug',
  '-pg',
  '--profile',
  '-use_fast_math',
  '--use_fast_math',
  '-expt-relaxed-constexpr',
  '--expt-relaxed-constexpr',
  '-extended-lambda',
  '--extended-lambda',
  '-expt-extended-lambda',
  '--expt-extended-lambda',
  '-m64',
  '--m64',
  '-noeh',
  '--no-exceptions',
  '-nohdinitlist',
  '--no-host-device-initializer-list',
  '-nohdmoveforward',
  '--no-host-device-move-forward',
  '-allow-unsupported-compiler',
  '--allow-unsupported-compiler',
  '-use-local-env',
  '--use-local-env',
  '-force-cl-env-setup',
  '--force-cl-env-setup',
  '-forward-unknown-to-host-compiler',
  '--forward-unknown-to-host-compiler',
  '-forward-unknown-to-host-linker',
  '--forward-unknown-to-host-linker',
  '-forward-unknown-opts',
  '--forward-unknown-opts',
  '-noprof',
  '--dont-use-profile',
  '-extra-device-vectorization',
  '--extra-device-vectorization',
  '-w',
  '--disable-warnings',
  '-keep-device-functions',
  '--keep-device-functions',
  '-src-in-ptx',
  '--source-in-ptx',
  '-restrict',
  '--restrict',
  '-Wreorder',
  '--Wreorder',
  '-Wdefault-stream-launch',
  '--Wdefault-stream-launch',
  '-Wmissing-launch-bounds',
  '--Wmissing-launch-bounds',
  '-Wext-lambda-captures-this',
  '--Wext-lambda-captures-this',
  '-Wno-deprecated-declarations',
  '--Wno-deprecated-declarations',
  '-Wno-deprecated-gpu-targets',
  '--Wno-deprecated-gpu-targets',
  '-ewp',
  '--extensible-whole-program',
  '-no-compress',
  '--no-compress',
  '-err-no',
  '--display-error-number',
  '-no-err-no',
  '--no-display-error-number',
  '-aug-hls',
  '--augment-host-linker-script',
  '-reloc-ptx',
  '--relocatable-ptx',
  '-jobserver',
  '--jobserver',
  '--no-align-double',
  '-astoolspatch',
  '--compile-as-tools-patch',
);
def('device-debug', false, '-G', '--device-debug');
def('device-c', false, '-dc', '--device-c');
def('verbose', false, '-v', '--verbose', '-res-usage', '--resource-usage');

/** Options that may be written glued to their value (-DFOO, -I/x, -O3, -lm), longest first. */
const GLUED = ['-isystem', '-idirafter', '-iquote', '-include', '-imacros', '-MF', '-MT', '-MQ', '-D', '-U', '-I', '-L', '-l', '-O', '-o'];

/** Options a non-nvcc compiler line (clang CUDA, g++) shares with nvcc; the rest is not carried over. */
const PORTABLE: Action[] = ['include', 'isystem', 'preinclude'];
const PORTABLE_KEEP = new Set(['-D', '--define-macro', '-U', '--undefine-macro', '-std', '--std', '-O', '--optimize']);

const LAUNCHERS = /^(ccache|sccache|distcc|icecc|buildcache|env)$/;
const SOURCE_EXT = /\.(cu|cuh|cpp|cxx|cc|c|c\+\+|cp|C|ii|i)$/;

interface Cleaned {
  args: string[];
  arch: string | null;
  warnings: string[];
  headerDefines: string[];
}

/** Where repository-supplied flags came from, for warnings; absent for the user's own settings. */
interface RepoOrigin {
  db: string;
  file: string;
  /** Response files are read only from inside this folder (the compile database's). */
  rspRoot: string;
}

interface CleanOptions {
  hasCompiler: boolean;
  resolvePaths: boolean;
  fromRepo?: RepoOrigin;
}

/** What cleaning gathers while it walks the arguments. */
interface Gathered {
  out: string[];
  realArchs: string[];
  virtualArchs: string[];
  /** Flags left out on purpose, listed in one warning at the end. */
  dropped: Set<string>;
  warnings: string[];
  /** -G was given (dropped, with its own warning). */
  sawG: boolean;
  /** -dc was given: keep its relocatable device code as -rdc=true. */
  addRdc: boolean;
  headerDefines: string[];
  fromRepo?: RepoOrigin;
}

/** One nvcc option as written: its looked-up name, what to do with it, its value. */
interface ParsedOption {
  name: string;
  spec: OptSpec;
  value: string | null;
}

/**
 * Removes what the caller sets itself and makes paths absolute. `hasCompiler`: argv[0] is the
 * compiler (and launchers before it). `resolvePaths`: resolve -I/-isystem/-include/-ccbin against `dir`.
 */
function cleanArgs(argvIn: string[], dir: string, opts: CleanOptions): Cleaned {
  const g: Gathered = {
    out: [],
    realArchs: [],
    virtualArchs: [],
    dropped: new Set(),
    warnings: [],
    sawG: false,
    addRdc: false,
    headerDefines: [],
    fromRepo: opts.fromRepo,
  };
  const { compiler, args } = opts.hasCompiler ? splitOffCompiler(argvIn) : { compiler: null, args: [...argvIn] };
  const nvcc = compiler === null || /nvcc/.test(exeName(compiler));
  if (compiler !== null && !nvcc) {
    g.warnings.push(`the compile command uses ${compiler}, not nvcc: only include paths, defines, -std and -O were carried over`);
  }
  const expanded = expandResponseFiles(args, dir, g.warnings, 0, opts.fromRepo, responseFileBudget());

  for (let i = 0; i < expanded.length; i++) {
    const a = expanded[i];
    if (a === '') continue;

    // Positional: the input file(s), or something we cannot place.
    if (!a.startsWith('-') || a === '-') {
      if (!SOURCE_EXT.test(a)) g.warnings.push(`dropped unexpected argument "${a}"`);
      continue;
    }
    if (takeClangSpelling(a, g)) continue;

    const opt = lookUpOption(a);
    if (!opt) {
      // Unknown to nvcc: host options forwarded by -forward-unknown-to-host-compiler, -lineinfo, etc.
      if (!nvcc) g.dropped.add(a);
      else if (safeHostOptions(a, a, g)) g.out.push(a);
      continue;
    }
    let raw = [a];
    if (opt.spec.value && opt.value === null) {
      const next = separateValue(expanded, i, opt.name);
      if (!next) {
        g.warnings.push(`dropped ${a}: it needs a value`);
        continue;
      }
      if (next.value !== null) {
        opt.value = next.value;
        raw = [a, next.value];
        i++;
      }
    }
    if (!nvcc && !carriesOver(opt)) {
      g.dropped.add(raw.join(' '));
      continue;
    }
    applyOption(opt, raw, g, dir, opts.resolvePaths);
  }
  return finish(g);
}

/** Takes launchers (ccache, env) and `VAR=x` assignments off the front, then the compiler. */
function splitOffCompiler(argvIn: string[]): { compiler: string | null; args: string[] } {
  const argv = [...argvIn];
  while (argv.length > 1 && LAUNCHERS.test(exeName(argv[0]))) argv.shift();
  // `env VAR=x nvcc …`
  while (argv.length > 1 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[0])) argv.shift();
  const compiler = argv.shift() ?? null;
  return { compiler, args: argv };
}

/** clang CUDA spellings: the arch is noted, the rest dropped. False when `a` is none of them. */
function takeClangSpelling(a: string, g: Gathered): boolean {
  const m = /^--(?:cuda-gpu-arch|offload-arch)=(.+)$/.exec(a);
  if (m) {
    noteArch(m[1], g.realArchs, g.virtualArchs);
    return true;
  }
  if (/^--cuda-path=/.test(a) || /^-fgpu-|^-fcuda-/.test(a)) {
    g.dropped.add(a);
    return true;
  }
  return false;
}

/** Looks an argument up as "--name=value", "-name=value", "-name" (value next, if any) or glued "-Ivalue". */
function lookUpOption(a: string): ParsedOption | null {
  const exact = OPTIONS.get(a);
  if (exact) return { name: a, spec: exact, value: null };
  if (a.includes('=')) {
    const eq = a.indexOf('=');
    const head = a.slice(0, eq);
    const spec = OPTIONS.get(head);
    if (spec && spec.value) return { name: head, spec, value: a.slice(eq + 1) };
  }
  const glued = GLUED.find(p => a.startsWith(p) && a.length > p.length && !OPTIONS.has(a.split('=')[0]));
  return glued ? { name: glued, spec: OPTIONS.get(glued)!, value: a.slice(glued.length) } : null;
}

/**
 * The value of option `name` at argv[i] written as the next argument; null when it is missing.
 * "-O" alone is a level-less optimise flag for gcc (value null); "-O 3" is nvcc's separate form.
 */
function separateValue(argv: string[], i: number, name: string): { value: string | null } | null {
  if (name === '-O' || name === '--optimize') return { value: i + 1 < argv.length && /^\d$/.test(argv[i + 1]) ? argv[i + 1] : null };
  return i + 1 < argv.length ? { value: argv[i + 1] } : null;
}

/** Whether an option of a non-nvcc compiler line (clang CUDA, g++) means the same to nvcc. */
function carriesOver(opt: ParsedOption): boolean {
  return PORTABLE.includes(opt.spec.action) || PORTABLE_KEEP.has(opt.name) || opt.spec.action === 'arch' || opt.spec.action === 'lang';
}

/** Does what the option's action says: pass it on (paths made absolute), note an arch, or leave it out. */
function applyOption(opt: ParsedOption, raw: string[], g: Gathered, dir: string, resolvePaths: boolean): void {
  const { name, value } = opt;
  const abs = (p: string) => (resolvePaths ? path.resolve(dir, p) : p);
  const flag = raw.join(' ');
  switch (opt.spec.action) {
    case 'keep':
      if (name === '-D' || name === '--define-macro') takeDefine(value ?? '', raw, g);
      else if (name === '-U' || name === '--undefine-macro') {
        if (MACRO_NAME.test(value ?? '')) {
          g.out.push(...raw);
          forgetHeaderDefine(g, value!); // the header is read after all -U: a later -U must still win
        } else reject(g, flag, 'it is not a macro name');
      } else if (HOST_PASSTHROUGH.has(name)) {
        // nvcc splits these at commas and pastes them unquoted into a sh command line; a space
        // would only split them there too, so it becomes a comma.
        const v = (value ?? '').trim().split(/\s+/).join(',');
        if (!safeHostOptions(v, flag, g)) break;
        g.out.push(...(v === value ? raw : [name, v]));
      } else if (value === null || SAFE_WORD.test(value)) g.out.push(...raw);
      else reject(g, flag, whyUnsafe(value, SAFE_WORD));
      break;
    case 'drop':
    case 'lang':
      break;
    case 'verbose':
      if (raw[0] === '-res-usage' || raw[0] === '--resource-usage') g.dropped.add(raw[0]);
      break;
    case 'device-debug':
      g.sawG = true;
      break;
    case 'device-c':
      g.addRdc = true;
      break;
    case 'include':
      for (const p of splitList(value ?? '')) if (safePath(p, flag, g)) g.out.push(`-I${abs(p)}`);
      break;
    case 'isystem': {
      const out = name.startsWith('--') ? '-isystem' : name;
      for (const p of name === '-iquote' || name === '-idirafter' ? [value ?? ''] : splitList(value ?? '')) {
        if (safePath(p, flag, g)) g.out.push(out, abs(p));
      }
      break;
    }
    case 'preinclude': {
      const out = name === '--pre-include' ? '-include' : name;
      const v = value ?? '';
      if (!safePath(v, flag, g)) break;
      const resolved = resolvePaths && !path.isAbsolute(v) && isFile(path.resolve(dir, v)) ? path.resolve(dir, v) : v;
      g.out.push(out, resolved);
      break;
    }
    case 'ccbin': {
      // -ccbin names the program nvcc runs (through sh): a repository never chooses it.
      if (g.fromRepo) {
        reject(g, flag, 'the host compiler is never taken from compile_commands.json (set unrollLens.nvccArgs to choose one)');
        break;
      }
      const v = value ?? '';
      if (!SAFE_WORD.test(v) || v === '') {
        reject(g, flag, whyUnsafe(v, SAFE_WORD));
        break;
      }
      g.out.push('-ccbin', resolvePaths && /[/\\]/.test(v) ? path.resolve(dir, v) : v);
      break;
    }
    case 'arch':
    case 'code':
      for (const v of splitList(value ?? '')) noteArch(v, g.realArchs, g.virtualArchs);
      break;
    case 'gencode':
      noteGencode(value ?? '', g.realArchs, g.virtualArchs);
      break;
    case 'xptxas': {
      const kept = splitList(value ?? '').filter(o => o !== '-v' && o !== '--verbose');
      const bad = kept.find(o => !SAFE_WORD.test(o));
      const writes = g.fromRepo ? kept.find(o => PTXAS_WRITES.test(o)) : undefined;
      if (bad !== undefined) reject(g, flag, whyUnsafe(bad, SAFE_WORD));
      else if (writes !== undefined) reject(g, flag, `${writes} would make ptxas write or read a file of the repository's choosing`);
      else if (kept.length) g.out.push('-Xptxas', kept.join(','));
      break;
    }
    case 'rsp':
      // Already expanded by expandResponseFiles; a leftover means it could not be read.
      break;
  }
}

/** The closing warnings, -rdc=true for -dc, and the arch: the first real one (sm_), else the first virtual one. */
function finish(g: Gathered): Cleaned {
  const { out, warnings } = g;
  if (g.sawG) warnings.push('dropped -G (device debug): it turns off device optimisation, so the SASS would not show what unrolling does');
  if (g.addRdc && !out.some(x => /^-(?:-relocatable-device-code|rdc)(?:=|$)/.test(x))) out.push('-rdc=true');
  if (g.dropped.size) warnings.push(`dropped ${[...g.dropped].join(', ')}`);
  let arch: string | null = null;
  for (const c of [...g.realArchs, ...g.virtualArchs]) {
    arch = normaliseArch(c);
    if (arch) break;
  }
  return { args: out, arch, warnings, headerDefines: g.headerDefines };
}

// ---- what may reach nvcc's sh -------------------------------------------------------------------
// nvcc builds its host-compiler and tool command lines as strings and runs them with sh: -D and -I
// values inside double quotes (where $, `, \ and " still act), -Xcompiler values and forwarded host
// options bare. So every value is held to an allow-list rather than a list of known-bad characters.

/** Characters that mean nothing to sh, quoted or not. */
export const SAFE_WORD = /^[A-Za-z0-9_\-+=.,:/%@]*$/;
/** Paths: nvcc double-quotes them, so a space is safe as well. */
export const SAFE_PATH = /^[A-Za-z0-9_\-+=.,:/%@ ]+$/;
const MACRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** "NAME" or "NAME(a, b)" of a -D value, before its "=". */
const MACRO_HEAD = /^[A-Za-z_][A-Za-z0-9_]*(?:\([A-Za-z0-9_, .]*\))?$/;
/** nvcc options whose value goes, split at commas, to another program's command line. */
const HOST_PASSTHROUGH = new Set(['-Xcompiler', '--compiler-options', '-Xcudafe', '-Xcicc', '-Xfatbin', '-Xnvvm']);
/**
 * Host compiler options that run or load another program even without a shell: gcc's -wrapper,
 * plugins, -B (where cc1plus is looked up), spec files, linker and assembler pass-through. Never
 * taken from a repository's compile database.
 */
const RUNS_PROGRAMS =
  /^(?:@|-(?:wrapper|fplugin|B|-?specs|W[lap](?:,|$)|Xlinker|Xassembler|Xpreprocessor|fuse-ld|iplugindir|-param=?plugin|fprofile|save-temps|dumpbase|dumpdir|aux-info|fdump|MF|o$|-output))/;
/** ptxas options that would write somewhere else than the cubin nvcc asked for, or read options from a file. */
const PTXAS_WRITES = /^(?:@|-o$|--output-file|--?options-file)/;

/** Why `v` fails `re`, naming the first character that does. */
export function whyUnsafe(v: string, re: RegExp): string {
  if (v === '') return 'its value is empty';
  const bad = [...v].find(c => !re.test(c));
  const shown =
    bad === undefined
      ? ''
      : bad === '\n'
        ? 'a newline'
        : bad === ' '
          ? 'a space'
          : bad.charCodeAt(0) < 0x20
            ? 'a control character'
            : `"${bad}"`;
  return `its value contains ${shown}, which nvcc would hand to sh (values may hold only letters, digits and _ - + = . , : / % @${re === SAFE_PATH ? ' and spaces' : ''})`;
}

function forgetHeaderDefine(g: Gathered, name: string): void {
  g.headerDefines = g.headerDefines.filter(d => !new RegExp(`^#define ${name}[ (]`).test(d));
}

/** Records a dropped flag and why, naming where it came from. */
function reject(g: Gathered, flag: string, why: string): void {
  const from = g.fromRepo ? ` (from ${g.fromRepo.db}, entry for ${g.fromRepo.file})` : '';
  g.warnings.push(`dropped ${JSON.stringify(flag)}${from}: ${why}`);
}

function safePath(p: string, flag: string, g: Gathered): boolean {
  if (SAFE_PATH.test(p)) return true;
  reject(g, flag, whyUnsafe(p, SAFE_PATH));
  return false;
}

/** Host compiler options (an -Xcompiler value, or one forwarded bare): shell-safe, and from a repository none that run programs. */
function safeHostOptions(v: string, flag: string, g: Gathered): boolean {
  if (!SAFE_WORD.test(v) || v === '') {
    reject(g, flag, whyUnsafe(v, SAFE_WORD));
    return false;
  }
  const runs = g.fromRepo ? splitList(v).find(o => RUNS_PROGRAMS.test(o)) : undefined;
  if (runs !== undefined) {
    reject(g, flag, `${runs} makes the host compiler run or load another program, or write a file; not taken from compile_commands.json`);
    return false;
  }
  return true;
}

/**
 * A -D value: on the command line when every character is shell-safe; otherwise (quoted strings
 * such as -DVERSION="1.2", spaces, function-like macros) as a #define in the generated header,
 * which no shell reads. Dropped: $ and ` (see below), a newline, or a trailing backslash (it
 * would join the next #define).
 */
function takeDefine(value: string, raw: string[], g: Gathered): void {
  const eq = value.indexOf('=');
  const head = eq < 0 ? value : value.slice(0, eq);
  const body = eq < 0 ? '1' : value.slice(eq + 1);
  const flag = raw.join(' ');
  if (MACRO_NAME.test(head) && SAFE_WORD.test(body)) {
    g.out.push(...raw);
    forgetHeaderDefine(g, head); // the last -D of a name wins, as on a command line
    return;
  }
  if (!MACRO_HEAD.test(head)) return reject(g, flag, `"${head}" is not a macro name`);
  // Harmless in a header, but $ and ` mean nothing in C and are how a command substitution would be
  // smuggled in: dropped, so that the log says so.
  const subst = /[$`]/.exec(body);
  if (subst) return reject(g, flag, `its value contains "${subst[0]}" (shell command substitution), which nvcc would hand to sh`);
  if (/[\r\n\0]/.test(body) || body.endsWith('\\')) return reject(g, flag, 'its value holds a newline or ends in a backslash');
  g.headerDefines.push(`#define ${head} ${body}`);
}

function exeName(p: string): string {
  return p.replace(/^.*[/\\]/, '').replace(/\.exe$/i, '');
}

/** nvcc list values: "a,b" (commas inside brackets or quotes do not split). */
function splitList(v: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of v) {
    if (c === '[') depth++;
    else if (c === ']') depth = Math.max(0, depth - 1);
    if (c === ',' && depth === 0) {
      if (cur) out.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  if (cur) out.push(cur);
  return out;
}

function noteArch(v: string, real: string[], virt: string[]): void {
  const s = v.trim().replace(/^["'[]+|["'\]]+$/g, '');
  if (/^sm_/i.test(s) || /^lto_/i.test(s)) real.push(s);
  else if (/^compute_/i.test(s)) virt.push(s);
  // native / all / all-major: no arch to report
}

/** "arch=compute_80,code=[compute_80,sm_80]" / "arch=compute_90,code=sm_90" / "code=\"sm_90,compute_90\"". */
function noteGencode(v: string, real: string[], virt: string[]): void {
  const s = v.replace(/["']/g, '');
  const archM = /(?:^|,)arch=([^,\]]+)/.exec(s);
  const codeM = /(?:^|,)code=(\[[^\]]*\]|.*)$/.exec(s);
  if (codeM) {
    const codes = codeM[1]
      .replace(/^\[|\]$/g, '')
      .split(',')
      .map(x => x.trim())
      .filter(x => x && !x.startsWith('arch='));
    for (const c of codes) if (/^sm_/i.test(c)) real.push(c);
  }
  if (archM) virt.push(archM[1].trim());
}

/**
 * What one command line's response files may read in total: a file that names itself eight times
 * would otherwise be read 8^8 times within the depth limit. Real ones are a few, of a few KB.
 */
function responseFileBudget(): ReadBudget {
  return new ReadBudget(256, 4 * 1024 * 1024);
}

/**
 * Expands @file and --options-file/-optf file (relative to `dir`), recursively, here rather than
 * in nvcc so that their flags get the same checks. From a repository only files inside its
 * compile database's folder are read.
 */
function expandResponseFiles(
  argv: string[],
  dir: string,
  warnings: string[],
  depth: number,
  fromRepo: RepoOrigin | undefined,
  budget: ReadBudget,
): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    let files: string[] | null = null;
    if (a.startsWith('@') && a.length > 1) files = [a.slice(1)];
    else if (a === '-optf' || a === '--options-file') {
      if (i + 1 < argv.length) files = splitList(argv[++i]);
      else files = [];
    } else if (/^--?(?:optf|options-file)=/.test(a)) files = splitList(a.slice(a.indexOf('=') + 1));
    if (files === null) {
      out.push(a);
      continue;
    }
    for (const f of files) {
      const p = path.resolve(dir, f);
      if (fromRepo && !within(realOrResolved(p), realOrResolved(fromRepo.rspRoot))) {
        warnings.push(`response file ${p} (from ${fromRepo.db}) is outside ${fromRepo.rspRoot}; not read`);
        continue;
      }
      if (depth >= 8) {
        warnings.push(`response file ${f} nested too deeply; ignored`);
        continue;
      }
      // Said once: past the budget every further @file is left out the same way.
      if (budget.exhausted) continue;
      let text: string;
      try {
        text = readBoundedText(p, { maxBytes: READ_CAPS.responseFile, what: 'response file', budget });
      } catch (e) {
        warnings.push(
          e instanceof BoundedReadError && e.reason === 'budget'
            ? `response files expand past their budget (${e.message}); the remaining ones are not read, their flags are missing`
            : e instanceof BoundedReadError && e.reason !== 'missing' && e.reason !== 'unreadable'
              ? `${e.message}; its flags are missing`
              : `response file ${p} could not be read; its flags are missing`,
        );
        continue;
      }
      out.push(...expandResponseFiles(splitCommandLine(text), dir, warnings, depth + 1, fromRepo, budget));
    }
  }
  return out;
}
