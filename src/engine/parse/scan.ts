// Scanning files and folders for CUDA sources: what `unroll-lens scan` and the workspace use.
import * as fs from 'fs';
import * as path from 'path';
import type { FileAnalysis, Kernel, Loop, ManualUnroll, PragmaMacroUse, UnparsedFunction, UnrollPragma } from './model';
import { CudaDocuments } from './documents';
import { mayHoldDeviceCode } from './libraryMacros';
import { MacroTables, optionsFromProject, PreprocessOptions } from './macros';
import { DEFAULT_ARCH } from '../toolchain/toolchain';
import { BoundedReadError, READ_CAPS, ReadBudget, readBoundedBuffer, readBoundedText } from '../base/boundedRead';
import type { DependencyPacker, DependentCache } from '../base/dependentCache';
import { scanDependencies, serializeAnalysis } from './scanCache';

const CUDA_EXTENSIONS = ['.cu', '.cuh'];

/** Headers a directory scan includes only when they hold device code (C++ headers without it are not ours). */
const HEADER_EXTENSIONS = ['.h', '.hpp', '.inl'];

export class ScanInputError extends Error {}

/** Why a file found while walking a directory was not scanned (`scan --json`'s `skipped[]`). */
type SkipReason = 'no-device-code' | 'unreadable' | 'too-large' | 'binary' | 'not-a-regular-file' | 'over-budget';

export interface SkippedFile {
  path: string;
  reason: SkipReason;
}

/** Files over this size found by a walk are skipped (generated tables, amalgamations); named ones are refused by the CLI. */
const MAX_WALKED_BYTES = READ_CAPS.source;

/**
 * What one scan's walk may read in total (CUTLASS: 1,251 files, 34 MiB). Files past it are
 * skipped as 'over-budget', listed like every other skipped file.
 */
function walkBudget(): ReadBudget {
  return new ReadBudget(100_000, 1024 * 1024 * 1024);
}

export interface CollectedFiles {
  files: string[];
  skipped: SkippedFile[];
  /** Texts read while deciding (headers), so the scan does not read them again. */
  texts: Map<string, string>;
}

/**
 * Expands files and directories (recursively, skipping node_modules and dot-folders) into .cu/.cuh
 * files and the .h/.hpp/.inl headers that hold device code. Files named explicitly are kept as given.
 */
export function collectCudaFiles(inputs: string[]): string[] {
  return collectScanFiles(inputs).files;
}

const DEFINE_LINE = /^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])(.*(?:\\\r?\n.*)*)/gm;
const DIRECTIVE_LINES = /^[ \t]*#.*(?:\\\r?\n.*)*/gm;
const DEVICE_WORD = /\b(__device__|__global__)\b/;

/**
 * Names of object-like macros defined anywhere in `texts` whose body makes a function device code:
 * `__device__`/`__global__`, a built-in qualifier name, or another such name (`#define MY_HD
 * MY_DEVICE`). A cheap, tree-wide approximation of classifying each header's macros: it lets a
 * walk keep `ops.h` whose functions are `MYLIB_DEVICE` from defs.h.
 */
function projectQualifierMacros(texts: Iterable<string>): Set<string> {
  const bodies = new Map<string, string[]>();
  for (const t of texts) {
    if (!t.includes('define')) continue;
    for (const m of t.matchAll(DEFINE_LINE)) {
      const list = bodies.get(m[1]) ?? [];
      list.push(m[2]);
      bodies.set(m[1], list);
    }
  }
  const names = new Set<string>();
  for (let changed = true; changed;) {
    changed = false;
    for (const [name, list] of bodies) {
      if (names.has(name)) continue;
      const qualifies = list.some(
        b => DEVICE_WORD.test(b) || mayHoldDeviceCode(b) || (b.match(/\b[A-Za-z_]\w*\b/g) ?? []).some(w => w !== name && names.has(w)),
      );
      if (qualifies) {
        names.add(name);
        changed = true;
      }
    }
  }
  return names;
}

/** Whether a header's code (its directives left out) holds device code, given the tree's qualifier macros. */
function codeHoldsDeviceCode(text: string, projectQualifiers: ReadonlySet<string>): boolean {
  if (!mayHoldDeviceCode(text) && !projectQualifiers.size) return false;
  const code = text.includes('#') ? text.replace(DIRECTIVE_LINES, '') : text;
  if (mayHoldDeviceCode(code)) return true;
  if (!projectQualifiers.size) return false;
  for (const w of code.match(/\b[A-Za-z_]\w*\b/g) ?? []) if (projectQualifiers.has(w)) return true;
  return false;
}

/**
 * What a scan of `inputs` reads: walked .cu/.cuh files, and walked headers whose code holds device
 * code (also through qualifier macros the tree defines, see projectQualifierMacros); every other
 * walked source file is listed in `skipped` with the reason. Files named explicitly are kept as
 * given (the CLI checks them and refuses bad ones).
 */
export function collectScanFiles(inputs: string[], budget = walkBudget()): CollectedFiles {
  const files: string[] = [];
  const skipped: SkippedFile[] = [];
  const texts = new Map<string, string>();
  const headers: string[] = [];
  /** Walk order (alphabetical within each directory) and named files, as given. */
  const order: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      throw new ScanInputError(`cannot read directory ${dir}: ${(e as Error).message}`);
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && !e.name.startsWith('.')) walk(p);
        continue;
      }
      const ext = path.extname(e.name);
      const cuda = CUDA_EXTENSIONS.includes(ext);
      if (!cuda && !HEADER_EXTENSIONS.includes(ext)) continue;
      const text = readWalked(p, skipped, budget);
      if (text === null) continue;
      (cuda ? files : headers).push(p);
      order.push(p);
      texts.set(p, text);
    }
  };
  for (const input of inputs) {
    let st: fs.Stats;
    try {
      st = fs.statSync(input);
    } catch {
      throw new ScanInputError(`no such file or directory: ${input}`);
    }
    if (st.isDirectory()) walk(input);
    else {
      try {
        fs.accessSync(input, fs.constants.R_OK);
      } catch {
        throw new ScanInputError(`cannot read file: ${input}`);
      }
      files.push(input);
      order.push(input);
    }
  }
  // Headers: kept when their code holds device code, directly or through the tree's macros.
  const qualifiers = headers.length ? projectQualifierMacros(texts.values()) : new Set<string>();
  const keep = new Set(files);
  for (const h of headers) {
    if (codeHoldsDeviceCode(texts.get(h)!, qualifiers)) keep.add(h);
    else {
      skipped.push({ path: h, reason: 'no-device-code' });
      texts.delete(h);
    }
  }
  // Each file once.
  const seen = new Set<string>();
  const out = order.filter(f => keep.has(f) && !seen.has(f) && (seen.add(f), true));
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files: out, skipped, texts };
}

const SKIP_REASONS: Record<BoundedReadError['reason'], SkipReason> = {
  missing: 'unreadable',
  unreadable: 'unreadable',
  'not-a-regular-file': 'not-a-regular-file',
  'too-large': 'too-large',
  budget: 'over-budget',
};

/** A walked file's text, or null (and a `skipped` entry) when it is no readable, sane source file. */
function readWalked(p: string, skipped: SkippedFile[], budget: ReadBudget): string | null {
  let buf: Buffer;
  try {
    buf = readBoundedBuffer(p, { maxBytes: MAX_WALKED_BYTES, what: 'source file', budget });
  } catch (e) {
    skipped.push({ path: p, reason: e instanceof BoundedReadError ? SKIP_REASONS[e.reason] : 'unreadable' });
    return null;
  }
  if (buf.includes(0)) {
    skipped.push({ path: p, reason: 'binary' });
    return null;
  }
  return buf.toString('utf8');
}

/** Where a scan reads each file's macros from (its headers); without it, the built-in table alone. */
export interface ScanMacros {
  tables: MacroTables;
  optionsFor(file: string): PreprocessOptions;
}

/**
 * The macros each file of a project sees: its flags from compile_commands.json (from `cwd` up),
 * then the toolkit's headers, one reader for all files; `scanRoots`: the directories being
 * scanned, searched last for headers nothing else finds.
 */
export function projectScanMacros(cwd: string, arch: string | null, scanRoots: string[] = []): ScanMacros {
  return { tables: new MacroTables(), optionsFor: optionsFromProject(cwd, arch, DEFAULT_ARCH, scanRoots) };
}

/**
 * Where a scan stores what it analyses (scanCache.ts): the cache, this thread's packer, and each
 * file's entry (its key and the hash of the text it is given; null: not stored).
 */
export interface ScanStore {
  cache: DependentCache;
  packer: DependencyPacker;
  entries: ({ key: string; input: string } | null)[];
}

/** `texts`: files already read (collectScanFiles), not read again; `store`: each complete analysis is kept there. */
export async function scanFiles(
  files: string[],
  docs?: CudaDocuments,
  macros?: ScanMacros,
  texts?: ReadonlyMap<string, string>,
  store?: ScanStore | null,
): Promise<FileAnalysis[]> {
  const d = docs ?? (await CudaDocuments.create());
  return files.map((f, i) => {
    let text = texts?.get(f);
    if (text === undefined) {
      try {
        text = readBoundedText(f, { maxBytes: READ_CAPS.source, what: 'source file' });
      } catch (e) {
        throw new ScanInputError(e instanceof BoundedReadError ? e.message : `cannot read file: ${f} (${(e as Error).message})`);
      }
    }
    const m = macros?.tables.tableFor(f, text, macros.optionsFor(f));
    const analysis = d.analyzeOnce(text, f, m?.table);
    // Out-of-range include work is said, not silently cut (environment.ts MAX_INCLUDE_VISITS).
    if (m?.env.truncated) analysis.readWarnings = [m.env.truncated];
    const entry = store?.entries[i];
    const dependencies = entry && scanDependencies(m?.env);
    if (store && entry && dependencies)
      store.cache.put(entry.key, entry.input, store.packer.pack(dependencies), serializeAnalysis(analysis));
    return analysis;
  });
}

// ---------------------------------------------------------------------------------------------
// The `scan --json` contract (docs/cli.md). Projected explicitly so internal fields never leak.

interface PragmaJson {
  kind: UnrollPragma['kind'];
  factor: number | null;
  text: string;
  line: number;
  /** Only for a library macro: `{name, written, library, expandsTo}` (built-in table). */
  macro?: PragmaMacroUse;
  /** The preprocessor branch the attachment holds in. */
  condition?: string;
}

export interface ScanJson {
  files: {
    path: string;
    /** Present (true) only when tree-sitter found syntax errors: the results are best-effort. */
    syntaxErrors?: true;
    /** Present only when reading the file's headers was cut short (the include work budget): what was left out. */
    warnings?: string[];
    /** Present only when the file defines device functions the scan could not read: each named, with its line and why. */
    unparsedFunctions?: UnparsedFunction[];
    kernels: {
      name: string;
      qualifier: Kernel['qualifier'];
      line: number;
      loops: {
        line: number;
        kind: Loop['kind'];
        depth: number;
        pragma: null | PragmaJson;
        /** Pragmas of the other branches of a conditional before the loop. */
        alternativePragmas?: PragmaJson[];
        /** An unknown macro written right before the loop (its pragma is unknown). */
        unknownMacro?: string;
        tripCount: Loop['tripCount'];
        /** With "dependent": the template parameters the header names ([]: a constant we cannot evaluate). */
        tripDependsOn?: string[];
        /** With "dependent": each visible instantiation's trip count. */
        tripCountByInstantiation?: Loop['tripCountByInstantiation'];
      }[];
      manualUnrolls: Pick<ManualUnroll, 'line' | 'endLine' | 'pattern' | 'factor' | 'vectorType'>[];
    }[];
  }[];
  /** Source files a directory walk found and did not scan, with why (nothing is silently missing). */
  skipped: SkippedFile[];
}

function pragmaJson(p: UnrollPragma): PragmaJson {
  return {
    kind: p.kind,
    factor: p.factor,
    text: p.text,
    line: p.line,
    ...(p.macro ? { macro: { ...p.macro } } : {}),
    ...(p.condition ? { condition: p.condition } : {}),
  };
}

export function toScanJson(files: FileAnalysis[], skipped: SkippedFile[] = []): ScanJson {
  return {
    files: files.map(f => ({
      path: f.path,
      ...(f.hasSyntaxErrors ? { syntaxErrors: true as const } : {}),
      ...(f.readWarnings?.length ? { warnings: [...f.readWarnings] } : {}),
      ...(f.unparsedFunctions?.length
        ? { unparsedFunctions: f.unparsedFunctions.map(u => ({ name: u.name, line: u.line, reason: u.reason })) }
        : {}),
      kernels: f.kernels.map(k => ({
        name: k.name,
        qualifier: k.qualifier,
        line: k.line,
        loops: k.loops.map(l => ({
          line: l.line,
          kind: l.kind,
          depth: l.depth,
          pragma: l.pragma ? pragmaJson(l.pragma) : null,
          ...(l.alternativePragmas ? { alternativePragmas: l.alternativePragmas.map(pragmaJson) } : {}),
          ...(l.unknownMacro ? { unknownMacro: l.unknownMacro } : {}),
          tripCount: l.tripCount,
          ...(l.tripDependsOn ? { tripDependsOn: [...l.tripDependsOn] } : {}),
          ...(l.tripCountByInstantiation ? { tripCountByInstantiation: l.tripCountByInstantiation.map(b => ({ ...b })) } : {}),
        })),
        manualUnrolls: k.manualUnrolls.map(m => ({
          line: m.line,
          endLine: m.endLine,
          pattern: m.pattern,
          factor: m.factor,
          ...(m.vectorType ? { vectorType: m.vectorType } : {}),
        })),
      })),
    })),
    skipped: skipped.map(k => ({ path: k.path, reason: k.reason })),
  };
}
