// One worker of a parallel scan (scan.ts scanFilesParallel): analyses its share of the files with
// its own parser and macro reader and posts each result as it is done.
import { parentPort, workerData } from 'worker_threads';
import { CudaDocuments } from './documents';
import { MacroTables, optionsFromProject } from './macros';
import { scanFiles } from './scan';

export interface ScanWorkerData {
  files: { index: number; path: string }[];
  /** Read macros from headers (compile flags from `root` up); false: the built-in table only. */
  headers: boolean;
  root: string;
  defaultArch: string;
}

export type ScanWorkerMessage = { index: number; analysis: import('./model').FileAnalysis } | { error: string };

async function run(): Promise<void> {
  const data = workerData as ScanWorkerData;
  const docs = await CudaDocuments.create();
  const macros = data.headers
    ? { tables: new MacroTables(), optionsFor: optionsFromProject(data.root, null, data.defaultArch) }
    : undefined;
  for (const f of data.files) {
    const [analysis] = await scanFiles([f.path], docs, macros);
    parentPort!.postMessage({ index: f.index, analysis } satisfies ScanWorkerMessage);
  }
}

if (parentPort)
  run().catch(e => parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) } satisfies ScanWorkerMessage));
