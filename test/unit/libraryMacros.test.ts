// Library macros (CCCL, CUTLASS, CuTe, PyTorch) from the built-in table: qualifier macros make
// device functions, pragma macros before a loop are its pragma; hover, diagnostics, variants
// (shadow copies and edits) and directory scans handle them. The SASS test needs nvcc.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { fork } from 'child_process';
import { IPCMessageReader, IPCMessageWriter, createMessageConnection } from 'vscode-jsonrpc/node';
import { analyze, documents, kernel, lineOf, SAMPLES, useCudaTools } from './helpers';
import { loopHoverMarkdown } from '../../src/engine/parse/describe';
import { computeFindings } from '../../src/engine/parse/findings';
import { makeVariantSource } from '../../src/engine/variants/rewrite';
import { applyUnrollEdit, unrollPragmaEdit } from '../../src/engine/variants/applyEdit';
import { collectCudaFiles, toScanJson } from '../../src/engine/parse/scan';
import { MacroTable } from '../../src/engine/parse/macros';
const maskForParse = (t: string) => MacroTable.builtin.maskForParse(t);
import { chooseArch } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { VariantBuilder } from '../../src/engine/variants/build';
import { VariantInspector } from '../../src/engine/variants/inspect';
import { UnrollFactors } from '../../src/engine/variants/factors';

const SRC = `template <int N>
_CCCL_DEVICE _CCCL_FORCEINLINE void cccl_fn(int* a) {
  _CCCL_PRAGMA_UNROLL_FULL()
  for (int i = 0; i < N; ++i) a[i] = 0;
  _CCCL_PRAGMA_UNROLL(4)
  for (int i = 0; i < 64; ++i) a[i] = 0;
  _CCCL_PRAGMA_NOUNROLL()
  while (a[0]) a[0]--;
}
CUTLASS_GLOBAL void cutlass_kernel(int* a, int n) {
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < 8; ++i) a[i] = 0;
  CUTLASS_PRAGMA_NO_UNROLL
  for (int i = 0; i < n; ++i) a[i] = 1;
}
struct Tile {
  CUTE_HOST_DEVICE void fill(int* a) {
    CUTE_UNROLL for (int i = 0; i < 4; ++i) a[i] = 2;
  }
public:
  _CCCL_DEVICE _CCCL_FORCEINLINE int get(int i) const
  {
    int s = 0;
    CUTE_NO_UNROLL
    for (int k = 0; k < i; ++k) s += k;
    return s;
  }
};
C10_HOST_DEVICE inline int c10_fn(int x) { return x; }
int host_only(int n) { for (int i = 0; i < n; ++i) {} return n; }
`;

describe('library macros from the built-in table', () => {
  test('qualifier macros make device functions; pragma macros attach to the next loop', async () => {
    const a = await analyze(SRC, 'lib.cu');
    assert.equal(a.hasSyntaxErrors, false);
    assert.deepEqual(
      a.kernels.map(k => [k.name, k.qualifier, k.qualifierMacros]),
      [
        ['cccl_fn', 'device', ['_CCCL_DEVICE', '_CCCL_FORCEINLINE']],
        ['cutlass_kernel', 'global', ['CUTLASS_GLOBAL']],
        ['fill', 'device', ['CUTE_HOST_DEVICE']],
        ['get', 'device', ['_CCCL_DEVICE', '_CCCL_FORCEINLINE']],
        ['c10_fn', 'device', ['C10_HOST_DEVICE']],
      ],
    );
    const pragmas = a.kernels.flatMap(k => k.loops.map(l => [l.line, l.pragma?.form, l.pragma?.kind, l.pragma?.factor, l.pragma?.macro]));
    assert.deepEqual(pragmas, [
      [
        4,
        'macro',
        'full',
        null,
        {
          name: '_CCCL_PRAGMA_UNROLL_FULL',
          written: '_CCCL_PRAGMA_UNROLL_FULL()',
          library: 'CCCL',
          expandsTo: 'unroll',
          origin: { kind: 'builtin', library: 'CCCL' },
        },
      ],
      [
        6,
        'macro',
        'count',
        4,
        {
          name: '_CCCL_PRAGMA_UNROLL',
          written: '_CCCL_PRAGMA_UNROLL(4)',
          library: 'CCCL',
          expandsTo: 'unroll 4',
          origin: { kind: 'builtin', library: 'CCCL' },
        },
      ],
      [
        8,
        'macro',
        'disable',
        1,
        {
          name: '_CCCL_PRAGMA_NOUNROLL',
          written: '_CCCL_PRAGMA_NOUNROLL()',
          library: 'CCCL',
          expandsTo: 'unroll 1',
          origin: { kind: 'builtin', library: 'CCCL' },
        },
      ],
      [
        12,
        'macro',
        'full',
        null,
        {
          name: 'CUTLASS_PRAGMA_UNROLL',
          written: 'CUTLASS_PRAGMA_UNROLL',
          library: 'CUTLASS',
          expandsTo: 'unroll',
          origin: { kind: 'builtin', library: 'CUTLASS' },
        },
      ],
      [
        14,
        'macro',
        'disable',
        1,
        {
          name: 'CUTLASS_PRAGMA_NO_UNROLL',
          written: 'CUTLASS_PRAGMA_NO_UNROLL',
          library: 'CUTLASS',
          expandsTo: 'unroll 1',
          origin: { kind: 'builtin', library: 'CUTLASS' },
        },
      ],
      [
        18,
        'macro',
        'full',
        null,
        { name: 'CUTE_UNROLL', written: 'CUTE_UNROLL', library: 'CuTe', expandsTo: 'unroll', origin: { kind: 'builtin', library: 'CuTe' } },
      ],
      [
        25,
        'macro',
        'disable',
        1,
        {
          name: 'CUTE_NO_UNROLL',
          written: 'CUTE_NO_UNROLL',
          library: 'CuTe',
          expandsTo: 'unroll 1',
          origin: { kind: 'builtin', library: 'CuTe' },
        },
      ],
    ]);
    assert.equal(kernel(a, 'cutlass_kernel').loops[0].tripCount, 8);
    const p = kernel(a, 'cutlass_kernel').loops[0].pragma!;
    assert.deepEqual([p.line, p.span.column, p.span.endColumn], [11, 2, 2 + 'CUTLASS_PRAGMA_UNROLL'.length]);
    assert.deepEqual(a.strayPragmas, []);
  });

  test("CCCL main's spellings: _CCCL_KERNEL_ATTRIBUTES kernels, _CCCL_PRAGMA_UNROLL() with no argument, `#  pragma unroll`", async () => {
    const src = `template <typename P, int N>
_CCCL_KERNEL_ATTRIBUTES void init_kernel(int* a, int n)
{
  _CCCL_PRAGMA_UNROLL()
  for (int i = 0; i < N; ++i) a[i] = 0;
#  pragma unroll 1
  // comments between the pragma and its loop, as CCCL writes them
  while (n > 0) a[--n] = 1;
}
`;
    const a = await analyze(src);
    assert.equal(a.hasSyntaxErrors, false);
    const k = kernel(a, 'init_kernel');
    assert.equal(k.qualifier, 'global');
    assert.deepEqual(
      k.loops.map(l => [l.line, l.pragma?.kind, l.pragma?.factor ?? null]),
      [
        [lineOf(src, 'for (int i')!, 'full', null],
        [lineOf(src, 'while (n')!, 'disable', 1],
      ],
    );
    // a generic PRAGMA(x) called with nothing is still no unroll pragma
    const generic = await analyze(`#define MY_PRAGMA(x) _Pragma(#x)
__device__ void f(int* a) {
  MY_PRAGMA()
  for (int i = 0; i < 4; ++i) a[i] = 0;
}
`);
    assert.equal(kernel(generic, 'f').loops[0].pragma, null);
  });

  test('scan --json carries the macro; plain pragmas have no macro field', async () => {
    const j = toScanJson([await analyze(SRC + '__device__ void p() {\n#pragma unroll 2\n  for (int i = 0; i < 8; ++i) {}\n}\n', 'lib.cu')]);
    const pragmas = j.files[0].kernels.flatMap(k => k.loops.map(l => l.pragma));
    assert.deepEqual(pragmas[3], {
      kind: 'full',
      factor: null,
      text: 'unroll',
      line: 11,
      macro: {
        name: 'CUTLASS_PRAGMA_UNROLL',
        written: 'CUTLASS_PRAGMA_UNROLL',
        library: 'CUTLASS',
        expandsTo: 'unroll',
        origin: { kind: 'builtin', library: 'CUTLASS' },
      },
    });
    assert.deepEqual(pragmas.at(-1), { kind: 'count', factor: 2, text: 'unroll 2', line: 32 });
  });

  test('masking keeps offsets and lines and leaves #define lines alone', () => {
    const t = '#define CUTLASS_PRAGMA_UNROLL _Pragma("unroll")\n  CUTLASS_PRAGMA_UNROLL\nCUB_NAMESPACE_BEGIN\n';
    const m = maskForParse(t);
    assert.equal(m.length, t.length);
    assert.equal(m, '#define CUTLASS_PRAGMA_UNROLL _Pragma("unroll")\n  CUTLASS_PRAGMA_UNR();\n                   \n');
  });

  test('hover and diagnostics name the macro, its expansion and the table', async () => {
    const a = await analyze(SRC, 'lib.cu');
    const k = kernel(a, 'cutlass_kernel');
    const md = loopHoverMarkdown(k, k.loops[1]);
    assert.match(md, /`CUTLASS_PRAGMA_NO_UNROLL` \(expands to `#pragma unroll 1`, built-in table \(CUTLASS\)\) → unroll 1 \(disabled\)/);
    assert.match(md, /Qualified by \| `CUTLASS_GLOBAL` → `__global__ static` \(built-in table \(CUTLASS\)\)/);
    const f = computeFindings(
      await analyze('_CCCL_DEVICE void f(int n) {\n  _CCCL_PRAGMA_UNROLL_FULL()\n  for (int i = 0; i < n; ++i) {}\n}\n'),
    );
    assert.equal(f[0].code, 'full-unroll-runtime-trip');
    assert.match(
      f[0].message,
      /^`_CCCL_PRAGMA_UNROLL_FULL\(\)` \(expands to `#pragma unroll`, built-in table \(CCCL\)\) asks for a full unroll/,
    );
    const stray = computeFindings(await analyze('CUTLASS_DEVICE void g(int* a) {\n  CUTLASS_PRAGMA_UNROLL\n  a[0] = 1;\n}\n'));
    assert.deepEqual(
      stray.map(s => [s.code, s.span.line]),
      [['pragma-without-loop', 2]],
    );
  });

  test('variants replace the macro invocation, keeping every line in place', async () => {
    const a = await analyze(SRC, 'lib.cu');
    const out = makeVariantSource(
      SRC,
      a,
      new Map<number, 'default' | 'full' | number>([
        [12, 4],
        [6, 'default'],
        [14, 'full'],
      ]),
      '/x/lib.cu',
    ).split('\n');
    const lines = SRC.split('\n');
    assert.equal(out.length, lines.length + 1);
    assert.equal(out[11], '  _Pragma("unroll 4")');
    assert.equal(out[13], '  _Pragma("unroll")');
    assert.equal(out[5], '  ');
    assert.ok(!out.join('\n').includes('CUTLASS_PRAGMA_UNROLL\n  for'));
    // The variant analyses to the requested factors, with no second pragma.
    const v = await analyze(out.slice(1).join('\n'), 'v.cu');
    assert.deepEqual(
      v.kernels.flatMap(k => k.loops.map(l => [l.line, l.pragma?.text ?? null])),
      [
        [4, 'unroll'],
        [6, null],
        [8, 'unroll 1'],
        [12, 'unroll 4'],
        [14, 'unroll'],
        [18, 'unroll'],
        [25, 'unroll 1'],
      ],
    );
  });

  test('edits in the user file use the library spelling where it has one', async () => {
    const a = await analyze(SRC, 'lib.cu');
    const loop = (line: number) => a.kernels.flatMap(k => k.loops).find(l => l.line === line)!;
    const edit = (line: number, f: 'default' | 'full' | number) => applyUnrollEdit(SRC, unrollPragmaEdit(SRC, loop(line), f)).split('\n');
    assert.equal(edit(6, 8)[4], '  _CCCL_PRAGMA_UNROLL(8)');
    assert.equal(edit(6, 'full')[4], '  _CCCL_PRAGMA_UNROLL_FULL()');
    assert.equal(edit(6, 1)[4], '  _CCCL_PRAGMA_NOUNROLL()');
    assert.equal(edit(12, 1)[10], '  CUTLASS_PRAGMA_NO_UNROLL');
    assert.equal(edit(12, 4)[10], '  _Pragma("unroll 4")');
    assert.equal(edit(18, 2)[17], '    _Pragma("unroll 2") for (int i = 0; i < 4; ++i) a[i] = 2;');
    assert.equal(unrollPragmaEdit(SRC, loop(12), 'full'), null);
    assert.equal(unrollPragmaEdit(SRC, loop(14), 1), null);
    const removed = edit(12, 'default');
    assert.equal(removed.length, SRC.split('\n').length - 1);
    assert.equal(removed[10], '  for (int i = 0; i < 8; ++i) a[i] = 0;');
  });

  test('typing and deleting an object-like macro keeps the incremental analysis equal to a fresh one', async () => {
    const docs = await documents();
    const base = 'CUTLASS_DEVICE void f(int* a) {\n  \n  for (int i = 0; i < 8; ++i) a[i] = 0;\n}\n';
    docs.open('m', base);
    const at = base.indexOf('  \n') + 2;
    const word = 'CUTLASS_PRAGMA_NO_UNROLL';
    for (let i = 0; i < word.length; i++) {
      docs.update('m', [{ start: at + i, length: 0, text: word[i] }]);
      assert.deepEqual(docs.analysis('m'), docs.analyzeOnce(docs.text('m')!, 'm'), `after typing ${word.slice(0, i + 1)}`);
    }
    assert.equal(docs.analysis('m')!.kernels[0].loops[0].pragma?.kind, 'disable');
    // `#` at the line start turns it into a (bogus) directive; removing it restores the macro.
    docs.update('m', [{ start: at - 2, length: 0, text: '#' }]);
    assert.deepEqual(docs.analysis('m'), docs.analyzeOnce(docs.text('m')!, 'm'));
    docs.update('m', [{ start: at - 2, length: 1, text: '' }]);
    assert.deepEqual(docs.analysis('m'), docs.analyzeOnce(docs.text('m')!, 'm'));
    for (let i = word.length - 1; i >= 0; i--) {
      docs.update('m', [{ start: at + i, length: 1, text: '' }]);
      assert.deepEqual(docs.analysis('m'), docs.analyzeOnce(docs.text('m')!, 'm'), `after deleting to ${word.slice(0, i)}`);
    }
    assert.equal(docs.analysis('m')!.kernels[0].loops[0].pragma, null);
    docs.close('m');
  });

  test('directory scans take .h/.hpp/.inl headers only when they hold device code', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-hdr-'));
    const files: Record<string, string> = {
      'a.cu': 'int main() {}\n',
      'b.cuh': '// any .cuh\n',
      'dev.h': '__device__ int f();\n',
      'cutlass.hpp': 'CUTLASS_HOST_DEVICE int g() { return 1; }\n',
      'cccl.inl': '_CCCL_DEVICE _CCCL_FORCEINLINE void h() {}\n',
      'host.h': 'int plain_cpp();\n',
      'host.hpp': 'struct S { int device_count; };\n',
      'note.txt': '__device__\n',
    };
    for (const [n, t] of Object.entries(files)) fs.writeFileSync(path.join(dir, n), t);
    assert.deepEqual(
      collectCudaFiles([dir]).map(f => path.basename(f)),
      ['a.cu', 'b.cuh', 'cccl.inl', 'cutlass.hpp', 'dev.h'],
    );
    // A file named explicitly is taken as given.
    assert.deepEqual(collectCudaFiles([path.join(dir, 'host.h')]).length, 1);
    fs.rmSync(dir, { recursive: true });
  });
});

// ---------------------------------------------------------------------------------------------
// Real nvcc: the sample defines the macros as the libraries do and builds with plain nvcc.

const cuda = useCudaTools();

describe('cuda-samples/library_style.cu with nvcc', () => {
  test('macro pragmas: variants ×1 / ×4 of CUTLASS_PRAGMA_NO_UNROLL, and ×4 / ×1 of _CCCL_PRAGMA_UNROLL(4)', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const file = path.join(SAMPLES, 'library_style.cu');
    const text = fs.readFileSync(file, 'utf8');
    const analysis = await analyze(text, file);
    assert.equal(analysis.hasSyntaxErrors, false);
    assert.deepEqual(
      analysis.kernels.map(k => [k.name, k.qualifier]),
      [
        ['poly4', 'device'],
        ['library_matvec', 'global'],
        ['fold4', 'device'],
        ['library_rowsum', 'global'],
      ],
    );
    const tc = cuda.toolchain!;
    const { arch } = chooseArch('sm_90', null, []);
    const builder = new VariantBuilder({
      nvcc: tc.nvcc,
      arch,
      flags: flagsFromSettings({}, SAMPLES),
      cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cache-')),
      runner: tc.runner,
    });
    const inspector = new VariantInspector({ toolchain: tc, builder, arch });
    const matvecLoop = lineOf(text, 'for (int k = 0; k < cols; ++k) acc +=');
    assert.equal(kernel(analysis, 'library_matvec').loops[0].pragma?.macro?.name, 'CUTLASS_PRAGMA_NO_UNROLL');
    const r = await inspector.inspectLoop(file, text, analysis, matvecLoop, UnrollFactors.of([1, 4]));
    assert.deepEqual(
      r.variants.map(v => [v.factor, v.status, v.effectiveUnroll]),
      [
        [1, 'ok', 1],
        [4, 'ok', 4],
      ],
    );
    assert.ok(r.variants[1].kernelInstructions! > r.variants[0].kernelInstructions!);
    const rowsumLoop = lineOf(text, 'for (int k = 0; k < cols; ++k) part');
    const w = await inspector.inspectLoop(file, text, analysis, rowsumLoop, UnrollFactors.of([4, 1]));
    assert.deepEqual(
      w.variants.map(v => [v.factor, v.status, v.effectiveUnroll]),
      [
        [4, 'ok', 4],
        [1, 'ok', 1],
      ],
    );
  });
});

describe('language server: headers are served only while they hold device code', () => {
  test('a plain C++ .h gets no analysis; a CUTLASS-style .hpp does; typing device code into the .h starts serving it', async () => {
    const server = fork(path.join(__dirname, '..', '..', 'src', 'server', 'main.js'), ['--node-ipc'], {
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const conn = createMessageConnection(new IPCMessageReader(server), new IPCMessageWriter(server));
    const diagnostics = new Map<string, unknown[]>();
    conn.onNotification('textDocument/publishDiagnostics', (p: { uri: string; diagnostics: unknown[] }) =>
      diagnostics.set(p.uri, p.diagnostics),
    );
    conn.onNotification(() => undefined);
    conn.onRequest(() => null);
    conn.listen();
    try {
      await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
      conn.sendNotification('initialized', {});
      const host = 'file:///ws/host.h';
      const dev = 'file:///ws/gemm.hpp';
      conn.sendNotification('textDocument/didOpen', {
        textDocument: { uri: host, languageId: 'cpp', version: 1, text: 'int f(int n);\n' },
      });
      conn.sendNotification('textDocument/didOpen', {
        textDocument: {
          uri: dev,
          languageId: 'cpp',
          version: 1,
          text: 'CUTLASS_DEVICE void g(float* a, int n) {\n  CUTLASS_PRAGMA_UNROLL\n  for (int i = 0; i < n; ++i) a[i] = 0;\n}\n',
        },
      });
      const lenses = (uri: string) => conn.sendRequest('textDocument/codeLens', { textDocument: { uri } }) as Promise<unknown[] | null>;
      assert.ok(((await lenses(dev)) ?? []).length > 0, 'the device header gets CodeLenses');
      // CodeLens may answer from the parse while the open is analysed; a hover waits for the analysis (and its diagnostics)
      await conn.sendRequest('textDocument/hover', { textDocument: { uri: dev }, position: { line: 0, character: 0 } });
      assert.equal(diagnostics.get(dev)?.length, 1, 'full unroll of a runtime trip count');
      assert.deepEqual((await lenses(host)) ?? [], []);
      assert.equal(diagnostics.has(host), false);
      conn.sendNotification('textDocument/didChange', {
        textDocument: { uri: host, version: 2 },
        contentChanges: [
          {
            range: { start: { line: 1, character: 0 }, end: { line: 1, character: 0 } },
            text: '__device__ void h(int* a) { for (int i = 0; i < 4; ++i) a[i] = 1; }\n',
          },
        ],
      });
      assert.ok(((await lenses(host)) ?? []).length > 0, 'served once it holds device code');
    } finally {
      conn.dispose();
      server.kill();
    }
  });
});
