import type { LoopReport, LoopVariant } from '../../src/engine/variants/reports';
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, lineOf } from './helpers';
import { codeLenses, diagnostics, hover } from '../../src/server/features';
import { Commands, DEFAULT_SETTINGS } from '../../src/protocol';

const SRC = `template <int B>
__global__ void k(float* a, int n) {
  #pragma unroll 4
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < B; ++j) a[i * B + j] = 0;
  }
}
template __global__ void k<32>(float*, int);
__device__ float f(float* a) {
  float s = 0;
  for (int i = 0; i < 8; ++i) s += a[i];
  return s;
}
`;

describe('CodeLens', () => {
  test('kernels get a sweep lens; every device loop gets benchmark + summary', async () => {
    const lenses = codeLenses('file:///x.cu', await analyze(SRC), DEFAULT_SETTINGS);
    const titles = lenses.map(l => `${l.range.start.line + 1}: ${l.command?.title}`);
    assert.deepEqual(titles, [
      '2: Sweep unroll factors',
      '3: Benchmark this loop',
      '3: unroll 4 requested · trip count runtime',
      '3: SASS: build variants',
      '3: Show SASS',
      '5: Benchmark this loop',
      '5: no unroll pragma · trip count 32',
      '5: SASS: build variants',
      '5: Show SASS',
      '11: Benchmark this loop',
      '11: no unroll pragma · trip count 8',
      '11: SASS: build variants',
      '11: Show SASS',
    ]);
    assert.deepEqual(lenses[1].command?.arguments, [{ uri: 'file:///x.cu', line: 4, kernel: 'k' }]);
    const show = lenses.filter(l => l.command?.command === Commands.showSass);
    assert.deepEqual(
      show.map(l => l.command?.arguments),
      [4, 5, 11].map(line => [{ uri: 'file:///x.cu', line }]),
    );
  });

  test("a header's loops get Benchmark this loop only with the project's build and run set (issue 39)", async () => {
    const a = await analyze(SRC);
    const unit = { unit: '/p/src/k.cu', via: 'compile_commands' as const };
    const bench = (s: typeof DEFAULT_SETTINGS) =>
      codeLenses('file:///p/src/k.cuh', a, s, null, unit).filter(l => l.command?.title === 'Benchmark this loop').length;
    assert.equal(bench(DEFAULT_SETTINGS), 0, 'a header is no program by itself');
    const project = { ...DEFAULT_SETTINGS.project, buildCommand: 'cmake --build build', runCommand: './build/app' };
    assert.equal(bench({ ...DEFAULT_SETTINGS, project }), 3);
    assert.equal(bench({ ...DEFAULT_SETTINGS, project: { ...project, runCommand: ' ' } }), 0, 'both commands, or neither');
  });

  test('disabled by setting', async () => {
    assert.equal(codeLenses('u', await analyze(SRC), { ...DEFAULT_SETTINGS, codeLensEnabled: false }).length, 0);
  });
});

describe('hover', () => {
  test('on the pragma and on the loop keyword describe the loop', async () => {
    const a = await analyze(SRC);
    for (const pos of [
      { line: 2, character: 5 },
      { line: 3, character: 2 },
    ]) {
      const h = hover(a, pos);
      const text = (h?.contents as { value: string }).value;
      assert.match(text, /Unroll Lens/);
      assert.match(text, /unroll 4 requested/);
      assert.match(text, /trip count runtime/);
      assert.match(text, /outermost loop/);
      assert.match(text, /Kernel \| `__global__ k<B>`/);
    }
  });

  test('inner loop on its own line; nothing on other lines', async () => {
    const a = await analyze(SRC);
    const text = (hover(a, { line: lineOf(SRC, 'int j') - 1, character: 4 })?.contents as { value: string }).value;
    assert.match(text, /trip count 32/);
    assert.match(text, /depth 1, inside the loop at line 4/);
    assert.match(text, /B=32/);
    assert.equal(hover(a, { line: 0, character: 0 }), null);
  });

  test('with the document URI, the loop hover links to Show SASS for that loop', async () => {
    const a = await analyze(SRC);
    const text = (hover(a, { line: 3, character: 2 }, null, null, 'file:///x.cu')?.contents as { value: string }).value;
    const m = /\[Show SASS\]\(command:unrollLens\.showSass\?([^ )]+)/.exec(text);
    assert.ok(m, text);
    assert.deepEqual(JSON.parse(decodeURIComponent(m[1])), [{ uri: 'file:///x.cu', line: 4 }]);
    // Without a URI (the CLI's and the benchmarks' callers) there is no link.
    assert.doesNotMatch((hover(a, { line: 3, character: 2 })?.contents as { value: string }).value, /Show SASS/);
  });

  test('once the variants are built, the hover links to the listing of each one that compiled', async () => {
    const a = await analyze(SRC);
    const variant = (factor: number | 'default', status: string) => ({ factor, status }) as unknown as LoopVariant;
    const report = { line: 4, variants: [variant('default', 'ok'), variant(4, 'ok'), variant(8, 'failed')], notes: [], limitation: null };
    const sass = { file: null, loops: new Map([[4, report as unknown as LoopReport]]) };
    const text = (hover(a, { line: 3, character: 2 }, sass, null, 'file:///x.cu')?.contents as { value: string }).value;
    const links = [...text.matchAll(/\[([^\]]+)\]\(command:unrollLens\.showSass\?([^ )]+)/g)].map(m => [
      m[1],
      JSON.parse(decodeURIComponent(m[2]))[0],
    ]);
    assert.deepEqual(links, [
      ['as written', { uri: 'file:///x.cu', line: 4 }],
      ['default', { uri: 'file:///x.cu', line: 4, factor: 'default' }],
      ['4', { uri: 'file:///x.cu', line: 4, factor: '4' }],
    ]);
  });
});

describe('diagnostics', () => {
  test('map findings to LSP diagnostics with source and code', async () => {
    const d = diagnostics(await analyze('__global__ void k(int n) {\n#pragma unroll 2\n  n++;\n}'), DEFAULT_SETTINGS);
    assert.equal(d.length, 1);
    assert.equal(d[0].source, 'unroll-lens');
    assert.equal(d[0].code, 'pragma-without-loop');
    assert.deepEqual(d[0].range.start, { line: 1, character: 0 });
  });
});
