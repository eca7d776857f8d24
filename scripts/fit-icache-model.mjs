#!/usr/bin/env node
// Fits the instruction-cache model on the recorded calibration grids (H100 + H200) and writes
// src/engine/icache/calibration.ts. Run after `npx tsc -p .` (npm run fit:icache does both).
// test/unit/icacheModel.test.ts fails when the shipped calibration differs from a fresh fit.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const fit = require(path.join(root, 'out/src/engine/icache/fit.js'));
const { calibrationSource } = fit;
const fixtures = path.join(root, 'test/fixtures/gpu');
const shapes = fit.gridShapes(fit.readGridSass(path.join(fixtures, 'h100/icache-grid/sass-4k.txt.gz')));
const points = [
  ...fit.readGridFolder('H100', path.join(fixtures, 'h100/icache-grid'), shapes),
  ...fit.readGridFolder('H200', path.join(fixtures, 'h200/icache-grid'), shapes),
];
const cal = fit.fitIcacheModel(points, { arch: 'sm_90', source: calibrationSource(points) });
const out = path.join(root, 'src/engine/icache/calibration.ts');
fs.writeFileSync(
  out,
  `// Written by scripts/fit-icache-model.mjs (npm run fit:icache) from the calibration grids in
// test/fixtures/gpu/h100/icache-grid and h200/icache-grid: do not edit by hand.
import type { IcacheCalibration } from './types';

export const SM90_ICACHE: IcacheCalibration = ${JSON.stringify(cal, null, 2)};
`,
);
console.log(
  `wrote ${path.relative(root, out)}: ${cal.points} points, sharpness ${cal.sharpness}, steps ${cal.steps.map(s => `${s.before}→${s.after}`).join(', ')}`,
);
