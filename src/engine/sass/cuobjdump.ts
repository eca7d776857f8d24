// Reader for `cuobjdump -sass` and `cuobjdump -res-usage` output.
//
// Layout of `cuobjdump -sass` (CUDA 13.0; older versions look the same):
//
//   Fatbin elf code:                      <- only for fat binaries / host objects: one header per
//   ================                         ELF member, with "arch = sm_XX"
//   arch = sm_90
//   ...
//   \tcode for sm_90                      <- one per ELF member (a lone cubin has only this)
//   \t.target\tsm_90
//   \t\tFunction : _Z9mm_pragmaILi16EEvPKfS1_Pfi
//   \t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
//           /*0000*/                   LDC R1, c[0x0][0x28] ;        /* 0x00000a00ff017b82 */
//                                                                     /* 0x000fe20000000800 */
//           /*00d0*/               @P0 EXIT ;                         /* … */
//           /*0810*/                   BRA 0x810;                     <- end-of-code trap
//           /*0820*/                   NOP;                           <- padding up to the
//   \t\t..........                                                       section's alignment
//   Fatbin ptx code:                      <- with -ptx: PTX text follows; it is skipped
//
// Every `/*addr*/` line inside a function is one instruction, so the count equals the
// `.text.<name>` section size / 16, trailing BRA/NOP padding included (nothing is dropped).
//
// Fat binaries: a listing may hold several ELF members (one per architecture, sometimes several
// for the same one). `parseCuobjdumpSassByArch` returns one SassListing per member, in order;
// `parseCuobjdumpSass` returns all functions of all members in one listing, each function with
// its own `arch`, and the listing's `arch` set only when all members share one architecture.
import type { ResourceUsage, SassFunction, SassListing } from './model';
import { emptyResourceUsage, sortReported } from './model';
import {
  findSmArch,
  forEachLine,
  forEachLineRange,
  instructionBytesFor,
  instructionEnd,
  parseInstructionRange,
  readAddress,
  skipBlanks,
} from './text';

/** One SassListing per ELF member ("code for sm_XX" block) of the listing, in order. */
export function parseCuobjdumpSassByArch(text: string): SassListing[] {
  const members: SassListing[] = [];
  if (typeof text !== 'string' || text.length === 0) return members;

  let member: SassListing | null = null;
  let headerArch: string | null = null; // "arch = sm_XX" of the current Fatbin header
  let inPtx = false;
  let fn: SassFunction | null = null;

  const closeFunction = (): void => {
    if (!fn || !member) return;
    const n = fn.instructions.length;
    fn.bytes = n === 0 ? 0 : fn.instructions[n - 1].address + instructionBytesFor(fn.arch ?? member.arch);
    fn = null;
  };
  const startMember = (arch: string | null): SassListing => {
    closeFunction();
    const m: SassListing = { arch, functions: [] };
    members.push(m);
    return m;
  };

  forEachLineRange(text, (start, end) => {
    const i = skipBlanks(text, start, end);
    if (i >= end) return;
    const c = text.charCodeAt(i);

    if (c === 47 /* / */) {
      // Hot path: instruction lines and their encoding continuation lines, read in place.
      if (inPtx || !fn) return;
      const a = readAddress(text, i, end);
      if (!a) return; // second encoding line `/* 0x… */`
      const ins = parseInstructionRange(text, a.next, instructionEnd(text, a.next, end), a.address);
      if (ins) fn.instructions.push(ins);
      return;
    }
    if (c !== 70 /* F */ && c !== 99 /* c */ && c !== 97 /* a */ && c !== 46 /* . */) return;
    const line = text.substring(i, end);

    if (c === 70 /* F */) {
      if (line.startsWith('Fatbin elf code')) {
        closeFunction();
        inPtx = false;
        headerArch = null;
        member = null;
        return;
      }
      if (line.startsWith('Fatbin ptx code') || line.startsWith('Fatbin nvvm')) {
        closeFunction();
        inPtx = true;
        member = null;
        return;
      }
      if (!inPtx && line.startsWith('Function')) {
        const colon = line.indexOf(':');
        if (colon < 0) return;
        const name = line.substring(colon + 1).trim();
        if (name.length === 0) return;
        closeFunction();
        if (!member) member = startMember(headerArch);
        fn = { name, instructions: [], bytes: 0, arch: member.arch };
        member.functions.push(fn);
      }
      return;
    }

    if (inPtx) return;

    if (c === 99 /* c */ && line.startsWith('code for')) {
      member = startMember(findSmArch(line) ?? headerArch);
      return;
    }
    if (c === 97 /* a */ && line.startsWith('arch')) {
      const eq = line.indexOf('=');
      if (eq > 0) headerArch = findSmArch(line.substring(eq)) ?? headerArch;
      return;
    }
    if (c === 46 /* . */) {
      if (line.startsWith('..........')) {
        closeFunction();
      } else if (line.startsWith('.target') || line.startsWith('.headerflags')) {
        if (member && member.arch === null) {
          const arch = line.startsWith('.target') ? findSmArch(line) : headerFlagsArch(line);
          if (arch) {
            member.arch = arch;
            for (const f of member.functions) f.arch = arch;
          }
        }
      }
    }
  });
  closeFunction();
  return members.filter(m => m.functions.length > 0);
}

/**
 * All functions of a `cuobjdump -sass` listing. `arch` is the listing's one architecture, or
 * null when it holds none or several (then look at each function's `arch`).
 */
export function parseCuobjdumpSass(text: string): SassListing {
  const members = parseCuobjdumpSassByArch(text);
  const functions: SassFunction[] = [];
  const archs = new Set<string | null>();
  for (const m of members) {
    archs.add(m.arch);
    for (const f of m.functions) functions.push(f);
  }
  const arch = archs.size === 1 ? [...archs][0] : null;
  return { arch, functions };
}

/** "sm_90" from `.headerflags @"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"`. */
function headerFlagsArch(line: string): string | null {
  const k = line.indexOf('EF_CUDA_SM');
  if (k < 0) return null;
  let j = k + 10;
  while (j < line.length && line.charCodeAt(j) >= 48 && line.charCodeAt(j) <= 57) j++;
  return j > k + 10 ? 'sm_' + line.substring(k + 10, j) : null;
}

/** Resource usage of the functions of one ELF member of a `cuobjdump -res-usage` listing. */
export interface ResUsageMember {
  /** From the Fatbin header's "arch = sm_XX"; null for a lone cubin (which prints no header). */
  arch: string | null;
  /** The `Common:` block's `GLOBAL:N` (bytes of __device__ globals), null when not printed. */
  globalBytes: number | null;
  functions: Map<string, ResourceUsage>;
}

/**
 * Parses `cuobjdump -res-usage`:
 *
 *   Resource usage:
 *    Common:
 *     GLOBAL:0
 *    Function _Z9mm_pragmaILi16EEvPKfS1_Pfi:
 *     REG:32 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:556 TEXTURE:0 SURFACE:0 SAMPLER:0
 *
 * One entry per "Resource usage:" block (one per ELF member of a fat binary).
 * CONSTANT[k] values are summed into `constantBytes` and kept per bank in `constantBanks`.
 * Barriers and spill sizes are not printed by cuobjdump: they stay 0 and unreported.
 */
export function parseResUsageByArch(text: string): ResUsageMember[] {
  const members: ResUsageMember[] = [];
  if (typeof text !== 'string' || text.length === 0) return members;
  let headerArch: string | null = null;
  let member: ResUsageMember | null = null;
  let current: ResourceUsage | null = null;
  let inCommon = false;

  forEachLine(text, line => {
    const t = line.trim();
    if (t.length === 0) return;
    if (t.startsWith('Fatbin')) {
      headerArch = null;
      member = null;
      current = null;
      inCommon = false;
      return;
    }
    if (t.startsWith('arch') && t.indexOf('=') > 0) {
      headerArch = findSmArch(t) ?? headerArch;
      if (member && member.arch === null) member.arch = headerArch;
      return;
    }
    if (t.startsWith('Resource usage')) {
      member = { arch: headerArch, globalBytes: null, functions: new Map() };
      members.push(member);
      current = null;
      inCommon = false;
      return;
    }
    if (t.startsWith('Common:')) {
      inCommon = true;
      current = null;
      return;
    }
    if (t.startsWith('Function ') && t.endsWith(':')) {
      const name = t.substring(9, t.length - 1).trim();
      if (name.length === 0) return;
      if (!member) {
        member = { arch: headerArch, globalBytes: null, functions: new Map() };
        members.push(member);
      }
      current = emptyResourceUsage();
      member.functions.set(name, current);
      inCommon = false;
      return;
    }
    if (t.indexOf(':') < 0) return;
    for (const tok of t.split(/\s+/)) {
      const colon = tok.lastIndexOf(':');
      if (colon <= 0) continue;
      const key = tok.substring(0, colon).toUpperCase();
      const valueText = tok.substring(colon + 1);
      if (!/^\d+$/.test(valueText)) continue;
      const value = Number(valueText);
      if (inCommon) {
        if (key === 'GLOBAL' && member) member.globalBytes = value;
        continue;
      }
      if (current) applyResUsageField(current, key, value);
    }
  });
  for (const m of members) for (const u of m.functions.values()) sortReported(u);
  return members;
}

function applyResUsageField(u: ResourceUsage, key: string, value: number): void {
  const mark = (f: ResourceUsage['reported'][number]): void => {
    if (!u.reported.includes(f)) u.reported.push(f);
  };
  switch (key) {
    case 'REG':
      u.registers = value;
      mark('registers');
      return;
    case 'STACK':
      u.stackBytes = value;
      mark('stackBytes');
      return;
    case 'SHARED':
      u.sharedBytes = value;
      mark('sharedBytes');
      return;
    case 'LOCAL':
      u.localBytes = value;
      mark('localBytes');
      return;
    case 'TEXTURE':
      u.textures = value;
      return;
    case 'SURFACE':
      u.surfaces = value;
      return;
    case 'SAMPLER':
      u.samplers = value;
      return;
  }
  if (key.startsWith('CONSTANT[') && key.endsWith(']')) {
    const bank = Number(key.substring(9, key.length - 1));
    if (!Number.isInteger(bank) || bank < 0) return;
    u.constantBanks ??= {};
    u.constantBanks[bank] = value;
    u.constantBytes = Object.values(u.constantBanks).reduce((s, v) => s + v, 0);
    mark('constantBytes');
  }
}

/**
 * Resource usage per function name. When the listing holds several ELF members (a fat binary),
 * pass `arch` to pick one; otherwise the first member that lists a function wins.
 */
export function parseResUsage(text: string, opts: { arch?: string } = {}): Map<string, ResourceUsage> {
  const out = new Map<string, ResourceUsage>();
  for (const m of parseResUsageByArch(text)) {
    if (opts.arch !== undefined && m.arch !== opts.arch) continue;
    for (const [name, u] of m.functions) if (!out.has(name)) out.set(name, u);
  }
  return out;
}
