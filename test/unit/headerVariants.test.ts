// A loop in a header: its variants are built by compiling a translation unit that includes the
// header, with the header replaced through an overlay folder. Real nvcc builds (skipped without
// nvcc, as variants.test.ts): every include layout must reach the variant, the variant's SASS must
// equal that of the same edit made by hand, a path the overlay cannot shadow fails loudly, and the
// build cache keys on the variant text and the unit, never on the original header's text.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, lineOf, SAMPLES, useCudaTools } from './helpers';
import { flagsFromSettings, resolveCompileFlags, type CompileFlags } from '../../src/engine/toolchain/flags';
import { markedLineName } from '../../src/engine/variants/depFile';
import { VariantBuilder } from '../../src/engine/variants/build';
import { NotInstantiatedError, VariantInspector } from '../../src/engine/variants/inspect';
import { makeVariantSource } from '../../src/engine/variants/rewrite';
import { isHeaderFile, planOverlay } from '../../src/engine/variants/overlay';
import { findTranslationUnit, includesHeader, unitsByTextSearch } from '../../src/engine/variants/translationUnit';
import { parseNvdisasm } from '../../src/engine/sass';
import { codeLenses, hover } from '../../src/server/features';
import { HeaderUnits } from '../../src/server/headers';
import { Commands, DEFAULT_SETTINGS } from '../../src/protocol';
import { UnrollFactors } from '../../src/engine/variants/factors';

const cuda = useCudaTools(['nvdisasm']);

const HEADER = `#pragma once
__device__ __forceinline__ float hsum(const float* __restrict__ a, int n)
{
  float s = 0.0f;
#pragma unroll 4
  for (int k = 0; k < n; ++k) s += a[k];
  return s;
}
`;
const HEADER_LOOP = lineOf(HEADER, 'for (');

function unit(include: string): string {
  return `#include ${include}\n__global__ void k(const float* a, float* y, int n) { y[threadIdx.x] = hsum(a + threadIdx.x * n, n); }\n`;
}

/** A throw-away project: files by relative path → text. */
function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-hdr-'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

function setup(tu: string, flags: CompileFlags, cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-hdr-cache-'))) {
  const t = cuda.toolchain!;
  const builder = new VariantBuilder({ nvcc: t.nvcc, arch: 'sm_90', flags, cacheDir, runner: t.runner, translationUnit: tu });
  return { builder, inspector: new VariantInspector({ toolchain: t, builder, arch: 'sm_90' }), cacheDir };
}

async function header(file: string) {
  const text = fs.readFileSync(file, 'utf8');
  return { file, text, analysis: await analyze(text, file) };
}

describe('header variants through a translation unit (overlay)', () => {
  test('header detection', () => {
    for (const f of ['a.cuh', 'b.h', 'c.hpp', 'd.inl', '/x/y/Z.CUH']) assert.ok(isHeaderFile(f), f);
    for (const f of ['a.cu', 'b.cpp', 'c.cc']) assert.ok(!isHeaderFile(f), f);
  });

  test('overlay layout: relative, -I, nested and ../include headers land where the unit looks', () => {
    const p = (s: string) => path.join('/p', s);
    assert.deepEqual(planOverlay(p('src/t.cu'), p('src/x.cuh'), []), {
      root: p('src'),
      unitRel: 't.cu',
      headerRel: 'x.cuh',
      includeDirs: [],
      spine: [''],
    });
    assert.deepEqual(planOverlay(p('src/t.cu'), p('include/x.cuh'), []), {
      root: '/p',
      unitRel: path.join('src', 't.cu'),
      headerRel: path.join('include', 'x.cuh'),
      includeDirs: [],
      spine: ['', 'include', 'src'],
    });
    // Every include folder under the root is shadowed (its files' own `"…"` includes stay in the overlay).
    assert.deepEqual(planOverlay(p('src/t.cu'), p('include/lib/x.cuh'), [`-I${p('include')}`, '-I', p('other')]), {
      root: '/p',
      unitRel: path.join('src', 't.cu'),
      headerRel: path.join('include', 'lib', 'x.cuh'),
      includeDirs: [
        { dir: p('include'), rel: 'include' },
        { dir: p('other'), rel: 'other' },
      ],
      spine: ['', 'include', 'other', 'src', path.join('include', 'lib')],
    });
  });

  const layouts: { name: string; files: Record<string, string>; tu: string; header: string; includePaths?: string[] }[] = [
    { name: 'relative include from the same folder', files: { 't.cu': unit('"x.cuh"'), 'x.cuh': HEADER }, tu: 't.cu', header: 'x.cuh' },
    {
      name: 'include through -I',
      files: { 'src/t.cu': unit('"x.cuh"'), 'include/x.cuh': HEADER },
      tu: 'src/t.cu',
      header: 'include/x.cuh',
      includePaths: ['include'],
    },
    {
      name: 'angle include through -I, nested folder',
      files: { 'src/t.cu': unit('<lib/ops/x.cuh>'), 'include/lib/ops/x.cuh': HEADER },
      tu: 'src/t.cu',
      header: 'include/lib/ops/x.cuh',
      includePaths: ['include'],
    },
    {
      name: 'nested relative include',
      files: { 't.cu': unit('"sub/deep/x.cuh"'), 'sub/deep/x.cuh': HEADER },
      tu: 't.cu',
      header: 'sub/deep/x.cuh',
    },
    {
      name: '../include/x.cuh, with a sibling header of the unit still found',
      files: {
        'src/t.cu': `#include "local.h"\n${unit('"../include/x.cuh"')}`,
        'src/local.h': '#define LOCAL 1\n',
        'include/x.cuh': `#include "detail.h"\n${HEADER}`,
        'include/detail.h': '#define DETAIL 1\n',
      },
      tu: 'src/t.cu',
      header: 'include/x.cuh',
    },
  ];
  for (const l of layouts) {
    test(`${l.name}: unroll 1 and 4 build through the overlay, and differ`, async t => {
      if (cuda.skip) return t.skip(cuda.skip);
      const dir = tree(l.files);
      const h = await header(path.join(dir, l.header));
      const { inspector } = setup(path.join(dir, l.tu), flagsFromSettings({ includePaths: l.includePaths ?? [] }, dir));
      const line = lineOf(h.text, 'for (');
      const r = await inspector.inspectLoop(h.file, h.text, h.analysis, line, UnrollFactors.of([1, 4]));
      for (const v of r.variants) assert.equal(v.status, 'ok', `${v.factor}: ${v.failure?.messages.map(m => m.message).join('\n')}`);
      const [one, four] = r.variants;
      assert.equal(one.effectiveUnroll, 1);
      assert.equal(four.effectiveUnroll, 4);
      assert.ok(four.kernelInstructions! > one.kernelInstructions!, `×4 ${four.kernelInstructions} vs ×1 ${one.kernelInstructions}`);
    });
  }

  test('the sample: a variant equals the same edit made by hand in a copy of the header (nvcc + nvdisasm)', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const src = path.join(SAMPLES, 'header_loops');
    const h = await header(path.join(src, 'tile_ops.cuh'));
    const tu = path.join(src, 'header_loops.cu');
    assert.equal(findTranslationUnit(h.file, [SAMPLES]), tu, 'compile_commands.json names the unit');
    const flags = resolveCompileFlags(tu, [SAMPLES], {});
    assert.match(flags.source, /compile_commands\.json/);
    const { builder } = setup(tu, flags);
    const line = lineOf(h.text, 'for (int k = 0; k < n; ++k) s += a[k] * x[k]');
    const [b1, b4] = await builder.buildAll(
      [1, 4].map(f => ({
        key: String(f),
        source: makeVariantSource(h.text, h.analysis, new Map([[line, f]]), h.file),
        originalPath: h.file,
      })),
    );
    // The same edits by hand, in a copy of the sample, compiled as an ordinary .cu file.
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-hdr-hand-'));
    const handBuilds = [];
    for (const f of [1, 4]) {
      const d = path.join(copy, String(f));
      fs.mkdirSync(d);
      fs.writeFileSync(path.join(d, 'tile_ops.cuh'), h.text.replace(/^#pragma unroll 4$/m, `#pragma unroll ${f}`));
      fs.copyFileSync(tu, path.join(d, 'header_loops.cu'));
      const text = fs.readFileSync(path.join(d, 'header_loops.cu'), 'utf8');
      const a = await analyze(text, path.join(d, 'header_loops.cu'));
      const plain = new VariantBuilder({
        nvcc: cuda.toolchain!.nvcc,
        arch: 'sm_90',
        flags,
        cacheDir: fs.mkdtempSync(path.join(copy, 'c-')),
        runner: cuda.toolchain!.runner,
      });
      handBuilds.push(
        (
          await plain.buildAll([
            {
              key: 'hand',
              source: makeVariantSource(text, a, new Map(), path.join(d, 'header_loops.cu')),
              originalPath: path.join(d, 'header_loops.cu'),
            },
          ])
        )[0],
      );
    }
    const code = async (cubin: string, kernel: string) => {
      const listing = parseNvdisasm((await cuda.toolchain!.runner(cuda.toolchain!.nvdisasm!.path, ['-c', cubin])).stdout);
      const fn = listing.functions.find(f => f.name.includes(kernel));
      assert.ok(fn, `${kernel} in ${cubin}`);
      return fn!.instructions.map(
        i => `${i.predicate ?? ''} ${i.opcode}.${i.modifiers.join('.')} ${i.operands.replace(/\.L_x_\d+/g, 'L')}`,
      );
    };
    for (const [i, b] of [b1, b4].entries()) {
      assert.equal(b.status, 'ok', b.messages.map(m => m.message).join('\n'));
      assert.equal(handBuilds[i].status, 'ok');
      assert.deepEqual(await code(b.outputPath!, 'rows_dot'), await code(handBuilds[i].outputPath!, 'rows_dot'), `×${[1, 4][i]}`);
    }
    const n1 = (await code(b1.outputPath!, 'rows_dot')).length;
    const n4 = (await code(b4.outputPath!, 'rows_dot')).length;
    assert.ok(n4 > n1, `×4 ${n4} vs ×1 ${n1} instructions`);
  });

  test('a header the overlay cannot shadow (absolute include) fails with a clear message, never the original SASS', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const dir = tree({ 'include/x.cuh': HEADER });
    fs.writeFileSync(path.join(dir, 't.cu'), unit(`"${path.join(dir, 'include', 'x.cuh')}"`));
    const h = await header(path.join(dir, 'include/x.cuh'));
    const { inspector } = setup(path.join(dir, 't.cu'), flagsFromSettings({}, dir));
    const r = await inspector.inspectLoop(h.file, h.text, h.analysis, HEADER_LOOP, UnrollFactors.of([1, 4]));
    for (const v of r.variants) {
      assert.equal(v.status, 'failed');
      assert.equal(v.kernelInstructions, null);
      assert.match(v.failure!.messages[0].message, /includes .*x\.cuh through a path the overlay cannot shadow/);
    }
  });

  test('a unit that does not include the header says so', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const dir = tree({ 'x.cuh': HEADER, 't.cu': '__global__ void k(float* y) { y[0] = 1.0f; }\n' });
    const h = await header(path.join(dir, 'x.cuh'));
    const { builder } = setup(path.join(dir, 't.cu'), flagsFromSettings({}, dir));
    const [b] = await builder.buildAll([
      { key: 'w', source: makeVariantSource(h.text, h.analysis, new Map(), h.file), originalPath: h.file },
    ]);
    assert.equal(b.status, 'failed');
    assert.match(b.messages[0].message, /does not include .*x\.cuh/);
  });

  test('a function the unit never calls: "does not instantiate", not an empty table', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const src = path.join(SAMPLES, 'header_loops');
    const h = await header(path.join(src, 'tile_ops.cuh'));
    const tu = path.join(src, 'header_loops.cu');
    const { inspector } = setup(tu, resolveCompileFlags(tu, [SAMPLES], {}));
    await assert.rejects(
      inspector.inspectLoop(h.file, h.text, h.analysis, lineOf(h.text, 'dst[i] = src[i] * f'), UnrollFactors.of([1, 2])),
      (e: Error) => e instanceof NotInstantiatedError && /header_loops\.cu does not instantiate scaled_copy/.test(e.message),
    );
  });

  test('cache: keyed on the variant text and the unit; the original header is no dependency', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const dir = tree({ 't.cu': unit('"x.cuh"'), 'x.cuh': HEADER });
    const tu = path.join(dir, 't.cu');
    const hFile = path.join(dir, 'x.cuh');
    const h = await header(hFile);
    const { builder, cacheDir } = setup(tu, flagsFromSettings({}, dir));
    const req = (text: string, f: number) => ({
      key: String(f),
      source: makeVariantSource(text, h.analysis, new Map([[HEADER_LOOP, f]]), hFile),
      originalPath: hFile,
    });
    const [first] = await builder.buildAll([req(h.text, 4)]);
    assert.equal(first.status, 'ok');
    assert.equal(builder.compiles, 1);
    // The build handed out is a lease (a link in this process's folder); the entry's own
    // result.json is sealed (cacheEntry.ts) in the cache's layout: its record is the body.
    const stored = (fs.readdirSync(cacheDir, { recursive: true }) as string[]).filter(
      p => path.basename(p) === 'result.json' && !p.split(path.sep).includes('tmp'),
    );
    assert.equal(stored.length, 1, `one stored entry: ${stored.join(', ')}`);
    const sealed = JSON.parse(fs.readFileSync(path.join(cacheDir, stored[0]), 'utf8')) as { body: string };
    const entry = JSON.parse(sealed.body) as { cache: { deps: { path: string }[] } };
    const deps: string[] = entry.cache.deps.map((d: { path: string }) => d.path);
    assert.ok(deps.includes(tu), 'the unit is a dependency');
    assert.ok(!deps.some(d => path.resolve(d) === hFile), 'the original header is not');
    assert.ok(!deps.some(d => d.startsWith(cacheDir)), 'nor the overlay copies');
    // The original header changes on disk but the variant text is the same: still a hit.
    fs.writeFileSync(hFile, HEADER.replace('s += a[k]', 's += 2.0f * a[k]'));
    const [again] = await builder.buildAll([req(h.text, 4)]);
    assert.equal(again.cached, true);
    // An edited header is a new variant text: a new build, with other code.
    const edited = HEADER.replace('s += a[k]', 's += a[k] * a[k]');
    const [changed] = await builder.buildAll([req(edited, 4)]);
    assert.equal(changed.cached, false);
    assert.notEqual(changed.hash, first.hash);
    assert.equal(builder.compiles, 2);
    // The unit changes: the old entry no longer holds.
    fs.appendFileSync(tu, '// edited\n');
    const [unitEdited] = await builder.buildAll([req(h.text, 4)]);
    assert.equal(unitEdited.cached, false);
    assert.equal(builder.compiles, 3);
    // Another unit for the same header and text: another key.
    fs.copyFileSync(tu, path.join(dir, 't2.cu'));
    const other = setup(path.join(dir, 't2.cu'), flagsFromSettings({}, dir), cacheDir).builder;
    assert.notEqual(other.hashOf(req(h.text, 4)), builder.hashOf(req(h.text, 4)));
  });

  test('the marked #line name resolves to the header', () => {
    assert.equal(path.resolve(markedLineName('/a/b/x.cuh')), '/a/b/x.cuh');
    assert.notEqual(markedLineName('/a/b/x.cuh'), '/a/b/x.cuh');
  });
});

describe('choosing the translation unit', () => {
  test('textual #include check: exact relative path, or the same file name', () => {
    assert.deepEqual(includesHeader('#include "x.cuh"\n', '/p/t.cu', '/p/x.cuh'), { exact: true });
    assert.deepEqual(includesHeader('  #  include "../inc/x.cuh"\n', '/p/src/t.cu', '/p/inc/x.cuh'), { exact: true });
    assert.deepEqual(includesHeader('#include <lib/x.cuh>\n', '/p/src/t.cu', '/p/inc/lib/x.cuh'), { exact: false });
    assert.equal(includesHeader('// #include "x.cuh"\n#include "y.cuh"\n', '/p/t.cu', '/p/x.cuh'), null);
  });

  test('compile_commands.json entries that include the header, nearest first; else a text search', () => {
    const dir = tree({
      'a/far.cu': '#include "../inc/x.cuh"\n',
      'inc/near.cu': '#include "x.cuh"\n',
      'inc/other.cu': '// nothing\n',
      'inc/x.cuh': HEADER,
      'b/found.cu': '#include "../inc/x.cuh"\n',
    });
    fs.writeFileSync(
      path.join(dir, 'compile_commands.json'),
      JSON.stringify(['a/far.cu', 'inc/near.cu', 'inc/other.cu'].map(f => ({ directory: '.', file: f, command: `nvcc -c ${f}` }))),
    );
    const h = path.join(dir, 'inc/x.cuh');
    assert.equal(findTranslationUnit(h, [dir]), path.join(dir, 'inc/near.cu'));
    assert.deepEqual(
      unitsByTextSearch(h, [dir]).map(c => path.relative(dir, c.file)),
      ['inc/near.cu', 'a/far.cu', 'b/found.cu'],
    );
    fs.rmSync(path.join(dir, 'compile_commands.json'));
    assert.equal(findTranslationUnit(h, [dir]), null);
  });
});

describe('a header in the server: CodeLens and hover', () => {
  test('no translation unit: the SASS lens offers the chooser and the hover says why; no GPU lenses', async () => {
    const file = path.join(SAMPLES, 'header_loops', 'tile_ops.cuh');
    const text = fs.readFileSync(file, 'utf8');
    const a = await analyze(text, file);
    const uri = `file://${file}`;
    const none = codeLenses(uri, a, DEFAULT_SETTINGS, null, { unit: null, via: null });
    const choose = none.filter(l => l.command?.command === Commands.chooseTranslationUnit);
    assert.equal(choose.length, 4, 'one per loop');
    assert.deepEqual(choose[0].command!.arguments, [{ uri }]);
    assert.ok(!none.some(l => l.command?.command === Commands.benchmarkLoop || l.command?.command === Commands.sweepKernel));
    assert.ok(!none.some(l => l.command?.command === Commands.showSass), 'no SASS listing without a translation unit');
    const line = lineOf(text, 's += a[k] * x[k]');
    const h = hover(a, { line: line - 1, character: 3 }, null, { unit: null, via: null });
    assert.match((h!.contents as { value: string }).value, /Choose Translation Unit for Header/);
    const tu = path.join(SAMPLES, 'header_loops', 'header_loops.cu');
    const known = codeLenses(uri, a, DEFAULT_SETTINGS, null, { unit: tu, via: 'compile_commands' });
    assert.equal(known.filter(l => l.command?.command === Commands.sassVariants).length, 4);
    assert.equal(known.filter(l => l.command?.command === Commands.showSass).length, 4);
    const h2 = hover(a, { line: line - 1, character: 3 }, null, { unit: tu, via: 'compile_commands' });
    assert.match((h2!.contents as { value: string }).value, /built through `header_loops\.cu` \(compile_commands\.json\)/);
  });

  test('HeaderUnits: the user choice wins over compile_commands.json; a .cu file has none', () => {
    const units = new HeaderUnits(() => [SAMPLES]);
    const h = path.join(SAMPLES, 'header_loops', 'tile_ops.cuh');
    const tu = path.join(SAMPLES, 'header_loops', 'header_loops.cu');
    assert.deepEqual(units.unitFor(h), { unit: tu, via: 'compile_commands' });
    assert.equal(units.unitFor(tu), null);
    const other = path.join(SAMPLES, 'matvec.cu');
    units.set(h, other);
    assert.deepEqual(units.unitFor(h), { unit: other, via: 'chosen' });
    assert.deepEqual(
      units.candidates(h).candidates.map(c => [c.path, c.via, c.exact]),
      [[tu, 'compile_commands', true]],
    );
    units.set(h, null);
    assert.equal(units.unitFor(h)!.via, 'compile_commands');
  });
});
