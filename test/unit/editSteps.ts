// Steps of an edited document for the incremental-analysis tests: each change is checked against a
// fresh analysis, and whether the whole file was analysed again is counted.
import assert from 'node:assert/strict';
import { CudaDocuments } from '../../src/engine/parse/documents';
import type { TextChange } from '../../src/engine/parse/documents';
import * as analyzeModule from '../../src/engine/parse/analyze';

/** A document store with `text` open as 'u'. */
export async function opened(text: string): Promise<CudaDocuments> {
  const docs = await CudaDocuments.create();
  docs.open('u', text);
  return docs;
}

/** How many whole-file analyses `run` made (CommonJS exports: documents.ts calls through them). */
export function wholeFileAnalyses<T>(run: () => T): { value: T; count: number } {
  const mod = analyzeModule as unknown as Record<string, (...a: unknown[]) => unknown>;
  const real = mod.analyzeTreeWithSnapshot;
  let count = 0;
  mod.analyzeTreeWithSnapshot = (...a: unknown[]) => {
    count++;
    return real(...a);
  };
  try {
    const value = run();
    return { value, count };
  } finally {
    mod.analyzeTreeWithSnapshot = real;
  }
}

/**
 * Applies one change and checks the analysis against a fresh one; returns the kernels before and
 * after, and whether the whole file was analysed again.
 */
export function step(docs: CudaDocuments, change: TextChange) {
  const before = docs.analysis('u')!.kernels;
  docs.update('u', [change]);
  const { value: after, count } = wholeFileAnalyses(() => docs.analysis('u')!);
  assert.deepEqual(after, docs.analyzeOnce(docs.text('u')!, 'u'), JSON.stringify(change));
  return { before, after: after.kernels, wholeFile: count > 0 };
}
