// Library-style code (test/fixtures/library-corpus/, written in the styles of a GEMM template
// library and its tensor layer, a neural-network library and a tile DSL) through `unroll-lens
// scan`, checked by a counter that shares no code with the scanner
// (scripts/measure/count_unroll_pragmas.py): every unroll pragma attached to its loop, no
// attachment the counter does not see, and exactly the diagnostics marked `// expect: CODE`.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { execFileSync } from 'child_process';
import { main } from '../../src/cli/main';
import { REPO_ROOT } from './helpers';

const CORPUS = path.join(REPO_ROOT, 'test', 'fixtures', 'library-corpus');
const COUNTER = path.join(REPO_ROOT, 'scripts', 'measure', 'count_unroll_pragmas.py');

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
  return { code, out, err };
}

/** The `// expect: CODE` markers of the corpus: "relative/path:line code". */
function expectedDiagnostics(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (!e.name.endsWith('.md'))
        fs.readFileSync(p, 'utf8')
          .split('\n')
          .forEach((l, i) => {
            for (const m of l.matchAll(/expect: ([a-z-]+)/g)) out.push(`${path.relative(CORPUS, p)}:${i + 1} ${m[1]}`);
          });
    }
  };
  walk(CORPUS);
  return out.sort();
}

describe('library-style corpus', () => {
  test('every unroll pragma is attached to its loop, as an independent counter sees them', async () => {
    const r = await cli(['scan', CORPUS, '--json']);
    assert.equal(r.code, 0, r.err);
    const scanFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-corpus-')), 'scan.json');
    fs.writeFileSync(scanFile, r.out);
    const res = JSON.parse(execFileSync('python3', [COUNTER, CORPUS, '--scan', scanFile], { encoding: 'utf8' }));
    fs.rmSync(path.dirname(scanFile), { recursive: true, force: true });
    // The counter's own sanity: it found every pragma the fixtures were written with.
    assert.equal(res.pragmas, 25, `counter found ${res.pragmas} pragmas`);
    assert.deepEqual(res.missed, [], 'pragmas the scanner did not attach');
    assert.deepEqual(res.notInCount, [], 'attachments the counter does not see');
  });

  test('warnings are exactly the marked ones; nothing else is flagged', async () => {
    const r = await cli(['scan', CORPUS]);
    assert.equal(r.code, 0, r.err);
    const got: string[] = [];
    let file = '';
    for (const line of r.out.split('\n')) {
      if (line.startsWith(CORPUS)) file = path.relative(CORPUS, line.replace(/\s+\(.*\)$/, ''));
      const m = /^ {2}(\d+): warning: .*\[([a-z-]+)\]$/.exec(line);
      if (m) got.push(`${file}:${m[1]} ${m[2]}`);
    }
    assert.deepEqual(got.sort(), expectedDiagnostics());
  });
});
