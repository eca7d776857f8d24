// Compiles variants with nvcc, in parallel up to the core count, through a persistent
// content-addressed cache: the key covers the variant source, the flags, the nvcc version and
// the arch, so an unchanged re-run compiles nothing.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { ToolInfo } from '../toolchain/discover';
import type { CompileFlags } from '../toolchain/flags';
import { classifyFailure, CompilerMessage, CompileFailureKind, parseNvccOutput } from '../toolchain/nvccErrors';
import { ProcessRunner, runProcess } from '../toolchain/process';

export interface BuildRequest {
  /** Readable id, e.g. "L40=4" (see variantKey). */
  key: string;
  /** Full variant source (with its #line directive). */
  source: string;
  /** The user's file: its directory goes on the include path. */
  originalPath: string;
}

export type BuildStatus = 'ok' | 'failed' | 'timeout' | 'cancelled';

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
  failureKind: CompileFailureKind | 'timeout' | 'cancelled' | null;
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
}

export interface BuildProgress {
  done: number;
  total: number;
  key: string;
  cached: boolean;
}

const CACHE_FORMAT = 1;

export class VariantBuilder {
  readonly concurrency: number;
  private readonly run: ProcessRunner;
  compiles = 0;

  constructor(private readonly o: BuilderOptions) {
    this.concurrency = Math.max(1, o.concurrency ?? os.cpus().length);
    this.run = o.runner ?? runProcess;
  }

  /** nvcc arguments for a variant, besides the input and output paths. */
  nvccArgs(originalPath: string): string[] {
    return [
      // A program keeps host optimisation on; -lineinfo lets ncu map stalls to source lines.
      ...(this.o.mode === 'program' ? ['-O3'] : ['-cubin']),
      `-arch=${this.o.arch}`,
      '-lineinfo',
      '-Xptxas',
      '-v',
      ...this.o.flags.args,
      // The shadow copy lives elsewhere: keep the original directory on the include path.
      '-I',
      path.dirname(originalPath),
    ];
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
        this.o.arch,
      ]),
    );
    return h.digest('hex');
  }

  private dirOf(hash: string): string {
    return path.join(this.o.cacheDir, hash.slice(0, 2), hash);
  }

  private readCached(req: BuildRequest, hash: string): BuildResult | null {
    const dir = this.dirOf(hash);
    try {
      const meta = JSON.parse(fs.readFileSync(path.join(dir, 'result.json'), 'utf8')) as BuildResult;
      if (meta.status === 'ok' && !fs.existsSync(path.join(dir, this.outputName))) return null;
      return { ...meta, key: req.key, outputPath: meta.status === 'ok' ? path.join(dir, this.outputName) : null, cached: true };
    } catch {
      return null;
    }
  }

  /** Compiles in flight, by hash: the same source asked for twice at once (a sweep's template axis) compiles once. */
  private readonly inflight = new Map<string, Promise<BuildResult>>();

  private async compileOnce(req: BuildRequest, hash: string, signal?: AbortSignal): Promise<BuildResult> {
    let p = this.inflight.get(hash);
    if (!p) {
      p = this.compile(req, hash, signal).finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, p);
    }
    return { ...(await p), key: req.key };
  }

  private async compile(req: BuildRequest, hash: string, signal?: AbortSignal): Promise<BuildResult> {
    const dir = this.dirOf(hash);
    const tmp = `${dir}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
    fs.mkdirSync(tmp, { recursive: true });
    const src = path.join(tmp, 'variant.cu');
    const cubin = path.join(tmp, this.outputName);
    fs.writeFileSync(src, req.source);
    this.compiles++;
    const command =
      this.o.mode === 'program' && this.o.compileTemplate?.length
        ? this.o.compileTemplate.map(t =>
            t.replace(
              /\{(source|output|arch|dir)\}/g,
              (_m, k: string) => ({ source: src, output: cubin, arch: this.o.arch, dir: path.dirname(req.originalPath) })[k as 'source'],
            ),
          )
        : [this.o.nvcc.path, ...this.nvccArgs(req.originalPath), '-o', cubin, src];
    const r = await this.run(command[0], command.slice(1), {
      cwd: this.o.flags.directory || path.dirname(req.originalPath),
      timeoutMs: this.o.timeoutMs ?? 300_000,
      signal,
    });
    const messages = parseNvccOutput(r.stderr);
    let status: BuildStatus = 'ok';
    let failureKind: BuildResult['failureKind'] = null;
    if (r.cancelled) {
      status = 'cancelled';
      failureKind = 'cancelled';
    } else if (r.timedOut) {
      status = 'timeout';
      failureKind = 'timeout';
    } else if (r.spawnError) {
      status = 'failed';
      failureKind = 'internal';
      messages.push({
        file: null,
        line: null,
        column: null,
        severity: 'error',
        code: null,
        message: `cannot run ${command[0]}: ${r.spawnError}`,
        kind: 'internal',
      });
    } else if (r.exitCode !== 0 || !fs.existsSync(cubin)) {
      status = 'failed';
      failureKind = classifyFailure(messages, r.stderr) ?? 'internal';
      if (!messages.some(m => m.severity === 'error')) {
        messages.push({
          file: null,
          line: null,
          column: null,
          severity: 'error',
          code: null,
          message: r.stderr.trim() || `nvcc exited with ${r.exitCode ?? r.signal}`,
          kind: failureKind,
        });
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
    if (status === 'cancelled' || status === 'timeout') {
      fs.rmSync(tmp, { recursive: true, force: true });
      return result;
    }
    // Successful and failed compiles are both cached: a broken variant stays broken until its
    // source or flags change.
    fs.writeFileSync(path.join(tmp, 'result.json'), JSON.stringify({ ...result, outputPath: null }));
    try {
      fs.mkdirSync(path.dirname(dir), { recursive: true });
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true }); // another process won the race; its copy is equivalent
    }
    return { ...result, outputPath: status === 'ok' ? path.join(dir, this.outputName) : null };
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
    return results;
  }
}

/** Where the persistent cache lives when no editor storage is given (CLI). */
export function defaultCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'unroll-lens', 'builds');
}
