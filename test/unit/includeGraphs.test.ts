// Random include graphs (includeGraphCases.ts) always finish within the work budget: run in a
// worker with a deadline, so an expansion that grows without bound fails here instead of hanging.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Worker } from 'worker_threads';
import type { GraphCasesData, GraphCasesReply } from './includeGraphCases';

const RUNS = 400;
/** Generous for RUNS cases on 2 busy cores; one unbounded case takes forever. */
const DEADLINE_MS = 60_000;

test(`${RUNS} random include graphs (cycles, diamonds, self-includes, a FIFO) finish within the work budget`, async t => {
  if (process.platform === 'win32') return t.skip('no FIFOs');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-graphs-'));
  execFileSync('mkfifo', [path.join(root, 'fifo.h')]);
  // fast-check stops itself (and says so, with the case it shrank to) a little before the deadline.
  const data: GraphCasesData = { runs: RUNS, budgetMs: DEADLINE_MS - 10_000, root };
  const worker = new Worker(path.join(__dirname, 'includeGraphCases.js'), { workerData: data });
  let timer: NodeJS.Timeout | undefined;
  try {
    const reply = await Promise.race([
      new Promise<GraphCasesReply>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      }),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not finished after ${DEADLINE_MS} ms`)), DEADLINE_MS))),
    ]);
    assert.ok(reply.ok, reply.ok ? '' : reply.error);
    // The generator makes guardless self-includes often: the budget must have been what stopped some.
    assert.ok(reply.truncated > 0, 'no case reached the budget: the generator no longer tests it');
    t.diagnostic(`${reply.truncated} of ${RUNS} cut short; slowest ${reply.slowestMs.toFixed(0)} ms`);
  } finally {
    clearTimeout(timer);
    await worker.terminate();
    fs.rmSync(root, { recursive: true, force: true });
  }
});
