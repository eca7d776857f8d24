// Prints the hit-rate table of docs/measurements.md ("Recommended factor before running") from the
// recorded sweeps: each NAME.static.json in test/fixtures/gpu/h100/recommend/ (the static rule's
// facts) scored against NAME.json there or in ../sweep/ (the GPU medians). Run after `npx tsc -p .`:
//   node scripts/measure/recommend-table.mjs
// test/unit/recommend.test.ts recomputes the same rows and checks the docs and the hover's record.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { recommendationRow, recommendationTableRow } = require('../../out/src/engine/sweep/recommend.js');
const H100 = 'test/fixtures/gpu/h100';
const REC = path.join(H100, 'recommend');
const read = f => JSON.parse(fs.readFileSync(f, 'utf8'));
const rows = fs
  .readdirSync(REC)
  .filter(f => f.endsWith('.static.json'))
  .sort()
  .map(f => {
    const name = f.replace(/\.static\.json$/, '');
    const own = path.join(REC, `${name}.json`);
    const measured = read(fs.existsSync(own) ? own : path.join(H100, 'sweep', `${name}.json`));
    return recommendationRow(name, read(path.join(REC, f)), measured);
  });
for (const r of rows) console.log(r ? recommendationTableRow(r) : '(not measured)');
const scored = rows.filter(Boolean);
console.log(`\nwithin 5%: ${scored.filter(r => r.hit).length} of ${scored.length}`);
