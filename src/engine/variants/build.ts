// Compiles variants with nvcc, in parallel up to the core count, through a persistent
// content-addressed cache: the key covers the variant source, the flags, the nvcc version and
// the arch, so an unchanged re-run compiles nothing. An entry also lists the headers nvcc read
// (from its -MD output) with their hashes, and the output's size and hash: a changed header or a
// damaged output is a miss, never a stale answer. Only deterministic outcomes are stored. How
// entries are written, shared between processes, verified and evicted: cache.ts.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { ToolInfo } from '../toolchain/discover';
import { shellUnsafeArgument, type CompileFlags } from '../toolchain/flags';
import { CompilerMessage, parseNvccOutput } from '../toolchain/nvccErrors';
import { ProcessRunner, runProcess } from '../toolchain/process';
import { originalOf, OverlayLayout, overlayArgs, planOverlay, verifyOverlay, writeOverlay } from './overlay';
import { BuildCache, DEFAULT_MAX_OUTPUT_BYTES, describeFsError, formatBytes, hashFile } from './cache';
import { DAMAGED, FOREIGN, readCacheFile, seal, unseal } from '../base/cacheEntry';
import { BuildFailureKind, BuildStatus, compileOutcome, internalMessage, isDeterministic } from './compileOutcome';
import { markedLineName, parseDepWords } from './depFile';

export interface BuildRequest {
  /** Readable id, e.g. "L40=4" (see variantKey). */
  key: string;
  /** Full variant source (with its #line directive); bytes for a file that is not all UTF-8 (rewrite.ts variantSource). */
  source: string | Buffer;
  /** The user's file: its directory goes on the include path. With a translation unit: the header the variant replaces. */
  originalPath: string;
}

export interface BuildResult {
  key: string;
  status: BuildStatus;
  /** Content address of this build (cache folder name). */
  hash: string;
  /** The built file: a cubin, or an executable in 'program' mode. */
  outputPath: string | null;
  /** ptxas -v output (resource usage), from nvcc's stderr. */
  ptxasLog: string;
  messages: CompilerMessage[];
  failureKind: BuildFailureKind;
  /** Compile wall time (the original compile's, for a cache hit). */
  compileMs: number;
  cached: boolean;
}

export interface BuilderOptions {
  /** 'cubin' (SASS analysis, the default) or 'program' (a runnable executable, for GPU runs). */
  mode?: 'cubin' | 'program';
  nvcc: ToolInfo;
  arch: string;
  flags: CompileFlags;
  cacheDir: string;
  /** Cap of the cache's total size in bytes (least recently used entries are evicted past it); 0: unlimited. Default: 4 GiB. */
  cacheMaxBytes?: number;
  /** Largest build output read back (a bigger one is a clear failure). Default 1 GiB. */
  maxOutputBytes?: number;
  /** A problem with the cache (not writable, disk full), one line each; default: stderr. */
  warn?: (message: string) => void;
  /** Tests: replaces the writes of the cache's own files, to inject ENOSPC or EROFS. */
  cacheWriteFile?: (file: string, data: string | Buffer) => void;
  /** Parallel nvcc processes; default: number of cores. */
  concurrency?: number;
  timeoutMs?: number;
  runner?: ProcessRunner;
  /**
   * 'program' mode: a project's own compile command instead of nvcc, as an argument array with
   * placeholders {source} (the variant's shadow copy), {output} (the program to write), {arch}
   * and {dir} (the original file's folder). Never run through a shell.
   */
  compileTemplate?: string[];
  /**
   * The variants are of a header (each request's originalPath): compile this translation unit
   * (absolute path of a .cu file including it, built with `flags`, which are the unit's) with the
   * header replaced by the variant through an overlay folder (see overlay.ts), checked from nvcc's
   * -MD list.
   */
  translationUnit?: string;
}

export interface BuildProgress {
  done: number;
  total: number;
  key: string;
  cached: boolean;
}

/** 4: result.json sealed with the installation's key (cacheEntry.ts); entries of 3 and before are misses. */
const CACHE_FORMAT = 4;

/** Default of BuilderOptions.cacheMaxBytes (unrollLens.cache.maxSizeGB's default). */
const DEFAULT_CACHE_MAX_BYTES = 4 * 1024 ** 3;

/** Stands for the overlay folder in the cache key: the folder itself is per build, its layout is in the key. */
const OVERLAY_PLACEHOLDER = '<overlay>';

/** A file nvcc read for a build, as it was then. */
interface DepRecord {
  path: string;
  sha256: string;
}

/** What result.json holds besides the result: enough to tell whether the entry still holds. */
interface CacheMeta {
  output: { size: number; sha256: string } | null;
  deps: DepRecord[];
}

/** result.json is small (ptxas -v output and messages); a bigger one is not ours. */
const MAX_RESULT_BYTES = 64 * 1024 ** 2;

/** An entry that holds: the stored result, and the size and hash its output must have. */
interface EntryVerdict {
  result: Omit<BuildResult, 'key' | 'hash' | 'outputPath' | 'cached'>;
  output: CacheMeta['output'];
}

const STATUSES: readonly string[] = ['ok', 'failed', 'timeout', 'cancelled'];

/** The body of a sealed result.json in the shape this version writes, or null. */
function entryBody(body: unknown): EntryVerdict | null {
  const b = body as Partial<BuildResult> & { cache?: Partial<CacheMeta> };
  if (!b || typeof b !== 'object' || !STATUSES.includes(b.status as string) || typeof b.ptxasLog !== 'string') return null;
  if (!Array.isArray(b.messages) || typeof b.compileMs !== 'number' || !(b.failureKind === null || typeof b.failureKind === 'string'))
    return null;
  const c = b.cache;
  if (!c || !Array.isArray(c.deps) || !c.deps.every(d => d && typeof d.path === 'string' && typeof d.sha256 === 'string')) return null;
  const o = c.output;
  if (o !== null && !(o && typeof o.size === 'number' && typeof o.sha256 === 'string')) return null;
  if (b.status === 'ok' && o === null) return null;
  return {
    result: { status: b.status!, ptxasLog: b.ptxasLog, messages: b.messages, failureKind: b.failureKind!, compileMs: b.compileMs },
    output: o ?? null,
  };
}

const sha256File = hashFile;

export class VariantBuilder {
  readonly concurrency: number;
  private readonly run: ProcessRunner;
  compiles = 0;
  /** File hashes for dependency checks, shared by the lookups of one buildAll. */
  private depHashes = new Map<string, string | null>();
  private toolkitRoot: string | null = null;
  readonly cache: BuildCache;
  /** Entries this builder handed out (builders live for one request): never evicted under their caller. */
  private readonly inUse = new Set<string>();

  constructor(private readonly o: BuilderOptions) {
    this.concurrency = Math.max(1, o.concurrency ?? os.cpus().length);
    this.run = o.runner ?? runProcess;
    this.cache = new BuildCache(o.cacheDir, {
      maxBytes: o.cacheMaxBytes ?? DEFAULT_CACHE_MAX_BYTES,
      writeFile: o.cacheWriteFile,
      warn: o.warn,
    });
  }

  /**
   * nvcc arguments for a variant, besides the input and output paths. `definesHeader`: the
   * generated header of flags.headerDefines, included first, as -D values would act before any
   * -include of the project's.
   */
  nvccArgs(originalPath: string, definesHeader?: string, overlayDir = OVERLAY_PLACEHOLDER): string[] {
    const tu = this.o.translationUnit;
    return [
      // A program keeps host optimisation on; -lineinfo lets ncu map stalls to source lines.
      ...(this.o.mode === 'program' ? ['-O3'] : ['-cubin']),
      `-arch=${this.o.arch}`,
      '-lineinfo',
      '-Xptxas',
      '-v',
      ...(definesHeader ? ['-include', definesHeader] : []),
      ...(tu
        ? // A header through its translation unit: the overlay's folders go before the ones it shadows.
          overlayArgs(this.layout(originalPath), overlayDir, this.o.flags.args)
        : [
            ...this.o.flags.args,
            // The shadow copy lives elsewhere: keep the original directory on the include path.
            '-I',
            path.dirname(originalPath),
          ]),
    ];
  }

  /** The flags every variant is built with (and where they came from). */
  get flags(): CompileFlags {
    return this.o.flags;
  }

  /** The translation unit the variants are built through (header variants), if any. */
  get translationUnit(): string | undefined {
    return this.o.translationUnit;
  }

  private layouts = new Map<string, OverlayLayout>();

  private layout(header: string): OverlayLayout {
    let l = this.layouts.get(header);
    if (!l) {
      l = planOverlay(this.o.translationUnit!, header, this.o.flags.args);
      this.layouts.set(header, l);
    }
    return l;
  }

  /** The built file's name inside its cache folder. */
  get outputName(): string {
    return this.o.mode === 'program' ? 'variant' : 'variant.cubin';
  }

  hashOf(req: BuildRequest): string {
    const h = crypto.createHash('sha256');
    h.update(
      JSON.stringify([
        CACHE_FORMAT,
        this.o.mode ?? 'cubin',
        req.source,
        this.nvccArgs(req.originalPath),
        this.o.compileTemplate ?? null,
        this.o.nvcc.version,
        this.o.nvcc.path,
        this.toolFingerprint(),
        this.o.arch,
        this.o.flags.headerDefines ?? [],
        // A header's variant: which unit, and where the unit and the variant sit in the overlay.
        // The unit's text is a dependency of the entry; the original header's text is in neither.
        this.o.translationUnit ? [this.o.translationUnit, this.layout(req.originalPath)] : null,
      ]),
    );
    return h.digest('hex');
  }

  private hashDep(p: string): string | null {
    if (!this.depHashes.has(p)) {
      let h: string | null = null;
      try {
        h = sha256File(p);
      } catch {
        h = null; // gone: the entry no longer holds
      }
      this.depHashes.set(p, h);
    }
    return this.depHashes.get(p)!;
  }

  /**
   * An entry counts only if this installation sealed it, its output is intact and every file nvcc
   * read is unchanged. Of a key's entries (one per state of its headers) the first that holds is
   * used; a damaged one is removed; another installation's is left to it.
   */
  private readCached(req: BuildRequest, hash: string): BuildResult | null {
    for (const dir of this.cache.candidates(hash)) {
      const hit = this.useEntry(req, hash, dir);
      if (hit) return hit;
    }
    return null;
  }

  /** Entry `dir` as the answer for `req`, its output leased to the caller; null when it does not hold. */
  private useEntry(req: BuildRequest, hash: string, dir: string): BuildResult | null {
    const verdict = this.checkEntry(dir, hash);
    if (verdict === 'damaged') this.cache.remove(dir);
    if (typeof verdict === 'string') return null;
    let outputPath: string | null = null;
    if (verdict.result.status === 'ok') {
      // The caller's own link first, then its bytes checked: what is checked is what the caller reads.
      const leased = this.cache.lease(path.join(dir, this.outputName), dir);
      if (leased === null) return null; // removed meanwhile
      if (!this.outputMatches(leased, verdict.output)) {
        this.cache.unlease(leased);
        this.cache.remove(dir);
        return null;
      }
      outputPath = leased;
    }
    this.cache.touch(dir);
    this.inUse.add(dir);
    return { ...verdict.result, key: req.key, hash, outputPath, cached: true };
  }

  private outputMatches(file: string, want: CacheMeta['output']): boolean {
    try {
      return !!want && fs.statSync(file).size === want.size && sha256File(file) === want.sha256;
    } catch {
      return false;
    }
  }

  /**
   * An entry's result if it holds; 'stale': a file it read changed (or it is gone); 'foreign':
   * sealed by another installation; 'damaged': cut, garbled, edited, moved or of an older format.
   */
  private checkEntry(dir: string, hash: string): EntryVerdict | 'stale' | 'foreign' | 'damaged' {
    let text: string;
    try {
      text = readCacheFile(path.join(dir, 'result.json'), MAX_RESULT_BYTES).toString('utf8');
    } catch (e) {
      // Gone meanwhile (evicted by another process): not damage, just not there.
      return (e as NodeJS.ErrnoException).code === 'ENOENT' && !fs.existsSync(dir) ? 'stale' : 'damaged';
    }
    const body = unseal(this.cache.key, CACHE_FORMAT, 'build entry', [hash, path.basename(dir)], text);
    if (body === FOREIGN) return 'foreign';
    const verdict = body === DAMAGED ? null : entryBody(body);
    if (!verdict) return 'damaged';
    const deps = (body as { cache: CacheMeta }).cache.deps;
    if (deps.some(d => this.hashDep(d.path) !== d.sha256)) return 'stale';
    return verdict;
  }

  /** Compiles in flight, by hash: the same source asked for twice at once (a sweep's template axis) compiles once. */
  private readonly inflight = new Map<string, Promise<BuildResult>>();

  private async compileOnce(req: BuildRequest, hash: string, signal?: AbortSignal): Promise<BuildResult> {
    let p = this.inflight.get(hash);
    if (!p) {
      // Looked up again once a slot is free: the same source may have been built, by another
      // buildAll of this builder or another process, while this one waited.
      p = this.inPool(async () => this.readCached(req, hash) ?? this.compile(req, hash, signal)).finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, p);
    }
    return { ...(await p), key: req.key };
  }

  /**
   * One pool of nvcc processes for every buildAll of this builder, first asked first served: the
   * file's builds and a loop's factors can then be asked for at once and share the cores (a
   * template-heavy unit's long as-written build otherwise leaves the other cores idle while the
   * factors wait for it), without ever running more than `concurrency` compiles.
   */
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  private async inPool<T>(job: () => Promise<T>): Promise<T> {
    while (this.running >= this.concurrency) await new Promise<void>(resolve => this.waiting.push(resolve));
    this.running++;
    try {
      return await job();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private fingerprint: string | null = null;

  /**
   * Size and mtime of nvcc, cicc and ptxas: "13.0" alone does not change with a patch release
   * installed over the same path, and those binaries decide the code.
   */
  private toolFingerprint(): string {
    if (this.fingerprint === null) {
      const root = this.toolkit();
      this.fingerprint = [this.o.nvcc.path, path.join(root, 'nvvm', 'bin', 'cicc'), path.join(root, 'bin', 'ptxas')]
        .map(p => {
          try {
            const st = fs.statSync(p);
            return `${st.size}:${st.mtimeMs}`;
          } catch {
            return '-';
          }
        })
        .join(',');
    }
    return this.fingerprint;
  }

  /** The CUDA toolkit's own headers: covered by the nvcc version in the key, so not hashed per entry. */
  private toolkit(): string {
    if (this.toolkitRoot === null) {
      let nvcc = this.o.nvcc.path;
      try {
        nvcc = fs.realpathSync(nvcc);
      } catch {
        // keep as given
      }
      this.toolkitRoot = path.resolve(path.dirname(nvcc), '..');
    }
    return this.toolkitRoot;
  }

  /**
   * The files nvcc read (from its -MF file), with hashes; null when that list is missing. A file
   * read through a header variant's overlay is recorded as its original (`original`: null for the
   * unit's copy and the variant, which are no dependencies).
   */
  private depsOf(
    depFile: string,
    cwd: string,
    tmp: string,
    lineName?: string,
    original?: (p: string) => string | null,
  ): DepRecord[] | null {
    let text: string;
    try {
      text = fs.readFileSync(depFile, 'utf8');
    } catch {
      return null;
    }
    const root = this.toolkit() + path.sep;
    const deps: DepRecord[] = [];
    // A header variant's `#line` name is listed but was never read: the original is not a dependency.
    const words = parseDepWords(text).filter(w => w !== lineName);
    const seen = new Set<string>();
    for (const read of words.map(w => path.resolve(cwd, w))) {
      // The variant source and generated header live in the entry and are in the key already.
      const p = original ? original(read) : read.startsWith(tmp + path.sep) ? null : read;
      if (p === null || seen.has(p) || p.startsWith(root)) continue;
      seen.add(p);
      const h = this.hashDep(p);
      if (h === null) return null;
      deps.push({ path: p, sha256: h });
    }
    return deps;
  }

  private async compile(req: BuildRequest, hash: string, signal?: AbortSignal): Promise<BuildResult> {
    const { dir: tmp, inCache } = this.cache.scratch(hash);
    const cubin = path.join(tmp, this.outputName);
    const depFile = path.join(tmp, 'deps.d');
    const templated = this.o.mode === 'program' && !!this.o.compileTemplate?.length;
    const tu = this.o.translationUnit;
    const overlayDir = path.join(tmp, 'overlay');
    const input = this.writeVariantSource(req, tmp, overlayDir, templated);
    if ('refusal' in input) {
      this.cache.discard(tmp);
      return this.refused(req, hash, input.refusal);
    }
    const { src, unitDep, lineName } = input;
    const command = this.compileCommand(req, { src, cubin, depFile, overlayDir, tmp, templated });
    const cwd = this.o.flags.directory || path.dirname(tu ?? req.originalPath);
    // Last line of defence: nvcc pastes its arguments into sh command lines, so whatever reached
    // this point (flags, sweep defines, the file's own folder) must hold no shell syntax.
    const unsafe = templated ? null : shellUnsafeArgument(command.slice(1));
    if (unsafe !== null) {
      this.cache.discard(tmp);
      return this.refused(req, hash, `not running nvcc: ${unsafe}`);
    }
    this.compiles++;
    const r = await this.run(command[0], command.slice(1), { cwd, timeoutMs: this.o.timeoutMs ?? 300_000, signal });
    const messages = parseNvccOutput(r.stderr);
    // A header variant's overlay: the files it read through it stand for their originals.
    const fromOverlay = tu ? (p: string) => originalOf(p, this.layout(req.originalPath), overlayDir, tu, req.originalPath) : undefined;
    nameOriginals(messages, { header: req.originalPath, lineName, cwd, fromOverlay });
    const { status, failureKind } = compileOutcome(r, messages, command[0], cubin);
    const limit = this.o.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    // (A program is run, not read back.)
    const size = status === 'ok' && this.o.mode !== 'program' ? fs.statSync(cubin).size : 0;
    if (size > limit) {
      // Not read back (Node reads at most 2 GiB into one buffer) and not stored.
      this.cache.discard(tmp);
      const message = `the built cubin is ${formatBytes(size)}, over the ${formatBytes(limit)} Unroll Lens reads back: not analysed (try a smaller unroll factor)`;
      return {
        key: req.key,
        status: 'failed',
        hash,
        outputPath: null,
        ptxasLog: r.stderr,
        messages: [...messages, internalMessage(message)],
        failureKind: 'internal',
        compileMs: r.durationMs,
        cached: false,
      };
    }
    if (tu && status === 'ok') {
      const why = this.overlayNotRead(req, tu, depFile, lineName, cwd, overlayDir);
      if (why) {
        this.cache.discard(tmp);
        return { ...this.refused(req, hash, why), ptxasLog: r.stderr, compileMs: r.durationMs };
      }
    }
    const result: BuildResult = {
      key: req.key,
      status,
      hash,
      outputPath: null,
      ptxasLog: r.stderr,
      messages,
      failureKind,
      compileMs: r.durationMs,
      cached: false,
    };
    // Stored: successful builds, and compile errors (deterministic: a broken variant stays broken
    // until its source, flags or headers change). Not stored: timeouts, cancels, signals (OOM
    // kills), spawn errors and internal failures, which another try may not repeat; nor a build
    // whose dependency list is missing (a template compile) or whose output is not there.
    const deterministic = isDeterministic(r, status, failureKind);
    const original = fromOverlay && dependencyOf({ overlayDir, tmp, unit: tu!, header: req.originalPath, fromOverlay });
    const found = templated ? null : this.depsOf(depFile, cwd, tmp, lineName, original);
    // The overlay's links are of no use once nvcc has read through them: not kept in the cache.
    if (tu) fs.rmSync(overlayDir, { recursive: true, force: true });
    const deps = found && unitDep ? [unitDep, ...found.filter(d => d.path !== unitDep!.path)] : found;
    let output: CacheMeta['output'] = null;
    if (status === 'ok') {
      try {
        output = { size: fs.statSync(cubin).size, sha256: sha256File(cubin) };
      } catch {
        output = null;
      }
    }
    const storable = deterministic && deps !== null && (status !== 'ok' || output !== null);
    if (!storable && status !== 'ok') {
      this.cache.discard(tmp);
      return result;
    }
    const uncached = { ...result, outputPath: status === 'ok' ? cubin : null };
    // A usable build that cannot be vouched for (no dependency list, e.g. a template compile), or
    // one the cache cannot take, stays in its scratch folder for its caller (deleted at exit).
    if (!storable || !inCache) return uncached;
    return this.store(req, hash, tmp, cubin, result, { output, deps: deps! }, uncached);
  }

  /**
   * Writes the variant's source into the scratch folder: the file itself, or (a header variant)
   * an overlay of the translation unit whose header is the variant, its `#line` name marked so
   * that nvcc's dependency list tells it from the original. With it: the translation unit as a
   * dependency of the entry. A refusal when the variant cannot be built this way.
   */
  private writeVariantSource(
    req: BuildRequest,
    tmp: string,
    overlayDir: string,
    templated: boolean,
  ): { src: string; unitDep: DepRecord | null; lineName: string | undefined } | { refusal: string } {
    const tu = this.o.translationUnit;
    if (!tu) {
      const src = path.join(tmp, 'variant.cu');
      fs.writeFileSync(src, req.source);
      return { src, unitDep: null, lineName: undefined };
    }
    if (templated)
      return { refusal: 'a compile template cannot build a header variant: the overlay that replaces the header could not be checked' };
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(tu);
    } catch (e) {
      return { refusal: `cannot read the translation unit ${tu}: ${(e as Error).message}` };
    }
    /** The translation unit as copied: a dependency of the entry (the copy itself lives in the entry). */
    const unitDep = { path: tu, sha256: crypto.createHash('sha256').update(bytes).digest('hex') };
    const lineName = markedLineName(req.originalPath);
    const directive = (name: string) => `#line 1 "${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"\n`; // as rewrite.ts writes it
    const plain = directive(req.originalPath);
    const source = Buffer.from(req.source);
    const head = Buffer.from(plain);
    const marked = source.subarray(0, head.length).equals(head)
      ? Buffer.concat([Buffer.from(directive(lineName)), source.subarray(head.length)])
      : source;
    const src = writeOverlay(this.layout(req.originalPath), overlayDir, bytes, marked);
    return { src, unitDep, lineName };
  }

  /** The compile command: the project's compile template filled in, or nvcc with the variant's flags (and the generated defines header). */
  private compileCommand(
    req: BuildRequest,
    at: { src: string; cubin: string; depFile: string; overlayDir: string; tmp: string; templated: boolean },
  ): string[] {
    const { src, cubin, depFile, overlayDir, tmp, templated } = at;
    let header: string | undefined;
    if (!templated && this.o.flags.headerDefines?.length) {
      header = path.join(tmp, 'defines.h');
      fs.writeFileSync(
        header,
        `// -D values with quotes or spaces: written here so that no shell reads them\n${this.o.flags.headerDefines.join('\n')}\n`,
      );
    }
    return templated
      ? this.o.compileTemplate!.map(t =>
          t.replace(
            /\{(source|output|arch|dir)\}/g,
            (_m, k: string) => ({ source: src, output: cubin, arch: this.o.arch, dir: path.dirname(req.originalPath) })[k as 'source'],
          ),
        )
      : [this.o.nvcc.path, ...this.nvccArgs(req.originalPath, header, overlayDir), '-MD', '-MF', depFile, '-o', cubin, src];
  }

  /**
   * Never report the original header's SASS as the variant's: nvcc must have read the overlay
   * copy and not the original. Why it did not (or cannot be told), else null.
   */
  private overlayNotRead(
    req: BuildRequest,
    tu: string,
    depFile: string,
    lineName: string | undefined,
    cwd: string,
    overlayDir: string,
  ): string | null {
    let deps: string[] = [];
    try {
      deps = parseDepWords(fs.readFileSync(depFile, 'utf8'))
        .filter(w => w !== lineName)
        .map(w => path.resolve(cwd, w));
    } catch {
      // no list: nothing vouches for the overlay
    }
    return deps.length
      ? verifyOverlay(deps, this.layout(req.originalPath), overlayDir, tu, req.originalPath)
      : `nvcc wrote no dependency list for ${tu}: cannot check that the variant replaced ${req.originalPath}`;
  }

  /**
   * Commits a build to the cache (leasing its output first) and hands out the stored build; when
   * the cache cannot take it, `uncached` (the scratch copy). Another process that stored the same
   * entry first wins: theirs is read.
   */
  private store(
    req: BuildRequest,
    hash: string,
    tmp: string,
    cubin: string,
    result: BuildResult,
    meta: CacheMeta,
    uncached: BuildResult,
  ): BuildResult {
    const { status } = result;
    const { output, deps } = meta;
    const entryId = crypto
      .createHash('sha256')
      .update(JSON.stringify([this.cache.key.id, status, deps]))
      .digest('hex')
      .slice(0, 16);
    const entryDir = path.join(this.cache.keyDir(hash), entryId);
    // Leased before the commit: a clear by another process right after it cannot take the output.
    const leased = status === 'ok' ? this.cache.lease(cubin, entryDir) : null;
    if (status === 'ok' && leased === null) return uncached;
    const handed = { ...result, outputPath: leased };
    let entry: string | null;
    try {
      const body = { ...result, outputPath: null, cache: { output, deps } };
      this.cache.writeFile(path.join(tmp, 'result.json'), seal(this.cache.key, CACHE_FORMAT, 'build entry', [hash, entryId], body));
      entry = this.cache.commit(tmp, hash, entryId);
    } catch (e) {
      this.cache.warn(`cannot write to the build cache ${this.o.cacheDir} (${describeFsError(e)}): builds are not cached`);
      try {
        fs.rmSync(path.join(tmp, 'result.json'), { force: true });
      } catch {
        // the scratch folder is deleted at exit anyway
      }
      if (leased) this.cache.unlease(leased);
      return uncached;
    }
    if (entry === null) {
      // Another process stored the same entry first: theirs is read. One at our id that does not
      // hold (our id carries our key's id: a forgery or damage) is removed and ours put in its place.
      const theirs = this.useEntry(req, hash, entryDir);
      if (theirs) {
        this.cache.discard(tmp);
        if (leased) this.cache.unlease(leased);
        return theirs;
      }
      this.cache.remove(entryDir);
      try {
        entry = this.cache.commit(tmp, hash, entryId);
      } catch {
        entry = null;
      }
      if (entry === null) {
        this.cache.discard(tmp);
        return handed; // ours, kept by its lease, uncached
      }
    }
    this.inUse.add(entry);
    return handed;
  }

  /** A build refused before nvcc ran: reported as a flags failure, never cached. */
  private refused(req: BuildRequest, hash: string, message: string): BuildResult {
    return {
      key: req.key,
      status: 'failed',
      hash,
      outputPath: null,
      ptxasLog: '',
      messages: [{ file: null, line: null, column: null, severity: 'error', code: null, message, kind: 'flags' }],
      failureKind: 'flags',
      compileMs: 0,
      cached: false,
    };
  }

  /** Builds all requests; one failing variant never stops the others. Results keep request order. */
  async buildAll(
    reqs: BuildRequest[],
    opts: {
      signal?: AbortSignal;
      onProgress?: (p: BuildProgress) => void;
      /** Called as soon as one build is done, so follow-up work overlaps the remaining compiles. */
      onResult?: (index: number, result: BuildResult) => void;
    } = {},
  ): Promise<BuildResult[]> {
    const results: BuildResult[] = new Array(reqs.length);
    this.depHashes = new Map(); // headers may have changed since the last call
    let done = 0;
    let next = 0;
    const report = (i: number) => {
      opts.onResult?.(i, results[i]);
      opts.onProgress?.({ done: ++done, total: reqs.length, key: reqs[i].key, cached: results[i].cached });
    };
    // Cache hits first: they cost nothing and let progress jump ahead.
    const pending: number[] = [];
    const hashes = reqs.map(r => this.hashOf(r));
    reqs.forEach((r, i) => {
      const hit = this.readCached(r, hashes[i]);
      if (hit) {
        results[i] = hit;
        report(i);
      } else pending.push(i);
    });
    const worker = async () => {
      while (next < pending.length) {
        const i = pending[next++];
        if (opts.signal?.aborted) {
          results[i] = {
            key: reqs[i].key,
            status: 'cancelled',
            hash: hashes[i],
            outputPath: null,
            ptxasLog: '',
            messages: [],
            failureKind: 'cancelled',
            compileMs: 0,
            cached: false,
          };
        } else {
          try {
            results[i] = await this.compileOnce(reqs[i], hashes[i], opts.signal);
          } catch (e) {
            results[i] = {
              key: reqs[i].key,
              status: 'failed',
              hash: hashes[i],
              outputPath: null,
              ptxasLog: '',
              messages: [{ file: null, line: null, column: null, severity: 'error', code: null, message: String(e), kind: 'internal' }],
              failureKind: 'internal',
              compileMs: 0,
              cached: false,
            };
          }
        }
        report(i);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, pending.length) }, worker));
    // After the writes: past the size cap, the least recently used entries go (not these builds).
    if (pending.length) this.cache.evictIfNeeded(this.inUse);
    return results;
  }
}

/** Messages name a header variant by its marked `#line` name, other files by their overlay path: give them the originals'. */
function nameOriginals(
  messages: CompilerMessage[],
  at: { header: string; lineName: string | undefined; cwd: string; fromOverlay: ((p: string) => string) | undefined },
): void {
  for (const m of messages) {
    if (at.lineName && m.file === at.lineName) m.file = at.header;
    else if (at.fromOverlay && m.file) {
      const read = path.resolve(at.cwd, m.file);
      const original = at.fromOverlay(read);
      if (original !== read) m.file = original;
    }
  }
}

/**
 * The dependency a file read by a header variant's build stands for: the original of a file read
 * through the overlay; null for the unit's copy and the variant (the unit is added on its own,
 * the variant is in the key) and for the scratch folder's other files.
 */
function dependencyOf(at: { overlayDir: string; tmp: string; unit: string; header: string; fromOverlay: (p: string) => string }) {
  const inOverlay = (p: string) => p.startsWith(at.overlayDir + path.sep);
  return (p: string): string | null => {
    const o = inOverlay(p) ? at.fromOverlay(p) : p;
    if (o === path.resolve(at.unit) || o === path.resolve(at.header)) return null;
    return !inOverlay(p) && p.startsWith(at.tmp + path.sep) ? null : o;
  };
}

/** Where the persistent cache lives when no editor storage is given (CLI). */
export function defaultCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'unroll-lens', 'builds');
}
