// Written by scripts/fit-icache-model.mjs (npm run fit:icache) from the calibration grids in
// test/fixtures/gpu/h100/icache-grid and h200/icache-grid: do not edit by hand.
import type { IcacheCalibration } from './types';

export const SM90_ICACHE: IcacheCalibration = {
  arch: 'sm_90',
  source: 'H100 + H200, 1039 points',
  sizes: [4864, 8960, 17152, 33536, 49920, 66304, 99072, 131840, 197376, 262912, 393984, 525056],
  warps: [4, 8, 16, 32],
  supply: [
    [null, null, null, null],
    [1.591, 1.341, 1.755, null],
    [null, 2.032, null, null],
    [0.9523, 1.671, 3.156, null],
    [0.425, 0.8223, 0.7277, 0.9068],
    [0.425, 0.8427, 0.7101, 0.8636],
    [0.425, 0.8025, 0.7101, 0.8223],
    [0.4047, 0.8223, 0.7457, 0.8636],
    [0.1851, 0.3581, 0.6762, 0.7457],
    [0.1851, 0.3581, 0.693, 0.7101],
    [0.1896, 0.3581, 0.7101, 0.6762],
    [0.1896, 0.3581, 0.693, 0.644],
  ],
  sharpness: 6,
  spread: {
    flat: [
      [-0.1502, 0.1524],
      [-0.1194, 0.1879],
      [-0.1194, 0.2652],
      [-0.1194, 0.1524],
    ],
    steep: [
      [-0.2582, 0.2036],
      [-0.2582, 0.2036],
      [-0.3747, 0.2567],
      [-0.2582, 0.2036],
    ],
  },
  steep: 1.1,
  steps: [
    {
      before: 33536,
      after: 49920,
    },
    {
      before: 131840,
      after: 197376,
    },
  ],
  fitsUpTo: 17152,
  points: 1039,
};
