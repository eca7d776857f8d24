// The server's per-document facts store (what nvcc and the GPU said about one text) and its one
// uri → path rule.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'path';
import { pathToFileURL } from 'url';
import type { BenchReport } from '../../src/engine/profile/bench';
import type { FileSassReport, LoopReport } from '../../src/engine/variants/inspect';
import { DocumentFactsStore } from '../../src/server/facts';
import { uriToPath } from '../../src/server/uri';

// Only identity matters here: the store never looks inside a report.
const fileReport = { status: 'ok' } as FileSassReport;
const loopReport = { line: 4 } as LoopReport;
const benchReport = { kernel: 'k' } as BenchReport;

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
