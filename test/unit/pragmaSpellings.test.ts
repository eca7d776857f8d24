// Unroll pragmas spelt through macros defined in real headers, in every form nvcc accepts: a
// `#pragma unroll` body (CUTLASS's and CuTe's nvcc branch), `#pragma unroll N`, macros that expand
// to other pragma macros, `_Pragma(#n)` stringising and a generic `PRAGMA(unroll 4)`. A header's
// definition replaces the built-in table's and must still be recognised.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { documents, kernel, lineOf } from './helpers';
import { MacroTables } from '../../src/engine/parse/macros';

const HEADER = [
  '#pragma once',
  '#if defined(__CUDA_ARCH__)',
  '#  define CUTLASS_PRAGMA_UNROLL #pragma unroll',
  '#  define CUTLASS_PRAGMA_NO_UNROLL #pragma unroll 1',
  '#  define LIB_UNROLL_4 %:pragma unroll 4',
  '#else',
  '#  define CUTLASS_PRAGMA_UNROLL',
  '#  define CUTLASS_PRAGMA_NO_UNROLL',
  '#  define LIB_UNROLL_4',
  '#endif',
  '#define LIB_GEMM_LOOP CUTLASS_PRAGMA_NO_UNROLL',
  '#define LIB_P(n) _Pragma(#n)',
  '#define LIB_UNROLL_N(n) LIB_P(unroll n)',
  '#define LIB_PRAGMA(x) _Pragma(#x)',
  '#define LIB_DEVICE __forceinline__ __device__',
].join('\n');

const SOURCE = [
  '#include "lib/config.h"',
  'template <int N>',
  '__global__ void k(float* x) {',
  '  CUTLASS_PRAGMA_UNROLL',
  '  for (int i = 0; i < 4; ++i) x[i] = 0; // full',
  '  LIB_GEMM_LOOP',
  '  for (int i = 0; i < 4; ++i) x[i] = 1; // one',
  '  LIB_UNROLL_4',
  '  for (int i = 0; i < 16; ++i) x[i] = 2; // four',
  '  LIB_P(unroll)',
  '  for (int i = 0; i < 16; ++i) x[i] = 3; // stringised',
  '  LIB_UNROLL_N(2)',
  '  for (int i = 0; i < 16; ++i) x[i] = 4; // nested',
  '  LIB_PRAGMA(unroll 8)',
  '  for (int i = 0; i < 16; ++i) x[i] = 5; // generic',
  '  LIB_PRAGMA(nv_diag_suppress 177)',
  '  for (int i = 0; i < 16; ++i) x[i] = 6; // not an unroll pragma',
  '}',
  'LIB_DEVICE void d(float* x) {',
  '  CUTLASS_PRAGMA_UNROLL for (int i = 0; i < 2; ++i) x[i] = 0; // same line',
  '}',
].join('\n');

function project(): { file: string; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-spell-'));
  fs.mkdirSync(path.join(dir, 'lib'));
  fs.writeFileSync(path.join(dir, 'lib/config.h'), HEADER);
  fs.writeFileSync(path.join(dir, 'k.cu'), SOURCE);
  return { file: path.join(dir, 'k.cu'), dir };
}

describe('pragma macros from headers, every spelling nvcc accepts', () => {
  test('each loop gets the pragma its macro expands to, with the header as origin', async () => {
    const { file, dir } = project();
    const { table } = new MacroTables().tableFor(file, SOURCE, { includeDirs: [], systemIncludeDirs: [], defines: [], arch: 'sm_90' });
    assert.equal(table.pragma('CUTLASS_PRAGMA_UNROLL')?.expandsTo, 'unroll');
    assert.deepEqual(table.pragma('CUTLASS_PRAGMA_UNROLL')?.origin, { kind: 'header', file: path.join(dir, 'lib/config.h'), line: 3 });
    assert.equal(table.pragma('LIB_GEMM_LOOP')?.expandsTo, 'unroll 1');
    assert.equal(table.pragma('LIB_UNROLL_4')?.expandsTo, 'unroll 4');
    assert.equal(table.pragma('LIB_P')?.expandsTo, '$1');
    assert.equal(table.pragma('LIB_UNROLL_N')?.expandsTo, 'unroll $1');
    const a = (await documents()).analyzeOnce(SOURCE, file, table);
    const k = kernel(a, 'k');
    const got = k.loops.map(l => [l.line, l.pragma?.kind ?? null, l.pragma?.factor ?? null, l.pragma?.macro?.name ?? null]);
    assert.deepEqual(got, [
      [lineOf(SOURCE, '// full'), 'full', null, 'CUTLASS_PRAGMA_UNROLL'],
      [lineOf(SOURCE, '// one'), 'disable', 1, 'LIB_GEMM_LOOP'],
      [lineOf(SOURCE, '// four'), 'count', 4, 'LIB_UNROLL_4'],
      [lineOf(SOURCE, '// stringised'), 'full', null, 'LIB_P'],
      [lineOf(SOURCE, '// nested'), 'count', 2, 'LIB_UNROLL_N'],
      [lineOf(SOURCE, '// generic'), 'count', 8, 'LIB_PRAGMA'],
      [lineOf(SOURCE, '// not an unroll'), null, null, null],
    ]);
    assert.equal(k.loops.find(l => l.pragma?.macro?.name === 'LIB_PRAGMA')?.pragma?.macro?.written, 'LIB_PRAGMA(unroll 8)');
    const d = kernel(a, 'd');
    assert.equal(d.qualifier, 'device');
    assert.deepEqual([d.loops.length, d.loops[0]?.pragma?.kind], [1, 'full']);
  });

  test('the host branch (no __CUDA_ARCH__) defines them empty: no pragma from them', async () => {
    const { file } = project();
    const { table } = new MacroTables().tableFor(file, SOURCE, {
      includeDirs: [],
      systemIncludeDirs: [],
      defines: ['-__CUDA_ARCH__'],
      arch: 'sm_90',
    });
    assert.equal(table.pragma('CUTLASS_PRAGMA_UNROLL'), undefined);
    const a = (await documents()).analyzeOnce(SOURCE, file, table);
    const names = kernel(a, 'k').loops.map(l => l.pragma?.macro?.name ?? null);
    assert.ok(!names.includes('CUTLASS_PRAGMA_UNROLL') && !names.includes('LIB_UNROLL_4'), names.join());
    assert.ok(names.includes('LIB_P'), 'the unconditional definitions still count');
  });
});
