// The files a command writes besides stdout (`sweep --csv/--t4/--report/--save`): checked before
// anything is built or run (a refused or unwritable path costs nothing), written at the end through
// a temporary file and a rename, never over a file Unroll Lens did not write (exportOwnership.ts
// says how we know) unless --force, never over the input, a link, a folder or a FIFO.
import * as fs from 'fs';
import * as path from 'path';
import { ExportFormat, RESULTS_DIR, SafeWriteError, safeTargetPath, safeWriteFile, writtenByUs } from '../engine';
import { BadInputError, UsageError } from './io';

export interface OutputFile {
  /** The option that named it, without dashes. */
  option: ExportFormat;
  file: string;
}

const WHAT: Record<ExportFormat, string> = { csv: 'a CSV', t4: 'a T4 JSON file', report: 'an HTML report' };

/** The user's folder for the file: missing folders are created at write time, as before. */
function folderOf(file: string): string {
  return path.dirname(path.resolve(file));
}

function refusal(o: OutputFile, e: unknown, force: boolean): BadInputError {
  if (!(e instanceof SafeWriteError)) return new BadInputError(`--${o.option} ${o.file}: ${(e as Error).message}`);
  const hint =
    e.refusal === 'exists'
      ? force
        ? ''
        : ` (it is not ${WHAT[o.option]} Unroll Lens wrote; --force replaces it, or name another file)`
      : e.refusal === 'symlink'
        ? ' (a link is never written through: name the file it points to, or another file)'
        : '';
  return new BadInputError(`--${o.option}: ${e.message}${hint}`);
}

function existingPolicy(o: OutputFile, force: boolean): 'replace' | ((file: string) => boolean) {
  return force ? 'replace' : file => writtenByUs(file, o.option);
}

/**
 * Throws (before any work) when an output cannot or may not be written: the same file named twice
 * or as the input, a link or non-file in its place, a foreign file without --force, or a folder
 * that cannot be written. `saveDir` is --save's folder: its `.unroll-lens/results` must not lead
 * out of it through a link.
 */
export function checkOutputs(outputs: OutputFile[], o: { force: boolean; inputs: string[]; saveDir?: string }): void {
  const seen = new Map<string, string>();
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const inputs = new Set(o.inputs.map(real));
  for (const out of outputs) {
    if (!out.file.trim()) throw new UsageError(`--${out.option} needs a file name`);
    const abs = real(out.file);
    const other = seen.get(abs);
    if (other) throw new UsageError(`--${other} and --${out.option} name the same file ${out.file}`);
    seen.set(abs, out.option);
    if (inputs.has(abs)) throw new BadInputError(`--${out.option} ${out.file} is the input file: refusing to overwrite it`);
    try {
      safeTargetPath(nearestExisting(folderOf(out.file)), path.resolve(out.file), {
        existing: existingPolicy(out, o.force),
        createFolders: false,
      });
    } catch (e) {
      throw refusal(out, e, o.force);
    }
  }
  if (o.saveDir !== undefined) {
    try {
      safeTargetPath(nearestExisting(path.resolve(o.saveDir)), path.join(path.resolve(o.saveDir), RESULTS_DIR, 'x.json'), {
        existing: 'replace',
        createFolders: false,
      });
    } catch (e) {
      throw new BadInputError(`--save ${o.saveDir}: ${(e as Error).message}`);
    }
  }
}

/** The folder itself when it exists, else its nearest existing parent (the check's root). */
function nearestExisting(dir: string): string {
  let d = dir;
  while (!fs.existsSync(d) && path.dirname(d) !== d) d = path.dirname(d);
  return d;
}

/** Writes one output as checkOutputs allowed it (looked at again: the disk may have changed meanwhile). */
export function writeOutputFile(out: OutputFile, text: string, force: boolean): string {
  try {
    const dir = folderOf(out.file);
    fs.mkdirSync(dir, { recursive: true });
    return safeWriteFile(dir, path.basename(path.resolve(out.file)), text, { existing: existingPolicy(out, force) });
  } catch (e) {
    throw refusal(out, e, force);
  }
}
