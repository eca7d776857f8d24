import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../../src/cli/main';

async function run(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
  return { code, out, err };
}

function tmpCu(name: string, text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cli-'));
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

describe('unroll-lens scan', () => {
  const SRC = `__global__ void saxpy_tiled(float* y, const float* x, float a, int n) {
#pragma unroll 4
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < 64; ++j) y[i] += a * x[j];
  }
}
void host() { for (int i = 0; i < 3; ++i) {} }
`;

  test('--json follows the documented contract exactly', async () => {
    const file = tmpCu('a.cu', SRC);
    const r = await run(['scan', file, '--json']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out), {
      files: [{
        path: file,
        kernels: [{
          name: 'saxpy_tiled', qualifier: 'global', line: 1,
          loops: [
            { line: 3, kind: 'for', depth: 0, pragma: { kind: 'count', factor: 4, text: 'unroll 4', line: 2 }, tripCount: 'runtime' },
            { line: 4, kind: 'for', depth: 1, pragma: null, tripCount: 64 },
          ],
          manualUnrolls: [],
        }],
      }],
    });
  });

  test('directories are walked for .cu and .cuh; table output names loops', async () => {
    const file = tmpCu('b.cuh', SRC);
    fs.writeFileSync(path.join(path.dirname(file), 'ignored.txt'), 'x');
    const r = await run(['scan', path.dirname(file)]);
    assert.equal(r.code, 0);
    assert.match(r.out, /b\.cuh/);
    assert.match(r.out, /__global__ saxpy_tiled/);
    assert.match(r.out, /unroll 4 requested · trip count runtime/);
    assert.match(r.out, /1 files, 1 device functions, 2 loops/);
    assert.doesNotMatch(r.out, /ignored/);
  });

  test('missing path: exit 2 with a clear message', async () => {
    const r = await run(['scan', '/nonexistent/x.cu']);
    assert.equal(r.code, 2);
    assert.match(r.err, /no such file or directory: \/nonexistent\/x\.cu/);
  });

  test('unreadable file: exit 2', { skip: process.getuid?.() === 0 ? 'root can read any file' : false }, async () => {
    const file = tmpCu('c.cu', SRC);
    fs.chmodSync(file, 0o000);
    const r = await run(['scan', file]);
    assert.equal(r.code, 2);
    assert.match(r.err, /cannot read/);
  });

  test('directory without CUDA files, bad option, no args, unknown command: exit 2', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-empty-'));
    assert.equal((await run(['scan', dir])).code, 2);
    assert.equal((await run(['scan', '--nope', dir])).code, 2);
    assert.equal((await run(['scan'])).code, 2);
    assert.equal((await run(['frobnicate'])).code, 2);
    assert.equal((await run(['--help'])).code, 0);
  });

  test('--strict exits 1 when a finding exists', async () => {
    const file = tmpCu('d.cu', '__global__ void k(int n) {\n#pragma unroll\n  n++;\n}\n');
    assert.equal((await run(['scan', file, '--strict'])).code, 1);
  });
});
