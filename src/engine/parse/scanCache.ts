// What a scan's persistent cache (base/dependentCache.ts) is keyed on and checked against. A
// file's analysis is a function of: its text (the entry's input), its path as given (the result
// names it) and where it resolves, its preprocessing options (flags from compile_commands.json,
// the toolkit's include folders, the arch), the bytes of every header its #includes read and the
// answer of every place the include search looked (a header created earlier on the path changes
// which one is read), and our own code with the parser's grammar. The key holds what is known
// before the analysis runs; the rest is each entry's dependency list, checked on every use.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import * as v8 from 'v8';
import type { FileAnalysis } from './model';
import type { MacroEnvironment, PreprocessOptions } from './macros/environment';
import { DependentCache, type FileDependencies } from '../base/dependentCache';
import { parserWasmFiles } from './parser';

/** 1: the first layout of a cached analysis (v8-serialised FileAnalysis). */
const FORMAT = 1;

const sha256 = (data: string | Buffer) => crypto.createHash('sha256').update(data).digest('hex');

let digest: string | null = null;

/**
 * Our code as it runs: every module file this process loaded (the engine and its packages, or
 * the one bundle) and the parser's runtime and grammar. Another build is another key; a module
 * loaded later than the first call only makes a later process miss, never answer wrongly.
 */
function codeDigest(): string {
  if (digest) return digest;
  const h = crypto.createHash('sha256');
  for (const f of [...Object.keys(require.cache), ...parserWasmFiles()].sort()) {
    h.update(`${f}\0`);
    try {
      h.update(fs.readFileSync(f));
    } catch {
      h.update('\0unreadable');
    }
    h.update('\0');
  }
  return (digest = h.digest('hex'));
}

/** The entry of `file` (as given) scanned with `options` (null: the built-in macro table alone). */
export function scanCacheKey(file: string, options: PreprocessOptions | null): string {
  return sha256(JSON.stringify([FORMAT, codeDigest(), file, path.resolve(file), options]));
}

/** The entry's input: the file's text as analysed. */
export function scanInputHash(text: string): string {
  return sha256(text);
}

/**
 * What the analysis read besides the file itself, from its macro environment (none without
 * headers); null when the answer is not complete (the include work budget cut it short).
 */
export function scanDependencies(env: MacroEnvironment | undefined): FileDependencies | null {
  if (!env) return { read: [], probed: [] };
  if (env.truncated) return null;
  return { read: env.headers.map((h, i) => [h, env.headerHashes[i]]), probed: [...env.probes()] };
}

export function serializeAnalysis(a: FileAnalysis): Buffer {
  return v8.serialize(a);
}

/** null when the bytes are not a serialised analysis (the entry is then a miss). */
export function deserializeAnalysis(b: Buffer): FileAnalysis | null {
  try {
    const a = v8.deserialize(b) as FileAnalysis;
    return a && typeof a === 'object' && typeof a.path === 'string' && Array.isArray(a.kernels) ? a : null;
  } catch {
    return null;
  }
}

/** The scan cache beside a build cache (`~/.cache/unroll-lens/builds` → `…/scans`), as the measurements are. */
export function scanCacheBeside(buildCacheDir: string): DependentCache {
  return scanCacheAt(path.join(path.dirname(buildCacheDir), 'scans'));
}

/** The scan cache in `dir` (each worker thread opens its own). */
export function scanCacheAt(dir: string): DependentCache {
  return new DependentCache(dir, 'scan', 'scan analysis');
}
