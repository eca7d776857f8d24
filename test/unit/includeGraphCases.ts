// Random include graphs for includeGraphs.test.ts, run in a worker so that a regression that
// hangs is stopped by the test's deadline: headers with and without guards or #pragma once,
// including each other, themselves, a FIFO and missing names, in cycles and diamonds. Every case
// must finish within the work budget; a graph whose every header is guarded (or once) is never
// cut short; a cut-short one says so.
import { parentPort, workerData } from 'worker_threads';
import * as fs from 'fs';
import * as path from 'path';
import { Preprocessor } from '../../src/engine/parse/macros/environment';
import fc from 'fast-check';
import { propertyRuns } from './propertyRuns';

export interface GraphCasesData {
  runs: number;
  /** For fast-check's own time limit: it reports (with the shrunk case) before the test's deadline. */
  budgetMs: number;
  /** A folder with a FIFO named fifo.h, and room for the cases' folders. */
  root: string;
}

export type GraphCasesReply = { ok: true; truncated: number; slowestMs: number } | { ok: false; error: string };

/** 1 to 5 headers, each with a guard kind and up to 4 includes; a main file with 1 to 3 includes. */
function graphs(fifo: string) {
  return fc.integer({ min: 1, max: 5 }).chain(n => {
    const names = Array.from({ length: n }, (_, k) => `h${k}.h`);
    const target = fc.constantFrom(...names, ...names, fifo, 'missing.h');
    const header = fc.record({
      guard: fc.integer({ min: 0, max: 2 }), // 0: none, 1: #ifndef guard, 2: #pragma once
      includes: fc.array(target, { maxLength: 4 }),
    });
    return fc.record({
      headers: fc.array(header, { minLength: n, maxLength: n }),
      main: fc.array(target, { minLength: 1, maxLength: 3 }),
    });
  });
}

function runCases({ runs, budgetMs, root }: GraphCasesData): GraphCasesReply {
  let truncated = 0;
  let slowestMs = 0;
  let i = 0;
  const fifo = path.join(root, 'fifo.h');
  fc.assert(
    fc.property(graphs(fifo), ({ headers, main: mainIncludes }) => {
      const dir = path.join(root, `case${i++}`);
      fs.mkdirSync(dir);
      let allGuarded = true;
      for (const [k, { guard, includes }] of headers.entries()) {
        if (guard === 0) allGuarded = false;
        const body = [`#define M${k} ${k}`, ...includes.map(t => `#include "${t}"`)];
        const text =
          guard === 1 ? [`#ifndef H${k}_GUARD`, `#define H${k}_GUARD`, ...body, '#endif'] : guard === 2 ? ['#pragma once', ...body] : body;
        fs.writeFileSync(path.join(dir, `h${k}.h`), text.join('\n') + '\n');
      }
      const main = mainIncludes.map(t => `#include "${t}"`).join('\n') + '\n#define MAIN_END 1\n';
      const t0 = performance.now();
      const env = new Preprocessor().run(path.join(dir, 'main.cu'), main, {
        includeDirs: [],
        systemIncludeDirs: [],
        defines: [],
        arch: 'sm_90',
      });
      slowestMs = Math.max(slowestMs, performance.now() - t0);
      if (!env.macros.has('MAIN_END')) throw new Error("the main file's own #define after its includes was lost");
      if (env.truncated) {
        truncated++;
        if (allGuarded) throw new Error(`a graph of guarded headers was cut short: ${env.truncated}\n${main}`);
        if (!/includes stopped after entering|evaluating directives stopped/.test(env.truncated)) throw new Error(env.truncated);
      }
      fs.rmSync(dir, { recursive: true });
    }),
    propertyRuns(runs, 0x1ac1, budgetMs),
  );
  return { ok: true, truncated, slowestMs };
}

if (parentPort && workerData) {
  let reply: GraphCasesReply;
  try {
    reply = runCases(workerData as GraphCasesData);
  } catch (e) {
    reply = { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
  parentPort.postMessage(reply);
}
