// Saved results: `.unroll-lens/results/<kernel>-<YYYYMMDD-HHMMSS>.json` under a workspace
// folder. Written atomically (a temporary file in the same folder, then a rename), so a reader
// never sees half a file, and listed newest first, skipping files that are not results.
import * as fs from 'fs';
import * as path from 'path';
import type { SweepResult } from '../../schema/types';
import { BoundedReadError, READ_CAPS, readBoundedText } from '../base/boundedRead';
import { SafeWriteError, safeMkdir, safeWriteFile } from '../base/safeWrite';
import { sweepResultProblem } from '../../schema/result';

export const RESULTS_DIR = path.join('.unroll-lens', 'results');

class ResultFileError extends Error {}

export interface SavedResult {
  /** Absolute path of the JSON file. */
  path: string;
  /** File name inside the results folder. */
  file: string;
  kernel: string;
  /** The source file that was swept. */
  source: string;
  createdAt: string;
  static: boolean;
  origin: SweepResult['origin'];
  strategy: string;
  /** Label of the best variant, or null. */
  best: string | null;
  bestId: string | null;
  variants: number;
  complete: boolean;
}

export interface SkippedFile {
  file: string;
  reason: string;
}

export function resultsDir(workspaceFolder: string): string {
  return path.join(workspaceFolder, RESULTS_DIR);
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

/** `YYYYMMDD-HHMMSS` in local time: what the user sees next to their own clock. */
export function stamp(d: Date): string {
  return `${d.getFullYear()}${pad(d.getMonth() + 1)}${pad(d.getDate())}-${pad(d.getHours())}${pad(d.getMinutes())}${pad(d.getSeconds())}`;
}

/** A kernel name as a file-name part (templates and operators carry <>, :, spaces). */
function safeName(kernel: string): string {
  return (
    kernel
      .replace(/[^A-Za-z0-9_.-]+/g, '_')
      .replace(/^[._]+/, '')
      .slice(0, 80) || 'kernel'
  );
}

/**
 * Saves a result; returns the file's path. A second result for the same kernel in the same
 * second gets a `-2`, `-3`, … suffix: nothing is overwritten. Written with safeWriteFile: a
 * `.unroll-lens` or `results` that is a link out of the workspace folder is refused (a
 * SafeWriteError), never written through.
 */
export function saveResult(workspaceFolder: string, result: SweepResult): string {
  const created = new Date(result.createdAt);
  const base = `${safeName(result.kernel)}-${stamp(Number.isNaN(created.getTime()) ? new Date() : created)}`;
  const text = JSON.stringify(result, null, 1) + '\n';
  // The folder first (a link out of the workspace is refused here, once), then a free name in it.
  const dir = safeMkdir(workspaceFolder, RESULTS_DIR);
  for (let n = 1; ; n++) {
    try {
      // `keep`: the name is taken by link(), so two writers of the same second never share it.
      return safeWriteFile(dir, `${base}${n > 1 ? `-${n}` : ''}.json`, text, { existing: 'keep' });
    } catch (e) {
      // A name in use (a result, or anything planted under it) is skipped, never replaced.
      if (!(e instanceof SafeWriteError && (e.refusal === 'exists' || e.refusal === 'symlink' || e.refusal === 'not-a-file')) || n >= 1000)
        throw e;
    }
  }
}

/**
 * Throws ResultFileError saying what is wrong when `value` is not a SweepResult this version
 * reads: the first field missing, of the wrong type or out of range (src/schema/result.ts), with
 * its value. Returns a checked copy without fields the format does not have.
 */
function validateResult(value: unknown): SweepResult {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ResultFileError('not a JSON object');
  const r = value as Partial<SweepResult>;
  if (r.schema !== 1)
    throw new ResultFileError(
      r.schema === undefined
        ? 'no schema field: not an Unroll Lens result'
        : `schema ${JSON.stringify(r.schema)} is not supported (this version reads 1)`,
    );
  const checked = sweepResultProblem(value);
  if ('problem' in checked) throw new ResultFileError(`${checked.problem}; the file is damaged or was edited, so it is not shown`);
  return checked.result;
}

export function loadResult(file: string): SweepResult {
  let text: string;
  try {
    // Named by the client ("open result") or found in the results folder: a device or a 2 GB
    // file would be read until memory runs out.
    text = readBoundedText(file, { maxBytes: READ_CAPS.result, what: 'result file' });
  } catch (e) {
    throw new ResultFileError(e instanceof BoundedReadError ? e.message : `cannot read ${file}: ${(e as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ResultFileError(`${path.basename(file)} is not valid JSON: ${(e as Error).message}`);
  }
  try {
    return validateResult(value);
  } catch (e) {
    throw new ResultFileError(`${path.basename(file)}: ${(e as Error).message}`);
  }
}

/** Saved results, newest first; anything unreadable or foreign is skipped with the reason. */
export function listResults(workspaceFolder: string): { results: SavedResult[]; skipped: SkippedFile[] } {
  const dir = resultsDir(workspaceFolder);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return { results: [], skipped: [] };
  }
  const results: SavedResult[] = [];
  const skipped: SkippedFile[] = [];
  for (const name of names) {
    if (name.startsWith('.') || !name.endsWith('.json')) continue; // temporary files and other tools' files
    const full = path.join(dir, name);
    try {
      if (!fs.statSync(full).isFile()) continue;
      const r = loadResult(full);
      const best = r.best ? r.variants.find(v => v.id === r.best) : undefined;
      results.push({
        path: full,
        file: name,
        kernel: r.kernel,
        source: r.file,
        createdAt: r.createdAt,
        static: r.static,
        origin: r.origin,
        strategy: r.strategy,
        best: best?.label ?? null,
        bestId: r.best ?? null,
        variants: r.variants.length,
        complete: r.complete !== false,
      });
    } catch (e) {
      skipped.push({ file: name, reason: e instanceof ResultFileError ? e.message : String(e) });
    }
  }
  const time = (s: SavedResult) => {
    const t = Date.parse(s.createdAt);
    return Number.isNaN(t) ? 0 : t;
  };
  results.sort((a, b) => time(b) - time(a) || (a.file < b.file ? 1 : -1));
  return { results, skipped };
}
