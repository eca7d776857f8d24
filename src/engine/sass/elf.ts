// A small ELF reader for CUDA cubins (no dependency): section headers, .shstrtab and the
// `.text.<function>` sections that hold each function's machine code.
//
// Architecture (e_machine must be EM_CUDA = 190). The SM version sits in e_flags, in one of two
// layouts, told apart by e_ident[EI_ABIVERSION] (byte 8):
//
// - ABI version 7 and older (EI_OSABI 0x33, cubins of CUDA 12.x and earlier):
//     e_flags = SM | EF_CUDA_TEXMODE_UNIFIED 0x100 | EF_CUDA_64BIT_ADDRESS 0x400
//               | (virtual SM << 16)                  e.g. sm_89 -> 0x00590559
//   so SM = e_flags & 0xff.
// - ABI version 8 (EI_OSABI 0x41, what nvcc 13.0 writes for every target):
//     e_flags = 0x06000000 | (SM << 8) | low bits     e.g. sm_90 -> 0x06005a04,
//               sm_75 -> 0x06004b04, sm_80 -> 0x06005004, sm_86 -> 0x06005604,
//               sm_89 -> 0x06005904, sm_100 -> 0x06006402, sm_120 -> 0x06007802
//   so SM = (e_flags >> 8) & 0xff. (Observed on cubins built locally with nvcc V13.0.88; the
//   low byte is 0x04 up to sm_90 and 0x02 from sm_100 on; the top byte is 0x0a instead of 0x06
//   when the cubin has line information (-lineinfo). The "a"/"f" suffix of sm_90a or
//   sm_100f is not in e_flags: sm_90 and sm_90a cubins carry the same flags, so the arch read
//   here never has a suffix.)
//
// Instruction count: on sm_70 and newer every instruction is 16 bytes and ptxas pads each
// `.text.<name>` section with a BRA-to-self and NOPs to its alignment; cuobjdump and nvdisasm
// list the padding too, so size / 16 equals the number of instructions they list.

export const EM_CUDA = 190;

interface CubinTextSection {
  /** The function name: the section name without its ".text." prefix. */
  kernel: string;
  /** Section size in bytes. */
  size: number;
  /** File offset of the section's bytes. */
  offset: number;
}

export interface CubinInfo {
  /** "sm_90", or null when the file is no CUDA ELF (or e_flags hold no plausible SM). */
  arch: string | null;
  textSections: CubinTextSection[];
  /** e_ident[EI_ABIVERSION]; -1 when the header could not be read. */
  abiVersion: number;
  /** e_ident[EI_OSABI]; -1 when the header could not be read. */
  osAbi: number;
  /** Raw e_flags (0 when unread). */
  flags: number;
  /** e_machine (190 for CUDA; 0 when unread). */
  machine: number;
}

/** Reads a cubin's header and section table. Never throws: unreadable input gives empty results. */
export function readCubin(buffer: Uint8Array): CubinInfo {
  const info: CubinInfo = { arch: null, textSections: [], abiVersion: -1, osAbi: -1, flags: 0, machine: 0 };
  try {
    readInto(buffer, info);
  } catch {
    // Truncated or inconsistent tables: keep what was read before the problem.
  }
  return info;
}

function readInto(buffer: Uint8Array, info: CubinInfo): void {
  if (!(buffer instanceof Uint8Array) || buffer.length < 52) return;
  if (buffer[0] !== 0x7f || buffer[1] !== 0x45 || buffer[2] !== 0x4c || buffer[3] !== 0x46) return;
  const cls = buffer[4]; // 1 = ELF32, 2 = ELF64
  const data = buffer[5]; // 1 = little endian, 2 = big endian
  if ((cls !== 1 && cls !== 2) || (data !== 1 && data !== 2)) return;
  const is64 = cls === 2;
  const le = data === 1;
  if (is64 && buffer.length < 64) return;
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const u16 = (o: number): number => view.getUint16(o, le);
  const u32 = (o: number): number => view.getUint32(o, le);
  const u64 = (o: number): number => {
    const lo = view.getUint32(o + (le ? 0 : 4), le);
    const hi = view.getUint32(o + (le ? 4 : 0), le);
    return hi * 0x100000000 + lo;
  };

  info.osAbi = buffer[7];
  info.abiVersion = buffer[8];
  info.machine = u16(18);
  info.flags = is64 ? u32(48) : u32(36);
  if (info.machine === EM_CUDA) info.arch = archFromFlags(info.flags, info.abiVersion);

  const shoff = is64 ? u64(40) : u32(32);
  const shentsize = is64 ? u16(58) : u16(46);
  let shnum = is64 ? u16(60) : u16(48);
  let shstrndx = is64 ? u16(62) : u16(50);
  const minEntry = is64 ? 64 : 40;
  if (shoff === 0 || shentsize < minEntry || shoff + shentsize > buffer.length) return;

  const header = (idx: number) => {
    const o = shoff + idx * shentsize;
    if (o + minEntry > buffer.length) return null;
    return is64
      ? { name: u32(o), type: u32(o + 4), offset: u64(o + 24), size: u64(o + 32), link: u32(o + 40) }
      : { name: u32(o), type: u32(o + 4), offset: u32(o + 16), size: u32(o + 20), link: u32(o + 24) };
  };

  // Extended numbering: section 0 carries the real count / string table index.
  const zero = header(0);
  if (!zero) return;
  if (shnum === 0) shnum = zero.size;
  if (shstrndx === 0xffff) shstrndx = zero.link;
  const maxSections = Math.floor((buffer.length - shoff) / shentsize);
  if (shnum > maxSections) shnum = maxSections;
  if (shstrndx >= shnum) return;
  const strtab = header(shstrndx);
  if (!strtab || strtab.offset >= buffer.length) return;
  const strEnd = Math.min(buffer.length, strtab.offset + strtab.size);

  const nameAt = (off: number): string => {
    let p = strtab.offset + off;
    if (p >= strEnd) return '';
    const start = p;
    while (p < strEnd && buffer[p] !== 0) p++;
    return latin1(buffer, start, p);
  };

  const SHT_NOBITS = 8;
  for (let idx = 1; idx < shnum; idx++) {
    const h = header(idx);
    if (!h) break;
    if (h.type === SHT_NOBITS) continue;
    const name = nameAt(h.name);
    if (!name.startsWith('.text.') || name.length <= 6) continue;
    info.textSections.push({ kernel: name.substring(6), size: h.size, offset: h.offset });
  }
}

function latin1(b: Uint8Array, start: number, end: number): string {
  let s = '';
  for (let i = start; i < end; i += 4096) {
    s += String.fromCharCode(...b.subarray(i, Math.min(end, i + 4096)));
  }
  return s;
}

/** "sm_XX" from a CUDA ELF's e_flags (see the file header); null when implausible. */
export function archFromFlags(flags: number, abiVersion: number): string | null {
  const sm = abiVersion >= 8 ? (flags >>> 8) & 0xff : flags & 0xff;
  if (sm < 10) return null;
  return 'sm_' + sm;
}

/**
 * Instructions in a `.text.<name>` section of `size` bytes: size / 16 on sm_70 and newer (the
 * only architectures nvcc 13 builds for), which is what cuobjdump / nvdisasm list, padding
 * included.
 */
export function instructionCountFromElf(size: number): number {
  if (!Number.isFinite(size) || size <= 0) return 0;
  return Math.floor(size / 16);
}
