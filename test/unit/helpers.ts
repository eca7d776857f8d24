import * as path from 'path';
import { CudaDocuments } from '../../src/engine/parse/documents';
import type { FileAnalysis, Kernel, Loop } from '../../src/engine/parse/model';

let docs: Promise<CudaDocuments> | undefined;

export function documents(): Promise<CudaDocuments> {
  docs ??= CudaDocuments.create();
  return docs;
}

export async function analyze(source: string, file = 'snippet.cu'): Promise<FileAnalysis> {
  return (await documents()).analyzeOnce(source, file);
}

export function kernel(a: FileAnalysis, name: string): Kernel {
  const k = a.kernels.find(x => x.name === name);
  if (!k) throw new Error(`no kernel ${name}; have ${a.kernels.map(x => x.name).join(', ')}`);
  return k;
}

export function loopAt(k: Kernel, line: number): Loop {
  const l = k.loops.find(x => x.line === line);
  if (!l) throw new Error(`no loop at line ${line} in ${k.name}; loops at ${k.loops.map(x => x.line).join(', ')}`);
  return l;
}

/** 1-based line of the first line containing `needle` (optionally the n-th occurrence). */
export function lineOf(source: string, needle: string, nth = 1): number {
  const lines = source.split('\n');
  let seen = 0;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].includes(needle) && ++seen === nth) return i + 1;
  }
  throw new Error(`'${needle}' not found`);
}

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
export const SAMPLES = path.join(REPO_ROOT, 'cuda-samples');
