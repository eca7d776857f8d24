// Unit tests of the nvdisasm reader (src/engine/sass/nvdisasm.ts): instruction counts, labels
// and source-line attribution (-g) with inline chains (-gi), on real listings.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { parseNvdisasm, outermostLocation, parseFileComment } from '../../src/engine/sass/nvdisasm';
import { parseCuobjdumpSass } from '../../src/engine/sass/cuobjdump';
import type { SassFunction, SassInstruction, SassListing } from '../../src/engine/sass/model';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures');
const read = (rel: string): string => fs.readFileSync(path.join(FIXTURES, rel), 'utf8');

function fn(l: SassListing, name: string): SassFunction {
  const f = l.functions.find(x => x.name === name);
  if (!f) throw new Error(`no function ${name}`);
  return f;
}
function at(f: SassFunction, address: number): SassInstruction {
  const i = f.instructions.find(x => x.address === address);
  if (!i) throw new Error(`no instruction at 0x${address.toString(16)} in ${f.name}`);
  return i;
}
/** Strips the parts cuobjdump cannot know (source lines, labels), to compare the two readers. */
function plain(l: SassListing) {
  return l.functions.map(f => ({
    name: f.name,
    bytes: f.bytes,
    instructions: f.instructions.map(i => [i.address, i.predicate, i.opcode, i.modifiers.join('.'), i.target ?? null]),
  }));
}

const MATMUL = '/home/dev/kernels/matmul.cu';
const REDUCE = '/home/dev/kernels/reduce.cu';
const INTRINSICS = '/usr/local/cuda/bin/../targets/x86_64-linux/include/sm_30_intrinsics.hpp';

describe('parseNvdisasm: H200 fixtures', () => {
  test('matmul -c -g: counts equal the cuobjdump listing of the same cubin', () => {
    // awk '/^\t\.section\t\.text\./{split($2,a,","); n=substr(a[1],7); o[++k]=n}
    //      /^[ \t]*\/\*[0-9a-f]+\*\//{c[n]++} END{for(i=1;i<=k;i++) print o[i], c[o[i]]}' matmul.nvdisasm-c-g.txt
    const l = parseNvdisasm(read('sass/matmul.nvdisasm-c-g.txt'));
    assert.equal(l.arch, 'sm_90');
    assert.deepEqual(
      l.functions.map(f => [f.name, f.instructions.length]),
      [
        ['_Z9mm_pragmaILi16EEvPKfS1_Pfi', 144],
        ['_Z9mm_pragmaILi8EEvPKfS1_Pfi', 104],
        ['_Z9mm_pragmaILi4EEvPKfS1_Pfi', 88],
        ['_Z9mm_pragmaILi2EEvPKfS1_Pfi', 80],
        ['_Z9mm_manualILi16EEvPKfS1_Pfi', 184],
        ['_Z9mm_manualILi8EEvPKfS1_Pfi', 120],
        ['_Z9mm_manualILi4EEvPKfS1_Pfi', 88],
        ['_Z9mm_manualILi2EEvPKfS1_Pfi', 64],
        ['_Z10mm_defaultPKfS0_Pfi', 216],
        ['_Z8mm_basicPKfS0_Pfi', 56],
      ],
    );
    // Same instructions, and label targets resolve to the addresses cuobjdump prints.
    assert.deepEqual(plain(l), plain(parseCuobjdumpSass(read('sass/matmul.cuobjdump-sass.txt'))));
  });

  test('reduce -c -gi: same instructions and targets as cuobjdump', () => {
    // Counts (same awk as above): 160, 80, 64, 56, 152, 48.
    const l = parseNvdisasm(read('sass/reduce.nvdisasm-c-gi.txt'));
    assert.deepEqual(
      l.functions.map(f => f.instructions.length),
      [160, 80, 64, 56, 152, 48],
    );
    assert.deepEqual(plain(l), plain(parseCuobjdumpSass(read('sass/reduce.cuobjdump-sass.txt'))));
  });

  test('labels: `(.L_x_2) resolves to 0x1f0; the trailing label marks the end', () => {
    const f = fn(parseNvdisasm(read('sass/matmul.nvdisasm-c-g.txt')), '_Z9mm_pragmaILi16EEvPKfS1_Pfi');
    // /*0670*/ @P1 BRA `(.L_x_2) ;   with   .L_x_2: before /*01f0*/
    const bra = at(f, 0x670);
    assert.deepEqual([bra.predicate, bra.opcode, bra.targetLabel, bra.target], ['@P1', 'BRA', '.L_x_2', 0x1f0]);
    assert.equal(f.labels!['.L_x_2'], 0x1f0);
    assert.equal(f.labels!['_Z9mm_pragmaILi16EEvPKfS1_Pfi'], 0);
    // .L_x_42: after the last NOP (0x8f0) = the function's end.
    assert.equal(f.labels!['.L_x_42'], 0x900);
    assert.equal(f.bytes, 0x900);
    // /*0810*/ BRA `(.L_x_4);  the end-of-code trap
    assert.equal(at(f, 0x810).target, 0x810);
  });

  test('-g: the last //## File comment applies until the next one', () => {
    const f = fn(parseNvdisasm(read('sass/matmul.nvdisasm-c-g.txt')), '_Z9mm_pragmaILi16EEvPKfS1_Pfi');
    // Checked by hand against matmul.nvdisasm-c-g.txt lines 15-40 and 153-160.
    const line = (a: number) => at(f, a).source;
    assert.deepEqual(line(0x0000), { file: MATMUL, line: 42 });
    assert.deepEqual(line(0x0010), { file: MATMUL, line: 43 });
    assert.deepEqual(line(0x0020), { file: MATMUL, line: 44 });
    assert.deepEqual(line(0x0030), { file: MATMUL, line: 43 });
    assert.deepEqual(line(0x0050), { file: MATMUL, line: 43 }); // no comment of its own
    assert.deepEqual(line(0x0060), { file: MATMUL, line: 44 });
    assert.deepEqual(line(0x0670), { file: MATMUL, line: 47 }); // loop branch, comment at 0x00e0
    assert.deepEqual(line(0x07c0), { file: MATMUL, line: 48 });
    assert.deepEqual(line(0x0800), { file: MATMUL, line: 50 }); // EXIT
    assert.deepEqual(line(0x08f0), { file: MATMUL, line: 50 }); // padding keeps the last one
    // A new section starts without a location until its first comment.
    const next = fn(parseNvdisasm(read('sass/matmul.nvdisasm-c-g.txt')), '_Z9mm_pragmaILi8EEvPKfS1_Pfi');
    assert.ok(next.instructions[0].source);
  });

  test('-gi: an inlined shuffle carries its call site; the next instruction does not', () => {
    const f = fn(parseNvdisasm(read('sass/reduce.nvdisasm-c-gi.txt')), '_Z21reduceCompleteUnroll8ILj512EEvPiS0_j');
    // reduce.nvdisasm-c-gi.txt lines 121-131:
    //   //## File "…/reduce.cu", line 79
    //   /*0500*/ BRA.DIV UR6, `(.L_x_10) ;
    //   //## File "…/sm_30_intrinsics.hpp", line 110 inlined at "…/reduce.cu", line 79
    //   //## File "…/reduce.cu", line 79
    //   /*0510*/ NOP ;
    //   //## File "…/reduce.cu", line 79
    //   /*0520*/ LDG.E.STRONG.SYS R4, desc[UR4][R6.64] ;
    assert.deepEqual(at(f, 0x500).source, { file: REDUCE, line: 79 });
    assert.deepEqual(at(f, 0x510).source, { file: INTRINSICS, line: 110, inlinedAt: [{ file: REDUCE, line: 79 }] });
    assert.deepEqual(at(f, 0x520).source, { file: REDUCE, line: 79 });
    // The out-of-line fallback after `.L_x_10:` (0x720) is the same inlined shuffle, line 79.
    assert.deepEqual(at(f, 0x720).source, { file: INTRINSICS, line: 110, inlinedAt: [{ file: REDUCE, line: 79 }] });
    // …and line 80 for the second group (0x5b0).
    assert.deepEqual(at(f, 0x5b0).source, { file: INTRINSICS, line: 110, inlinedAt: [{ file: REDUCE, line: 80 }] });
    assert.deepEqual(outermostLocation(at(f, 0x5b0).source!), { file: REDUCE, line: 80 });
    assert.deepEqual(outermostLocation(at(f, 0x520).source!), { file: REDUCE, line: 79 });
    // Every instruction after the first comment has a location.
    assert.ok(f.instructions.every(i => i.source !== undefined));
  });
});

describe('parseNvdisasm: local sasstest listings (nvdisasm 13.0)', () => {
  const CU = '/work/main/test/fixtures/sass/elf/sasstest.cu';
  const HPP = '/usr/local/cuda-13.0/bin/../targets/x86_64-linux/include/sm_30_intrinsics.hpp';

  test('-gi: a three-level inline chain (shfl in inner_op in middle_op in the kernel)', () => {
    const f = fn(parseNvdisasm(read('sass/elf/sasstest.sm_90.nvdisasm-c-gi.txt')), '_Z12inline_chainPfPKf');
    // sasstest.sm_90.nvdisasm-c-gi.txt lines 30-43. sasstest.cu: line 59 is the shuffle in
    // inner_op, 62 the call of inner_op in middle_op, 66 the call of middle_op in the kernel.
    assert.deepEqual(at(f, 0xb0).source, {
      file: HPP,
      line: 449,
      inlinedAt: [
        { file: CU, line: 59 },
        { file: CU, line: 62 },
        { file: CU, line: 66 },
      ],
    });
    assert.equal(at(f, 0xb0).opcode, 'SHFL');
    assert.deepEqual(at(f, 0xc0).source, {
      file: CU,
      line: 59,
      inlinedAt: [
        { file: CU, line: 62 },
        { file: CU, line: 66 },
      ],
    });
    assert.deepEqual(at(f, 0xd0).source, { file: CU, line: 62, inlinedAt: [{ file: CU, line: 66 }] });
    assert.deepEqual(at(f, 0xe0).source, { file: CU, line: 66 });
    assert.deepEqual(outermostLocation(at(f, 0xb0).source!), { file: CU, line: 66 });
  });

  test('-g of the same cubin: only the innermost frame', () => {
    const f = fn(parseNvdisasm(read('sass/elf/sasstest.sm_90.nvdisasm-c-g.txt')), '_Z12inline_chainPfPKf');
    assert.deepEqual(at(f, 0xb0).source, { file: HPP, line: 449 });
    assert.deepEqual(at(f, 0xc0).source, { file: CU, line: 59 });
    assert.deepEqual(at(f, 0xd0).source, { file: CU, line: 62 });
    assert.deepEqual(at(f, 0xe0).source, { file: CU, line: 66 });
  });

  test('without -c: data sections (.nv.info, .debug_frame …) are skipped', () => {
    const all = parseNvdisasm(read('sass/elf/sasstest.sm_90.nvdisasm-gi-all.txt'));
    const codeOnly = parseNvdisasm(read('sass/elf/sasstest.sm_90.nvdisasm-c-gi.txt'));
    // awk over -gi-all counting only /*addr*/ lines of .text.* sections: 32, 248, 56, 56, 40.
    assert.deepEqual(
      all.functions.map(f => f.instructions.length),
      [32, 248, 56, 56, 40],
    );
    assert.deepEqual(all, codeOnly);
  });

  test('a callee placed in its caller section stays in that section; its entry is a label', () => {
    const f = fn(parseNvdisasm(read('sass/elf/sasstest.sm_90.nvdisasm-c.txt')), '_Z11shared_callPfPKfi');
    assert.equal(f.instructions.length, 56);
    // /*0130*/ CALL.REL.NOINC `($_Z11shared_callPfPKfi$_Z6helperPKfi) ;  callee at 0x190
    assert.equal(f.labels!['$_Z11shared_callPfPKfi$_Z6helperPKfi'], 0x190);
    assert.equal(at(f, 0x130).target, 0x190);
    // /*02c0*/ RET.REL.NODEC R2 `(_Z11shared_callPfPKfi) ;  -> 0 (as cuobjdump's "0x0")
    assert.equal(at(f, 0x2c0).target, 0);
  });

  test('sm_75 .sectioninfo SHI_REGISTERS gives the register count', () => {
    const l = parseNvdisasm(read('sass/elf/sasstest.sm_75.nvdisasm-c.txt'));
    assert.equal(l.arch, 'sm_75');
    // .sectioninfo @"SHI_REGISTERS=10" for inline_chain; cuobjdump -res-usage says REG:10.
    assert.equal(fn(l, '_Z12inline_chainPfPKf').registers, 10);
    assert.equal(fn(l, '_Z12spill_kernelPfPKfi').registers, 24);
  });

  for (const arch of ['sm_75', 'sm_80', 'sm_86', 'sm_89', 'sm_90']) {
    test(`${arch}: nvdisasm -c and cuobjdump -sass agree instruction by instruction`, () => {
      const a = parseNvdisasm(read(`sass/elf/sasstest.${arch}.nvdisasm-c.txt`));
      const b = parseCuobjdumpSass(read(`sass/elf/sasstest.${arch}.cuobjdump-sass.txt`));
      assert.deepEqual(plain(a), plain(b));
    });
  }
});

describe('parseFileComment', () => {
  test('plain, one inlined-at, several inlined-at on one line', () => {
    assert.deepEqual(parseFileComment('\t//## File "/a.cu", line 12', 5), [{ file: '/a.cu', line: 12 }]);
    assert.deepEqual(parseFileComment('//## File "/x.h", line 3 inlined at "/a.cu", line 9', 4), [
      { file: '/x.h', line: 3 },
      { file: '/a.cu', line: 9 },
    ]);
    assert.deepEqual(parseFileComment('//## File "/x.h", line 3 inlined at "/y.h", line 4 inlined at "/a.cu", line 9', 4), [
      { file: '/x.h', line: 3 },
      { file: '/y.h', line: 4 },
      { file: '/a.cu', line: 9 },
    ]);
    assert.equal(parseFileComment('//## Something else', 4), null);
    assert.equal(parseFileComment('//## File "/a.cu", line', 4), null);
  });

  test('a chain on one line is the same as the chain spread over lines', () => {
    const body = '        /*0000*/                   NOP ;\n';
    const oneLine = parseNvdisasm(
      '\t.section\t.text.k,"ax",@progbits\n\t//## File "/x.h", line 3 inlined at "/y.h", line 4 inlined at "/a.cu", line 9\n' + body,
    );
    const spread = parseNvdisasm(
      '\t.section\t.text.k,"ax",@progbits\n\t//## File "/x.h", line 3 inlined at "/y.h", line 4\n' +
        '\t//## File "/y.h", line 4 inlined at "/a.cu", line 9\n\t//## File "/a.cu", line 9\n' +
        body,
    );
    assert.deepEqual(oneLine.functions[0].instructions[0].source, spread.functions[0].instructions[0].source);
    assert.deepEqual(spread.functions[0].instructions[0].source, {
      file: '/x.h',
      line: 3,
      inlinedAt: [
        { file: '/y.h', line: 4 },
        { file: '/a.cu', line: 9 },
      ],
    });
  });
});
