// Issue 25: per-source-line stall shares from the CUPTI timer's PC samples against ncu's source
// page, over the files scripts/device/run-pc-lines.sh recorded. Prints, per kernel, the lines
// with >= 1 % of the samples in either source, the largest gap (points) and the hottest line of
// each, and the same gap between ncu's two runs of the kernel (ncu's own spread).
// Usage: npx tsc -p . && node scripts/device/compare-pc-lines.mjs [DIR] (default: the fixtures)
import * as fs from 'fs';
import * as path from 'path';
import * as zlib from 'zlib';
import { createRequire } from 'module';
const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const { parseTimerRecords } = require(path.join(root, 'out/src/engine/gpu/cupti/timerRecords.js'));
const { pcLineStalls } = require(path.join(root, 'out/src/engine/gpu/cupti/pcLines.js'));
const { compareLineShares } = require(path.join(root, 'out/src/engine/gpu/cupti/pcLines.js'));
const { parseSourcePage } = require(path.join(root, 'out/src/engine/profile/ncuCsv.js'));
const { perLineStalls } = require(path.join(root, 'out/src/engine/profile/stalls.js'));
const { parseNvdisasm } = require(path.join(root, 'out/src/engine/sass/index.js'));

const dir = process.argv[2] ?? path.join(root, 'test/fixtures/gpu/h100/cupti/pclines');
// the fixtures keep the listing and ncu's pages gzipped; the device run's folder has them plain
const read = f => {
  const gz = path.join(dir, f + '.gz');
  return fs.existsSync(gz) ? zlib.gunzipSync(fs.readFileSync(gz)).toString('utf8') : fs.readFileSync(path.join(dir, f), 'utf8');
};
const exists = f => fs.existsSync(path.join(dir, f)) || fs.existsSync(path.join(dir, f + '.gz'));
const listing = parseNvdisasm(read('prog.nvdisasm.txt'));
const runs = ['sampled15-1.jsonl', 'sampled15-2.jsonl'].filter(exists).map(f => parseTimerRecords(read(f)).pcSampling);
const FILE = 'matmul_unroll.cu';
const pct = x => (100 * x).toFixed(1);
const pages = new Set(fs.readdirSync(dir).map(f => f.replace(/\.gz$/, '')));
for (const csv of [...pages].filter(f => /^ncu-.*-a\.csv$/.test(f)).sort()) {
  const kernel = csv.slice(4, -6);
  const fn = listing.functions.find(f => f.name === kernel);
  if (!fn) continue;
  const ncuA = perLineStalls(parseSourcePage(read(csv)), FILE);
  const b = csv.replace(/-a\.csv$/, '-b.csv');
  const ncuB = exists(b) ? perLineStalls(parseSourcePage(read(b)), FILE) : null;
  const pcs = runs.map(r => pcLineStalls(r, kernel, fn, FILE));
  const c = compareLineShares(pcs[0], ncuA, 0.01);
  const ncuSpread = ncuB ? compareLineShares(ncuA, ncuB, 0.01).largestGap : NaN;
  const pcSpread = pcs[1] ? compareLineShares(pcs[0], pcs[1], 0.01).largestGap : NaN;
  console.log(
    `${kernel}: PC ${c.samplesA} samples, ncu ${c.samplesB}; hottest PC ${c.hottestA} ncu ${c.hottestB}; ` +
      `largest gap ${pct(c.largestGap)} pts (ncu a-b ${pct(ncuSpread)}, PC 1-2 ${pct(pcSpread)})`,
  );
  for (const l of c.lines) console.log(`  line ${l.line}: PC ${pct(l.shareA)} % ncu ${pct(l.shareB)} %`);
}
