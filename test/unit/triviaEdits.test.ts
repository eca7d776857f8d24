// Keystrokes that change no item (white space at a statement's end, comment text, a pragma's
// factor): the incremental analysis reuses what it knew (bodyEdit.ts) and still equals a fresh
// parse. Reuse is checked by object identity (a function analysed again gets a new Kernel) and
// by counting whole-file analyses (whose cached functions would keep their identity).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import fc from 'fast-check';
import { CudaDocuments } from '../../src/engine/parse/documents';
import { SAMPLES } from './helpers';
import { opened, step, wholeFileAnalyses } from './editSteps';

const SRC = `__global__ void k(float* a, int n) {
  // a note about k
  const int base = 4 * threadIdx.x;
#pragma unroll 1
  for (int i = 0; i < n; ++i) a[base + i] = 0;
  a[0] = 1;
}

int g; // 8 bytes
static_assert(sizeof(int) == 4, "int");

__global__ void m(float* a) {
  // full unroll
#pragma unroll
  for (int j = 0; j < 8; ++j) a[j] = 2;
}
`;

describe('trivia keystrokes: answers as a fresh parse, from what was known', () => {
  test('a space typed at the end of a statement in a device function, and deleted: no function analysed again', async () => {
    const docs = await opened(SRC);
    const at = SRC.indexOf('a[0] = 1;') + 'a[0] = 1;'.length;
    for (const change of [
      { start: at, length: 0, text: ' ' },
      { start: at, length: 0, text: '\t ' },
      { start: at, length: 3, text: '' },
    ]) {
      const { before, after, wholeFile } = step(docs, change);
      assert.ok(!wholeFile && after.every((k, i) => k === before[i]), `${JSON.stringify(change)}: a function was analysed again`);
    }
    assert.equal(docs.text('u'), SRC);
  });

  test('a trailing space deleted after a file-level declaration reuses every function, like typing it', async () => {
    const docs = await opened(SRC);
    const at = SRC.indexOf('"int");') + '"int");'.length;
    for (const change of [
      { start: at, length: 0, text: ' ' },
      { start: at, length: 1, text: '' },
    ]) {
      const { before, after, wholeFile } = step(docs, change);
      assert.ok(!wholeFile && after.every((k, i) => k === before[i]), JSON.stringify(change));
    }
  });

  test('a character changed at the end of a `//` comment reuses every function', async () => {
    const docs = await opened(SRC);
    for (const at of [SRC.indexOf('8 bytes') + 6, SRC.indexOf('about k') + 6]) {
      for (const change of [
        { start: at, length: 1, text: 'S' },
        { start: at + 1, length: 0, text: '!' },
        { start: at, length: 2, text: SRC[at] },
      ]) {
        const { before, after, wholeFile } = step(docs, change);
        assert.ok(!wholeFile && after.every((k, i) => k === before[i]), JSON.stringify(change));
      }
    }
    assert.equal(docs.text('u'), SRC);
  });

  test('a backslash typed at the end of a `//` comment splices the next line: analysed again', async () => {
    const docs = await opened(SRC);
    const at = SRC.indexOf('full unroll') + 'full unroll'.length;
    const { after } = step(docs, { start: at, length: 0, text: '\\' });
    assert.equal(after[1].loops[0].pragma, null, 'the pragma line is part of the comment now');
    const back = step(docs, { start: at, length: 1, text: '' });
    assert.equal(back.after[1].loops[0].pragma?.kind, 'full');
    assert.equal(docs.text('u'), SRC);
  });

  test('a `#pragma unroll` factor changed in a body: that function only', async () => {
    const docs = await opened(SRC);
    const at = SRC.indexOf('#pragma unroll 1') + '#pragma unroll '.length;
    const { before, after, wholeFile } = step(docs, { start: at, length: 1, text: '4' });
    assert.equal(after[0].loops[0].pragma?.factor, 4);
    assert.equal(wholeFile, false, 'the whole file was analysed again');
    assert.equal(after[1], before[1], 'the other function was analysed again');
    step(docs, { start: at, length: 1, text: '1' });
  });

  test('a comment edited inside a function, then a line break typed at its end: the function keeps its extent', async () => {
    // The comment path once left the enclosing function's end where it was; the next keystroke
    // near its closing brace was then taken for one between items, and its span kept its old end line.
    const docs = await opened(SRC);
    step(docs, { start: SRC.indexOf('about k'), length: 0, text: 'a much longer comment, ' });
    const text = docs.text('u')!;
    const at = text.indexOf('a[0] = 1;') + 'a[0] = 1;'.length;
    const { after } = step(docs, { start: at, length: 0, text: '\n\n' });
    assert.equal(after[0].span.endLine, 9);
    assert.equal(after[1].span.line, 14);
  });
});

/** Offsets of line ends (before `\n`, and before `\r\n`) and of the characters just before them. */
function lineEnds(text: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    const end = text[i - 1] === '\r' ? i - 1 : i;
    out.push(end, Math.max(0, end - 1));
  }
  return out;
}

// Mostly white space (the fast path's keystrokes), and what must not take it: a backslash, a
// comment or string opened, a directive, a non-grammar space, a token.
const PIECES = [' ', ' ', '\t', '  ', ' \t', '\f', '\\', '7', 'x', '//', '/*', '*/', '"', '#', '\u00a0', ';'];

describe('trivia keystrokes: property', () => {
  test('keystrokes at line ends of the samples (white space, comment text, a backslash, …) equal a fresh parse', async () => {
    const names = ['coarsening.cu', 'reduce_unroll.cu', 'library_style.cu', 'manual_forms.cu', 'matvec.cu'];
    const texts = names.map(n => fs.readFileSync(path.join(SAMPLES, n), 'utf8'));
    const docs = await CudaDocuments.create();
    let compared = 0;
    let reused = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: names.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: PIECES.length }), fc.integer({ min: 0, max: 3 })), {
          minLength: 1,
          maxLength: 8,
        }),
        async (which, keys) => {
          docs.open('u', texts[which]);
          docs.analysis('u');
          for (const [pick, piece, mode] of keys) {
            // mode: the piece once or twice (bit 0), undone or kept for the next keystrokes (bit 1)
            const text = docs.text('u')!;
            const ends = lineEnds(text);
            const at = ends[pick % ends.length];
            // PIECES.length stands for a deletion of the character before the line's end
            const change =
              piece === PIECES.length
                ? { start: Math.max(0, at - 1), length: at > 0 ? 1 : 0, text: '' }
                : { start: at, length: 0, text: PIECES[piece].repeat(1 + (mode & 1)) };
            const undo = { start: change.start, length: change.text.length, text: text.slice(change.start, change.start + change.length) };
            for (const c of mode & 2 ? [change] : [change, undo]) {
              const before = docs.analysis('u')!.kernels;
              docs.update('u', [c]);
              const { value: got, count } = wholeFileAnalyses(() => docs.analysis('u')!);
              if (!count && got.kernels.length && got.kernels.every((k, i) => k === before[i])) reused++;
              const want = docs.analyzeOnce(docs.text('u')!, 'u');
              if (got.hasSyntaxErrors || want.hasSyntaxErrors) continue; // best effort in broken code
              assert.deepEqual(got, want, `${names[which]}: ${JSON.stringify(c)}`);
              compared++;
            }
            if (!(mode & 2)) assert.equal(docs.text('u'), text);
          }
          docs.close('u');
        },
      ),
      { numRuns: 120, seed: 20261203 },
    );
    assert.ok(compared > 300, `only ${compared} error-free states compared`);
    assert.ok(reused > 150, `only ${reused} keystrokes answered from what was known`);
  });
});

describe('what a body edit keeps from outside the bodies', () => {
  const GLOBALS = `__device__ int g_n;

__global__ void k(float* a) {
  for (int i = 0; i < g_n; ++i) a[i] = 0;
  for (int j = 0; j < h_n; ++j) a[j] = 1;
}
`;

  test('namespace-scope variables stay known through body edits, and one declared later is known to the next body edit', async () => {
    const docs = await opened(GLOBALS);
    const trips = () => docs.analysis('u')!.kernels[0].loops.map(l => l.tripCount);
    assert.deepEqual(trips(), ['runtime', 'dependent']);
    const body = GLOBALS.indexOf('a[i] = 0');
    // a body edit: g_n is still a run-time variable
    assert.equal(step(docs, { start: body, length: 0, text: 'a[1] = 2; ' }).wholeFile, false);
    assert.deepEqual(trips(), ['runtime', 'dependent']);
    // h_n declared at file level (the whole file again), then a body edit: both are known
    assert.equal(step(docs, { start: 0, length: 0, text: '__device__ int h_n;\n' }).wholeFile, true);
    const text = docs.text('u')!;
    assert.equal(step(docs, { start: text.indexOf('a[1] = 2; '), length: 10, text: '' }).wholeFile, false);
    assert.deepEqual(trips(), ['runtime', 'runtime']);
  });
});

describe('what a re-analysed function keeps from outside it', () => {
  // ggml's style: a kernel template launched only from a host template, so no instantiation is read.
  const UNREAD = `template <class T>
static __global__ void k(const T* x, T* dst, int n) {
  for (int i = 0; i < n; ++i) dst[i] = x[i];
}

template <class T>
static void launch(const T* x, T* dst, int n) {
  k<<<1, 1>>>(x, dst, n);
}
`;

  test('a template whose instantiations are unread stays so through an edit of its body (found on ggml clamp.cu)', async () => {
    const docs = await opened(UNREAD);
    assert.equal(docs.analysis('u')!.kernels[0].usedUnread, true);
    const at = UNREAD.indexOf('i = 0') + 4;
    assert.equal(step(docs, { start: at, length: 1, text: '1' }).wholeFile, false);
    assert.equal(docs.analysis('u')!.kernels[0].usedUnread, true);
  });
});
