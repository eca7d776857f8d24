// Unit tests of the cubin ELF reader (src/engine/sass/elf.ts): real cubins built with nvcc 13.0
// (test/fixtures/sass/elf/, see build.sh and README.md there, plus any cubins another tool saved
// under test/fixtures/sass/local/), cross-checked against the cuobjdump / nvdisasm listings of
// the same files, and synthetic ELF files for the layouts nvcc 13 no longer writes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { readCubin, instructionCountFromElf, archFromFlags, EM_CUDA } from '../../src/engine/sass/elf';
import { parseCuobjdumpSass } from '../../src/engine/sass/cuobjdump';
import { parseNvdisasm } from '../../src/engine/sass/nvdisasm';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures');
const ELF_DIR = path.join(FIXTURES, 'sass', 'elf');
const LOCAL_DIR = path.join(FIXTURES, 'sass', 'local');

const bytes = (p: string): Uint8Array => new Uint8Array(fs.readFileSync(p));

describe('readCubin: nvcc 13.0 cubins (ELF ABI version 8)', () => {
  // readelf -SW sasstest.sm_90.cubin | grep ' .text.'  (sizes in hex):
  //   .text._Z12inline_chainPfPKf 0x200, .text._Z12spill_kernelPfPKfi 0xf80,
  //   .text._Z11shared_callPfPKfi 0x380, .text._Z12nested_loopsPfPKfii 0x380,
  //   .text._Z11simple_loopPfPKfi 0x280
  test('sm_90: arch from e_flags, every .text section with size and offset', () => {
    const c = readCubin(bytes(path.join(ELF_DIR, 'sasstest.sm_90.cubin')));
    assert.equal(c.arch, 'sm_90');
    assert.equal(c.machine, EM_CUDA);
    assert.equal(c.abiVersion, 8);
    assert.equal(c.osAbi, 0x41);
    // 0x0a… rather than 0x06…: this cubin was built with -lineinfo (see build.sh).
    assert.equal(c.flags, 0x0a005a04);
    assert.deepEqual(
      c.textSections.map(s => [s.kernel, s.size]),
      [
        ['_Z12inline_chainPfPKf', 0x200],
        ['_Z12spill_kernelPfPKfi', 0xf80],
        ['_Z11shared_callPfPKfi', 0x380],
        ['_Z12nested_loopsPfPKfii', 0x380],
        ['_Z11simple_loopPfPKfi', 0x280],
      ],
    );
    // readelf's Off column: 0x4880 for the first .text section.
    assert.equal(c.textSections[0].offset, 0x4880);
  });

  for (const [arch, flags] of [
    ['sm_75', 0x06004b04],
    ['sm_80', 0x06005004],
    ['sm_86', 0x06005604],
    ['sm_89', 0x06005904],
    ['sm_90', 0x0a005a04], // built with -lineinfo
  ] as const) {
    test(`${arch}: e_flags 0x${flags.toString(16)} -> ${arch}`, () => {
      const c = readCubin(bytes(path.join(ELF_DIR, `sasstest.${arch}.cubin`)));
      assert.equal(c.flags, flags);
      assert.equal(c.arch, arch);
      assert.equal(c.textSections.length, 5);
    });
  }

  test('the fat binary container is no ELF: empty result, no throw', () => {
    const c = readCubin(bytes(path.join(ELF_DIR, 'sasstest.fatbin')));
    assert.equal(c.arch, null);
    assert.deepEqual(c.textSections, []);
  });
});

/**
 * Every `X.cubin` with a saved `X.cuobjdump-sass.txt` (and/or `X.nvdisasm-c*.txt`) in the fixture
 * folders: the ELF section size / 16 must equal the number of instructions the tools list.
 */
function cubinsWithListings(dir: string): { cubin: string; listings: string[] }[] {
  if (!fs.existsSync(dir)) return [];
  const files = fs.readdirSync(dir);
  return files
    .filter(f => f.endsWith('.cubin'))
    .map(f => {
      const stem = f.slice(0, -'.cubin'.length);
      const listings = files.filter(
        g => g.startsWith(stem + '.') && (g.includes('.cuobjdump-sass') || g.includes('.nvdisasm-c')) && g.endsWith('.txt'),
      );
      return { cubin: path.join(dir, f), listings: listings.map(g => path.join(dir, g)) };
    })
    .filter(x => x.listings.length > 0);
}

describe('ELF instruction counts equal saved cuobjdump / nvdisasm listings', () => {
  const sets = [...cubinsWithListings(ELF_DIR), ...cubinsWithListings(LOCAL_DIR)];

  test('there are cubins with listings to compare', () => {
    // test/fixtures/sass/elf holds five cubins (sm_75 … sm_90), each with cuobjdump and nvdisasm listings.
    assert.ok(cubinsWithListings(ELF_DIR).length >= 5);
  });

  for (const { cubin, listings } of sets) {
    for (const listing of listings) {
      test(`${path.relative(FIXTURES, cubin)} vs ${path.basename(listing)}`, () => {
        const c = readCubin(bytes(cubin));
        const text = fs.readFileSync(listing, 'utf8');
        const l = listing.includes('.cuobjdump-sass') ? parseCuobjdumpSass(text) : parseNvdisasm(text);
        const fromElf = new Map(c.textSections.map(s => [s.kernel, instructionCountFromElf(s.size)]));
        const fromListing = new Map(l.functions.map(f => [f.name, f.instructions.length]));
        assert.ok(fromElf.size > 0);
        assert.deepEqual(new Map([...fromListing].sort()), new Map([...fromElf].sort()));
        for (const f of l.functions) {
          assert.equal(f.bytes, c.textSections.find(s => s.kernel === f.name)!.size, f.name);
        }
        // The listing's arch (when it prints one) is the ELF's.
        if (l.arch !== null) assert.equal(l.arch, c.arch);
      });
    }
  }
});

describe('archFromFlags and instructionCountFromElf', () => {
  test('new layout (ABI 8): SM in bits 8-15', () => {
    assert.equal(archFromFlags(0x06005a04, 8), 'sm_90');
    assert.equal(archFromFlags(0x06006402, 8), 'sm_100'); // nvcc 13 -arch=sm_100
    assert.equal(archFromFlags(0x06007802, 8), 'sm_120'); // nvcc 13 -arch=sm_120
  });
  test('old layout (ABI 7): SM in bits 0-7, virtual SM in bits 16-23', () => {
    // EF_CUDA_TEXMODE_UNIFIED | EF_CUDA_64BIT_ADDRESS | EF_CUDA_SM89 | EF_CUDA_VIRTUAL_SM(EF_CUDA_SM89)
    assert.equal(archFromFlags(0x00590559, 7), 'sm_89');
    assert.equal(archFromFlags(0x00500550, 7), 'sm_80');
    assert.equal(archFromFlags(0x00460546, 7), 'sm_70');
    assert.equal(archFromFlags(0, 7), null);
  });
  test('instructionCountFromElf', () => {
    assert.equal(instructionCountFromElf(0x900), 144);
    assert.equal(instructionCountFromElf(0), 0);
    assert.equal(instructionCountFromElf(-16), 0);
    assert.equal(instructionCountFromElf(NaN), 0);
  });
});

// ---------------------------------------------------------------------------------------------
// Synthetic ELF files (built here byte by byte) for layouts nvcc 13 does not write.

interface SynthSection {
  name: string;
  size: number;
  type?: number;
}
function buildElf(opts: {
  is64?: boolean;
  littleEndian?: boolean;
  osAbi?: number;
  abiVersion?: number;
  machine?: number;
  flags: number;
  sections: SynthSection[];
  extendedNumbering?: boolean;
}): Uint8Array {
  const is64 = opts.is64 ?? true;
  const le = opts.littleEndian ?? true;
  const ehsize = is64 ? 64 : 52;
  const shentsize = is64 ? 64 : 40;
  const names = ['', '.shstrtab', ...opts.sections.map(s => s.name)];
  const nameOff: number[] = [];
  let strtab = '';
  for (const n of names) {
    nameOff.push(strtab.length);
    strtab += n + '\0';
  }
  const strOff = ehsize;
  let cursor = strOff + strtab.length;
  const dataOff: number[] = [];
  for (const s of opts.sections) {
    cursor = Math.ceil(cursor / 16) * 16;
    dataOff.push(cursor);
    cursor += s.type === 8 ? 0 : s.size;
  }
  const shoff = Math.ceil(cursor / 8) * 8;
  const count = opts.sections.length + 2;
  const buf = new Uint8Array(shoff + count * shentsize);
  const v = new DataView(buf.buffer);
  buf.set([0x7f, 0x45, 0x4c, 0x46, is64 ? 2 : 1, le ? 1 : 2, 1, opts.osAbi ?? 0x33, opts.abiVersion ?? 7]);
  const w16 = (o: number, x: number) => v.setUint16(o, x, le);
  const w32 = (o: number, x: number) => v.setUint32(o, x, le);
  const w64 = (o: number, x: number) => v.setBigUint64(o, BigInt(x), le);
  w16(16, 1); // ET_REL
  w16(18, opts.machine ?? EM_CUDA);
  w32(20, 1);
  const shnumField = opts.extendedNumbering ? 0 : count;
  const shstrndxField = opts.extendedNumbering ? 0xffff : 1;
  if (is64) {
    w64(40, shoff);
    w32(48, opts.flags);
    w16(52, ehsize);
    w16(58, shentsize);
    w16(60, shnumField);
    w16(62, shstrndxField);
  } else {
    w32(32, shoff);
    w32(36, opts.flags);
    w16(40, ehsize);
    w16(46, shentsize);
    w16(48, shnumField);
    w16(50, shstrndxField);
  }
  for (let i = 0; i < strtab.length; i++) buf[strOff + i] = strtab.charCodeAt(i);
  const writeHeader = (idx: number, name: number, type: number, off: number, size: number, link = 0) => {
    const o = shoff + idx * shentsize;
    w32(o, name);
    w32(o + 4, type);
    if (is64) {
      w64(o + 24, off);
      w64(o + 32, size);
      w32(o + 40, link);
    } else {
      w32(o + 16, off);
      w32(o + 20, size);
      w32(o + 24, link);
    }
  };
  // Section 0: with extended numbering it holds the count (sh_size) and shstrndx (sh_link).
  writeHeader(0, 0, 0, 0, opts.extendedNumbering ? count : 0, opts.extendedNumbering ? 1 : 0);
  writeHeader(1, nameOff[1], 3, strOff, strtab.length);
  opts.sections.forEach((s, i) => writeHeader(i + 2, nameOff[i + 2], s.type ?? 1, dataOff[i], s.size));
  return buf;
}

describe('readCubin: synthetic ELF files', () => {
  const sections = [
    { name: '.nv.info', size: 24 },
    { name: '.text._Z3fooPf', size: 0x180 },
    { name: '.nv.shared._Z3fooPf', size: 1024, type: 8 /* SHT_NOBITS */ },
    { name: '.text._Z3barv', size: 0x80 },
  ];
  const want = [
    ['_Z3fooPf', 0x180],
    ['_Z3barv', 0x80],
  ];

  test('old ABI (CUDA 12 and earlier): ABI version 7, OSABI 0x33, sm_80 in the low byte', () => {
    const c = readCubin(buildElf({ flags: 0x00500550, sections }));
    assert.equal(c.arch, 'sm_80');
    assert.equal(c.abiVersion, 7);
    assert.equal(c.osAbi, 0x33);
    assert.deepEqual(
      c.textSections.map(s => [s.kernel, s.size]),
      want,
    );
  });

  test('ELF32, big-endian and extended section numbering', () => {
    assert.deepEqual(readCubin(buildElf({ is64: false, flags: 0x00460546, sections })).arch, 'sm_70');
    const be = readCubin(buildElf({ littleEndian: false, abiVersion: 8, osAbi: 0x41, flags: 0x06005a04, sections }));
    assert.equal(be.arch, 'sm_90');
    assert.deepEqual(
      be.textSections.map(s => [s.kernel, s.size]),
      want,
    );
    const ext = readCubin(buildElf({ extendedNumbering: true, flags: 0x00590559, sections }));
    assert.equal(ext.arch, 'sm_89');
    assert.deepEqual(
      ext.textSections.map(s => [s.kernel, s.size]),
      want,
    );
  });

  test('an ELF for another machine has sections but no CUDA arch', () => {
    const c = readCubin(buildElf({ machine: 62 /* x86-64 */, flags: 0x00500550, sections }));
    assert.equal(c.arch, null);
    assert.equal(c.textSections.length, 2);
  });
});

describe('readCubin never throws', () => {
  const real = bytes(path.join(ELF_DIR, 'sasstest.sm_90.cubin'));

  test('empty, tiny, random and non-ELF input', () => {
    for (const input of [
      new Uint8Array(0),
      new Uint8Array([0x7f, 0x45]),
      new Uint8Array(4096).fill(0xff),
      Buffer.from('not an elf at all'),
    ]) {
      const c = readCubin(input);
      assert.equal(c.arch, null);
      assert.deepEqual(c.textSections, []);
    }
    assert.doesNotThrow(() => readCubin(undefined as unknown as Uint8Array));
    assert.doesNotThrow(() => readCubin('text' as unknown as Uint8Array));
  });

  test('every truncation of a real cubin', () => {
    for (let n = 0; n < real.length; n += 7) {
      const c = readCubin(real.subarray(0, n));
      // The section table sits at the end: nothing is listed until it is complete.
      for (const s of c.textSections) assert.ok(s.offset + s.size <= real.length);
    }
  });

  test('corrupted header fields', () => {
    const pokes: [number, number][] = [
      [40, 0xff], // e_shoff huge
      [58, 0x01], // e_shentsize too small
      [60, 0xff], // e_shnum huge
      [62, 0xfe], // e_shstrndx out of range
      [4, 9], // bad class
      [5, 7], // bad data encoding
    ];
    for (const [off, val] of pokes) {
      const b = new Uint8Array(real);
      b[off] = val;
      b[off + 1] = val;
      assert.doesNotThrow(() => readCubin(b), `offset ${off}`);
    }
    // Random byte flips in the section table.
    let seed = 12345;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let k = 0; k < 200; k++) {
      const b = new Uint8Array(real);
      for (let j = 0; j < 16; j++) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
      assert.doesNotThrow(() => readCubin(b));
    }
  });
});
