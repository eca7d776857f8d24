// A large raw-page CSV shaped exactly like a real one: the header and units rows and the launch
// rows of a recording (test/fixtures/gpu/h100/matmul_basic.raw.csv, 20 launches of one kernel on
// an H100), repeated with fresh IDs and, every other round, under a second kernel name, so the
// readers see many launches of two kernels. Used by stallsStream.test.ts and, by hand, for the
// memory and time figures of a ~400 MB export:
//   node -e "require('./out/test/unit/rawPageSynthetic.js').writeSyntheticRawPage('/tmp/big.csv', 400 * 2 ** 20)"
import * as fs from 'fs';
import * as path from 'path';

const REC = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'gpu', 'h100', 'matmul_basic.raw.csv');
const SECOND = 'matmul_basic_twin(const float *, const float *, float *, int)';

/** Writes at least `bytes` bytes of raw page to `file`; returns the number of launch rows. */
export function writeSyntheticRawPage(file: string, bytes: number): number {
  const lines = fs.readFileSync(REC, 'utf8').split('\n').filter(Boolean);
  const [header, units, ...rows] = lines;
  const name = /^"[^"]*","[^"]*","[^"]*","[^"]*","([^"]*)"/.exec(rows[0])![1];
  const fd = fs.openSync(file, 'w');
  let written = 0;
  let id = 0;
  const put = (s: string) => {
    fs.writeSync(fd, s);
    written += Buffer.byteLength(s);
  };
  try {
    put(`${header}\n${units}\n`);
    for (let round = 0; written < bytes; round++) {
      let chunk = '';
      for (const r of rows) {
        let row = r.replace(/^"\d+"/, `"${id++}"`);
        if (round % 2 === 1) row = row.replace(`"${name}"`, `"${SECOND}"`);
        chunk += row + '\n';
      }
      put(chunk);
    }
  } finally {
    fs.closeSync(fd);
  }
  return id;
}
