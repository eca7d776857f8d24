// What nvcc and the GPU said about each open document. Facts belong to the exact text they were
// measured on: after an edit they are dropped all at once, so hover and CodeLens never show
// numbers of an older text. Every service records through `record`, the one place that decides
// whether to extend or replace a document's facts.
import * as crypto from 'crypto';
import { type FileSassReport, type LoopReport, type SassFacts, type SassStalls } from '../engine';
import type { SweepResult } from '../protocol';

export interface DocumentFacts extends SassFacts {
  /** The file as written (and rolled), from the build on open/save. */
  file: FileSassReport | null;
  /** Loop line → its unroll variants. */
  loops: Map<number, LoopReport>;
  /** Loop line → extra architecture (unrollLens.extraArchs) → its unroll variants. */
  extraArchLoops: Map<number, Map<string, LoopReport>>;
  /** Loop line → GPU benchmark of its variants, the newest last (record with recordBench). */
  benches: Map<number, SweepResult>;
  /** Finished sweeps and benchmarks of this text, newest first (the loop quick fix offers their best). */
  results: SweepResult[];
  /** Hash of the text these facts were measured on. */
  textHash: string;
}

/** Stores a bench of the loop at `line`, as the newest of the document's benches. */
export function recordBench(facts: Pick<DocumentFacts, 'benches'>, line: number, report: SweepResult): void {
  facts.benches.delete(line);
  facts.benches.set(line, report);
}

/**
 * The SASS-level stall samples for a listing of the loop at `line`: its own bench's, else the
 * newest other bench's of the document (the stalls are sampled on the file as written, the whole
 * kernel); with `kernel` (mangled), only benches of that kernel. Null when no bench has them.
 * Attach them with attachSassStalls, which checks that the machine code is the listing's.
 */
export function benchSassStalls(facts: Pick<DocumentFacts, 'benches'> | null, line?: number, kernel?: string): SassStalls | null {
  if (!facts) return null;
  const own = line === undefined ? undefined : facts.benches.get(line);
  const candidates = [...(own ? [own] : []), ...[...facts.benches.values()].reverse()];
  // a bench's rows all time one kernel (the first row's, mangled): the one its stalls were sampled in
  for (const b of candidates) if (b.sassStalls && (kernel === undefined || b.variants[0]?.kernel === kernel)) return b.sassStalls;
  return null;
}

/** The last texts hashed: hover and CodeLens ask for the same text's facts on every request. */
const recentHashes: { text: string; hash: string }[] = [];

function hashText(text: string): string {
  const known = recentHashes.find(h => h.text === text);
  if (known) return known.hash;
  const hash = crypto.createHash('sha1').update(text).digest('hex');
  recentHashes.unshift({ text, hash });
  recentHashes.length = Math.min(recentHashes.length, 4);
  return hash;
}

export class DocumentFactsStore {
  private readonly byUri = new Map<string, DocumentFacts>();

  /** `onChange` runs after every record: the server republishes diagnostics and CodeLens. */
  constructor(private readonly onChange: (uri: string) => void) {}

  /** Whether any facts are kept for the document (of whichever text). */
  has(uri: string): boolean {
    return this.byUri.has(uri);
  }

  /** The facts measured on exactly this text, or null. */
  get(uri: string, text: string): DocumentFacts | null {
    const facts = this.byUri.get(uri);
    return facts && facts.textHash === hashText(text) ? facts : null;
  }

  /** Adds facts measured on `text`, dropping those of any other text first. */
  record(uri: string, text: string, add: (facts: DocumentFacts) => void): void {
    const textHash = hashText(text);
    let facts = this.byUri.get(uri);
    if (!facts || facts.textHash !== textHash) {
      facts = { file: null, loops: new Map(), extraArchLoops: new Map(), benches: new Map(), results: [], textHash };
      this.byUri.set(uri, facts);
    }
    add(facts);
    this.onChange(uri);
  }

  delete(uri: string): void {
    this.byUri.delete(uri);
  }
}
