import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { CudaDocuments } from '../../src/engine/parse/documents';
import { SAMPLES } from './helpers';

const SRC = `__global__ void k(float* a, int n) {
#pragma unroll 4
  for (int i = 0; i < n; ++i) a[i] = 0;
}
`;

describe('incremental documents', () => {
  test('edits update the tree and the analysis like a fresh parse would', async () => {
    const docs = await CudaDocuments.create();
    docs.open('u', SRC);
    // change "unroll 4" into "unroll 8"
    const at = SRC.indexOf('4');
    docs.update('u', [{ start: at, length: 1, text: '8' }]);
    assert.equal(docs.analysis('u')!.kernels[0].loops[0].pragma?.factor, 8);
    // insert a new loop after the first, then change its bound to a constant
    const end = docs.text('u')!.lastIndexOf('}');
    docs.update('u', [{ start: end, length: 0, text: '  for (int j = 0; j < n; ++j) {}\n' }]);
    const t = docs.text('u')!;
    const nAt = t.lastIndexOf('j < n') + 4;
    docs.update('u', [{ start: nAt, length: 1, text: '32' }]);
    const fresh = docs.analyzeOnce(docs.text('u')!, 'u');
    assert.deepEqual(docs.analysis('u'), fresh);
    assert.deepEqual(
      fresh.kernels[0].loops.map(l => l.tripCount),
      ['runtime', 32],
    );
  });

  test('several changes in one event apply in order', async () => {
    const docs = await CudaDocuments.create();
    docs.open('u', 'abc');
    docs.update('u', [
      { start: 0, length: 1, text: 'X' },
      { start: 3, length: 0, text: 'Y' },
      { start: 1, length: 1, text: '' },
    ]);
    assert.equal(docs.text('u'), 'XcY');
  });

  test('non-ASCII text before an edit keeps positions right (UTF-16 offsets)', async () => {
    const docs = await CudaDocuments.create();
    const src = '// é € 😀 comment\n' + SRC;
    docs.open('u', src);
    const at = src.indexOf('unroll 4') + 7;
    docs.update('u', [{ start: at, length: 1, text: '2' }]);
    const a = docs.analysis('u')!;
    assert.equal(a.kernels[0].loops[0].pragma?.factor, 2);
    assert.deepEqual(a, docs.analyzeOnce(docs.text('u')!, 'u'));
  });

  test('replace() with a full text diff reuses the tree and matches a fresh parse', async () => {
    const docs = await CudaDocuments.create();
    docs.open('u', SRC);
    const next = SRC.replace('i < n', 'i < 16');
    docs.replace('u', next);
    assert.equal(docs.analysis('u')!.kernels[0].loops[0].tripCount, 16);
  });

  test('typing a loop character by character never throws and ends consistent', async () => {
    const docs = await CudaDocuments.create();
    const base = '__global__ void k(float* a) {\n\n}\n';
    docs.open('u', base);
    const insert = '#pragma unroll 2\n  for (int i = 0; i < 8; ++i) { a[i] = i; }\n';
    let offset = base.indexOf('\n\n') + 1;
    for (const ch of insert) {
      docs.update('u', [{ start: offset, length: 0, text: ch }]);
      offset++;
      docs.analysis('u');
    }
    const a = docs.analysis('u')!;
    assert.deepEqual(
      a.kernels[0].loops.map(l => [l.tripCount, l.pragma?.factor]),
      [[8, 2]],
    );
  });
});

describe('fast path: an edit inside one function body re-analyses that function only', () => {
  test('equals a full analysis after every one of many edits in the samples (insert, delete, braces, newlines, pragmas)', async () => {
    const docs = await CudaDocuments.create();
    for (const name of ['matmul_unroll.cu', 'reduce_unroll.cu', 'linear_small.cu', 'library_style.cu', 'manual_forms.cu']) {
      const original = fs.readFileSync(path.join(SAMPLES, name), 'utf8');
      docs.open(name, original);
      docs.analysis(name);
      const pieces = [' ', 'x', ';', '\n', '{', '}', '#pragma unroll 4\n', '(', ')', '8', '// c\n', 'k<4>'];
      // Library macros: object-like pragma macros are masked before parsing (libraryMacros.ts).
      if (name === 'library_style.cu')
        pieces.push('CUTLASS_PRAGMA_UNROLL\n', 'CUTE_NO_UNROLL ', '_CCCL_PRAGMA_UNROLL(2)\n', 'L', '_', '#', 'CUTLASS_DEVICE ');
      let seed = 7;
      const rand = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed % n;
      };
      // Each edit is checked, then undone and checked again. Where tree-sitter has to recover
      // from a syntax error, an incremental reparse may legitimately differ from a fresh parse
      // (best-effort results), so only error-free states are compared.
      let compared = 0;
      for (let step = 0; step < 120; step++) {
        const text = docs.text(name)!;
        const at = rand(text.length);
        const e =
          rand(3) === 0 && at < text.length - 1
            ? { start: at, length: 1, text: '' }
            : { start: at, length: 0, text: pieces[rand(pieces.length)] };
        const undo = { start: e.start, length: e.text.length, text: text.slice(e.start, e.start + e.length) };
        for (const edit of [e, undo]) {
          docs.update(name, [edit]);
          const got = docs.analysis(name)!;
          const want = docs.analyzeOnce(docs.text(name)!, name);
          if (!got.hasSyntaxErrors && !want.hasSyntaxErrors) {
            assert.deepEqual(got, want, `${name}: step ${step}, edit ${JSON.stringify(edit)}`);
            compared++;
          }
        }
        assert.equal(docs.text(name), original);
      }
      assert.ok(compared > 120, `only ${compared} error-free states compared`);
      docs.close(name);
    }
  });

  test('manual unrolls of the new forms follow edits in their function (vector load, multi-declarator)', async () => {
    const docs = await CudaDocuments.create();
    const name = 'manual_forms.cu';
    const original = fs.readFileSync(path.join(SAMPLES, name), 'utf8');
    docs.open(name, original);
    const unrolls = (kernel: string) =>
      docs
        .analysis(name)!
        .kernels.find(k => k.name === kernel)!
        .manualUnrolls.map(m => [m.pattern, m.factor, m.line, m.endLine]);
    const vec = unrolls('vec4_manual');
    const decl = unrolls('multi_decl_manual');
    assert.equal(vec[0][0], 'vector-load');
    assert.equal(decl[0][0], 'multi-declarator');
    // drop the use of v.w: no longer every component, so no vector load
    const w = original.indexOf('    s += v.w;\n');
    docs.update(name, [{ start: w, length: '    s += v.w;\n'.length, text: '' }]);
    assert.deepEqual(unrolls('vec4_manual'), []);
    assert.deepEqual(docs.analysis(name), docs.analyzeOnce(docs.text(name)!, name));
    docs.update(name, [{ start: w, length: 0, text: '    s += v.w;\n' }]);
    assert.deepEqual(unrolls('vec4_manual'), vec);
    // a fifth declarator in one step extends the multi-declarator to ×5
    const at = original.indexOf('a3 = in[t + 3 * m]') + 'a3 = in[t + 3 * m]'.length;
    docs.update(name, [{ start: at, length: 0, text: ', a4 = in[t + 4 * m]' }]);
    assert.deepEqual(unrolls('multi_decl_manual'), [['multi-declarator', 5, decl[0][2], decl[0][3]]]);
    assert.deepEqual(docs.analysis(name), docs.analyzeOnce(docs.text(name)!, name));
    docs.close(name);
  });
});

// Found by the fuzzer (test/fuzz): each of these once left the incremental state unlike a fresh parse.
describe('incremental analysis equals a fresh parse (fuzzer regressions)', () => {
  const HOST = `__global__ void k(float* a) {
#pragma unroll 4
  for (int i = 0; i < 8; ++i) a[i] = 0;
}

int main() {
  int x = 0;
  return x;
}
`;

  test('an edit that breaks a host function body reports the syntax error (fast path)', async () => {
    const docs = await CudaDocuments.create();
    docs.open('u', HOST);
    docs.update('u', [{ start: HOST.indexOf('return'), length: 0, text: 'for (' }]);
    const a = docs.analysis('u')!;
    assert.equal(a.hasSyntaxErrors, true);
    assert.deepEqual(a, docs.analyzeOnce(docs.text('u')!, 'u'));
  });

  test("a coarsening note's line moves with its function (cached results)", async () => {
    const docs = await CudaDocuments.create();
    const text = fs.readFileSync(path.join(SAMPLES, 'coarsening.cu'), 'utf8');
    docs.open('u', text);
    const notes = () =>
      docs
        .analysis('u')!
        .kernels.flatMap(k => k.manualUnrolls)
        .filter(m => m.pattern === 'coarsening')
        .map(m => m.detail);
    const before = notes();
    assert.ok(before.some(d => /\(line \d+\)/.test(d)));
    docs.update('u', [{ start: 0, length: 0, text: '\n' }]); // at file level: the whole file again, functions from the cache
    assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(docs.text('u')!, 'u'));
    assert.notDeepEqual(notes(), before);
    // and through the fast path: a new line in the first function's body moves the later ones
    const body = docs.text('u')!.indexOf('{', docs.text('u')!.indexOf('__global__')) + 1;
    docs.update('u', [{ start: body, length: 0, text: '\n' }]);
    assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(docs.text('u')!, 'u'));
  });

  test('an edited template head (outside the function text) is not served from the cache', async () => {
    const docs = await CudaDocuments.create();
    const src = 'template <int N>\n__device__ void f(float* a) {\n#pragma unroll\n  for (int i = 0; i < N; ++i) a[i] = 0;\n}\n';
    docs.open('u', src);
    assert.deepEqual(docs.analysis('u')!.kernels[0].templateParameters, ['N']);
    docs.update('u', [{ start: src.indexOf('int N'), length: 5, text: 'int M' }]);
    assert.deepEqual(docs.analysis('u')!.kernels[0].templateParameters, ['M']);
    assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(docs.text('u')!, 'u'));
    docs.update('u', [{ start: 5, length: 0, text: '\r\n' }]); // `templ\r\nate`: no longer a template
    assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(docs.text('u')!, 'u'));
  });
});

describe('keystrokes re-analyse what they touch and what depends on it (issue 41)', () => {
  const CALLS = `__device__ void fill(float* a, int n) {
#pragma unroll
  for (int i = 0; i < n; ++i) a[i] = 0;
}

__global__ void k(float* a, int m) {
  fill(a, m);
}

// a note between the functions
__global__ void other(float* a) {
  for (int j = 0; j < 4; ++j) a[j] = 1;
}
`;

  test("an edited call re-analyses the callee: its parameter's bound follows the caller's argument", async () => {
    const docs = await CudaDocuments.create();
    docs.open('u', CALLS);
    const trip = () => docs.analysis('u')!.kernels.find(k => k.name === 'fill')!.loops[0].tripCount;
    assert.equal(trip(), 'runtime');
    const at = CALLS.indexOf('fill(a, m)') + 'fill(a, '.length;
    docs.update('u', [{ start: at, length: 1, text: '8' }]);
    assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(docs.text('u')!, 'u'));
    assert.notEqual(trip(), 'runtime');
    docs.update('u', [{ start: at, length: 1, text: 'm' }]);
    assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(CALLS, 'u'));
  });

  test('a character typed in a function body and deleted: errors stay in that function, the analysis returns', async () => {
    const docs = await CudaDocuments.create();
    docs.open('u', CALLS);
    const clean = docs.analysis('u');
    const at = CALLS.indexOf('a[j] = 1');
    docs.update('u', [{ start: at, length: 0, text: '(' }]);
    const broken = docs.analysis('u')!;
    assert.equal(broken.hasSyntaxErrors, true);
    assert.equal(broken.hasSyntaxErrors, docs.analyzeOnce(docs.text('u')!, 'u').hasSyntaxErrors);
    // the other functions are as they were
    assert.deepEqual(
      broken.kernels.filter(k => k.name !== 'other'),
      clean!.kernels.filter(k => k.name !== 'other'),
    );
    docs.update('u', [{ start: at + 1, length: 0, text: 'y' }]);
    docs.update('u', [{ start: at, length: 2, text: '' }]);
    assert.equal(docs.text('u'), CALLS);
    assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(CALLS, 'u'));
  });

  test('white space typed between functions and before a comment moves the later functions only', async () => {
    const docs = await CudaDocuments.create();
    docs.open('u', CALLS);
    for (const at of [CALLS.indexOf('// a note'), CALLS.indexOf('__global__ void other') - 1, 0]) {
      for (const text of [' ', '\n', '\n\n  ']) {
        docs.update('u', [{ start: at, length: 0, text }]);
        assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(docs.text('u')!, 'u'), `${JSON.stringify(text)} at ${at}`);
        docs.update('u', [{ start: at, length: text.length, text: '' }]);
        assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(CALLS, 'u'));
      }
    }
  });
});
