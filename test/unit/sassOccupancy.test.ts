// Unit tests of the theoretical-occupancy calculator (src/engine/occupancy/limits.ts). Every
// expected value is worked out by hand in the comment above it, with the rules of the file
// header of occupancy.ts:
//   warpsPerBlock   = ceil(threads / 32)
//   regsPerWarp     = ceil(regs * 32 / 256) * 256
//   blocks by regs  = floor( 4 * floor(16384 / regsPerWarp) / warpsPerBlock )
//   smemPerBlock    = ceil(smem / unit) * unit + reserved   (unit 128, reserved 1 KiB on sm_80+)
//   blocks by smem  = floor(sharedPerSM / smemPerBlock)
//   blocks by warps = floor(maxWarpsPerSM / warpsPerBlock);  blocks limit = maxBlocksPerSM
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { theoreticalOccupancy, archLimits, smNumber } from '../../src/engine/occupancy/limits';
import { modelWarpsPerSm, warpsAtOccupancy } from '../../src/engine/occupancy/warpsPerSm';
import type { OccupancyInput } from '../../src/engine/occupancy/limits';

function occ(arch: string, registersPerThread: number, threadsPerBlock: number, sharedBytesPerBlock = 0) {
  const input: OccupancyInput = { arch, registersPerThread, threadsPerBlock, sharedBytesPerBlock };
  const r = theoreticalOccupancy(input);
  if (!r) throw new Error(`no result for ${arch}`);
  return r;
}
const short = (r: ReturnType<typeof occ>) => [r.activeBlocksPerSM, r.activeWarpsPerSM, r.occupancy, r.limiter];

describe('theoreticalOccupancy: hand-computed cases', () => {
  test('sm_90, 32 regs, 256 threads: full occupancy', () => {
    // warps/block 8; regsPerWarp 1024 -> 4*floor(16384/1024)=64 warps -> 8 blocks;
    // warps: 64/8 = 8 blocks; blocks 32; smem (0+1024): 233472/1024 = 228.
    // min 8 (tie warps = registers: warps wins) -> 64 warps -> 1.0.
    const r = occ('sm_90', 32, 256);
    assert.deepEqual(short(r), [8, 64, 1, 'warps']);
    assert.deepEqual(r.blocksLimitedBy, { warps: 8, blocks: 32, registers: 8, shared: 228 });
    assert.equal(r.maxWarpsPerSM, 64);
    assert.equal(r.registersPerWarp, 1024);
    assert.equal(r.sharedBytesPerBlockAllocated, 1024);
  });

  test('sm_90, 64 regs, 256 threads: half, limited by registers', () => {
    // regsPerWarp 2048 -> 4*8 = 32 warps -> 4 blocks -> 32 warps -> 0.5.
    assert.deepEqual(short(occ('sm_90', 64, 256)), [4, 32, 0.5, 'registers']);
  });

  test('sm_90, 40 regs, 96 threads: the per-partition rounding matters', () => {
    // regsPerWarp 1280; 16384/1280 = 12.8 -> 12 per partition -> 48 warps -> floor(48/3) = 16 blocks
    // (a whole-SM division 65536/1280 = 51 warps would give 17). warps: floor(64/3) = 21.
    // 16 blocks * 3 warps = 48 -> 0.75.
    assert.deepEqual(short(occ('sm_90', 40, 96)), [16, 48, 0.75, 'registers']);
  });

  test('sm_90, 32 regs, 128 threads, 48 KiB shared: limited by shared memory', () => {
    // smem 49152 + 1024 reserved = 50176; 233472 / 50176 = 4.65 -> 4 blocks * 4 warps = 16 -> 0.25.
    const r = occ('sm_90', 32, 128, 48 * 1024);
    assert.deepEqual(short(r), [4, 16, 0.25, 'shared']);
    assert.equal(r.sharedBytesPerBlockAllocated, 50176);
  });

  test('sm_90, 100 bytes of shared round up to 128 (+1 KiB)', () => {
    // 128 + 1024 = 1152 bytes per block; 233472/1152 = 202 blocks: not the limit.
    const r = occ('sm_90', 16, 64, 100);
    assert.equal(r.sharedBytesPerBlockAllocated, 1152);
    assert.equal(r.blocksLimitedBy.shared, 202);
    // 2 warps/block: warps 32 blocks, blocks limit 32 (tie -> warps), 64 warps -> 1.0
    assert.deepEqual(short(r), [32, 64, 1, 'warps']);
  });

  test('sm_86, 32 regs, 128 threads: 48-warp SM', () => {
    // warps: floor(48/4) = 12 blocks; regs: 64 warps / 4 = 16; blocks 16 -> 12 blocks, 48 warps -> 1.0
    assert.deepEqual(short(occ('sm_86', 32, 128)), [12, 48, 1, 'warps']);
  });

  test('sm_75, 16 regs, 32 threads: the 16-block limit', () => {
    // 1 warp/block; warps 32 blocks; blocks 16 -> 16 warps of 32 -> 0.5
    assert.deepEqual(short(occ('sm_75', 16, 32)), [16, 16, 0.5, 'blocks']);
  });

  test('sm_89, 0 registers given (unknown), 32 threads: 24 blocks', () => {
    // registers do not limit; warps 48; blocks 24 -> 24 warps of 48 -> 0.5
    assert.deepEqual(short(occ('sm_89', 0, 32)), [24, 24, 0.5, 'blocks']);
  });

  test('sm_80, 255 regs, 128 threads', () => {
    // regsPerWarp = ceil(8160/256)*256 = 8192; 16384/8192 = 2 per partition -> 8 warps -> 2 blocks
    // -> 8 warps of 64 -> 0.125
    assert.deepEqual(short(occ('sm_80', 255, 128)), [2, 8, 0.125, 'registers']);
  });

  test('sm_70, 50000 bytes shared, 256 threads: 256-byte shared unit, no reservation', () => {
    // ceil(50000/256)*256 = 50176; 98304/50176 = 1.96 -> 1 block -> 8 warps of 64 -> 0.125
    const r = occ('sm_70', 32, 256, 50000);
    assert.equal(r.sharedBytesPerBlockAllocated, 50176);
    assert.deepEqual(short(r), [1, 8, 0.125, 'shared']);
  });

  test('sm_80, 163 KiB shared (the per-block maximum) fits once', () => {
    // 166912 + 1024 = 167936 = 164 KiB = the whole SM -> 1 block, 4 warps -> 4/64
    assert.deepEqual(short(occ('sm_80', 32, 128, 163 * 1024)), [1, 4, 0.0625, 'shared']);
  });

  test('sm_87: 48 warps and 164 KiB like sm_80 shared', () => {
    // 64 KiB per block: 65536+1024 = 66560; 167936/66560 = 2.52 -> 2 blocks * 8 warps = 16 of 48
    assert.deepEqual(short(occ('sm_87', 32, 256, 64 * 1024)), [2, 16, 16 / 48, 'shared']);
  });

  test('launches that cannot run give 0 and name what is exceeded', () => {
    // 256 registers > 255
    assert.deepEqual(short(occ('sm_90', 256, 128)), [0, 0, 0, 'registers']);
    // 1024 threads * 65 regs: regsPerWarp 2304 * 32 warps = 73728 > 65536 registers per block
    assert.deepEqual(short(occ('sm_90', 65, 1024)), [0, 0, 0, 'registers']);
    // 1024 threads * 64 regs fits exactly: 2048 * 32 = 65536 -> 1 block of 32 warps -> 0.5
    // (warps would allow 2 blocks, registers 4*8/32 = 1)
    assert.deepEqual(short(occ('sm_90', 64, 1024)), [1, 32, 0.5, 'registers']);
    // 228 KiB > 227 KiB per block
    assert.deepEqual(short(occ('sm_90', 32, 128, 228 * 1024)), [0, 0, 0, 'shared']);
    // 2048 threads > 1024 per block
    assert.deepEqual(short(occ('sm_90', 32, 2048)), [0, 0, 0, 'warps']);
    // 0 threads
    assert.deepEqual(short(occ('sm_90', 32, 0)), [0, 0, 0, 'warps']);
  });

  test('arch spellings and unknown architectures', () => {
    assert.deepEqual(short(occ('sm_90a', 64, 256)), short(occ('sm_90', 64, 256)));
    assert.equal(smNumber('compute_86'), 86);
    assert.equal(smNumber('8.9'), 89);
    assert.equal(smNumber(75), 75);
    assert.equal(smNumber('sm_100f'), 100);
    assert.equal(smNumber('banana'), null);
    assert.equal(theoreticalOccupancy({ arch: 'sm_61', registersPerThread: 32, threadsPerBlock: 128, sharedBytesPerBlock: 0 }), null);
    assert.equal(theoreticalOccupancy({ arch: '', registersPerThread: 32, threadsPerBlock: 128, sharedBytesPerBlock: 0 }), null);
    assert.equal(archLimits('sm_90')!.sharedPerSM, 228 * 1024);
    assert.equal(archLimits('sm_75')!.maxWarpsPerSM, 32);
  });

  test('table values (Programming Guide, compute capabilities)', () => {
    const rows = ['sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_87', 'sm_89', 'sm_90'].map(a => {
      const l = archLimits(a)!;
      return [a, l.maxWarpsPerSM, l.maxBlocksPerSM, l.sharedPerSM / 1024, l.sharedPerBlock / 1024, l.reservedSharedPerBlock];
    });
    assert.deepEqual(rows, [
      ['sm_70', 64, 32, 96, 96, 0],
      ['sm_75', 32, 16, 64, 64, 0],
      ['sm_80', 64, 32, 164, 163, 1024],
      ['sm_86', 48, 16, 100, 99, 1024],
      ['sm_87', 48, 16, 164, 163, 1024],
      ['sm_89', 48, 24, 100, 99, 1024],
      ['sm_90', 64, 32, 228, 227, 1024],
    ]);
  });

  test('warps per SM from an occupancy fraction: one rule for the model, the sweep and the measured rows', () => {
    assert.equal(warpsAtOccupancy(0.5, 'sm_90'), 32);
    assert.equal(warpsAtOccupancy(0.5, 'sm_86'), 24);
    assert.equal(warpsAtOccupancy(0.25, 'sm_75'), 8);
    assert.equal(warpsAtOccupancy(0.001, 'sm_90'), 1, 'a resident kernel has at least one warp');
    assert.equal(warpsAtOccupancy(0.5, 'sm_61'), null, 'an arch without a table entry: unknown');
    assert.equal(warpsAtOccupancy(0.5, 'sm_61', 64), 32);
    assert.equal(modelWarpsPerSm(0.5, 'sm_90', 12), 12, 'an explicit count wins');
    assert.equal(modelWarpsPerSm(0.5, 'sm_90', 0), 32, '0 is "infer"');
    assert.equal(modelWarpsPerSm(null, 'sm_86'), 48, 'unknown occupancy: every warp the arch allows');
    assert.equal(modelWarpsPerSm(null, 'sm_61'), 64);
  });
});
