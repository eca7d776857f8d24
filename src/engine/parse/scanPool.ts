// `scan` of many files on every core: tree-sitter parsing and the analysis are CPU-bound and
// independent per file, so worker threads (scanWorker.ts) take chunks of neighbouring files
// (which share headers) as they become free. Few files, or one core: in this thread.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Worker } from 'worker_threads';
import type { FileAnalysis } from './model';
import { CudaDocuments } from './documents';
import { projectScanMacros, scanFiles, ScanInputError, type ScanMacros } from './scan';
import { deserializeAnalysis, scanCacheKey, scanInputHash } from './scanCache';
import { compileWasmWithBaselineOnly } from './wasmTiers';
import { DependencyPacker, type DependentCache } from '../base/dependentCache';
import { READ_CAPS, readBoundedText } from '../base/boundedRead';

export interface ScanWorkerData {
  cwd: string;
  scanRoots: string[];
  /** Read headers (false: --builtin-macros). */
  headers: boolean;
  /** The process ends with this scan (the CLI): a scan on one thread keeps the parser on baseline code (wasmTiers.ts). */
  exitsAfter?: boolean;
  /** The scan cache's folder, where each thread stores its analyses; set by scanInParallel when it has one. */
  cacheDir?: string;
}

export interface ScanChunk {
  id: number;
  files: string[];
  /** Each file's text when already read, else null. */
  texts: (string | null)[];
  /** Each file's scan cache entry (ScanStore.entries). */
  entries: ({ key: string; input: string } | null)[];
}

export type ScanWorkerReply = { id: number; results: FileAnalysis[] } | { id: number; error: string; inputError: boolean };

/**
 * Below this much source a scan in a process that ends with it is over before TurboFan's code for
 * the parser pays for its compile (wasmTiers.ts): on this 2-core machine, 100 files (1.4 MB) on
 * two threads took 10 % less time on baseline code, 400 files (5.5 MB) the same.
 */
const BASELINE_SCAN_BYTES = 4 << 20;

/** Whether `files` hold less than `limit` bytes (sizes of the texts already read, else on disk). */
function smallerThan(files: string[], texts: Map<string, string>, limit: number): boolean {
  let bytes = 0;
  for (const f of files) {
    const known = texts.get(f);
    try {
      bytes += known !== undefined ? known.length : fs.statSync(f).size;
    } catch {
      // unreadable: the scan says so
    }
    if (bytes >= limit) return false;
  }
  return true;
}

/** Files per chunk: neighbours share headers, small enough to balance the threads' load. */
const CHUNK = 8;
/**
 * The next chunk's size: a share of the files left, CHUNK at most, 2 at least. The last chunks
 * are small, so that no thread waits long at the end for one still scanning (a worker holds two
 * chunks in flight): with 8-file chunks to the end, 100 files on two threads idled the main
 * thread 50-120 ms while the worker finished.
 */
function chunkSize(left: number, threads: number): number {
  return Math.min(left, Math.max(2, Math.min(CHUNK, Math.ceil(left / (3 * threads)))));
}

/** Below this many files a thread's start-up (the parser, the toolkit's headers) costs more than it saves. */
const MIN_FILES_PER_WORKER = 48;

/** Threads for `files` files: UNROLL_LENS_SCAN_THREADS (one per chunk at most), else one per core (at most 8), fewer for small scans. */
function scanThreads(files: number): number {
  const env = Number(process.env.UNROLL_LENS_SCAN_THREADS);
  if (Number.isInteger(env) && env > 0) return Math.max(1, Math.min(env, Math.ceil(files / CHUNK)));
  const cores = Math.min(8, os.availableParallelism?.() ?? os.cpus().length);
  return Math.max(1, Math.min(cores, Math.floor(files / MIN_FILES_PER_WORKER)));
}

/**
 * Analyses `files` in order (results in the same order) on scanThreads() threads, this one
 * included; `texts` holds those already read and is emptied as files are handed out; `onFile` is
 * told of each finished file. With `cache`, a file whose entry still holds (same text, options,
 * headers and code: scanCache.ts) is answered from it, and every complete new analysis is stored.
 */
export async function scanInParallel(
  files: string[],
  texts: Map<string, string>,
  options: ScanWorkerData,
  onFile: (file: string) => void,
  cache?: DependentCache | null,
): Promise<FileAnalysis[]> {
  const macros = options.headers ? projectScanMacros(options.cwd, null, options.scanRoots) : undefined;
  const answers: (FileAnalysis | undefined)[] = [];
  const keys: ({ key: string; input: string } | null)[] = [];
  if (cache) {
    files.forEach((f, i) => {
      const text = textOf(f, texts);
      if (text === null) return void (keys[i] = null);
      keys[i] = { key: scanCacheKey(f, macros ? macros.optionsFor(f) : null), input: scanInputHash(text) };
      const stored = cache.get(keys[i].key, keys[i].input);
      const a = stored && deserializeAnalysis(stored);
      if (a) {
        answers[i] = a;
        texts.delete(f);
        onFile(f);
      }
    });
  }
  const todo = files.flatMap((f, i) => (answers[i] ? [] : [i]));
  if (!todo.length) return answers as FileAnalysis[];
  const entries = new Map(todo.map(i => [files[i], keys[i] ?? null]));
  const scanned = await scanPool(
    todo.map(i => files[i]),
    texts,
    { ...options, cacheDir: cache?.dir },
    macros,
    entries,
    cache ?? null,
    onFile,
  );
  todo.forEach((i, n) => (answers[i] = scanned[n]));
  cache?.prune();
  return answers as FileAnalysis[];
}

/** The text a scan analyses: already read, or read now (null when it cannot be: the scan then says why). */
function textOf(f: string, texts: Map<string, string>): string | null {
  const known = texts.get(f);
  if (known !== undefined) return known;
  try {
    const text = readBoundedText(f, { maxBytes: READ_CAPS.source, what: 'source file' });
    texts.set(f, text);
    return text;
  } catch {
    return null;
  }
}

async function scanPool(
  files: string[],
  texts: Map<string, string>,
  options: ScanWorkerData,
  macros: ScanMacros | undefined,
  entries: Map<string, { key: string; input: string } | null>,
  cache: DependentCache | null,
  onFile: (file: string) => void,
): Promise<FileAnalysis[]> {
  const threads = scanThreads(files.length);
  if (options.exitsAfter && (threads === 1 || smallerThan(files, texts, BASELINE_SCAN_BYTES))) compileWasmWithBaselineOnly();
  const chunks: ScanChunk[] = [];
  for (let i = 0, size = CHUNK; i < files.length; i += size) {
    size = chunkSize(files.length - i, threads);
    const part = files.slice(i, i + size);
    chunks.push({ id: chunks.length, files: part, texts: [], entries: part.map(f => entries.get(f) ?? null) });
  }
  const results: FileAnalysis[][] = [];
  let next = 0;
  const take = (): ScanChunk | null => {
    const c = chunks[next++];
    if (!c) return null;
    c.texts = c.files.map(f => texts.get(f) ?? null);
    for (const f of c.files) texts.delete(f);
    return c;
  };
  // This thread is one of the `threads`: it takes chunks between the workers' replies.
  const docs = await CudaDocuments.create();
  const packer = new DependencyPacker();
  const workers: Worker[] = [];
  let failure: Error | null = null;
  let outstanding = 0;
  let wake: (() => void) | null = null;
  const give = (w: Worker) => {
    const c = take();
    if (!c) return;
    outstanding++;
    w.postMessage(c);
  };
  try {
    for (let i = 1; i < threads; i++) {
      const w = new Worker(path.join(__dirname, 'scanWorker.js'), { workerData: options });
      workers.push(w);
      w.on('message', (r: ScanWorkerReply) => {
        outstanding--;
        if ('error' in r) failure ??= r.inputError ? new ScanInputError(r.error) : new Error(r.error);
        else {
          results[r.id] = r.results;
          for (const a of r.results) onFile(a.path);
          give(w);
        }
        wake?.();
      });
      w.on('error', e => {
        failure ??= e;
        wake?.();
      });
      // Two chunks in flight, so that a worker never waits for this thread to hand it the next.
      give(w);
      give(w);
    }
    for (let c = take(); c && !failure; c = take()) {
      const own = new Map(c.files.map((f, i) => [f, c.texts[i]] as const).filter(([, t]) => t !== null) as [string, string][]);
      results[c.id] = await scanFiles(c.files, docs, macros, own, cache && { cache, packer, entries: c.entries });
      for (const f of c.files) onFile(f);
      // Let the workers' replies in (they get their next chunk from there).
      await new Promise(r => setImmediate(r));
    }
    while (outstanding > 0 && !failure) await new Promise<void>(r => (wake = r));
    if (failure) throw failure;
  } finally {
    await Promise.all(workers.map(w => w.terminate()));
  }
  return results.flat();
}
