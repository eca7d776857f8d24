// Macros read from the file and its headers (src/engine/parse/macros/): C preprocessor
// expansion, #if as nvcc's device pass takes it, include search, per-header effects reused only
// where what they read is the same, and what the analyser makes of it (qualifiers, pragma
// macros, hover, variants). The nvcc checks compare our expansions with `nvcc -E`'s.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { execFileSync } from 'child_process';
import { documents, findCcclInclude, kernel, lineOf, SAMPLES, useCudaTools } from './helpers';
import { expandText, parseDefine, MacroDefinition } from '../../src/engine/parse/macros/expand';
import { evaluateCondition } from '../../src/engine/parse/macros/condition';
import { readDirectives, includeGuard } from '../../src/engine/parse/macros/directives';
import { MacroTable, MacroTables, PreprocessOptions, preprocessOptionsFromFlags, toolkitIncludeDirs } from '../../src/engine/parse/macros';
import { loopHoverMarkdown } from '../../src/engine/parse/describe';
import { computeFindings } from '../../src/engine/parse/findings';
import { applyUnrollEdit, unrollPragmaEdit } from '../../src/engine/variants/applyEdit';
import { editMayChangeMacros } from '../../src/server/macros';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { VariantBuilder } from '../../src/engine/variants/build';
import { VariantInspector } from '../../src/engine/variants/inspect';
import { UnrollFactors } from '../../src/engine/variants/factors';

function defs(...lines: string[]): Map<string, MacroDefinition> {
  const m = new Map<string, MacroDefinition>();
  for (const l of lines) {
    const d = parseDefine(l, 't.h', 1)!;
    m.set(d.name, d);
  }
  return m;
}

const NO_INCLUDES = { hasInclude: () => false };

function tmpProject(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-macros-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

function options(extra: Partial<PreprocessOptions> = {}): PreprocessOptions {
  return { includeDirs: [], systemIncludeDirs: [], defines: [], arch: 'sm_90', ...extra };
}

async function analyzeWith(text: string, file: string, table: MacroTable) {
  return (await documents()).analyzeOnce(text, file, table);
}

describe('macro expansion (C preprocessor rules)', () => {
  test('object-like, function-like, # and ##, __VA_ARGS__, __VA_OPT__, no self-recursion', () => {
    const m = defs(
      'STR2(x) #x',
      'STR(x) STR2(x)',
      'PRAGMA(x) _Pragma(STR(x))',
      'UNROLL(n) PRAGMA(unroll n)',
      'UNROLL_FULL() PRAGMA(unroll)',
      'CAT(a, b) a##b',
      'N 8',
      'FIRST(a, ...) a',
      'REST(a, ...) __VA_ARGS__',
      'OPT(a, ...) a __VA_OPT__(, __VA_ARGS__)',
      'SELF SELF + 1',
      'EMPTY',
    );
    assert.equal(expandText('UNROLL(4)', m).result, '_Pragma("unroll 4")');
    assert.equal(expandText('UNROLL(N)', m).result, '_Pragma("unroll 8")', 'arguments are expanded before substitution');
    assert.equal(expandText('UNROLL_FULL()', m).result, '_Pragma("unroll")');
    assert.deepEqual(expandText('UNROLL_FULL()', m).steps, [
      'PRAGMA(unroll)',
      '_Pragma(STR(unroll))',
      '_Pragma(STR2(unroll))',
      '_Pragma("unroll")',
    ]);
    assert.equal(expandText('STR2(N)', m).result, '"N"', '# takes the argument unexpanded');
    assert.equal(expandText('CAT(U, N)', m).result, 'UN');
    assert.equal(expandText('CAT(x, EMPTY)', m).result, 'xEMPTY', '## pastes the unexpanded argument');
    assert.equal(expandText('FIRST(1, 2, 3)', m).result, '1');
    assert.equal(expandText('REST(1, 2, 3)', m).result, '2, 3');
    assert.equal(expandText('OPT(1)', m).result, '1');
    assert.equal(expandText('OPT(1, 2)', m).result, '1, 2');
    assert.equal(expandText('SELF', m).result, 'SELF + 1');
    assert.equal(expandText('UNROLL', m).result, 'UNROLL', 'a function-like name without ( stays');
  });

  test('#if: defined, arithmetic, function-like macros, feature tests, malformed is false', () => {
    const m = defs('ARCH 900', 'IS_DEV() (ARCH >= 700)', 'VER(maj, min) ((maj) * 100 + (min))', 'ZERO 0');
    const c = (t: string) => evaluateCondition(t, { macros: m, ...NO_INCLUDES });
    assert.equal(c('defined(ARCH) && ARCH >= 800'), true);
    assert.equal(c('defined ZERO && !ZERO'), true);
    assert.equal(c('IS_DEV() && VER(13, 0) >= VER(12, 4)'), true);
    assert.equal(c('UNDEFINED_NAME'), false);
    assert.equal(c('__has_builtin(__builtin_assume) || 0'), false);
    assert.equal(c('(1 << 4) == 16 && 7 / 2 == 3 && -1 < 0 ? 1 : 0'), true);
    assert.equal(c('0x10 == 16 && 010 == 8 && 100000UL == 100000'), true);
    assert.equal(c('1 +'), false);
    assert.equal(evaluateCondition('__has_include(<x.h>)', { macros: m, hasInclude: s => s === 'x.h' }), true);
  });

  test('directives: comments, continuations, block comments hiding directives; include guards', () => {
    const d = readDirectives(
      [
        '#ifndef G_H',
        '#define G_H',
        '/* #define HIDDEN 1',
        '   #include "nope.h" */',
        '#  define LONG(a) \\',
        '     (a + 1) // trailing',
        '#if 0 /* c */',
        '#endif',
        '#endif',
      ].join('\n'),
    );
    assert.deepEqual(
      d.map(x => [x.name, x.rest, x.line]),
      [
        ['ifndef', 'G_H', 1],
        ['define', 'G_H', 2],
        ['define', 'LONG(a)      (a + 1)', 5],
        ['if', '0', 7],
        ['endif', '', 8],
        ['endif', '', 9],
      ],
    );
    assert.equal(includeGuard(d), 'G_H');
    assert.equal(includeGuard(readDirectives('#ifndef A\n#define A\n#endif\n#define AFTER 1\n')), null);
  });
});

describe('macro environments: headers, #if for the device pass, reuse', () => {
  test('a project header read through the include path, branches taken for __CUDA_ARCH__', async () => {
    const dir = tmpProject({
      'include/proj/config.h': [
        '#pragma once',
        '#define P_STR_(x) #x',
        '#define P_STR(x) P_STR_(x)',
        '#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800',
        '#  define P_UNROLL(n) _Pragma(P_STR(unroll n))',
        '#else',
        '#  define P_UNROLL(n)',
        '#endif',
        '#ifdef __CUDACC__',
        '#  define P_DEVICE __device__ __forceinline__',
        '#  define P_KERNEL __global__',
        '#endif',
      ].join('\n'),
      'src/k.cu':
        '#include <proj/config.h>\nP_KERNEL void k(float* a, int n) {\n  P_UNROLL(4)\n  for (int i = 0; i < n; ++i) a[i] = 0;\n}\n',
    });
    const file = path.join(dir, 'src/k.cu');
    const text = fs.readFileSync(file, 'utf8');
    const tables = new MacroTables();
    const { table, env } = tables.tableFor(file, text, options({ includeDirs: [path.join(dir, 'include')] }));
    assert.deepEqual(env.unresolved, []);
    assert.equal(table.qualifier('P_KERNEL')?.qualifier, 'global');
    assert.deepEqual(table.qualifier('P_DEVICE')?.origin, { kind: 'header', file: path.join(dir, 'include/proj/config.h'), line: 10 });
    assert.equal(table.pragma('P_UNROLL')?.expandsTo, 'unroll $1');
    const a = await analyzeWith(text, file, table);
    assert.equal(a.hasSyntaxErrors, false);
    const k = kernel(a, 'k');
    assert.equal(k.qualifier, 'global');
    assert.deepEqual(k.loops[0].pragma?.macro?.origin, { kind: 'header', file: path.join(dir, 'include/proj/config.h'), line: 5 });
    assert.deepEqual([k.loops[0].pragma?.kind, k.loops[0].pragma?.factor], ['count', 4]);
    // An older GPU: the header's #else branch gives no pragma at all, and says nothing else.
    const old = tables.tableFor(file, text, options({ includeDirs: [path.join(dir, 'include')], arch: 'sm_75' })).table;
    assert.equal(old.pragma('P_UNROLL'), undefined);
    assert.equal(kernel(await analyzeWith(text, file, old), 'k').loops[0].pragma, null);
    // Not on the include path: found last through the project layout (src/ beside include/).
    const layout = tables.tableFor(file, text, options()).table;
    assert.equal(layout.qualifier('P_KERNEL')?.qualifier, 'global');
    // A header in no conventional place and on no path: nothing qualifies k (no built-in entry either).
    fs.renameSync(path.join(dir, 'include'), path.join(dir, 'hdrs'));
    const blind = new MacroTables().tableFor(file, text, options()).table;
    assert.deepEqual((await analyzeWith(text, file, blind)).kernels, []);
  });

  test('a header reused where what it read is the same, re-read where a file configures it first', () => {
    const dir = tmpProject({
      'lib.h':
        '#ifndef LIB_H\n#define LIB_H\n#ifdef LIB_FULL\n#define LIB_UNROLL _Pragma("unroll")\n#else\n#define LIB_UNROLL _Pragma("unroll 2")\n#endif\n#endif\n',
      'a.cu': '#include "lib.h"\n',
      'b.cu': '#define LIB_FULL\n#include "lib.h"\n',
      'c.cu': '#include "lib.h"\n#include "lib.h"\n',
    });
    const tables = new MacroTables();
    const t = (f: string) => tables.tableFor(path.join(dir, f), fs.readFileSync(path.join(dir, f), 'utf8'), options()).table;
    assert.equal(t('a.cu').pragma('LIB_UNROLL')?.expandsTo, 'unroll 2');
    assert.equal(t('b.cu').pragma('LIB_UNROLL')?.expandsTo, 'unroll', 'LIB_FULL defined before the include');
    assert.equal(t('c.cu').pragma('LIB_UNROLL')?.expandsTo, 'unroll 2', 'the guard makes the second include a no-op');
  });

  test('a changed header is read again after revalidate; an unchanged one is not', () => {
    const dir = tmpProject({ 'q.h': '#define Q_DEV __device__\n', 'q.cu': '#include "q.h"\n' });
    const file = path.join(dir, 'q.cu');
    const tables = new MacroTables();
    const first = tables.tableFor(file, '#include "q.h"\n', options());
    assert.equal(first.table.qualifier('Q_DEV')?.qualifier, 'device');
    assert.equal(tables.revalidate(), false);
    assert.equal(tables.tableFor(file, '#include "q.h"\n', options()), first, 'same directives, same headers: the same table');
    fs.writeFileSync(path.join(dir, 'q.h'), '#define Q_DEV __global__ /* now a kernel */\n');
    fs.utimesSync(path.join(dir, 'q.h'), new Date(), new Date(Date.now() + 5000));
    assert.equal(tables.revalidate(), true);
    assert.equal(tables.tableFor(file, '#include "q.h"\n', options()).table.qualifier('Q_DEV')?.qualifier, 'global');
    // Code (not directives) edited and saved: the header is read again, the tables stay.
    const kept = tables.tableFor(file, '#include "q.h"\n', options());
    fs.writeFileSync(path.join(dir, 'q.h'), '#define Q_DEV __global__ /* now a kernel */\nQ_DEV void k() { for (;;) {} }\n');
    fs.utimesSync(path.join(dir, 'q.h'), new Date(), new Date(Date.now() + 9000));
    assert.equal(tables.revalidate(), false, 'same directives: nothing to recompute');
    assert.equal(tables.tableFor(file, '#include "q.h"\n', options()), kept);
    // A directive moved to another line is a change (hover shows where a macro is defined).
    fs.writeFileSync(path.join(dir, 'q.h'), '\n#define Q_DEV __global__\n');
    fs.utimesSync(path.join(dir, 'q.h'), new Date(), new Date(Date.now() + 13000));
    assert.equal(tables.revalidate(), true);
    assert.equal(tables.tableFor(file, '#include "q.h"\n', options()).table.qualifier('Q_DEV')?.origin.kind, 'header');
  });

  test('names no readable header defines fall back to the built-in table, and hover says so', async () => {
    const text = '_CCCL_DEVICE void f(int* a) {\n  _CCCL_PRAGMA_UNROLL(4)\n  for (int i = 0; i < 64; ++i) a[i] = 0;\n}\n';
    const dir = tmpProject({ 'f.cu': text });
    const table = new MacroTables().tableFor(path.join(dir, 'f.cu'), text, options()).table;
    const a = await analyzeWith(text, path.join(dir, 'f.cu'), table);
    const k = kernel(a, 'f');
    assert.deepEqual(k.loops[0].pragma?.macro?.origin, { kind: 'builtin', library: 'CCCL' });
    const md = loopHoverMarkdown(k, k.loops[0]);
    assert.match(md, /`_CCCL_PRAGMA_UNROLL\(4\)` \(expands to `#pragma unroll 4`, built-in table \(CCCL\)\)/);
    assert.match(
      md,
      /Macro expansion \| `_CCCL_PRAGMA_UNROLL\(4\)` → `#pragma unroll 4` \(no header defining it was readable: built-in table \(CCCL\)\)/,
    );
  });

  test('compile flags: -I, -isystem, -D, -U and -rdc=true reach the preprocessor', () => {
    const o = preprocessOptionsFromFlags(
      { args: ['-Iinc', '-isystem', '/sys', '-DA=2', '-UB', '-rdc=true'], directory: '/proj', headerDefines: ['#define MSG "a b"'] },
      'sm_80',
      ['/cuda/include'],
    );
    assert.deepEqual(o, {
      includeDirs: ['/proj/inc'],
      systemIncludeDirs: ['/sys', '/cuda/include'],
      defines: ['__CUDACC_RDC__', 'A=2', '-B', 'MSG="a b"'],
      arch: 'sm_80',
    });
  });

  test('a reading that would take too long stops (the editor opens with the built-in table) and resumes later', () => {
    const dir = tmpProject({
      'big.h':
        Array.from({ length: 3000 }, (_, i) => `#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= ${i}\n#define M${i} ${i}\n#endif`).join(
          '\n',
        ) + '\n#define BIG_DEV __device__\n',
      'b.cu': '#include "big.h"\n',
    });
    const file = path.join(dir, 'b.cu');
    const tables = new MacroTables();
    assert.equal(tables.within(file, '#include "big.h"\n', options(), 0), null, 'no time at all: stops');
    const full = tables.tableFor(file, '#include "big.h"\n', options());
    assert.equal(full.table.qualifier('BIG_DEV')?.qualifier, 'device');
    assert.equal(tables.within(file, '#include "big.h"\n', options(), 0), full, 'known now: no reading needed');
  });

  test("which edits can change a file's macros", () => {
    const t = '#define N 4\n__global__ void k() {\n  int x = 1;\n}\n';
    assert.equal(editMayChangeMacros(t, t.indexOf('4'), 1, '8'), true, 'inside a #define');
    assert.equal(editMayChangeMacros(t, t.indexOf('1;'), 1, '2'), false, 'inside a body');
    assert.equal(editMayChangeMacros(t, t.indexOf('1;'), 0, '\n'), true, 'a new line (defines below move)');
    assert.equal(editMayChangeMacros(t, t.indexOf('int'), 0, '#'), true);
    // Found by the fuzzer (test/fuzz): a continuation line of a multi-line #define.
    const m = '#define UNR(n) \\\n  _Pragma("unroll 4")\n__global__ void k() {}\n';
    assert.equal(editMayChangeMacros(m, m.indexOf('4'), 1, '8'), true, 'a continuation line');
    assert.equal(editMayChangeMacros(m.replace('\\\n', '\\\r\n'), m.indexOf('4') + 1, 1, '8'), true, 'after a CRLF continuation');
    assert.equal(editMayChangeMacros(m, m.indexOf('{}') + 1, 0, 'x'), false, 'the line after the define');
    // A block comment opened or closed anywhere can hide or reveal the directives below it.
    const c = '__global__ void k() { int x = 1; /* y */ }\n#undef N\n';
    assert.equal(editMayChangeMacros(c, c.indexOf('int'), 0, '/*'), true, 'opens a comment');
    assert.equal(editMayChangeMacros(c, c.indexOf('*/'), 1, ''), true, "breaks a comment's end");
    assert.equal(editMayChangeMacros(c, c.indexOf('/*'), 0, '*'), true, 'after a slash');
    assert.equal(editMayChangeMacros(c, c.indexOf('y'), 1, 'z'), false, 'inside a comment');
    // What stood before a `#` on its line deleted: the line is a directive now (fuzz seed 4135269002).
    const d = '__global__ void k() {}\n}  #if 0\nint x;\n#endif\n';
    assert.equal(editMayChangeMacros(d, d.indexOf('}  #'), 1, ''), true, 'the `#if` starts its line now');
    assert.equal(editMayChangeMacros(d, d.indexOf('}  #'), 1, ' '), true, 'blanks only before it');
    assert.equal(editMayChangeMacros(d, d.indexOf('}  #'), 1, 'x'), false, 'still a token before it');
  });
});

describe("cuda-samples/project_macros: a project's own macros", () => {
  const dir = path.join(SAMPLES, 'project_macros');
  const file = path.join(dir, 'project_macros.cu');
  const header = path.join(dir, 'pm_config.h');
  const text = fs.readFileSync(file, 'utf8');
  const headerLine = (needle: string) => lineOf(fs.readFileSync(header, 'utf8'), needle);

  test('kernels and pragma macros are read from pm_config.h through every level; hover and diagnostics name them', async () => {
    const table = new MacroTables().tableFor(file, text, options()).table;
    const a = await analyzeWith(text, file, table);
    assert.equal(a.hasSyntaxErrors, false);
    assert.deepEqual(
      a.kernels.map(k => [k.name, k.qualifier, k.qualifierMacros]),
      [
        ['pm_axpy_rows', 'global', ['PM_KERNEL']],
        ['pm_horner', 'device', ['PM_DEVICE']],
        ['pm_poly', 'global', ['PM_KERNEL']],
      ],
    );
    const pragmas = a.kernels.flatMap(k =>
      k.loops.map(l => [l.pragma?.macro?.written, l.pragma?.kind, l.pragma?.factor, l.pragma?.macro?.origin]),
    );
    assert.deepEqual(pragmas, [
      ['PM_UNROLL(4)', 'count', 4, { kind: 'header', file: header, line: headerLine('define PM_UNROLL(n)') }],
      ['PM_UNROLL_ALL', 'full', null, { kind: 'header', file: header, line: headerLine('define PM_UNROLL_ALL') }],
      ['PM_NO_UNROLL', 'disable', 1, { kind: 'header', file: header, line: headerLine('define PM_NO_UNROLL') }],
    ]);
    const k = kernel(a, 'pm_axpy_rows');
    const md = loopHoverMarkdown(k, k.loops[0]);
    assert.match(md, /`PM_UNROLL\(4\)` \(expands to `#pragma unroll 4`, pm_config\.h:\d+\) → unroll 4 requested/);
    assert.match(
      md,
      /Macro expansion \| `PM_UNROLL\(4\)` → `PM_PRAGMA\(unroll 4\)` → .*`_Pragma\("unroll 4"\)` \(defined at .*pm_config\.h:\d+\)/,
    );
    assert.match(md, /Qualified by \| `PM_KERNEL` → `__global__` \(pm_config\.h:\d+\)/);
    assert.deepEqual(computeFindings(a), []);
  });

  test('variants replace the invocation: PM_UNROLL(4) → PM_UNROLL(8); PM_UNROLL_ALL → _Pragma("unroll 2")', async () => {
    const table = new MacroTables().tableFor(file, text, options()).table;
    const a = await analyzeWith(text, file, table);
    const loop = kernel(a, 'pm_axpy_rows').loops[0];
    const out = applyUnrollEdit(text, unrollPragmaEdit(text, loop, 8));
    assert.equal(out.split('\n')[loop.pragma!.line - 1].trim(), 'PM_UNROLL(8)');
    const full = kernel(a, 'pm_horner').loops[0];
    assert.equal(
      applyUnrollEdit(text, unrollPragmaEdit(text, full, 2))
        .split('\n')
        [full.pragma!.line - 1].trim(),
      '_Pragma("unroll 2")',
    );
  });
});

// ---- against nvcc ---------------------------------------------------------------------------

const cuda = useCudaTools();

describe('expansions agree with nvcc -E (device pass)', () => {
  test('CCCL qualifier and pragma macros, read from the toolkit headers, mean what nvcc makes of them', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const cccl = findCcclInclude();
    if (!cccl) return t.skip('no include/cccl');
    const uses = [
      '_CCCL_PRAGMA_UNROLL_FULL()',
      '_CCCL_PRAGMA_UNROLL(4)',
      '_CCCL_PRAGMA_NOUNROLL()',
      '_CCCL_DEVICE',
      '_CCCL_HOST_DEVICE',
      'THRUST_DEVICE_FUNCTION',
      'CUB_RUNTIME_FUNCTION',
    ];
    const src = `#include <cub/config.cuh>\n#include <thrust/system/cuda/config.h>\n${uses.map((u, i) => `void __ul_${i}() {\n${u}\n}`).join('\n')}\n`;
    const dir = tmpProject({ 'e.cu': src });
    const file = path.join(dir, 'e.cu');
    const pre = execFileSync(cuda.toolchain!.nvcc.path, ['-arch=sm_90', '-E', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
    const table = new MacroTables().tableFor(
      file,
      src,
      options({ systemIncludeDirs: toolkitIncludeDirs(cuda.toolchain!.nvcc.path) }),
    ).table;
    for (let i = 0; i < uses.length; i++) {
      const at = pre.indexOf(`__ul_${i}()`);
      const body = pre
        .slice(pre.indexOf('{', at) + 1, pre.indexOf('}', at))
        .split('\n')
        .filter(l => !/^#\s*\d+ /.test(l)) // line markers
        .join(' ')
        .trim();
      const name = uses[i].replace(/\(.*$/, '');
      const p = table.pragma(name);
      const q = table.qualifier(name);
      if (p) {
        assert.equal(p.origin.kind, 'header', name);
        const arg = /\((\d+)\)/.exec(uses[i])?.[1];
        assert.equal(body.replace(/\s+/g, ' '), `#pragma ${p.expandsTo.replace('$1', arg ?? '')}`, name);
      } else {
        assert.ok(q, `${name}: neither a qualifier nor a pragma`);
        assert.equal(q.origin.kind, 'header', name);
        // nvcc spells __device__ as __attribute__((device)) (host_defines.h).
        const kinds = ['global', 'device', 'host'].filter(k => new RegExp(`__attribute__\\(\\(${k}\\)\\)`).test(body));
        assert.equal(kinds.includes('device') ? 'device' : kinds[0], q.qualifier, `${name}: nvcc -E gave ${body}`);
      }
    }
  });

  test('project_macros.cu: variants of PM_UNROLL(4) build with nvcc and unroll as asked', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const dir = path.join(SAMPLES, 'project_macros');
    const file = path.join(dir, 'project_macros.cu');
    const text = fs.readFileSync(file, 'utf8');
    const table = new MacroTables().tableFor(file, text, options()).table;
    const analysis = await analyzeWith(text, file, table);
    const tc = cuda.toolchain!;
    const builder = new VariantBuilder({
      nvcc: tc.nvcc,
      arch: 'sm_90',
      flags: flagsFromSettings({}, dir),
      cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cache-')),
      runner: tc.runner,
    });
    const inspector = new VariantInspector({ toolchain: tc, builder, arch: 'sm_90' });
    const r = await inspector.inspectLoop(
      file,
      text,
      analysis,
      lineOf(text, 'for (int k = 0; k < cols; ++k)'),
      UnrollFactors.of([1, 4, 8]),
    );
    assert.deepEqual(
      r.variants.map(v => [v.factor, v.status, v.effectiveUnroll]),
      [
        [1, 'ok', 1],
        [4, 'ok', 4],
        [8, 'ok', 8],
      ],
    );
    assert.ok(
      r.variants[2].kernelInstructions! > r.variants[1].kernelInstructions! &&
        r.variants[1].kernelInstructions! > r.variants[0].kernelInstructions!,
    );
  });
});
