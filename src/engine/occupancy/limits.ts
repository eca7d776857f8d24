// Theoretical occupancy: how many blocks and warps of a kernel fit on one SM at once, given its
// registers per thread, static + dynamic shared memory per block and block size.
//
// Per-architecture limits, from the NVIDIA CUDA C++ Programming Guide, "Compute Capabilities",
// table "Technical Specifications per Compute Capability" (max resident warps / blocks / threads
// per SM, 64 K 32-bit registers per SM, max 255 registers per thread, shared memory per SM and
// per block), and the allocation rules of the CUDA Occupancy Calculator / Nsight Compute's
// occupancy section:
// - registers are allocated per warp in units of 256 (regs/thread * 32 rounded up to 256); the
//   register file is split into 4 partitions (one per SM sub-partition scheduler) and a warp's
//   registers live in one of them, so warps limited by registers =
//   4 * floor((65536 / 4) / regsPerWarp);
// - shared memory is allocated per block in units of 128 bytes (256 on sm_7x), and from sm_80 on
//   the CUDA runtime reserves 1 KiB of shared memory per block (which is why sm_80's per-block
//   maximum is 163 KiB of its 164 KiB);
// - the shared-memory carveout is assumed to be the largest one (the driver's default picks the
//   carveout the kernel needs); a block asking for more than the per-block maximum cannot launch.
//
// | arch  | warps/SM | blocks/SM | shared/SM | shared/block | shared unit | reserved/block |
// |-------|----------|-----------|-----------|--------------|-------------|----------------|
// | sm_70 | 64       | 32        | 96 KiB    | 96 KiB       | 256         | 0              |
// | sm_75 | 32       | 16        | 64 KiB    | 64 KiB       | 256         | 0              |
// | sm_80 | 64       | 32        | 164 KiB   | 163 KiB      | 128         | 1 KiB          |
// | sm_86 | 48       | 16        | 100 KiB   | 99 KiB       | 128         | 1 KiB          |
// | sm_87 | 48       | 16        | 164 KiB   | 163 KiB      | 128         | 1 KiB          |
// | sm_89 | 48       | 24        | 100 KiB   | 99 KiB       | 128         | 1 KiB          |
// | sm_90 | 64       | 32        | 228 KiB   | 227 KiB      | 128         | 1 KiB          |

export interface ArchLimits {
  arch: string;
  maxWarpsPerSM: number;
  maxBlocksPerSM: number;
  maxThreadsPerBlock: number;
  registersPerSM: number;
  maxRegistersPerThread: number;
  /** Registers are allocated per warp in multiples of this. */
  registerAllocationUnit: number;
  /** Register file partitions (SM sub-partitions); a warp's registers sit in one. */
  registerPartitions: number;
  /** Largest shared-memory carveout per SM, bytes (runtime reservation included). */
  sharedPerSM: number;
  /** Largest shared memory one block may use, bytes (without the runtime reservation). */
  sharedPerBlock: number;
  /** Shared memory is allocated per block in multiples of this, bytes. */
  sharedAllocationUnit: number;
  /** Shared memory the CUDA runtime reserves per block, bytes. */
  reservedSharedPerBlock: number;
}

const KiB = 1024;

function limits(
  arch: string,
  maxWarpsPerSM: number,
  maxBlocksPerSM: number,
  sharedPerSM: number,
  sharedPerBlock: number,
  sharedAllocationUnit: number,
  reservedSharedPerBlock: number,
): ArchLimits {
  return {
    arch,
    maxWarpsPerSM,
    maxBlocksPerSM,
    maxThreadsPerBlock: 1024,
    registersPerSM: 65536,
    maxRegistersPerThread: 255,
    registerAllocationUnit: 256,
    registerPartitions: 4,
    sharedPerSM,
    sharedPerBlock,
    sharedAllocationUnit,
    reservedSharedPerBlock,
  };
}

const TABLE: Record<number, ArchLimits> = {
  70: limits('sm_70', 64, 32, 96 * KiB, 96 * KiB, 256, 0),
  75: limits('sm_75', 32, 16, 64 * KiB, 64 * KiB, 256, 0),
  80: limits('sm_80', 64, 32, 164 * KiB, 163 * KiB, 128, KiB),
  86: limits('sm_86', 48, 16, 100 * KiB, 99 * KiB, 128, KiB),
  87: limits('sm_87', 48, 16, 164 * KiB, 163 * KiB, 128, KiB),
  89: limits('sm_89', 48, 24, 100 * KiB, 99 * KiB, 128, KiB),
  90: limits('sm_90', 64, 32, 228 * KiB, 227 * KiB, 128, KiB),
};

/** SM number from "sm_90", "sm_90a", "compute_90", "90", "9.0"; null when unreadable. */
export function smNumber(arch: string | number): number | null {
  if (typeof arch === 'number') return Number.isInteger(arch) ? arch : Math.round(arch * 10);
  const s = String(arch).trim().toLowerCase();
  let m = /^(?:sm_|compute_)?(\d+)[a-z]?$/.exec(s);
  if (m) return Number(m[1]);
  m = /^(\d+)\.(\d)$/.exec(s);
  if (m) return Number(m[1]) * 10 + Number(m[2]);
  return null;
}

/** The limits of an architecture (sm_70, 75, 80, 86, 87, 89, 90), or undefined. */
export function archLimits(arch: string | number): ArchLimits | undefined {
  const sm = smNumber(arch);
  return sm === null ? undefined : TABLE[sm];
}

export type OccupancyLimiter = 'registers' | 'shared' | 'warps' | 'blocks';

export interface OccupancyInput {
  registersPerThread: number;
  /** Static + dynamic shared memory per block, bytes. */
  sharedBytesPerBlock: number;
  threadsPerBlock: number;
  /** "sm_90", "sm_86", … */
  arch: string;
}

export interface OccupancyResult {
  activeBlocksPerSM: number;
  activeWarpsPerSM: number;
  maxWarpsPerSM: number;
  /** activeWarpsPerSM / maxWarpsPerSM, 0..1. */
  occupancy: number;
  /**
   * The limit that sets activeBlocksPerSM. On a tie the first of warps, blocks, registers,
   * shared wins (so a kernel at full occupancy reports 'warps'). A launch that cannot run at all
   * (0 blocks) names what is exceeded.
   */
  limiter: OccupancyLimiter;
  /** Blocks per SM allowed by each limit on its own. */
  blocksLimitedBy: Record<OccupancyLimiter, number>;
  warpsPerBlock: number;
  /** Registers one warp is given (regs * 32 rounded up to the allocation unit). */
  registersPerWarp: number;
  /** Shared memory one block is given (rounded up, runtime reservation included). */
  sharedBytesPerBlockAllocated: number;
}

const ORDER: OccupancyLimiter[] = ['warps', 'blocks', 'registers', 'shared'];

function roundUp(x: number, unit: number): number {
  return Math.ceil(x / unit) * unit;
}

/** Theoretical occupancy of one SM; null for an architecture not in the table. */
export function theoreticalOccupancy(input: OccupancyInput): OccupancyResult | null {
  const L = archLimits(input.arch);
  if (!L) return null;
  const threads = Math.max(0, Math.floor(input.threadsPerBlock || 0));
  const regs = Math.max(0, Math.floor(input.registersPerThread || 0));
  const smem = Math.max(0, Math.floor(input.sharedBytesPerBlock || 0));

  const warpsPerBlock = Math.ceil(threads / 32);
  const registersPerWarp = roundUp(regs * 32, L.registerAllocationUnit);
  const sharedAllocated = roundUp(smem, L.sharedAllocationUnit) + L.reservedSharedPerBlock;

  const by: Record<OccupancyLimiter, number> = { warps: 0, blocks: L.maxBlocksPerSM, registers: 0, shared: 0 };
  by.warps = warpsPerBlock > 0 && threads <= L.maxThreadsPerBlock ? Math.floor(L.maxWarpsPerSM / warpsPerBlock) : 0;

  if (regs > L.maxRegistersPerThread) {
    by.registers = 0;
  } else if (registersPerWarp === 0) {
    by.registers = L.maxBlocksPerSM;
  } else {
    const perPartition = L.registersPerSM / L.registerPartitions;
    const warpsByRegs = Math.floor(perPartition / registersPerWarp) * L.registerPartitions;
    // The whole block must also fit the per-block register limit (64 K).
    const blockRegs = registersPerWarp * roundUp(warpsPerBlock, L.registerPartitions);
    by.registers = warpsPerBlock > 0 && blockRegs <= L.registersPerSM ? Math.floor(warpsByRegs / warpsPerBlock) : 0;
  }

  if (smem > L.sharedPerBlock) by.shared = 0;
  else by.shared = Math.floor(L.sharedPerSM / sharedAllocated);

  let limiter: OccupancyLimiter = 'warps';
  let blocks = Infinity;
  for (const k of ORDER) {
    if (by[k] < blocks) {
      blocks = by[k];
      limiter = k;
    }
  }
  const activeBlocks = Math.max(0, blocks);
  const activeWarps = activeBlocks * warpsPerBlock;
  return {
    activeBlocksPerSM: activeBlocks,
    activeWarpsPerSM: activeWarps,
    maxWarpsPerSM: L.maxWarpsPerSM,
    occupancy: activeWarps / L.maxWarpsPerSM,
    limiter,
    blocksLimitedBy: by,
    warpsPerBlock,
    registersPerWarp,
    sharedBytesPerBlockAllocated: sharedAllocated,
  };
}
