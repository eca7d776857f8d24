// Unit tests of the analyses over parsed SASS: opcode / class histograms
// (src/engine/sass/histogram.ts) and machine-code loops (src/engine/sass/loops.ts).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { parseCuobjdumpSass } from '../../src/engine/sass/cuobjdump';
import { parseNvdisasm } from '../../src/engine/sass/nvdisasm';
import { SASS_CLASSES, classHistogram, classifyInstruction, opcodeHistogram } from '../../src/engine/sass/histogram';
import { findSassLoops } from '../../src/engine/sass/loops';
import type { SassFunction, SassListing } from '../../src/engine/sass/model';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures');
const read = (rel: string): string => fs.readFileSync(path.join(FIXTURES, rel), 'utf8');

function fn(l: SassListing, name: string): SassFunction {
  const f = l.functions.find(x => x.name === name);
  if (!f) throw new Error(`no function ${name}`);
  return f;
}
const sum = (h: Record<string, number>): number => Object.values(h).reduce((a, b) => a + b, 0);

const matmul = () => parseCuobjdumpSass(read('sass/matmul.cuobjdump-sass.txt'));
const reduce = () => parseCuobjdumpSass(read('sass/reduce.cuobjdump-sass.txt'));

describe('histograms', () => {
  test('mm_pragma<16>: opcode counts checked with grep', () => {
    // awk '/Function : /{p=($3=="_Z9mm_pragmaILi16EEvPKfS1_Pfi")} /\.\.\.\.\.\.\.\.\.\./{p=0}
    //      p && /^[ \t]*\/\*[0-9a-f]+\*\//' matmul.cuobjdump-sass.txt
    //   | sed 's/^\s*\/\*[0-9a-f]*\*\/\s*//; s/^@!\?P[T0-9]*\s*//' | awk '{print $1}'
    //   | sed 's/[.;].*//' | sort | uniq -c
    const h = opcodeHistogram(fn(matmul(), '_Z9mm_pragmaILi16EEvPKfS1_Pfi'));
    assert.deepEqual(
      Object.entries(h).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
      [
        ['LDG', 34],
        ['IMAD', 26],
        ['FFMA', 17],
        ['NOP', 14],
        ['IADD3', 8],
        ['MOV', 8],
        ['BRA', 6],
        ['ISETP', 6],
        ['LDC', 6],
        ['S2R', 4],
        ['ULDC', 4],
        ['UIADD3', 3],
        ['EXIT', 2],
        ['LOP3', 2],
        ['UMOV', 2],
        ['HFMA2', 1],
        ['STG', 1],
      ],
    );
  });

  test('mm_pragma<16>: classes (HFMA2.MMA R17, -RZ, RZ, 0, 0 is a move)', () => {
    const f = fn(matmul(), '_Z9mm_pragmaILi16EEvPKfS1_Pfi');
    const h = classHistogram(f);
    assert.deepEqual(Object.keys(h), [...SASS_CLASSES]);
    assert.equal(sum(h), 144);
    assert.equal(h.FP32, 17); // FFMA
    assert.equal(h.LOAD_GLOBAL, 34); // LDG
    assert.equal(h.STORE_GLOBAL, 1); // STG
    assert.equal(h.INT, 42); // IMAD 26 + IADD3 8 + ISETP 6 + LOP3 2
    assert.equal(h.MOVE, 13); // MOV 8 + S2R 4 + HFMA2.MMA move idiom 1
    assert.equal(h.CONST, 10); // LDC 6 + ULDC 4
    assert.equal(h.BRANCH, 8); // BRA 6 + EXIT 2
    assert.equal(h.UNIFORM, 5); // UIADD3 3 + UMOV 2
    assert.equal(h.NOP, 14);
    assert.equal(h.FP16_TENSOR, 0);
    assert.equal(h.OTHER, 0);
  });

  test('with modifiers', () => {
    const h = opcodeHistogram(fn(matmul(), '_Z9mm_pragmaILi16EEvPKfS1_Pfi'), { withModifiers: true });
    assert.equal(h['LDG.E'], 34);
    assert.equal(h['HFMA2.MMA'], 1);
    assert.equal(sum(h), 144);
  });

  test('sums equal the instruction count for every function of every listing', () => {
    const listings = [
      matmul(),
      reduce(),
      parseNvdisasm(read('sass/matmul.nvdisasm-c-g.txt')),
      ...['sm_75', 'sm_80', 'sm_86', 'sm_89', 'sm_90'].map(a => parseCuobjdumpSass(read(`sass/elf/sasstest.${a}.cuobjdump-sass.txt`))),
    ];
    for (const l of listings) {
      for (const f of l.functions) {
        assert.equal(sum(opcodeHistogram(f)), f.instructions.length, f.name);
        assert.equal(sum(classHistogram(f)), f.instructions.length, f.name);
      }
    }
  });

  test('spills show up as LOCAL; shuffles, barriers and shared accesses in their classes', () => {
    const l = parseCuobjdumpSass(read('sass/elf/sasstest.sm_90.cuobjdump-sass.txt'));
    const spill = classHistogram(fn(l, '_Z12spill_kernelPfPKfi'));
    assert.ok(spill.LOCAL > 0);
    const shared = classHistogram(fn(l, '_Z11shared_callPfPKfi'));
    assert.equal(shared.SHARED, 2); // STS [R7], R2 ; LDS R0, [R0]
    assert.equal(shared.SYNC, 1); // BAR.SYNC.DEFER_BLOCKING 0x0
    assert.equal(classHistogram(fn(l, '_Z12inline_chainPfPKf')).SHUFFLE, 1); // SHFL.BFLY
  });

  test('classifyInstruction: idioms and prefixes', () => {
    const ins = (opcode: string, modifiers: string[] = [], operands = '') => ({ address: 0, predicate: null, opcode, modifiers, operands });
    assert.equal(classifyInstruction(ins('IMAD', ['MOV', 'U32'], 'R7, RZ, RZ, RZ')), 'MOVE');
    assert.equal(classifyInstruction(ins('IMAD', ['WIDE'], 'R2, R5, 0x4, R2')), 'INT');
    assert.equal(classifyInstruction(ins('HFMA2', ['MMA'], 'R3, -RZ, RZ, 0, 0')), 'MOVE');
    assert.equal(classifyInstruction(ins('HFMA2', [], 'R3, R4, R5, R6')), 'FP16_TENSOR');
    assert.equal(classifyInstruction(ins('HGMMA', ['64x128x16', 'F32'])), 'FP16_TENSOR');
    assert.equal(classifyInstruction(ins('ULDC', ['64'])), 'CONST');
    assert.equal(classifyInstruction(ins('USHF', ['R', 'U32', 'HI'])), 'UNIFORM');
    assert.equal(classifyInstruction(ins('LDSM', ['16', 'M88', '4'])), 'SHARED');
    assert.equal(classifyInstruction(ins('STL', ['64'])), 'LOCAL');
    assert.equal(classifyInstruction(ins('MUFU', ['EX2'])), 'SPECIAL');
    assert.equal(classifyInstruction(ins('BSYNC')), 'BRANCH');
    assert.equal(classifyInstruction(ins('WARPSYNC', ['COLLECTIVE'])), 'BRANCH');
    assert.equal(classifyInstruction(ins('DFMA')), 'FP64');
    assert.equal(classifyInstruction(ins('F2I', ['TRUNC'])), 'CONVERT');
    assert.equal(classifyInstruction(ins('ATOMG', ['E', 'ADD'])), 'ATOMIC');
    assert.equal(classifyInstruction(ins('NANOSLEEP')), 'OTHER');
    assert.equal(classifyInstruction(ins('U')), 'OTHER');
  });
});

describe('findSassLoops', () => {
  test('mm_pragma<16>: the unrolled-by-16 body and the remainder loop; the trap is no loop', () => {
    // matmul.cuobjdump-sass.txt, function _Z9mm_pragmaILi16EEvPKfS1_Pfi:
    //   /*0670*/ @P1 BRA 0x1f0 ;   backward: loop [0x1f0, 0x670] = (0x670-0x1f0)/16+1 = 73 instructions
    //   /*07b0*/ @P0 BRA 0x710 ;   backward: loop [0x710, 0x7b0] = 11 instructions
    //   /*0810*/     BRA 0x810;    branch to itself after EXIT: not a loop
    const loops = findSassLoops(fn(matmul(), '_Z9mm_pragmaILi16EEvPKfS1_Pfi'));
    assert.deepEqual(loops, [
      {
        headAddress: 0x1f0,
        branchAddress: 0x670,
        branchAddresses: [0x670],
        instructions: 73,
        parent: null,
        depth: 0,
        natural: true,
        predicated: true,
      },
      {
        headAddress: 0x710,
        branchAddress: 0x7b0,
        branchAddresses: [0x7b0],
        instructions: 11,
        parent: null,
        depth: 0,
        natural: true,
        predicated: true,
      },
    ]);
  });

  test('the same loops from nvdisasm labels as from cuobjdump addresses', () => {
    const a = parseNvdisasm(read('sass/matmul.nvdisasm-c-g.txt'));
    const b = matmul();
    for (const f of b.functions) assert.deepEqual(findSassLoops(fn(a, f.name)), findSassLoops(f), f.name);
    const c = parseNvdisasm(read('sass/reduce.nvdisasm-c-gi.txt'));
    for (const f of reduce().functions) assert.deepEqual(findSassLoops(fn(c, f.name)), findSassLoops(f), f.name);
  });

  test('loop counts of every matmul kernel', () => {
    const n = Object.fromEntries(matmul().functions.map(f => [f.name, findSassLoops(f).length]));
    assert.deepEqual(n, {
      _Z9mm_pragmaILi16EEvPKfS1_Pfi: 2, // unrolled body + remainder
      _Z9mm_pragmaILi8EEvPKfS1_Pfi: 2,
      _Z9mm_pragmaILi4EEvPKfS1_Pfi: 2,
      _Z9mm_pragmaILi2EEvPKfS1_Pfi: 1, // the remainder of 2 is straight-line code
      _Z9mm_manualILi16EEvPKfS1_Pfi: 1,
      _Z9mm_manualILi8EEvPKfS1_Pfi: 1,
      _Z9mm_manualILi4EEvPKfS1_Pfi: 1,
      _Z9mm_manualILi2EEvPKfS1_Pfi: 1,
      _Z10mm_defaultPKfS0_Pfi: 3,
      _Z8mm_basicPKfS0_Pfi: 1,
    });
  });

  test('reduce: the jump back from the out-of-line shuffle fallback is not a natural loop', () => {
    // reduce.cuobjdump-sass.txt, _Z21reduceCompleteUnroll8ILj512EEvPiS0_j:
    //   /*0500*/ BRA.DIV UR6, 0x720 ;  (to the fallback)   /*0960*/ BRA 0x660 ;  (back into the main path)
    // 0x720 is reached from 0x500 without passing 0x660, so 0x660 does not dominate 0x960.
    const loops = findSassLoops(fn(reduce(), '_Z21reduceCompleteUnroll8ILj512EEvPiS0_j'));
    assert.equal(loops.length, 1);
    assert.deepEqual([loops[0].headAddress, loops[0].branchAddress, loops[0].natural, loops[0].predicated], [0x660, 0x960, false, false]);
    // reduceInterleaved: /*01d0*/ @P0 BRA 0x100 ;  its stride loop [0x100, 0x1d0] is natural.
    const inter = findSassLoops(fn(reduce(), '_Z17reduceInterleavedPiS_j'));
    assert.deepEqual(
      inter.map(x => [x.headAddress, x.branchAddress, x.instructions, x.natural]),
      [[0x100, 0x1d0, 14, true]],
    );
  });

  test('nested_loops (sm_90): two nested loops plus the m<=0 loop, with parents', () => {
    // sasstest.sm_90.cuobjdump-sass.txt, _Z12nested_loopsPfPKfii:
    //   /*0120*/ @!P0 BRA 0xf0 ;    loop [0x0f0, 0x120]  (the i loop when the j loop is empty)
    //   /*0260*/ @!P0 BRA 0x1f0 ;   loop [0x1f0, 0x260]  inner j loop
    //   /*0280*/ @!P2 BRA 0x170 ;   loop [0x170, 0x280]  outer i loop
    const l = parseCuobjdumpSass(read('sass/elf/sasstest.sm_90.cuobjdump-sass.txt'));
    const loops = findSassLoops(fn(l, '_Z12nested_loopsPfPKfii'));
    assert.deepEqual(
      loops.map(x => [x.headAddress, x.branchAddress, x.instructions, x.parent, x.depth, x.natural]),
      [
        [0x0f0, 0x120, 4, null, 0, true],
        [0x170, 0x280, 18, null, 0, true],
        [0x1f0, 0x260, 8, 1, 1, true],
      ],
    );
  });

  test('a loop inside a callee placed in the caller section is natural (CALL targets are roots)', () => {
    // sasstest.sm_90 shared_call: the helper at 0x190 loops with /*0290*/ @!P0 BRA `(.L_x_3) -> 0x210.
    const l = parseNvdisasm(read('sass/elf/sasstest.sm_90.nvdisasm-c.txt'));
    const loops = findSassLoops(fn(l, '_Z11shared_callPfPKfi'));
    assert.deepEqual(
      loops.map(x => [x.headAddress, x.branchAddress, x.natural]),
      [[0x210, 0x290, true]],
    );
  });

  test('two back edges to one head make one loop; unresolved targets are ignored', () => {
    const text = [
      '\t.section\t.text.k,"ax",@progbits',
      '        /*0000*/                   MOV R0, RZ ;',
      '.L_x_0:',
      '        /*0010*/                   IADD3 R0, R0, 0x1, RZ ;',
      '        /*0020*/               @P0 BRA `(.L_x_0) ;',
      '        /*0030*/                   IADD3 R0, R0, 0x2, RZ ;',
      '        /*0040*/               @P1 BRA `(.L_x_0) ;',
      '        /*0050*/                   BRA `(.L_x_missing) ;',
      '        /*0060*/                   EXIT ;',
    ].join('\n');
    const loops = findSassLoops(parseNvdisasm(text).functions[0]);
    assert.deepEqual(loops, [
      {
        headAddress: 0x10,
        branchAddress: 0x40,
        branchAddresses: [0x20, 0x40],
        instructions: 4,
        parent: null,
        depth: 0,
        natural: true,
        predicated: true,
      },
    ]);
  });

  test('no loops in a straight-line or empty function', () => {
    const l = parseCuobjdumpSass(read('sass/elf/sasstest.sm_90.cuobjdump-sass.txt'));
    assert.deepEqual(findSassLoops(fn(l, '_Z12inline_chainPfPKf')), []);
    assert.deepEqual(findSassLoops({ name: 'x', instructions: [], bytes: 0 }), []);
  });
});
