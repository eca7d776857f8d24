// The scan cache (base/dependentCache.ts, parse/scanCache.ts): a cached answer equals a fresh
// one whatever changed in between (a macro's value in a header, a header created earlier on the
// include path or in a folder that did not exist, a header deleted, the flags, the file itself),
// entries anyone else edited or moved are misses, several processes share the folder, and
// `cache info`/`cache clear` cover it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { spawn } from 'child_process';
import { main } from '../../src/cli/main';
import { CudaDocuments } from '../../src/engine/parse/documents';
import { DependencyPacker } from '../../src/engine/base/dependentCache';
import { scanDependencies } from '../../src/engine/parse/scanCache';
import { MacroTables } from '../../src/engine/parse/macros';

const HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-scan-cache-'));
process.env.XDG_CONFIG_HOME = path.join(HOME, 'config');
const SCANS = path.join(HOME, 'cache', 'unroll-lens', 'scans');

/** Files analysed (not answered from the cache) by scans in this process. */
let analysed: string[] = [];
const analyzeOnce = CudaDocuments.prototype.analyzeOnce;
before(() => {
  CudaDocuments.prototype.analyzeOnce = function (this: CudaDocuments, ...args: Parameters<typeof analyzeOnce>) {
    analysed.push(path.basename(args[1]));
    return analyzeOnce.apply(this, args);
  };
});
after(() => {
  CudaDocuments.prototype.analyzeOnce = analyzeOnce;
  fs.rmSync(HOME, { recursive: true, force: true });
});

async function scan(root: string, ...extra: string[]): Promise<string> {
  const saved = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = path.join(HOME, 'cache');
  let out = '';
  const cwd = process.cwd();
  process.chdir(root);
  try {
    const code = await main(['scan', '.', ...extra], { out: s => (out += s), err: () => {}, isTTY: false });
    assert.ok(code === 0 || code === 1, `scan exited ${code}`);
  } finally {
    process.chdir(cwd);
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
  }
  return out;
}

/** A scan through the cache and a fresh one give the same text; returns the files the cached scan analysed. */
async function sameAsFresh(root: string, format: string[] = ['--json']): Promise<string[]> {
  analysed = [];
  const cached = await scan(root, ...format);
  const did = [...analysed];
  const fresh = await scan(root, '--fresh', ...format);
  assert.equal(cached, fresh);
  return did.sort();
}

function write(root: string, rel: string, text: string) {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
}

/** A kernel, and a function that is device code only when LIB_DEV (from <lib/a.h>) says so. */
const KERNEL = (factor: string) => `#include "cfg.h"
#include <lib/a.h>
LIB_DEV float twice(float v) {
  for (int i = 0; i < 2; ++i) v += v;
  return v;
}
__global__ void k(float* x) {
#pragma unroll ${factor}
  for (int i = 0; i < 64; ++i) x[i] *= 2.f;
}
`;

/**
 * src/k.cu reads cfg.h and <lib/a.h> (both in include/ of the tree), <lib/a.h> reads "b.h":
 * `twice` is device code when B_FACTOR > 2. src/other.cu includes nothing.
 */
function project(): string {
  const root = fs.mkdtempSync(path.join(HOME, 'proj-'));
  write(root, 'src/k.cu', KERNEL('4'));
  write(root, 'src/other.cu', '__global__ void o(float* x) {\n#pragma unroll 2\n  for (int i = 0; i < 8; ++i) x[i] = 0;\n}\n');
  write(
    root,
    'include/lib/a.h',
    '#pragma once\n#include "b.h"\n#if B_FACTOR > 2\n#define LIB_DEV __device__\n#else\n#define LIB_DEV\n#endif\n',
  );
  write(root, 'include/lib/b.h', '#pragma once\n#ifndef B_FACTOR\n#define B_FACTOR 2\n#endif\n');
  write(root, 'include/cfg.h', '#pragma once\n');
  return root;
}

function entries(): string[] {
  if (!fs.existsSync(SCANS)) return [];
  return fs
    .readdirSync(SCANS)
    .filter(s => /^[0-9a-f]{2}$/.test(s))
    .flatMap(s => fs.readdirSync(path.join(SCANS, s)).map(f => path.join(SCANS, s, f)));
}

describe('scan cache: a cached answer equals a fresh one', () => {
  test('a second scan answers every file from the cache, JSON and table alike', async () => {
    const root = project();
    assert.deepEqual(await sameAsFresh(root), ['k.cu', 'other.cu']);
    assert.deepEqual(await sameAsFresh(root), []);
    assert.deepEqual(await sameAsFresh(root, []), [], 'the table is made from the same analyses');
    assert.match(await scan(root, '--json'), /"factor": 4/);
    assert.doesNotMatch(await scan(root, '--json'), /"twice"/);
    assert.ok(
      entries().every(f => /\.json$/.test(f)),
      'no temporary file left',
    );
  });

  test('what the file reads changing: only the files that read it are analysed again', async () => {
    const root = project();
    await sameAsFresh(root);
    const device = async () => /"name": "twice"/.test(await scan(root, '--json'));
    assert.equal(await device(), false);
    // what changes, which files are analysed again, whether `twice` is then device code
    const steps: [string, () => void, string[], boolean][] = [
      [
        'a macro value in a nested header',
        () => write(root, 'include/lib/b.h', '#ifndef B_FACTOR\n#define B_FACTOR 4\n#endif\n'),
        ['k.cu'],
        true,
      ],
      ['code only, directives as they were', () => fs.appendFileSync(path.join(root, 'include/lib/b.h'), 'int unused;\n'), ['k.cu'], true],
      ['nothing', () => {}, [], true],
      ['a header created where the quoted include looks first', () => write(root, 'src/cfg.h', '#define B_FACTOR 1\n'), ['k.cu'], false],
      ['a header created in a folder that did not exist', () => write(root, 'lib/a.h', '#define LIB_DEV __device__\n'), ['k.cu'], true],
      ['that folder removed again', () => fs.rmSync(path.join(root, 'lib'), { recursive: true }), ['k.cu'], false],
      ['the header it read deleted', () => fs.rmSync(path.join(root, 'include/lib/a.h')), ['k.cu'], false],
      [
        'the file itself',
        () => write(root, 'src/other.cu', fs.readFileSync(path.join(root, 'src/other.cu'), 'utf8') + '\n'),
        ['other.cu'],
        false,
      ],
      [
        'its flags (compile_commands.json)',
        () =>
          write(
            root,
            'compile_commands.json',
            JSON.stringify([
              { directory: path.join(root, 'src'), file: 'k.cu', arguments: ['nvcc', '-DLIB_DEV=__device__', '-c', 'k.cu'] },
            ]),
          ),
        ['k.cu'],
        true,
      ],
    ];
    for (const [what, change, expected, isDevice] of steps) {
      change();
      assert.deepEqual(await sameAsFresh(root), expected, what);
      assert.equal(await device(), isDevice, `${what}: twice is ${isDevice ? '' : 'not '}device code`);
    }
  });

  test('a path looked for while reading a header another file read first (a replay) counts for both', async () => {
    const root = project();
    // a.h looks for <conf/c.h> on the search path: the tree's root first (no conf/ there), then include/
    write(
      root,
      'include/lib/a.h',
      '#pragma once\n#include <conf/c.h>\n#if B_FACTOR > 2\n#define LIB_DEV __device__\n#else\n#define LIB_DEV\n#endif\n',
    );
    write(root, 'include/conf/c.h', '#pragma once\n#define B_FACTOR 1\n');
    // k2.cu defines a macro before including a.h: no snapshot, a.h's effect from k.cu is replayed
    write(root, 'src/k2.cu', '#define K2 1\n' + KERNEL('2').replace('twice', 'thrice'));
    // k3.cu starts as k.cu does: it starts from the state k.cu's first includes left (a snapshot)
    write(root, 'src/k3.cu', KERNEL('8').replace('twice', 'four'));
    assert.deepEqual(await sameAsFresh(root), ['k.cu', 'k2.cu', 'k3.cu', 'other.cu']);
    assert.deepEqual(await sameAsFresh(root), []);
    write(root, 'conf/c.h', '#define B_FACTOR 8\n');
    assert.deepEqual(await sameAsFresh(root), ['k.cu', 'k2.cu', 'k3.cu']);
    const out = await scan(root, '--json');
    assert.match(out, /"thrice"/, 'k2.cu sees the new header');
    assert.match(out, /"four"/, 'k3.cu sees the new header');
  });

  test('an entry edited or moved by anyone else is a miss', async () => {
    fs.rmSync(SCANS, { recursive: true, force: true });
    const root = project();
    await sameAsFresh(root);
    const mine = entries();
    assert.equal(mine.length, 2);
    // one edited in place (a character of its answer), the other's overwritten by a copy of it
    const a = fs.readFileSync(mine[0], 'utf8');
    const edited = a.replace(/(value\\":\\")(.)/, (_m, p: string, c: string) => p + (c === 'A' ? 'B' : 'A'));
    assert.notEqual(edited, a);
    fs.writeFileSync(mine[0], edited);
    fs.copyFileSync(mine[0], mine[1]);
    assert.deepEqual(await sameAsFresh(root), ['k.cu', 'other.cu'], 'both analysed again');
    assert.deepEqual(await sameAsFresh(root), [], 'and stored again');
  });
});

describe('scan cache: the folder', () => {
  test('a folder of the user’s is never written', async () => {
    const root = project();
    const home = fs.mkdtempSync(path.join(HOME, 'foreign-'));
    const scans = path.join(home, 'unroll-lens', 'scans');
    fs.mkdirSync(scans, { recursive: true });
    fs.writeFileSync(path.join(scans, 'notes.txt'), 'mine');
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = home;
    const cwd = process.cwd();
    process.chdir(root);
    try {
      let err = '';
      const code = await main(['scan', '.', '--json'], { out: () => {}, err: s => (err += s), isTTY: false });
      assert.equal(code, 0);
      assert.match(err, /scans is not an Unroll Lens scan cache .*: analyses are not cached there\n$/);
    } finally {
      process.chdir(cwd);
      process.env.XDG_CACHE_HOME = saved;
    }
    assert.deepEqual(fs.readdirSync(scans), ['notes.txt']);
  });

  test('a temporary file a killed scan left is removed by a later scan that writes; a fresh one stays', async () => {
    const root = project();
    await scan(root, '--json');
    const shard = path.dirname(entries()[0]);
    const name = (pid: number) => path.join(shard, `${path.basename(shard)}${'0'.repeat(62)}.json.${pid}.0badf00d.tmp`);
    fs.writeFileSync(name(1), 'half');
    const old = new Date(Date.now() - 2 * 3600_000);
    fs.utimesSync(name(1), old, old);
    fs.writeFileSync(name(2), 'being written');
    write(root, 'src/new.cu', '__global__ void n() {}\n');
    await scan(root, '--json');
    assert.equal(fs.existsSync(name(1)), false, 'the stale one is gone');
    assert.equal(fs.existsSync(name(2)), true, 'a recent one may be a live writer’s');
    fs.rmSync(name(2));
  });

  test('cache info counts the scans and cache clear deletes them', async () => {
    const root = project();
    await scan(root, '--json');
    let out = '';
    const io = { out: (s: string) => (out += s), err: () => {}, isTTY: false };
    const dir = path.join(HOME, 'cache', 'unroll-lens', 'builds');
    assert.equal(await main(['cache', 'info', '--json', '--dir', dir], io), 0);
    const info = JSON.parse(out) as { scans: { entries: number; location: string } };
    assert.equal(info.scans.location, SCANS);
    assert.equal(info.scans.entries, entries().length);
    assert.ok(info.scans.entries >= 2);
    out = '';
    assert.equal(await main(['cache', 'clear', '--dir', dir], io), 0);
    assert.match(out, /cleared .*scans: \d+ analyses/);
    assert.deepEqual(entries(), []);
  });

  test('two processes scanning at once share the folder: both right, nothing half-written', async () => {
    const root = project();
    for (let i = 0; i < 40; i++) write(root, `src/many${i}.cu`, KERNEL(String((i % 4) + 1)));
    const home = fs.mkdtempSync(path.join(HOME, 'shared-'));
    const bin = path.join(__dirname, '..', '..', '..', 'bin', 'unroll-lens.js');
    const run = (...extra: string[]) =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, [bin, 'scan', '--json', '.', ...extra], {
          cwd: root,
          env: { ...process.env, XDG_CACHE_HOME: home },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('error', reject);
        child.on('exit', () => resolve(out));
      });
    const [a, b] = await Promise.all([run(), run()]);
    const fresh = await run('--fresh');
    assert.equal(a, fresh);
    assert.equal(b, fresh);
    assert.equal(await run(), fresh);
    const left = fs.readdirSync(path.join(home, 'unroll-lens', 'scans'), { recursive: true }).map(String);
    assert.deepEqual(
      left.filter(f => /\.tmp$/.test(f)),
      [],
    );
  });
});

describe('scan cache: what an entry depends on', () => {
  test('a reading cut short by the include budget is not stored', () => {
    const d = fs.mkdtempSync(path.join(HOME, 'loop-'));
    // a header without a guard that includes itself twice: the work budget stops it
    write(d, 'x.h', '#include "x.h"\n#include "x.h"\n');
    const env = new MacroTables().tableFor(path.join(d, 'a.cu'), '#include "x.h"\n', {
      includeDirs: [],
      systemIncludeDirs: [],
      defines: [],
      arch: 'sm_90',
    }).env;
    assert.ok(env.truncated);
    assert.equal(scanDependencies(env), null);
  });

  test('a missing folder stands for the paths looked for under it; a present one lists each', () => {
    const d = fs.mkdtempSync(path.join(HOME, 'pack-'));
    write(d, 'there/h.h', '');
    const packed = new DependencyPacker().pack({
      read: [[path.join(d, 'there/h.h'), 'ab'.repeat(32)]],
      probed: [
        [path.join(d, 'there/h.h'), true],
        [path.join(d, 'there/none.h'), false],
        [path.join(d, 'gone/deeper/x.h'), false],
        [path.join(d, 'gone/y.h'), false],
      ],
    });
    assert.deepEqual(packed, [
      [path.join(d, 'there'), ['h.h', 'none.h'], ['ab'.repeat(16), 0]],
      [d, ['gone'], [2]],
    ]);
  });
});
