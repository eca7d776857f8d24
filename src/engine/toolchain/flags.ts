// The nvcc flags a file needs: taken from the project's compile_commands.json when there is one
// (CMake, Bear, …), otherwise built from the extension's settings. The result carries only flags
// that shape the code (include paths, defines, language level, math and codegen switches, host
// compiler options); mode, output, input, dependency and architecture flags are removed because the
// caller supplies its own (-cubin -o …, -arch=…). Nothing here runs a shell or throws on bad input.
// Only flags on the allow-list (flagAllowList.ts) pass, in canonical spelling: nvcc runs a shell and
// other programs with these values, and a repository is untrusted input. The rest is dropped with
// a warning naming the flag and why (cleanFlags.ts).
import * as fs from 'fs';
import * as path from 'path';
import { BoundedReadError, READ_CAPS, ReadBudget, readBoundedText } from '../base/boundedRead';
import { Cleaned, cleanArgList, newGathered, normaliseArch, RepoOrigin, whyUnsafe } from './cleanFlags';
import { SAFE_PATH } from './flagAllowList';

export { normaliseArch } from './cleanFlags';

/**
 * The one path-safety rule for every argument we hand nvcc, whoever builds (a variant, a
 * program, the CUPTI timer): nvcc pastes its arguments into `sh -c` command lines, so an
 * argument holding shell syntax (a folder named `$(touch p)`) would run it. Why the first
 * argument that breaks the rule does, or null when none does.
 */
export function shellUnsafeArgument(args: readonly string[]): string | null {
  const bad = args.find(a => !SAFE_PATH.test(a));
  return bad === undefined ? null : `argument ${JSON.stringify(bad)} is unsafe: ${whyUnsafe(bad, SAFE_PATH)}`;
}

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
  /** The compile database and its entry the flags came from; null when none had one (settings). */
  database?: { path: string; entry: { file: string; directory: string } } | null;
  /** No database had an entry: every database tried (and why it did not serve) and every folder searched. */
  search?: { tried: string[]; looked: string[] };
}

export interface FlagSettings {
  nvccArgs?: string[];
  includePaths?: string[];
  defines?: string[];
  arch?: string | null;
  /** A compile_commands.json (or its folder) named by the user: searched first (unrollLens.compileCommands, --compile-commands). */
  compileCommands?: string | null;
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

/** Sub-folders of a level searched for a database besides the level itself: out/, then every build*\/ (build/ first). */
function buildFolders(dir: string): string[] {
  let names: string[] = [];
  try {
    names = fs
      .readdirSync(dir, { withFileTypes: true })
      .filter(e => (e.isDirectory() || e.isSymbolicLink()) && /^build/i.test(e.name))
      .map(e => e.name)
      .sort((a, b) => Number(b === 'build') - Number(a === 'build') || a.localeCompare(b));
  } catch {
    // unreadable level: its own file is still tried
  }
  return [...names, 'out'];
}

/** Where a search for a file's compile database looked, and what it found there (nearest first). */
export interface DatabaseSearch {
  /** The databases found, nearest first (an explicit one first of all). */
  found: string[];
  /** Every folder searched, nearest first, for a message when nothing was found. */
  looked: string[];
}

/**
 * Every compile_commands.json from the file's directory up to its workspace root, nearest first,
 * as clangd looks for one: at each level <dir>/compile_commands.json (a link into the build folder
 * there is followed), then <dir>/build*\/ (build/ first) and <dir>/out/. A file outside all roots
 * only looks in its own directory. `explicit` (a setting or flag: the file or its folder) comes
 * first of all.
 */
export function searchCompileDatabases(file: string, workspaceRoots: string[], explicit?: string | null): DatabaseSearch {
  const found: string[] = [];
  const looked: string[] = [];
  if (typeof explicit === 'string' && explicit) {
    const abs = path.resolve(explicit);
    const p = isFile(abs) ? abs : path.join(abs, 'compile_commands.json');
    looked.push(p);
    if (isFile(p)) found.push(p);
  }
  try {
    const start = path.dirname(path.resolve(file));
    const root = rootOf(start, workspaceRoots);
    let dir = root && !within(start, root) ? realOrResolved(start) : start;
    for (;;) {
      looked.push(dir);
      for (const sub of ['', ...buildFolders(dir)]) {
        const p = path.join(dir, sub, 'compile_commands.json');
        if (isFile(p) && !found.some(f => samePath(realOrResolved(f), realOrResolved(p)))) found.push(p);
      }
      if (!root || samePath(dir, root)) break;
      const up = path.dirname(dir);
      if (up === dir || !within(up, root)) break;
      dir = up;
    }
  } catch {
    // unreadable paths: nothing found
  }
  return { found, looked };
}

/** The databases of searchCompileDatabases, nearest first. */
export function compileCommandsCandidates(file: string, workspaceRoots: string[], explicit?: string | null): string[] {
  return searchCompileDatabases(file, workspaceRoots, explicit).found;
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
      fromRepo: { db: dbPath, file: path.resolve(entry.directory, entry.file), rspRoots: buildFoldersOf(dbPath, entry.directory) },
    });
    return {
      args: cleaned.args,
      arch: cleaned.arch,
      source: `compile_commands.json (${dbPath})`,
      directory: entry.directory,
      warnings: cleaned.warnings,
      database: { path: dbPath, entry: { file: path.resolve(entry.directory, entry.file), directory: entry.directory } },
      ...(cleaned.headerDefines.length ? { headerDefines: cleaned.headerDefines } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * The build's own folders, where its response files may be read from: the database's folder as
 * named and as it really lies (a link at the source root points into an out-of-tree build
 * folder), and the folder the command ran in (CMake's includes_CUDA.rsp lies below it).
 */
function buildFoldersOf(dbPath: string, directory: string): string[] {
  const named = path.dirname(path.resolve(dbPath));
  return [...new Set([named, path.dirname(realOrResolved(dbPath)), path.resolve(directory)])];
}

/**
 * Where a compile's flags came from, in one line for the CLI, the log and the editor: the
 * database and its entry, or that none was found and where the search looked.
 */
export function flagsOriginText(flags: Pick<CompileFlags, 'source' | 'database' | 'search'>, file?: string): string {
  if (flags.database) {
    const e = flags.database.entry;
    const real = realOrResolved(flags.database.path);
    const link = real !== path.resolve(flags.database.path) ? ` (a link to ${real})` : '';
    return `compile flags from ${flags.database.path}${link}, entry for ${e.file} (run in ${e.directory})`;
  }
  const s = flags.search;
  if (!s) return `compile flags from ${flags.source}`;
  const tried = s.tried.length ? `; ${s.tried.join('; ')}` : '';
  const where = s.looked.length ? `looked in ${s.looked.join(', ')} (each with its build*/ and out/ folders)` : 'looked nowhere';
  return `no compile_commands.json entry${file ? ` for ${file}` : ''}: ${where}${tried}; compiled with the unrollLens settings' flags only (includePaths, defines, nvccArgs)`;
}

// ---- settings -----------------------------------------------------------------------------------

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
  const extra = cleanArgs(words(settings.nvccArgs), root, { hasCompiler: false, resolvePaths: false });
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

/** nvccArgs as given, empty words included: dropping one would make an option take the next flag as its value. */
function words(a: unknown): string[] {
  return Array.isArray(a) ? a.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * compile_commands.json first (the first database from the file up that has an entry for it), with
 * settings.nvccArgs appended and settings.arch taking precedence; otherwise the settings alone.
 */
export function resolveCompileFlags(file: string, workspaceRoots: string[], settings: FlagSettings): CompileFlags {
  const s = settings ?? {};
  const roots = Array.isArray(workspaceRoots) ? workspaceRoots : [];
  const notes: string[] = [];
  const search = searchCompileDatabases(file, roots, s.compileCommands);
  if (s.compileCommands && !search.found.length) notes.push(`the compile database ${search.looked[0]} (named by the user) does not exist`);
  for (const db of search.found) {
    const fromDb = flagsFromCompileCommands(db, file);
    if (!fromDb) {
      notes.push(readDb(db) === null ? `${db} could not be read as a compile database` : `${db} has no entry for ${file}`);
      continue;
    }
    const extra = cleanArgs(words(s.nvccArgs), fromDb.directory, { hasCompiler: false, resolvePaths: false });
    const explicit = normaliseArch(s.arch ?? null);
    const headerDefines = [...(fromDb.headerDefines ?? []), ...extra.headerDefines];
    return {
      ...(headerDefines.length ? { headerDefines } : {}),
      args: [...fromDb.args, ...extra.args],
      arch: explicit ?? fromDb.arch ?? extra.arch,
      source: fromDb.source,
      directory: fromDb.directory,
      warnings: [...notes, ...fromDb.warnings, ...extra.warnings.map(w => `unrollLens nvccArgs: ${w}`)],
      database: fromDb.database,
    };
  }
  const fileDir = path.dirname(path.resolve(typeof file === 'string' ? file : '.'));
  const root = rootOf(fileDir, roots) ?? (typeof roots[0] === 'string' && roots[0] ? roots[0] : fileDir);
  const fromSettings = flagsFromSettings(s, root);
  fromSettings.warnings.unshift(...notes);
  return { ...fromSettings, database: null, search: { tried: notes, looked: search.looked } };
}

// ---- cleaning an argument list ------------------------------------------------------------------

interface CleanOptions {
  hasCompiler: boolean;
  resolvePaths: boolean;
  fromRepo?: RepoOrigin;
}

const LAUNCHERS = /^(ccache|sccache|distcc|icecc|buildcache|env)$/;

/**
 * Takes the compiler (and launchers before it) off when `hasCompiler`, then keeps what the allow-list accepts (cleanFlags.ts). `resolvePaths`: resolve
 * -I/-isystem/-include/-ccbin against `dir`.
 */
function cleanArgs(argvIn: string[], dir: string, opts: CleanOptions): Cleaned {
  const g = newGathered(opts.fromRepo);
  const { compiler, args } = opts.hasCompiler ? splitOffCompiler(argvIn) : { compiler: null, args: [...argvIn] };
  const nvcc = compiler === null || /nvcc/.test(exeName(compiler));
  if (compiler !== null && !nvcc) {
    g.warnings.push(`the compile command uses ${compiler}, not nvcc: only include paths, defines, -std and -O were carried over`);
  }
  const budget = responseFileBudget();
  return cleanArgList(
    args,
    dir,
    { nvcc, resolvePaths: opts.resolvePaths, readRsp: f => readResponseFile(f, dir, g.warnings, budget, opts.fromRepo) },
    g,
  );
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

function exeName(p: string): string {
  return p.replace(/^.*[/\\]/, '').replace(/\.exe$/i, '');
}

/**
/**
 * What one command line's response files may read in total: a file that names itself eight times
 * would otherwise be read 8^8 times within the depth limit. Real ones are a few, of a few KB.
 */
function responseFileBudget(): ReadBudget {
  return new ReadBudget(256, 4 * 1024 * 1024);
}

/**
 * The words of one response file (@file, --options-file/-optf file), relative to `dir`, or null
 * with a warning when it cannot be read. Cleaning expands them where an option may stand (never
 * inside another option's value), so that their flags get the same checks; every read is bounded (regular
 * files only, size-capped, charged to the command line's budget: a FIFO never blocks us).
 * From a repository only files in the build's folders are read (see buildFoldersOf).
 */
function readResponseFile(f: string, dir: string, warnings: string[], budget: ReadBudget, fromRepo?: RepoOrigin): string[] | null {
  const p = path.resolve(dir, f);
  // The build's response files (CMake's includes_CUDA.rsp) lie in its build folder, wherever that
  // is; one elsewhere is not the build's: not read. What is read passes the allow-list like any flag.
  const real = realOrResolved(p);
  if (fromRepo && !fromRepo.rspRoots.some(r => within(real, realOrResolved(r)))) {
    warnings.push(`response file ${p} (from ${fromRepo.db}) is outside the build's folders (${fromRepo.rspRoots.join(', ')}); not read`);
    return null;
  }
  // Said once: past the budget every further @file is left out the same way.
  if (budget.exhausted) return null;
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
    return null;
  }
  return splitCommandLine(text);
}
