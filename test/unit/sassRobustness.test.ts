// Robustness of the SASS readers: garbage, empty and truncated input never throws and gives
// empty (or partial) results; a large synthetic cuobjdump listing (the H200 matmul fixture's
// functions renamed and repeated to about 8 MB) parses completely. Timing is not asserted here
// (see the report for measurements); the readers are single-pass and line-based.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { parseCuobjdumpSass, parseCuobjdumpSassByArch, parseResUsage, parseResUsageByArch } from '../../src/engine/sass/cuobjdump';
import { parseNvdisasm } from '../../src/engine/sass/nvdisasm';
import { parsePtxasLog, parsePtxasVerbose } from '../../src/engine/sass/ptxas';
import { classHistogram, opcodeHistogram } from '../../src/engine/sass/histogram';
import { findSassLoops } from '../../src/engine/sass/loops';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures');
const read = (rel: string): string => fs.readFileSync(path.join(FIXTURES, rel), 'utf8');

const TEXT_PARSERS: [string, (s: string) => unknown][] = [
  ['parseCuobjdumpSass', parseCuobjdumpSass],
  ['parseCuobjdumpSassByArch', parseCuobjdumpSassByArch],
  ['parseNvdisasm', parseNvdisasm],
  ['parseResUsage', parseResUsage],
  ['parseResUsageByArch', parseResUsageByArch],
  ['parsePtxasLog', parsePtxasLog],
  ['parsePtxasVerbose', parsePtxasVerbose],
];

/** Deterministic pseudo-random generator (LCG). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 0x100000000;
  };
}

describe('garbage and empty input', () => {
  test('empty strings give empty results', () => {
    assert.deepEqual(parseCuobjdumpSass(''), { arch: null, functions: [] });
    assert.deepEqual(parseCuobjdumpSassByArch(''), []);
    assert.deepEqual(parseNvdisasm(''), { arch: null, functions: [] });
    assert.equal(parseResUsage('').size, 0);
    assert.deepEqual(parsePtxasLog(''), { functions: [], gmemBytes: [], warnings: [], errors: [] });
    assert.equal(parsePtxasVerbose('').size, 0);
  });

  test('non-string input does not throw', () => {
    for (const [name, parse] of TEXT_PARSERS) {
      for (const bad of [undefined, null, 42, {}, []]) {
        assert.doesNotThrow(() => parse(bad as unknown as string), name);
      }
    }
  });

  test('random text, random lines of fixture tokens, and binary data do not throw', () => {
    const rand = rng(7);
    const pieces = [
      '/*',
      '*/',
      '/*0010*/',
      '/* 0x000fe2 */',
      'Function :',
      'code for sm_90',
      '.section\t.text.',
      '//## File "',
      '", line ',
      ' inlined at "',
      '`(.L_x_',
      ')',
      ';',
      '@P0',
      '@!PT',
      'BRA',
      '0x',
      'ptxas info    : ',
      'Used ',
      'registers',
      ', ',
      'bytes cmem[',
      ']',
      "Compiling entry function '",
      "' for '",
      'Function properties for ',
      'REG:',
      'CONSTANT[',
      ']:',
      'Fatbin elf code:',
      'Fatbin ptx code:',
      'arch = ',
      '..........',
      '\n',
      '\r\n',
      '\t',
      ' ',
    ];
    for (let k = 0; k < 300; k++) {
      let s = '';
      const n = Math.floor(rand() * 200);
      for (let i = 0; i < n; i++) {
        s += rand() < 0.8 ? pieces[Math.floor(rand() * pieces.length)] : String.fromCharCode(Math.floor(rand() * 0x3000));
      }
      for (const [name, parse] of TEXT_PARSERS) assert.doesNotThrow(() => parse(s), name);
      for (const f of parseCuobjdumpSass(s).functions.concat(parseNvdisasm(s).functions)) {
        assert.doesNotThrow(() => findSassLoops(f));
        assert.doesNotThrow(() => classHistogram(f));
      }
    }
    const bin = fs.readFileSync(path.join(FIXTURES, 'sass', 'elf', 'sasstest.sm_90.cubin')).toString('latin1');
    for (const [name, parse] of TEXT_PARSERS) assert.doesNotThrow(() => parse(bin), name);
    assert.deepEqual(parseCuobjdumpSass(bin).functions, []);
  });

  test('odd opcode names are counted too', () => {
    const l = parseCuobjdumpSass('\tcode for sm_90\n\t\tFunction : k\n /*0000*/ __proto__ R0 ;\n /*0010*/ constructor ;\n');
    const h = opcodeHistogram(l.functions[0]);
    assert.equal(
      Object.values(h).reduce((a, b) => a + b, 0),
      2,
    );
    assert.equal(Object.getOwnPropertyDescriptor(h, '__proto__')?.value, 1);
  });
});

describe('truncated listings', () => {
  const cases: [string, (s: string) => { functions: { instructions: unknown[] }[] }][] = [
    ['sass/matmul.cuobjdump-sass.txt', parseCuobjdumpSass],
    ['sass/reduce.nvdisasm-c-gi.txt', parseNvdisasm],
  ];
  for (const [file, parse] of cases) {
    test(`${file}: every prefix parses to at most the full count`, () => {
      const text = read(file);
      const full = parse(text).functions.reduce((n, f) => n + f.instructions.length, 0);
      let last = 0;
      for (let cut = 0; cut <= text.length; cut += 997) {
        const got = parse(text.substring(0, cut)).functions.reduce((n, f) => n + f.instructions.length, 0);
        assert.ok(got <= full && got >= last, `cut ${cut}: ${got}`);
        last = got;
      }
      assert.equal(
        parse(text.substring(0, text.length)).functions.reduce((n, f) => n + f.instructions.length, 0),
        full,
      );
    });
  }

  test('ptxas and res-usage prefixes', () => {
    for (const file of ['ptxas/bloat.ptxas-v.txt', 'sass/elf/sasstest.multiarch.ptxas-v.txt', 'sass/matmul.cuobjdump-res-usage.txt']) {
      const text = read(file);
      for (let cut = 0; cut <= text.length; cut += 13) {
        const part = text.substring(0, cut);
        assert.doesNotThrow(() => parsePtxasLog(part));
        assert.doesNotThrow(() => parseResUsageByArch(part));
      }
    }
  });
});

/**
 * A cuobjdump listing of `copies` copies of the matmul fixture, each function renamed
 * `<name>_copy<k>` (test-side helper for the size test).
 */
function bigListing(copies: number): { text: string; instructions: number; functions: number } {
  const base = read('sass/matmul.cuobjdump-sass.txt');
  const parts: string[] = [];
  for (let k = 0; k < copies; k++) parts.push(base.replace(/Function : (\S+)/g, (_m, name: string) => `Function : ${name}_copy${k}`));
  return { text: parts.join(''), instructions: 1144 * copies, functions: 10 * copies };
}

describe('large listings', () => {
  test('an ~8 MB cuobjdump listing parses completely', () => {
    const big = bigListing(35);
    assert.ok(big.text.length > 8_000_000, `${big.text.length} chars`);
    const l = parseCuobjdumpSass(big.text);
    assert.equal(l.arch, 'sm_90');
    assert.equal(l.functions.length, big.functions);
    assert.equal(
      l.functions.reduce((n, f) => n + f.instructions.length, 0),
      big.instructions,
    );
    assert.equal(l.functions[big.functions - 1].name, '_Z8mm_basicPKfS0_Pfi_copy34');
  });

  test('an ~8 MB nvdisasm listing parses completely', () => {
    const base = read('sass/reduce.nvdisasm-c-gi.txt');
    const parts: string[] = [];
    for (let k = 0; k < 160; k++) parts.push(base.replace(/\.text\.(_Z\w+)/g, (_m, name: string) => `.text.${name}_copy${k}`));
    const text = parts.join('');
    assert.ok(text.length > 8_000_000);
    const l = parseNvdisasm(text);
    assert.equal(l.functions.length, 6 * 160);
    assert.equal(
      l.functions.reduce((n, f) => n + f.instructions.length, 0),
      560 * 160,
    );
  });
});
