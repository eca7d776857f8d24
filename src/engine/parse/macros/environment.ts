// The macros a CUDA file sees in nvcc's device pass: its own `#define`s and those of every header
// it includes (found through its include paths and the toolkit's include directories), with
// `#if` branches taken as nvcc would take them for device code (`__CUDA_ARCH__`, `__CUDACC__`).
// Only directives are read, never code, and nothing runs: this is safe on untrusted input.
//
// Cost: a header's directives are read once per process and re-read only when its size or mtime
// changes (revalidate). The state after each header a file includes directly is memoised, so files
// that start with the same includes (every CUB header includes <cub/config.cuh> first) share it.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { MacroDefinition, parseDefine, expandTokens } from './expand';
import { evaluateCondition } from './condition';
import { Directive, includeGuard, readDirectives } from './directives';
import { tokenize, render } from './tokens';
import { BoundedReadError, READ_CAPS, ReadBudget, readBoundedText, tryReadBoundedText } from '../../base/boundedRead';

export interface PreprocessOptions {
  /** `-I` directories, in order. */
  includeDirs: string[];
  /** `-isystem` directories, then the toolkit's (include/, include/cccl/), searched after -I. */
  systemIncludeDirs: string[];
  /** `-D` values as `NAME` or `NAME=VALUE`, and `-U NAME` as `-NAME`, in command-line order. */
  defines: string[];
  /** The device architecture, e.g. `sm_90`; sets `__CUDA_ARCH__`. */
  arch: string;
  /**
   * Searched last, after every directory nvcc would search: the scanned tree's folders (its root
   * and root/include), for a library read without its build flags (`#include "cutlass/cutlass.h"`
   * from cutlass/include, tiny-cuda-nn's src/*.cu finding include/tiny-cuda-nn/). Only a header
   * found nowhere else comes from here, so correct flags never lose what these find.
   */
  fallbackIncludeDirs?: string[];
  /** The nvcc version, for `__CUDACC_VER_MAJOR__`/`_MINOR__`. */
  cudaVersion?: { major: number; minor: number };
}

export interface MacroEnvironment {
  /** Every macro defined at the end of the file, by name. */
  macros: { get(name: string): MacroDefinition | undefined; has(name: string): boolean };
  /** The headers that were read (resolved paths), so a change to one can invalidate this. */
  headers: string[];
  /** sha256 of each header's bytes as read, in `headers` order (null: it could not be read). */
  headerHashes: (string | null)[];
  /**
   * Every path the include search looked at (live or in a replayed header), with whether it was
   * a regular file: a header created where the search looked first changes the answer. Worked
   * out when asked (a persistent cache asks; the editor does not).
   */
  probes(): ReadonlyMap<string, boolean>;
  /** `#include` spellings found nowhere on the include path (first few). */
  unresolved: string[];
  /**
   * Set when the file's includes ran past the work budget (a header including itself twice
   * without a guard grows exponentially): what was left out. The macros are those read until then.
   */
  truncated: string | null;
}

/**
 * Macros by name, in two layers: a frozen, complete map that other files share (the state after
 * <cub/config.cuh>, say) and the file's own writes on top. Copying 3,000 macros per file is what
 * this avoids; a lookup is at most two map reads. `#pragma once` marks live here too, under a key
 * no macro can have.
 */
class MacroMap {
  private readonly own = new Map<string, MacroDefinition | null>();
  /** Set once frozen: every name of this layer and those below. */
  private flat: Map<string, MacroDefinition> | null = null;

  constructor(private readonly base: MacroMap | null = null) {}

  get(name: string): MacroDefinition | undefined {
    if (this.flat) return this.flat.get(name);
    const v = this.own.get(name);
    if (v !== undefined) return v ?? undefined;
    return this.base?.flat!.get(name);
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  set(name: string, def: MacroDefinition): void {
    if (this.flat) throw new Error('frozen macro layer written');
    this.own.set(name, def);
  }

  delete(name: string): boolean {
    if (this.flat) throw new Error('frozen macro layer written');
    const had = this.has(name);
    this.own.set(name, null);
    return had;
  }

  /** A new writable layer over this one, which is frozen (never written again). */
  child(): MacroMap {
    if (!this.flat) {
      const flat = new Map(this.base?.flat ?? undefined);
      for (const [n, d] of this.own) {
        if (d) flat.set(n, d);
        else flat.delete(n);
      }
      this.flat = flat;
      this.own.clear();
    }
    return new MacroMap(this);
  }
}

const ONCE = '\0once:';
const ONCE_MARK: MacroDefinition = { name: ONCE, params: null, variadic: false, body: [], file: '<once>', line: 0 };

/** A file's directives as read from disk, with what decides a re-read. */
interface HeaderInfo {
  directives: Directive[];
  /** sha256 of the bytes read (what a persistent cache checks the file against). */
  sha256: string;
  guard: string | null;
  size: number;
  mtimeMs: number;
  /** What including it did, in the contexts seen so far (see Effect). */
  effects: Effect[];
  /** Its `#pragma once` mark's key in a MacroMap. */
  onceKey: string;
}

/**
 * What including a header did the first time it was read in some context: its own defines and
 * undefs and the headers it included, in order, plus every macro its `#if`s read from outside
 * (with the definition seen). Including it again where those reads give the same answers
 * replays the ops instead of evaluating its directives again: each header's table is computed
 * once, and stays right when a file defines configuration macros before including it.
 */
interface Effect {
  ops: Op[];
  /** Macro name → the definition it had (null: undefined) when read from outside. */
  reads: Map<string, MacroDefinition | null>;
  /** Names it defines or undefines (directly or through headers it includes). */
  writes: Set<string>;
  /**
   * Paths the include search looked at while recording it, itself (its nested headers' are in
   * their effects, reached through its `include` ops): a replay depends on them as well.
   */
  probes: string[];
  /** Its probes and every nested header's, each once: worked out on first use (an effect never changes once recorded). */
  closure?: string[];
}

/** `include`: the effect the nested header had then, replayed as is while the enclosing one matches. */
type Op = { define: MacroDefinition } | { undef: string } | { once: string } | { include: string; foundAt: number; effect?: Effect };

interface Recording {
  effect: Effect;
}

interface State {
  macros: MacroMap;
  headers: Set<string>;
  unresolved: string[];
  truncated: string | null;
  /** Identity of the state while the main file has changed nothing itself (snapshots); null after. */
  id: number | null;
}

const MAX_INCLUDE_DEPTH = 64;
/**
 * Headers one file's run may enter (evaluated or replayed; a guarded header seen again costs
 * nothing). The largest real translation units (CUTLASS, CCCL) enter a few thousand; without a
 * total bound, a header that includes itself twice would be entered 2^64 times within the depth limit.
 */
const MAX_INCLUDE_VISITS = 50_000;
/** Directives one file's run may evaluate, over all the headers it enters. */
const MAX_DIRECTIVE_STEPS = 5_000_000;
/** Effects kept per header (contexts that read different configuration macros). */
const MAX_EFFECTS = 4;
/** Headers above this size are skipped (generated tables, amalgamations). */
const MAX_HEADER_BYTES = READ_CAPS.header;

/** `sm_90a` → 900; anything unreadable → 900 (Hopper, what the samples target). */
function cudaArchValue(arch: string): number {
  const m = /(\d+)/.exec(arch);
  if (!m) return 900;
  return Number(m[1]) * 10;
}

/** The macros nvcc's device pass defines before reading the file (a subset: those headers test). */
function predefinedMacros(options: Pick<PreprocessOptions, 'arch' | 'cudaVersion'>): string[] {
  const arch = cudaArchValue(options.arch);
  const v = options.cudaVersion ?? { major: 13, minor: 0 };
  return [
    '__CUDACC__ 1',
    '__NVCC__ 1',
    `__CUDA_ARCH__ ${arch}`,
    `__CUDA_ARCH_LIST__ ${arch}`,
    `__CUDACC_VER_MAJOR__ ${v.major}`,
    `__CUDACC_VER_MINOR__ ${v.minor}`,
    '__CUDACC_VER_BUILD__ 0',
    `__CUDA_API_VER_MAJOR__ ${v.major}`,
    `__CUDA_API_VER_MINOR__ ${v.minor}`,
    `CUDART_VERSION ${v.major * 1000 + v.minor * 10}`,
    '__NVCC_DIAG_PRAGMA_SUPPORT__ 1',
    '__cplusplus 201703L',
    '__GNUC__ 12',
    '__GNUC_MINOR__ 2',
    '__GNUC_PATCHLEVEL__ 0',
    '__STDC__ 1',
    '__STDC_HOSTED__ 1',
    '__linux__ 1',
    '__linux 1',
    '__unix__ 1',
    '__x86_64__ 1',
    '__x86_64 1',
    '__LP64__ 1',
    '_LP64 1',
    '__ELF__ 1',
    '__CHAR_BIT__ 8',
    '__SIZEOF_INT__ 4',
    '__SIZEOF_LONG__ 8',
    '__SIZEOF_LONG_LONG__ 8',
    '__SIZEOF_POINTER__ 8',
    '__SIZEOF_INT128__ 16',
    '__ORDER_LITTLE_ENDIAN__ 1234',
    '__ORDER_BIG_ENDIAN__ 4321',
    '__BYTE_ORDER__ __ORDER_LITTLE_ENDIAN__',
    '_GNU_SOURCE 1',
  ];
}

/** What a definition means, for comparing reads across contexts. */
function defKey(d: MacroDefinition | undefined): string | null {
  if (!d) return null;
  return d.key ?? (d.key = `${d.params ? `(${d.params.join(',')}${d.variadic ? '...' : ''})` : ''} ${render(d.body)}`);
}

/** The state after a main file's direct include, for the next file that starts the same way. */
interface Snapshot {
  id: number;
  /** Frozen: never written again. */
  macros: MacroMap;
  headers: string[];
  /** What the include search looked at to reach this state. */
  probes: ProbeLog;
}

/** Where a run's include search looked: its own lookups, and the recorded ones of what it replayed. */
interface ProbeLog {
  live: string[];
  replayed: Effect[];
}

const MAX_SNAPSHOTS = 64;

export class Preprocessor {
  private readonly headers = new Map<string, HeaderInfo | null>();
  private readonly exists = new Map<string, boolean>();
  private readonly snapshots = new Map<string, Snapshot>();
  private nextId = 1;

  /**
   * Forgets headers whose directives changed (or that vanished or appeared); true when any did.
   * A header whose size or mtime changed is read again, but an edit that leaves its directives as
   * they were (a function body saved) keeps every table that read it: what invalidates is the
   * content macros come from, not the file's date.
   */
  revalidate(): boolean {
    let changed = false;
    for (const [p, h] of this.headers) {
      let st: fs.Stats | null = null;
      try {
        st = fs.statSync(p);
      } catch {
        st = null;
      }
      if (!h ? st?.isFile() : !st || st.size !== h.size || st.mtimeMs !== h.mtimeMs) {
        const same = h && st?.isFile() && st.size <= MAX_HEADER_BYTES ? sameDirectives(h.directives, p) : null;
        if (h && st && same) {
          h.size = st.size;
          h.mtimeMs = st.mtimeMs;
          h.sha256 = same;
          continue;
        }
        this.headers.delete(p);
        changed = true;
      }
    }
    if (changed) {
      // Any header's effect may include the changed one: recompute them all (lexing stays cached).
      for (const h of this.headers.values()) if (h) h.effects = [];
      this.exists.clear();
      this.snapshots.clear();
    }
    return changed;
  }

  /**
   * The macro environment at the end of `text` (the file at `file`) under `options`. With
   * `deadline` (a performance.now() time) past it the run stops with DeadlineExceeded; what it
   * read completely stays cached, so a later run goes on from there.
   */
  run(file: string, text: string, options: PreprocessOptions, deadline?: number): MacroEnvironment {
    return new Run(this, file, options, deadline).runMain(text);
  }

  /** @internal `budget`: the run's; a header refused for want of budget is not remembered as unreadable. */
  header(p: string, budget?: ReadBudget): HeaderInfo | null {
    if (this.headers.has(p)) return this.headers.get(p)!;
    let info: HeaderInfo | null = null;
    try {
      // Regular files only, opened without blocking: a FIFO named as a header never hangs the read.
      const text = readBoundedText(p, { maxBytes: MAX_HEADER_BYTES, what: 'header', budget }, 'latin1');
      const st = fs.statSync(p);
      const directives = readDirectives(text);
      info = {
        directives,
        sha256: latin1Sha256(text),
        guard: includeGuard(directives),
        size: st.size,
        mtimeMs: st.mtimeMs,
        effects: [],
        onceKey: ONCE + p,
      };
    } catch (e) {
      if (e instanceof BoundedReadError && e.reason === 'budget') return null;
      info = null;
    }
    this.headers.set(p, info);
    return info;
  }

  /** @internal The hash of a header read before (null: unreadable or never read). */
  headerHash(p: string): string | null {
    return this.headers.get(p)?.sha256 ?? null;
  }

  /** @internal */
  snapshot(key: string): Snapshot | undefined {
    const s = this.snapshots.get(key);
    if (s) {
      this.snapshots.delete(key); // most recently used last
      this.snapshots.set(key, s);
    }
    return s;
  }

  /** @internal */
  remember(key: string, s: Omit<Snapshot, 'id'>): number {
    const id = this.freshId();
    this.snapshots.set(key, { ...s, id });
    while (this.snapshots.size > MAX_SNAPSHOTS) this.snapshots.delete(this.snapshots.keys().next().value!);
    return id;
  }

  /** @internal */
  freshId(): number {
    return this.nextId++;
  }

  /** @internal */
  isFile(p: string): boolean {
    let e = this.exists.get(p);
    if (e === undefined) {
      try {
        e = fs.statSync(p).isFile();
      } catch {
        e = false;
      }
      this.exists.set(p, e);
    }
    return e;
  }
}

/** sha256 of the bytes a header was read from (latin1 maps each byte to one character and back). */
function latin1Sha256(text: string): string {
  return crypto.createHash('sha256').update(Buffer.from(text, 'latin1')).digest('hex');
}

/** An effect's probes and those of the headers it included, each once (memoised on the effect). */
function closureOf(e: Effect): string[] {
  if (e.closure) return e.closure;
  const all = new Set<string>(e.probes);
  for (const op of e.ops) if ('include' in op && op.effect) for (const p of closureOf(op.effect)) all.add(p);
  return (e.closure = [...all]);
}

/** The new hash when the file at `p` now has the same directives (same text, same lines) as `before`, else null. */
function sameDirectives(before: Directive[], p: string): string | null {
  let now: Directive[];
  let text: string | null;
  try {
    text = tryReadBoundedText(p, { maxBytes: MAX_HEADER_BYTES, what: 'header' }, 'latin1');
    if (text === null) return null;
    now = readDirectives(text);
  } catch {
    return null;
  }
  const same =
    now.length === before.length &&
    now.every((d, i) => d.name === before[i].name && d.rest === before[i].rest && d.line === before[i].line);
  return same ? latin1Sha256(text) : null;
}

/** Parsed once per directive: the same object each time a header is read again. */
const DEFINITIONS = new WeakMap<Directive, MacroDefinition | null>();

function definitionOf(d: Directive, file: string): MacroDefinition | null {
  let def = DEFINITIONS.get(d);
  if (def === undefined) {
    def = parseDefine(d.rest, file, d.line);
    DEFINITIONS.set(d, def);
  }
  return def;
}

export class DeadlineExceeded extends Error {
  constructor() {
    super('reading the headers takes longer than allowed here');
  }
}

/** One file's preprocessing run. */
class Run {
  private readonly state: State;
  private readonly searchDirs: string[];
  /** Tried after searchDirs when nothing there has the header: the fallback dirs, then the file's ancestors. */
  private readonly ancestors: string[] = [];
  private readonly optionsKey: string;
  /** Snapshots cost a copy of every macro: only a file's first includes, the ones files share, get them. */
  private snapshotsTaken = 0;
  /** Effects being recorded, innermost last. */
  private readonly recording: Recording[] = [];
  /** Reads through this record what headers being recorded take from outside. */
  private readonly lookup = { get: (name: string) => this.read(name) };

  private steps = 0;
  /** Headers entered (evaluated or replayed), against MAX_INCLUDE_VISITS. */
  private visits = 0;
  /** Bytes and files this run reads from disk (headers read before by this process cost nothing). */
  private readonly budget = new ReadBudget();
  /** Paths this run's include search looked at itself (MacroEnvironment.probes). */
  private readonly live: string[] = [];
  /** Effects replayed (their probes, and their nested headers', count as this run's). */
  private readonly replayed = new Set<Effect>();
  /** Snapshots started from. */
  private readonly snapshotProbes: ProbeLog[] = [];

  constructor(
    private readonly pp: Preprocessor,
    private readonly file: string,
    options: PreprocessOptions,
    private readonly deadline?: number,
  ) {
    this.searchDirs = [...options.includeDirs, ...options.systemIncludeDirs];
    this.ancestors.push(...(options.fallbackIncludeDirs ?? []));
    // Each ancestor and its include/ folder: sources beside headers (`proj/src/x.cu` including
    // `<proj/y.h>` from `proj/include/`) are the usual project layout.
    for (let d = path.dirname(path.dirname(file)), i = 0; i < 6 && d !== path.dirname(d); d = path.dirname(d), i++)
      this.ancestors.push(d, path.join(d, 'include'));
    const macros = new MacroMap();
    for (const d of predefinedMacros(options)) {
      const def = parseDefine(d, '<built-in>', 0);
      if (def) macros.set(def.name, def);
    }
    for (const d of options.defines) {
      if (d.startsWith('-')) macros.delete(d.slice(1));
      else {
        const eq = d.indexOf('=');
        const def = parseDefine(eq === -1 ? `${d} 1` : `${d.slice(0, eq)} ${d.slice(eq + 1)}`, '<command line>', 0);
        if (def) macros.set(def.name, def);
      }
    }
    this.state = { macros: macros.child(), headers: new Set(), unresolved: [], truncated: null, id: 0 };
    this.optionsKey = JSON.stringify([
      this.searchDirs,
      options.fallbackIncludeDirs ?? [],
      options.defines,
      options.arch,
      options.cudaVersion ?? null,
    ]);
  }

  runMain(text: string): MacroEnvironment {
    this.processDirectives(this.file, readDirectives(text), 0, -1);
    const st = this.state;
    const headers = [...st.headers];
    return {
      macros: st.macros,
      headers,
      headerHashes: headers.map(h => this.pp.headerHash(h)),
      probes: () => this.allProbes(),
      unresolved: st.unresolved,
      truncated: st.truncated,
    };
  }

  /** Whether `p` is a regular file, recorded as a probe of this run and of the effects being recorded. */
  private isFile(p: string): boolean {
    const e = this.pp.isFile(p);
    this.live.push(p);
    this.recording[this.recording.length - 1]?.effect.probes.push(p);
    return e;
  }

  /** Every path looked at: its own lookups, and those recorded in what it replayed and the headers those included. */
  private allProbes(): Map<string, boolean> {
    const out = new Map<string, boolean>();
    const paths = (list: string[]) => {
      for (const p of list) if (!out.has(p)) out.set(p, this.pp.isFile(p));
    };
    for (const log of [...this.snapshotProbes, { live: this.live, replayed: [...this.replayed] }]) {
      paths(log.live);
      for (const e of log.replayed) paths(closureOf(e));
    }
    return out;
  }

  /** Stops every further include: the run ends with what it has, and says so. */
  private truncate(why: string): void {
    this.state.truncated ??= `${path.basename(this.file)}: ${why}; the macros are those its headers defined until then`;
  }

  private read(name: string): MacroDefinition | undefined {
    const def = this.state.macros.get(name);
    const r = this.recording[this.recording.length - 1];
    if (r && !r.effect.writes.has(name) && !r.effect.reads.has(name)) r.effect.reads.set(name, def ?? null);
    return def;
  }

  private define(def: MacroDefinition): void {
    this.state.macros.set(def.name, def);
    this.state.id = null;
    const r = this.recording[this.recording.length - 1];
    if (r) {
      r.effect.ops.push({ define: def });
      r.effect.writes.add(def.name);
    }
  }

  private undef(name: string): void {
    this.state.macros.delete(name);
    this.state.id = null;
    const r = this.recording[this.recording.length - 1];
    if (r) {
      r.effect.ops.push({ undef: name });
      r.effect.writes.add(name);
    }
  }

  /** A nested effect's reads and writes become the enclosing recording's (reads only where it has not written). */
  private absorb(e: Effect): void {
    const r = this.recording[this.recording.length - 1];
    if (!r) return;
    for (const [n, v] of e.reads) if (!r.effect.writes.has(n) && !r.effect.reads.has(n)) r.effect.reads.set(n, v);
    for (const n of e.writes) r.effect.writes.add(n);
  }

  private resolve(
    spelling: string,
    angled: boolean,
    fromFile: string,
    next: boolean,
    foundAt: number,
  ): { path: string; index: number } | null {
    if (path.isAbsolute(spelling)) return this.isFile(spelling) ? { path: spelling, index: -1 } : null;
    if (!angled && !next) {
      const p = path.join(path.dirname(fromFile), spelling);
      if (this.isFile(p)) return { path: p, index: -1 };
    }
    for (let i = next ? foundAt + 1 : 0; i < this.searchDirs.length; i++) {
      const p = path.join(this.searchDirs[i], spelling);
      if (this.isFile(p)) return { path: p, index: i };
    }
    if (next) return null;
    // Not on the include path: a header-only library read without its build flags includes its
    // own headers relative to its root (`<cub/config.cuh>` from include/cccl/cub/…), so the main
    // file's ancestors are tried last.
    for (const dir of this.ancestors) {
      const p = path.join(dir, spelling);
      if (this.isFile(p)) return { path: p, index: this.searchDirs.length };
    }
    return null;
  }

  private include(d: Directive, fromFile: string, depth: number, foundAt: number): void {
    let rest = d.rest;
    if (!/^["<]/.test(rest)) {
      // `#include MACRO`: expand it first.
      try {
        rest = render(expandTokens(tokenize(rest), this.lookup, 5000));
      } catch {
        return;
      }
    }
    let spelling: string;
    let angled: boolean;
    const q = /^"([^"]*)"/.exec(rest);
    const a = /^<\s*([^>]*?)\s*>/.exec(rest);
    if (q) {
      spelling = q[1];
      angled = false;
    } else if (a) {
      spelling = a[1].replace(/\s+/g, '');
      angled = true;
    } else return;
    const found = this.resolve(spelling, angled, fromFile, d.name === 'include_next', foundAt);
    if (!found) {
      if (this.state.unresolved.length < 20 && !this.state.unresolved.includes(spelling)) this.state.unresolved.push(spelling);
      return;
    }
    const r = this.recording[this.recording.length - 1];
    const op: Op = { include: found.path, foundAt: found.index };
    r?.effect.ops.push(op);
    // A main file's direct includes, while it has defined nothing itself, start from a state other
    // files reach the same way (every CUB header includes <cub/config.cuh> first): memoised.
    const st = this.state;
    if (depth === 0 && st.id !== null && this.snapshotsTaken < 2) {
      this.snapshotsTaken++;
      const key = `${this.optionsKey}\0${st.id}\0${found.path}`;
      const snap = this.pp.snapshot(key);
      if (snap) {
        st.macros = snap.macros.child();
        for (const h of snap.headers) st.headers.add(h);
        this.snapshotProbes.push(snap.probes);
        st.id = snap.id;
        return;
      }
      const before = st.headers.size;
      const liveBefore = this.live.length;
      const replayedBefore = this.replayed.size;
      this.includeFile(found.path, depth + 1, found.index);
      if (st.truncated) return;
      // Headers are added in order, so the new ones are the tail.
      const headers = [...st.headers].slice(before);
      // Lookups and replays are logged in order and never removed: the new ones are the tail as well.
      const probes = { live: this.live.slice(liveBefore), replayed: [...this.replayed].slice(replayedBefore) };
      const frozen = st.macros;
      st.macros = frozen.child();
      st.id = this.pp.remember(key, { macros: frozen, headers, probes });
      return;
    }
    const effect = this.includeFile(found.path, depth + 1, found.index);
    if (effect) op.effect = effect;
  }

  /** Includes a header; returns the effect it had (null when skipped). */
  private includeFile(file: string, depth: number, foundAt: number, known?: Effect): Effect | null {
    if (depth > MAX_INCLUDE_DEPTH) return null;
    const st = this.state;
    if (st.truncated) return null;
    const info = this.pp.header(file, this.budget);
    if (!info && this.budget.exhausted) this.truncate(`reading headers stopped: ${this.budget.exhausted}`);
    st.headers.add(file);
    if (!info || st.macros.has(info.onceKey)) return null;
    // Not a recorded read: a replay decides each nested include again, live.
    if (info.guard && st.macros.has(info.guard)) return null;
    if (++this.visits > MAX_INCLUDE_VISITS) {
      this.truncate(
        `includes stopped after entering ${MAX_INCLUDE_VISITS} headers (at ${file}; does a header without an include guard include itself?)`,
      );
      return null;
    }
    // Replay what including it did before, when everything it read from outside is the same
    // (`known`: the enclosing header matched, so what it saw of this one holds as well).
    for (const e of known ? [known] : info.effects) {
      if (e === known || this.matches(e)) {
        this.replayed.add(e);
        this.replay(e, depth);
        this.absorb(e);
        return e;
      }
    }
    const effect: Effect = { ops: [], reads: new Map(), writes: new Set(), probes: [] };
    this.recording.push({ effect });
    try {
      this.processDirectives(file, info.directives, depth, foundAt);
    } finally {
      this.recording.pop();
    }
    // A cut-short reading is not what including the header does: never replayed elsewhere.
    if (st.truncated) return effect;
    if (info.effects.length >= MAX_EFFECTS) info.effects.shift();
    info.effects.push(effect);
    this.absorb(effect);
    return effect;
  }

  private matches(e: Effect): boolean {
    const macros = this.state.macros;
    for (const [n, v] of e.reads) {
      const cur = macros.get(n) ?? null;
      if (cur !== v && defKey(cur ?? undefined) !== defKey(v ?? undefined)) return false;
    }
    return true;
  }

  private replay(e: Effect, depth: number): void {
    const st = this.state;
    for (const op of e.ops) {
      if ('define' in op) st.macros.set(op.define.name, op.define);
      else if ('undef' in op) st.macros.delete(op.undef);
      else if ('once' in op) st.macros.set(ONCE + op.once, ONCE_MARK);
      else if (!this.recording.length) this.includeFile(op.include, depth + 1, op.foundAt, op.effect);
      else {
        // A header it included: skipped or replayed by the same rules as a live include (its
        // reads and writes are the enclosing effect's already: absorb(e) follows).
        const saved = this.recording.splice(0);
        try {
          this.includeFile(op.include, depth + 1, op.foundAt, op.effect);
        } finally {
          this.recording.push(...saved);
        }
      }
    }
  }

  private processDirectives(file: string, directives: Directive[], depth: number, foundAt: number): void {
    const st = this.state;
    // One frame per open #if: whether its current branch is live, and whether any branch was taken.
    const frames: { live: boolean; taken: boolean; parentLive: boolean }[] = [];
    let live = true;
    const ctx = {
      macros: this.lookup,
      hasInclude: (spelling: string, angled: boolean) => this.resolve(spelling, angled, file, false, -1) !== null,
    };
    const test = (d: Directive): boolean => {
      if (d.name === 'if' || d.name === 'elif') return evaluateCondition(d.rest, ctx);
      const defined = !!this.read(d.rest.split(/[\s(]/)[0]);
      return d.name === 'ifdef' || d.name === 'elifdef' ? defined : !defined;
    };
    for (const d of directives) {
      // Cut short: the headers stop, the main file's own directives go on (its size bounds them).
      if (st.truncated && depth > 0) return;
      if (++this.steps > MAX_DIRECTIVE_STEPS) {
        this.truncate(`evaluating directives stopped after ${MAX_DIRECTIVE_STEPS} (in ${file})`);
        return;
      }
      if (this.deadline !== undefined && (this.steps & 63) === 0 && performance.now() > this.deadline) throw new DeadlineExceeded();
      switch (d.name) {
        case 'if':
        case 'ifdef':
        case 'ifndef': {
          const v: boolean = live && test(d);
          frames.push({ live: v, taken: v, parentLive: live });
          live = v;
          break;
        }
        case 'elif':
        case 'elifdef':
        case 'elifndef': {
          const f = frames[frames.length - 1];
          if (!f) break;
          const v: boolean = f.parentLive && !f.taken && test(d);
          f.live = v;
          f.taken ||= v;
          live = v;
          break;
        }
        case 'else': {
          const f = frames[frames.length - 1];
          if (!f) break;
          f.live = f.parentLive && !f.taken;
          f.taken = true;
          live = f.live;
          break;
        }
        case 'endif': {
          const f = frames.pop();
          live = f ? f.parentLive : true;
          break;
        }
        default:
          if (!live) break;
          if (d.name === 'define') {
            const def = definitionOf(d, file);
            if (def) this.define(def);
          } else if (d.name === 'undef') {
            this.undef(d.rest.split(/\s/)[0]);
          } else if (d.name === 'pragma') {
            // The main file's own #pragma once matters to nobody.
            if (/^once\b/.test(d.rest) && depth > 0) {
              st.macros.set(ONCE + file, ONCE_MARK);
              this.recording[this.recording.length - 1]?.effect.ops.push({ once: file });
            }
          } else if (d.name === 'include' || d.name === 'include_next') {
            this.include(d, file, depth, foundAt);
          }
      }
    }
  }
}
