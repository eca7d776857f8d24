// Shapes shared by the SASS readers (cuobjdump, nvdisasm, ELF, ptxas -v) and the analyses
// built on them (opcode histograms, machine-code loops, occupancy). Nothing here imports
// `vscode`; everything is plain data that survives JSON.stringify.

/** A source position from the line table (nvdisasm -g / -gi). `line` is 1-based. */
export interface SourceFrame {
  file: string;
  line: number;
  /** Name of the inlined function. nvdisasm 13.0 prints no names, so this stays undefined there. */
  function?: string;
}

/**
 * Where an instruction came from. `file`/`line` is the innermost location (for an instruction of
 * an inlined function: the line inside that function, e.g. in sm_30_intrinsics.hpp).
 * `inlinedAt` lists the call sites, innermost call first; its last entry is the location in the
 * function that owns the machine code (usually the kernel in the user's .cu file).
 */
export interface SourceLocation {
  file: string;
  line: number;
  inlinedAt?: SourceFrame[];
}

export interface SassInstruction {
  /** Byte offset from the start of the function (the `/*0040*\/` column). */
  address: number;
  /** Guard predicate as printed, e.g. "@P0", "@!P1", "@!PT", "@UP0"; null when unguarded. */
  predicate: string | null;
  /** Base opcode, e.g. "FFMA", "ISETP", "NOP". */
  opcode: string;
  /**
   * Dot-separated modifiers after the opcode, e.g. ["GE", "AND"] for ISETP.GE.AND. The readers
   * share one frozen array between instructions of the same mnemonic: do not modify it.
   */
  modifiers: string[];
  /** Operand text as printed, trimmed, without the closing ';' (may be ""). */
  operands: string;
  /**
   * Resolved target (function-relative address) of a control transfer that names one: BRA, BRX
   * with a target, JMP, CALL.REL, BSSY, BREAK, WARPSYNC.COLLECTIVE … Absolute `0x…` operands
   * (cuobjdump) and `` `(.L_x_3) `` labels (nvdisasm) are both resolved; a label that is not
   * defined in the same function leaves this undefined and sets `targetLabel`.
   */
  target?: number;
  /** The label operand as printed by nvdisasm (without the `` `( `` and `)`), e.g. ".L_x_3". */
  targetLabel?: string;
  /** Source attribution (nvdisasm -g / -gi only). */
  source?: SourceLocation;
}

export interface SassFunction {
  /** Mangled name (cuobjdump's `Function :` / nvdisasm's `.text.<name>` section). */
  name: string;
  instructions: SassInstruction[];
  /**
   * Size of the machine code: last address + 16 (one instruction is 16 bytes on sm_70 and
   * newer), which is the `.text.<name>` section size, trailing BRA/NOP padding included.
   */
  bytes: number;
  /** Architecture of the ELF member the function came from (e.g. "sm_90"), when printed. */
  arch?: string | null;
  /**
   * Labels defined inside the function (nvdisasm), label -> address, including the function's
   * own symbol (address 0), callees placed in the same section and the end label. A
   * prototype-less object (so any label name is safe as a key).
   */
  labels?: Record<string, number>;
  /** Registers from nvdisasm's `.sectioninfo @"SHI_REGISTERS=N"`, when printed. */
  registers?: number;
}

export interface SassListing {
  /**
   * The architecture of the listing ("sm_90"). When the text holds machine code for several
   * architectures (a fat binary), this is null and each function carries its own `arch`.
   */
  arch: string | null;
  functions: SassFunction[];
}

/** Names of the numeric fields of ResourceUsage (for `reported`). */
export type ResourceField =
  'registers' | 'stackBytes' | 'spillStoreBytes' | 'spillLoadBytes' | 'sharedBytes' | 'constantBytes' | 'localBytes' | 'barriers';

/**
 * What one function uses. Every numeric field is a number; a field the source does not print is
 * 0 and missing from `reported` (so "0 bytes smem" and "smem not printed" can be told apart):
 *
 * | field           | ptxas -v                                   | cuobjdump -res-usage |
 * |-----------------|--------------------------------------------|----------------------|
 * | registers       | `Used N registers`                         | `REG:N`              |
 * | stackBytes      | `N bytes stack frame`                      | `STACK:N`            |
 * | spillStoreBytes | `N bytes spill stores`                     | (not printed)        |
 * | spillLoadBytes  | `N bytes spill loads`                      | (not printed)        |
 * | sharedBytes     | `N bytes smem` (static shared)             | `SHARED:N`           |
 * | constantBytes   | sum of `N bytes cmem[k]` over all banks k  | sum of `CONSTANT[k]:N` |
 * | localBytes      | `N bytes lmem` (older ptxas)               | `LOCAL:N`            |
 * | barriers        | `used N barriers`                          | (not printed)        |
 *
 * `constantBanks` keeps each bank separately (bank 0 holds the kernel parameters and driver
 * data; ptxas 13 no longer prints cmem for sm_90, so it is then absent).
 */
export interface ResourceUsage {
  registers: number;
  stackBytes: number;
  spillStoreBytes: number;
  spillLoadBytes: number;
  sharedBytes: number;
  constantBytes: number;
  localBytes: number;
  barriers: number;
  /** Bytes per constant bank, when the source prints banks (bank -> bytes). */
  constantBanks?: Record<number, number>;
  /** cuobjdump -res-usage's TEXTURE / SURFACE / SAMPLER counts, when printed. */
  textures?: number;
  surfaces?: number;
  samplers?: number;
  /** ptxas's `N bytes cumulative stack size` (stack including callees), when printed. */
  cumulativeStackBytes?: number;
  /** The fields the source actually printed. */
  reported: ResourceField[];
}

/** A ResourceUsage with every field 0 and nothing reported. */
export function emptyResourceUsage(): ResourceUsage {
  return {
    registers: 0,
    stackBytes: 0,
    spillStoreBytes: 0,
    spillLoadBytes: 0,
    sharedBytes: 0,
    constantBytes: 0,
    localBytes: 0,
    barriers: 0,
    reported: [],
  };
}

/** The numeric fields of ResourceUsage, in declaration order (the order of `reported`). */
const RESOURCE_FIELDS: readonly ResourceField[] = [
  'registers',
  'stackBytes',
  'spillStoreBytes',
  'spillLoadBytes',
  'sharedBytes',
  'constantBytes',
  'localBytes',
  'barriers',
];

/** Puts `reported` in RESOURCE_FIELDS order (readers call this once a usage is complete). */
export function sortReported(u: ResourceUsage): void {
  u.reported.sort((a, b) => RESOURCE_FIELDS.indexOf(a) - RESOURCE_FIELDS.indexOf(b));
}
