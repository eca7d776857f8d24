// The server's per-document facts store (what nvcc and the GPU said about one text) and its one
// uri → path rule.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'path';
import { pathToFileURL } from 'url';
import type { SweepResult } from '../../src/schema/types';
import type { FileSassReport, LoopReport } from '../../src/engine/variants/reports';
import * as fs from 'fs';
import { parseSourcePage } from '../../src/engine/profile/ncuCsv';
import { sassStallsOf } from '../../src/engine/profile/sassStalls';
import { benchSassStalls, DocumentFactsStore, recordBench } from '../../src/server/facts';
import { uriToPath } from '../../src/server/uri';

// Only identity matters here: the store never looks inside a report.
const fileReport = { status: 'ok' } as FileSassReport;
const loopReport = { line: 4 } as LoopReport;
const benchReport = { kernel: 'k' } as SweepResult;

describe('DocumentFactsStore', () => {
  test('facts of the same text accumulate; every record notifies', () => {
    const changed: string[] = [];
    const store = new DocumentFactsStore(uri => changed.push(uri));
    store.record('file:///a.cu', 'v1', f => f.loops.set(4, loopReport));
    store.record('file:///a.cu', 'v1', f => f.benches.set(4, benchReport));
    store.record('file:///a.cu', 'v1', f => {
      f.file = fileReport;
    });
    const f = store.get('file:///a.cu', 'v1');
    assert.equal(f?.file, fileReport);
    assert.equal(f?.loops.get(4), loopReport);
    assert.equal(f?.benches.get(4), benchReport);
    assert.deepEqual(changed, ['file:///a.cu', 'file:///a.cu', 'file:///a.cu']);
  });

  test('facts of an older text are never returned, and are dropped when the new text gets facts', () => {
    const store = new DocumentFactsStore(() => undefined);
    store.record('file:///a.cu', 'v1', f => {
      f.file = fileReport;
      f.loops.set(4, loopReport);
    });
    assert.equal(store.get('file:///a.cu', 'v2'), null);
    store.record('file:///a.cu', 'v2', f => f.benches.set(4, benchReport));
    const f = store.get('file:///a.cu', 'v2');
    assert.equal(f?.file, null);
    assert.equal(f?.loops.size, 0);
    assert.equal(f?.benches.get(4), benchReport);
    assert.equal(store.get('file:///a.cu', 'v1'), null);
  });

  test('documents are independent; delete forgets one', () => {
    const store = new DocumentFactsStore(() => undefined);
    store.record('file:///a.cu', 'same', f => {
      f.file = fileReport;
    });
    store.record('file:///b.cu', 'same', f => f.loops.set(4, loopReport));
    assert.equal(store.get('file:///b.cu', 'same')?.file, null);
    store.delete('file:///a.cu');
    assert.equal(store.get('file:///a.cu', 'same'), null);
    assert.equal(store.get('file:///b.cu', 'same')?.loops.get(4), loopReport);
  });
});

describe('SASS-level stalls in the facts', () => {
  const NCU = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'ncu');
  const stallsOf = (rel: string, kernel: string) => sassStallsOf(parseSourcePage(fs.readFileSync(path.join(NCU, rel), 'utf8')), kernel)!;
  const acc = stallsOf('listing/mini-accumulate.source-sass.csv', '_Z10accumulatePfii');
  const linear = stallsOf('linear-unroll-inner-full.source-cuda-sass.csv', '_Z6linearILi1ELi0EEvPKfS1_S1_Pf');
  // a bench's rows name the kernel they timed (mangled)
  const bench = (kernel: string, sassStalls: typeof acc | null) => ({ kernel: 'k', variants: [{ kernel }], sassStalls }) as SweepResult;

  test("the loop's own bench, else the newest bench (of the kernel, when named); they survive in the store", () => {
    const store = new DocumentFactsStore(() => undefined);
    store.record('file:///a.cu', 'v1', f => recordBench(f, 10, bench('_Z10accumulatePfii', acc)));
    store.record('file:///a.cu', 'v1', f => recordBench(f, 20, bench('_Z6linearILi1ELi0EEvPKfS1_S1_Pf', linear)));
    store.record('file:///a.cu', 'v1', f => recordBench(f, 30, bench('_Z10accumulatePfii', null)));
    const f = store.get('file:///a.cu', 'v1');
    assert.equal(f?.benches.get(10)?.sassStalls, acc);
    assert.equal(benchSassStalls(f, 10), acc);
    assert.equal(benchSassStalls(f, 20), linear);
    // line 30's bench collected none: the newest that did
    assert.equal(benchSassStalls(f, 30), linear);
    assert.equal(benchSassStalls(f, 30, '_Z10accumulatePfii'), acc);
    assert.equal(benchSassStalls(f), linear);
    assert.equal(benchSassStalls(f, 10, '_Z5otherv'), null);
    // benchmarking line 10 again makes it the newest
    const acc2 = { ...acc, factor: 'as-written' };
    store.record('file:///a.cu', 'v1', f => recordBench(f, 10, bench('_Z10accumulatePfii', acc2)));
    assert.deepEqual([...store.get('file:///a.cu', 'v1')!.benches.keys()], [20, 30, 10]);
    assert.equal(benchSassStalls(store.get('file:///a.cu', 'v1'), 30), acc2);
    assert.equal(benchSassStalls(null, 10), null);
  });
});

describe('uriToPath', () => {
  test('file: URIs name a file on disk', () => {
    const p = path.resolve('/tmp/kernels/mat mul.cu');
    assert.equal(uriToPath(pathToFileURL(p).href), p);
  });

  test('untitled buffers, other schemes and other hosts have no local path', () => {
    assert.equal(uriToPath('untitled:Untitled-1'), null);
    assert.equal(uriToPath('vscode-remote://ssh-remote+box/home/me/k.cu'), null);
    assert.equal(uriToPath('file://fileserver/share/k.cu'), process.platform === 'win32' ? '\\\\fileserver\\share\\k.cu' : null);
  });
});
