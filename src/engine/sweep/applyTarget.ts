// Which document Apply may edit. A saved result is a JSON file in the workspace, so a cloned repo
// can plant one whose `file` names anything the user can write (~/.bashrc, another project's
// source). Apply therefore edits only the document it was invoked for when that document is the
// file the result was measured from, lies inside a workspace folder (real paths: a link out of the
// workspace does not count as inside), and still has the text the result was measured on (its
// sha256), possibly with other factors on the swept loops (an earlier Apply). The editor then asks
// the user before it edits.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { FactorValue } from '../../schema/types';
import type { FileAnalysis } from '../parse/model';
import { unrollPragmaEdit } from '../variants/applyEdit';
import type { UnrollFactor } from '../variants/factors';

export interface ApplyTarget {
  /** The file the result names (SweepResult.file). */
  resultFile: string;
  /** SweepResult.sourceSha256, when the result has one. */
  sourceSha256?: string;
  /** The swept loops and their factors as written (SweepResult.loops). */
  loops: { line: number; written: FactorValue }[];
  /** File-system path of the document Apply was invoked for. */
  documentPath: string;
  /** Its current text (the editor's, unsaved changes included). */
  documentText: string;
  analysis: FileAnalysis;
  workspaceFolders: string[];
}

export function sha256(text: string): string {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

function real(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

function inside(folder: string, file: string): boolean {
  const rel = path.relative(folder, file);
  return rel !== '' && !rel.startsWith('..' + path.sep) && rel !== '..' && !path.isAbsolute(rel);
}

/** The text with each swept loop back at its written factor: what a result measured before an earlier Apply saw. */
export function textAsWritten(text: string, analysis: FileAnalysis, loops: ApplyTarget['loops']): string | null {
  const all = analysis.kernels.flatMap(k => k.loops);
  const edits = [];
  for (const l of loops) {
    const loop = all.find(x => x.line === l.line);
    if (!loop) return null;
    const f = l.written;
    const e = unrollPragmaEdit(text, loop, (f === 'default' || f === 'full' ? f : Number(f)) as UnrollFactor);
    if (e) edits.push(e);
  }
  edits.sort((a, b) => b.startOffset - a.startOffset);
  let out = text;
  for (const e of edits) out = out.slice(0, e.startOffset) + e.newText + out.slice(e.endOffset);
  return out;
}

/** Why Apply must not edit this document for this result, or null when it may. */
export function applyTargetProblem(t: ApplyTarget): string | null {
  const doc = path.resolve(t.documentPath);
  const docReal = real(doc) ?? doc;
  const named = typeof t.resultFile === 'string' && t.resultFile && !t.resultFile.includes('\0') ? path.resolve(t.resultFile) : null;
  if (!named || (named !== doc && (real(named) ?? named) !== docReal))
    return `this result was measured on ${JSON.stringify(t.resultFile)}, not on ${doc}: Apply edits only the document a result was measured from`;
  const folders = t.workspaceFolders.map(f => real(f) ?? path.resolve(f));
  if (folders.length && !folders.some(f => inside(f, docReal)))
    return `${docReal} is outside the workspace folders: Apply edits only files inside the workspace`;
  if (t.sourceSha256 !== undefined) {
    if (typeof t.sourceSha256 !== 'string' || !/^[0-9a-f]{64}$/.test(t.sourceSha256)) return 'the result carries a malformed source hash';
    if (sha256(t.documentText) === t.sourceSha256) return null;
    const restored = textAsWritten(t.documentText, t.analysis, t.loops);
    if (restored !== null && sha256(restored) === t.sourceSha256) return null;
    return `${path.basename(doc)} changed since the result was measured: run the sweep again before applying its factors`;
  }
  // Without a workspace folder only a result of this exact text (a hash) may edit a document.
  if (!folders.length)
    return `no workspace folder is open, and the result has no source hash: open the folder holding ${path.basename(doc)}`;
  return null;
}
