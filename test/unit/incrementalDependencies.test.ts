// A keystroke's analysis must equal a fresh one (issue 41: work proportional to the edit, same
// answers). Each case here was wrong before: a result served from the per-function cache, or a
// fast path that re-analysed only the edited function, while something the result depends on
// through calls or at namespace scope had changed.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CudaDocuments, TextChange } from '../../src/engine/parse/documents';
import { SegmentedText } from '../../src/engine/parse/segmentedText';
import { pointAt } from '../../src/engine/parse/parser';
import { MacroTable } from '../../src/engine/parse/macros/table';
import { MacroTables, optionsFromProject } from '../../src/engine/parse/macros';
import * as os from 'os';
import * as fs from 'fs';
import * as path from 'path';
import { SAMPLES } from './helpers';

type Trip = string | number | undefined;

/** Opens `src`, applies `edit` (alone: the fast path; with a no-op second change: the whole-file path with its cache) and compares with a fresh analysis. */
async function afterEdit(src: string, from: string, to: string, wholeFile: boolean, table = MacroTable.builtin) {
  const docs = await CudaDocuments.create();
  docs.open('u', src, 'u', table);
  docs.analysis('u');
  const at = src.indexOf(from);
  assert.ok(at >= 0, from);
  const changes: TextChange[] = [{ start: at, length: from.length, text: to }];
  // Two changes in one event are never the one-edit fast path: the whole file is analysed, from the cache.
  if (wholeFile) changes.push({ start: 0, length: 0, text: '' });
  docs.update('u', changes);
  const got = docs.analysis('u')!;
  const want = docs.analyzeOnce(docs.text('u')!, 'u', table);
  assert.deepEqual(got, want, `${wholeFile ? 'whole file' : 'fast path'}: ${from} → ${to}`);
  return (fn: string, loop = 0): Trip => got.kernels.find(k => k.name === fn)?.loops[loop]?.tripCount as Trip;
}

const CALLER_LOCAL = `__device__ void fill(float *a, int n) {
  for (int i = 0; i < n; ++i) a[i] = 0;
}
__global__ void k(float *a, int m) {
  int n = m;
  fill(a, n);
}
`;

const ONE_RETURN = (q: string) => `${q}constexpr int tile() { return 4; }
__global__ void k(float *a) {
  for (int i = 0; i < tile(); ++i) a[i] = 0;
}
`;

describe('an edit re-analyses every function whose result it reaches', () => {
  for (const wholeFile of [false, true]) {
    const path = wholeFile ? 'whole file, cached results' : 'one-edit fast path';
    test(`a caller's local that becomes a constant reaches the callee's bound (${path})`, async () => {
      const trip = await afterEdit(CALLER_LOCAL, 'int n = m', 'const int n = 4', wholeFile);
      assert.notEqual(trip('fill'), 'runtime');
    });

    for (const q of ['', '__host__ __device__ ']) {
      test(`a one-return ${q ? 'host-device' : 'host'} function's new value reaches the loop that calls it (${path})`, async () => {
        const trip = await afterEdit(ONE_RETURN(q), 'return 4', 'return 8', wholeFile);
        assert.equal(trip('k'), 8);
      });
    }

    test(`a variable declared at namespace scope changes what a bound's name means (${path})`, async () => {
      const src = `__global__ void k(float *a) {
  for (int i = 0; i < LIMIT; ++i) a[i] = 0;
}
// LIMIT comes from elsewhere
`;
      const trip = await afterEdit(src, '// LIMIT comes from elsewhere', '__device__ int LIMIT;', wholeFile);
      assert.equal(trip('k'), 'runtime');
    });
  }

  test("a kernel named by a project's qualifier macro keeps run-time parameters when its body is edited", async () => {
    // cuda-samples/project_macros: PM_KERNEL comes from its header. The fast path's scope lookup
    // knew no kernels, so the host's launch argument was read as the parameter's value.
    const file = path.join(SAMPLES, 'project_macros', 'project_macros.cu');
    const src = fs.readFileSync(file, 'utf8');
    const table = new MacroTables().tableFor(file, src, { includeDirs: [], systemIncludeDirs: [], defines: [], arch: 'sm_90' }).table;
    const trip = await afterEdit(src, 'v = 0.5f * pm_horner(coeff, v)', 'v = 0.25f * pm_horner(coeff, v)', false, table);
    assert.equal(trip('pm_poly'), 'runtime');
  });

  test('white space after a class member moves later functions only', async () => {
    const src = `struct Cfg {
  static constexpr int N = 4;
  int pad;
};
__global__ void k(float *a) {
  for (int i = 0; i < Cfg::N; ++i) a[i] = 0;
}
`;
    for (const ws of [' ', '\t', '\n']) {
      const trip = await afterEdit(src, 'int pad;', `int pad;${ws}`, false);
      assert.equal(trip('k'), 4);
    }
  });

  test('a syntax error typed in one body and deleted: the other functions stay, the file returns', async () => {
    const docs = await CudaDocuments.create();
    docs.open('u', CALLER_LOCAL);
    const clean = docs.analysis('u')!;
    const at = CALLER_LOCAL.indexOf('fill(a, n)');
    docs.update('u', [{ start: at, length: 0, text: '(' }]);
    const broken = docs.analysis('u')!;
    assert.equal(broken.hasSyntaxErrors, true);
    assert.deepEqual(
      broken.kernels.find(k => k.name === 'fill'),
      clean.kernels.find(k => k.name === 'fill'),
    );
    docs.update('u', [{ start: at, length: 1, text: '' }]);
    assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(CALLER_LOCAL, 'u'));
  });
});

describe("a keystroke in a function-like #define's value", () => {
  /** The cache's hit count: a whole-file analysis reads every function through it, the fast path none. */
  const hits = (docs: CudaDocuments) =>
    (docs as unknown as { entries: Map<string, { cache: { hits: number } }> }).entries.get('u')!.cache.hits;

  test("an error-check macro's line: no function analysed again, the answer a fresh one's", async () => {
    const src = `#define CHECK(call)                                   \\
  do {                                                  \\
    cudaError_t err_ = (call);                          \\
    if (err_ != cudaSuccess) exit(1);                   \\
  } while (0)
template <int N> __global__ void k(float *a) {
  for (int i = 0; i < N; ++i) a[i] = 0;
}
__global__ void h(float *a, int n) {
  for (int i = 0; i < n; ++i) a[i] = 0;
}
void run(float *a) { k<4><<<1, 1>>>(a); CHECK(cudaDeviceSynchronize()); }
`;
    for (const [from, to] of [
      ['exit(1)', 'exit(2)'],
      ['(call)', '(calls)'],
      ['err_ != cudaSuccess', 'err_ != cudaSuccess && 1'],
    ]) {
      const docs = await CudaDocuments.create();
      docs.open('u', src);
      docs.analysis('u');
      const before = hits(docs);
      const at = src.lastIndexOf(from);
      docs.update('u', [{ start: at, length: from.length, text: to }]);
      assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(docs.text('u')!, 'u'), `${from} → ${to}`);
      assert.equal(hits(docs), before, `${from} → ${to}: the fast path`);
    }
  });

  test('a macro that writes instantiations, or comes to: the whole file, equal to a fresh analysis', async () => {
    const src = `template <int N> __global__ void k(float *a) {
  for (int i = 0; i < N; ++i) a[i] = 0;
}
#define LAUNCH(n) k<n><<<1, 1>>>(a)
#define OTHER(n) run_other(n)
void run(float *a) { LAUNCH(4); OTHER(8); }
`;
    // Expansion reads the file's macros (as the server's table holds them until it reads them again).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-define-edit-'));
    const file = path.join(dir, 'k.cu');
    fs.writeFileSync(file, src);
    const { table } = new MacroTables().tableFor(file, src, optionsFromProject(dir, null, 'sm_90', [])(file));
    try {
      for (const [from, to] of [
        ['k<n><<<', 'k<n * 2><<<'],
        ['run_other', 'k<n><<<1, 1>>>'],
      ]) {
        const docs = await CudaDocuments.create();
        docs.open('u', src, 'u', table);
        assert.equal(docs.analysis('u')!.kernels[0].loops[0].tripCount, 4);
        const before = hits(docs);
        const at = src.indexOf(from);
        docs.update('u', [{ start: at, length: from.length, text: to }]);
        assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(docs.text('u')!, 'u', table), `${from} → ${to}`);
        assert.ok(hits(docs) > before, `${from} → ${to}: the whole file`);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a keystroke keeps the #if branches a fresh reading selects', () => {
  // ggml's shape: a `{` opened in each branch of a group and closed once after it. Skipping the
  // whole-file branch reading is only right when the edit cannot change which branches are read.
  const UNBALANCED = `__global__ void k(float *dst, const float *x) {
    int a = 1; /* a { comment */
#if defined(AMD_WMMA_AVAILABLE)
    if (a) { // opens
#else
    if (!a) {
#endif
    const char *s = "}{";
#pragma unroll
    for (int i = 0; i < 4; ++i) dst[i] = x[i];
    }
}
`;
  // The same group balanced: the file starts with nothing selected, and one character can change that.
  const BALANCED = UNBALANCED.replace('if (!a) {', 'if (!a) { }')
    .replace('if (a) { // opens', 'if (a) { } // opens')
    .replace('\n    }\n}', '\n}');
  for (const [name, src] of [
    ['unbalanced', UNBALANCED],
    ['balanced', BALANCED],
  ]) {
    test(`${name}: every character typed anywhere, then deleted, equals a fresh analysis`, async () => {
      const docs = await CudaDocuments.create();
      docs.open('u', src);
      let compared = 0;
      for (let at = 0; at <= src.length; at++) {
        for (const ch of [' ', 'x', '{', '/', '*', '\\', '"', '#']) {
          for (const e of [
            { start: at, length: 0, text: ch },
            { start: at, length: 1, text: '' },
          ]) {
            docs.update('u', [e]);
            const got = docs.analysis('u')!;
            const want = docs.analyzeOnce(docs.text('u')!, 'u');
            if (!want.hasSyntaxErrors) {
              assert.deepEqual(got, want, `${JSON.stringify(ch)} at ${at}`);
              compared++;
            }
          }
        }
      }
      assert.equal(docs.text('u'), src);
      assert.ok(compared > src.length, `only ${compared} error-free states compared`);
    });
  }
});

describe('SegmentedText reads as the string it stands for', () => {
  test('after any sequence of replacements: slice, chunk, indexOf, lastIndexOf, pointAt, find, charCodeAt', () => {
    const alphabet = fc.constantFrom('a', 'b', '\n', ' ', '{', '}', 'é', '😀');
    const text = fc.array(alphabet, { maxLength: 9000 }).map(a => a.join(''));
    const edit = fc.record({ at: fc.nat(), len: fc.nat({ max: 5000 }), ins: fc.array(alphabet, { maxLength: 3000 }).map(a => a.join('')) });
    fc.assert(
      fc.property(text, fc.array(edit, { maxLength: 12 }), fc.array(fc.nat(), { minLength: 8, maxLength: 8 }), (initial, edits, probes) => {
        let plain = initial;
        let seg = SegmentedText.of(initial);
        for (const e of edits) {
          const start = e.at % (plain.length + 1);
          const end = Math.min(plain.length, start + e.len);
          plain = plain.slice(0, start) + e.ins + plain.slice(end);
          seg = seg.replace(start, end, e.ins);
          assert.equal(seg.length, plain.length);
        }
        for (const p of probes) {
          const a = p % (plain.length + 1);
          const b = Math.min(plain.length, a + (p % 7000));
          assert.equal(seg.slice(a, b), plain.slice(a, b));
          const c = seg.chunk(a, 256);
          assert.ok(plain.startsWith(c, a) && (c.length > 0 || a === plain.length));
          assert.equal(seg.indexOf('\n', a), plain.indexOf('\n', a));
          assert.equal(seg.lastIndexOf('\n', a), plain.lastIndexOf('\n', a));
          assert.deepEqual(seg.pointAt(a), pointAt(plain, a));
          // find: a needle taken from the text (so it is there, often across a segment's end) and one that may not be
          const needle = plain.slice(b, b + 1 + (p % 6));
          assert.equal(seg.find(needle, a), plain.indexOf(needle, a));
          assert.equal(seg.find('}\n{', a), plain.indexOf('}\n{', a));
          assert.equal(seg.charCodeAt(a), plain.charCodeAt(a));
          assert.equal(seg.charCodeAt(a - 1), plain.charCodeAt(a - 1));
        }
        assert.equal(seg.toString(), plain);
      }),
      { numRuns: 150, seed: 41 },
    );
  });
});
