// Keystrokes in a function's head (its parameters, its return type): the function, and what reads
// it through calls, is analysed again, not the file, while it keeps its name and qualifier
// (bodyEdit.ts). Every step equals a fresh analysis.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { opened, step } from './editSteps';

const SRC = `constexpr int N = 4;

__device__ void fill(float* a, int n) {
  for (int i = 0; i < n; ++i) a[i] = N;
}

__global__ void k(float* a, int m) {
  fill(a, m);
#pragma unroll 4
  for (int j = 0; j < m; ++j) a[j] += 1;
}

__global__ void other(float* b) {
  for (int q = 0; q < 16; ++q) b[q] = 2;
}

static int parse(int argc, char** argv) {
  return argc > 1 ? 1 : 0;
}
`;

describe('head edits: that function, not the file', () => {
  test("a device function's parameter renamed: its loop's bound is no longer the caller's run-time value; the others stand", async () => {
    const docs = await opened(SRC);
    const at = SRC.indexOf('int n)') + 'int n'.length;
    const fill = () => docs.analysis('u')!.kernels.find(k => k.name === 'fill')!;
    assert.equal(fill().loops[0].tripCount, 'runtime');
    const { before, after, wholeFile } = step(docs, { start: at, length: 0, text: 'n' });
    assert.equal(wholeFile, false);
    assert.notEqual(fill().loops[0].tripCount, 'runtime', '`n` is no parameter now');
    assert.equal(after[2], before[2], '`other` was analysed again');
    const back = step(docs, { start: at, length: 1, text: '' });
    assert.equal(back.wholeFile, false);
    assert.equal(fill().loops[0].tripCount, 'runtime');
  });

  test("a kernel's parameter type and a new parameter, typed in its head", async () => {
    const docs = await opened(SRC);
    const at = SRC.indexOf('int m)');
    for (const change of [
      { start: at, length: 3, text: 'long' },
      { start: at + 'long m'.length, length: 0, text: ', int extra' },
      { start: at + 'long m'.length, length: ', int extra'.length, text: '' },
      { start: at, length: 4, text: 'int' },
    ])
      assert.equal(step(docs, change).wholeFile, false, JSON.stringify(change));
    assert.equal(docs.text('u'), SRC);
  });

  test('a new line in a head moves the functions after it', async () => {
    const docs = await opened(SRC);
    const at = SRC.indexOf('int m)');
    const { after, wholeFile } = step(docs, { start: at, length: 0, text: '\n    ' });
    assert.equal(wholeFile, false);
    assert.equal(after.find(k => k.name === 'other')!.line, 14);
  });

  test('a qualifier changed, a function renamed: the whole file again', async () => {
    const docs = await opened(SRC);
    // `__device__` → `__global__`: `fill` becomes a kernel, its parameters run-time values
    const q = SRC.indexOf('__device__') + 2;
    assert.equal(step(docs, { start: q, length: 'device'.length, text: 'global' }).wholeFile, true);
    assert.equal(docs.analysis('u')!.kernels[0].qualifier, 'global');
    // a host function renamed in its head
    const name = docs.text('u')!.indexOf('parse(');
    assert.equal(step(docs, { start: name, length: 0, text: 'x' }).wholeFile, true);
    // a device function renamed: the call to `fill` no longer reaches it
    const fill = docs.text('u')!.indexOf('fill(float');
    assert.equal(step(docs, { start: fill + 4, length: 0, text: '2' }).wholeFile, true);
  });

  test("a host function's parameter renamed: nothing analysed again", async () => {
    const docs = await opened(SRC);
    const at = SRC.indexOf('int argc') + 'int argc'.length;
    const { before, after, wholeFile } = step(docs, { start: at, length: 0, text: 's' });
    assert.equal(wholeFile, false);
    assert.ok(after.every((k, i) => k === before[i]));
  });
});
