// One thread of a parallel `scan` (scanPool.ts): its own parser and macro reader, analysing the
// chunks of files the main thread hands it. Headers are read once per thread and reused by every
// file of the chunks it gets (the pool hands out neighbouring files together).
import { parentPort, workerData } from 'worker_threads';
import { CudaDocuments } from './documents';
import { projectScanMacros, scanFiles } from './scan';
import { scanCacheAt } from './scanCache';
import { DependencyPacker } from '../base/dependentCache';
import type { ScanChunk, ScanWorkerData, ScanWorkerReply } from './scanPool';

const data = workerData as ScanWorkerData;
const port = parentPort!;
const macros = data.headers ? projectScanMacros(data.cwd, null, data.scanRoots) : undefined;
const docs = CudaDocuments.create();
// Each thread stores the analyses it makes (the entries' keys come with the chunk).
const cache = data.cacheDir ? scanCacheAt(data.cacheDir) : null;
const packer = new DependencyPacker();

port.on('message', (chunk: ScanChunk) => {
  void (async () => {
    let reply: ScanWorkerReply;
    try {
      const texts = new Map(chunk.files.map((f, i) => [f, chunk.texts[i]] as const).filter(([, t]) => t !== null) as [string, string][]);
      const store = cache && { cache, packer, entries: chunk.entries };
      reply = { id: chunk.id, results: await scanFiles(chunk.files, await docs, macros, texts, store) };
    } catch (e) {
      reply = { id: chunk.id, error: e instanceof Error ? e.message : String(e), inputError: e?.constructor?.name === 'ScanInputError' };
    }
    port.postMessage(reply);
  })();
});
