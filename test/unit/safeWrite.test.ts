// Issue 23, where we write: a workspace whose `.unroll-lens/` (or results folder) is a link out of
// it must not make a saved result land outside; the safe writer refuses links out of its root,
// links and non-files as the target, and `..` out of the root, and never leaves a temp file.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { SweepResult } from '../../src/protocol';
import { saveResult } from '../../src/engine/sweep/store';
import {
  readHead,
  safeCopyFile,
  SafeWriteError,
  SafeWriteOptions,
  safeMkdir,
  safeTargetPath,
  safeWriteFile,
} from '../../src/engine/base/safeWrite';

/** Temp folders of this file, removed at the end. */
const made: string[] = [];
after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

/** A workspace and an "outside" folder with a canary file, side by side in a fresh temp folder. */
export function workspaceWithOutside(): { ws: string; outside: string; canary: string; snapshot: () => string } {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-safewrite-'));
  made.push(top);
  const ws = path.join(top, 'ws');
  const outside = path.join(top, 'outside');
  fs.mkdirSync(ws);
  fs.mkdirSync(outside);
  const canary = path.join(outside, 'canary.txt');
  fs.writeFileSync(canary, 'canary\n');
  const snapshot = () =>
    (fs.readdirSync(outside, { recursive: true }) as string[])
      .sort()
      .map(f => {
        const p = path.join(outside, f);
        const st = fs.lstatSync(p);
        return `${f}:${st.isFile() ? fs.readFileSync(p, 'utf8') : st.isDirectory() ? 'dir' : 'other'}`;
      })
      .join('|');
  return { ws, outside, canary, snapshot };
}

function result(file: string): SweepResult {
  return {
    schema: 1,
    file,
    kernel: 'k',
    kernelLine: 1,
    loops: [],
    static: true,
    strategy: 'exhaustive',
    origin: 'sweep',
    createdAt: '2026-11-23T10:00:00.000Z',
    baseline: 'as-written',
    best: null,
    variants: [],
  } as unknown as SweepResult;
}

describe('saving a result into a workspace (sweep --save, the server after a sweep)', () => {
  test('.unroll-lens is a link to a folder outside the workspace: refused, nothing written outside', () => {
    const { ws, outside, snapshot } = workspaceWithOutside();
    fs.symlinkSync(outside, path.join(ws, '.unroll-lens'));
    const before = snapshot();
    assert.throws(
      () => saveResult(ws, result(path.join(ws, 'k.cu'))),
      (e: Error) => {
        assert.ok(e instanceof SafeWriteError, String(e));
        assert.equal(e.refusal, 'symlink');
        assert.match(e.message, /\.unroll-lens is a link to .*outside/);
        return true;
      },
    );
    assert.equal(snapshot(), before);
  });

  test('.unroll-lens/results is a link outside (absolute, and relative ../../outside): refused', () => {
    for (const target of ['abs', 'rel']) {
      const { ws, outside, snapshot } = workspaceWithOutside();
      fs.mkdirSync(path.join(ws, '.unroll-lens'));
      fs.symlinkSync(target === 'abs' ? outside : '../../outside', path.join(ws, '.unroll-lens', 'results'));
      const before = snapshot();
      assert.throws(() => saveResult(ws, result(path.join(ws, 'k.cu'))), SafeWriteError);
      assert.equal(snapshot(), before);
    }
  });

  test('a link that stays inside the workspace is followed; a planted link as the result name is not written through', () => {
    const { ws, outside, snapshot } = workspaceWithOutside();
    fs.mkdirSync(path.join(ws, 'kept'));
    fs.symlinkSync(path.join(ws, 'kept'), path.join(ws, '.unroll-lens'));
    const saved = saveResult(ws, result(path.join(ws, 'k.cu')));
    assert.ok(fs.realpathSync(saved).startsWith(fs.realpathSync(path.join(ws, 'kept')) + path.sep));
    // The next save of the same second takes `-2`; a link planted there is skipped, never written through.
    fs.symlinkSync(path.join(outside, 'canary.txt'), saved.replace(/\.json$/, '-2.json'));
    const before = snapshot();
    const next = saveResult(ws, result(path.join(ws, 'k.cu')));
    assert.match(next, /-3\.json$/);
    assert.equal(snapshot(), before);
    assert.deepEqual(
      fs.readdirSync(path.dirname(saved)).filter(f => f.endsWith('.tmp')),
      [],
    );
  });
});

describe('safeWriteFile', () => {
  test('writes inside, creating folders; replaces an existing regular file through a temp file', () => {
    const { ws } = workspaceWithOutside();
    const f = safeWriteFile(ws, 'a/b/c.txt', 'one');
    assert.equal(fs.readFileSync(f, 'utf8'), 'one');
    safeWriteFile(ws, path.join(ws, 'a/b/c.txt'), 'two');
    assert.equal(fs.readFileSync(f, 'utf8'), 'two');
    assert.deepEqual(fs.readdirSync(path.dirname(f)), ['c.txt']);
  });

  test('refusals: .. out of the root, the root itself, a link as the file, a FIFO, a file as a folder, keep', () => {
    const { ws, outside, canary, snapshot } = workspaceWithOutside();
    fs.symlinkSync(canary, path.join(ws, 'link.txt'));
    fs.writeFileSync(path.join(ws, 'plain'), 'x');
    fs.mkdirSync(path.join(ws, 'dir'));
    const before = snapshot();
    const cases: [string, string, SafeWriteOptions?][] = [
      ['../outside/canary.txt', 'outside-root'],
      [canary, 'outside-root'],
      ['.', 'bad-path'],
      ['a\0b', 'bad-path'],
      ['link.txt', 'symlink'],
      ['dir', 'not-a-file'],
      ['plain/x.txt', 'not-a-folder'],
      ['plain', 'exists', { existing: 'keep' }],
      ['plain', 'exists', { existing: () => false }],
    ];
    if (process.platform !== 'win32') {
      execFileSync('mkfifo', [path.join(ws, 'fifo')]);
      cases.push(['fifo', 'not-a-file']);
    }
    for (const [target, refusal, o] of cases) {
      assert.throws(
        () => safeWriteFile(ws, target, 'pwned', o),
        (e: Error) => e instanceof SafeWriteError && e.refusal === refusal,
        `${JSON.stringify(target)} should be refused as ${refusal}`,
      );
    }
    assert.equal(snapshot(), before);
    assert.equal(fs.readFileSync(path.join(ws, 'plain'), 'utf8'), 'x');
    assert.deepEqual(fs.readdirSync(outside), ['canary.txt']);
  });

  test("link/../x is the root's own x (resolved before the kernel sees it); safeMkdir and safeTargetPath check the same way", () => {
    const { ws, outside, snapshot } = workspaceWithOutside();
    fs.symlinkSync(outside, path.join(ws, 'out'));
    const before = snapshot();
    const f = safeWriteFile(ws, 'out/../x.txt', 'x');
    assert.equal(f, path.join(fs.realpathSync(ws), 'x.txt'));
    assert.throws(() => safeMkdir(ws, 'out/sub'), SafeWriteError);
    assert.throws(() => safeTargetPath(ws, 'out/f.txt'), SafeWriteError);
    assert.equal(snapshot(), before);
  });

  test('safeCopyFile (kept ncu reports): copies inside; a link planted under the name is refused, its target unchanged', () => {
    const { ws, canary, snapshot } = workspaceWithOutside();
    const report = path.join(ws, 'r.ncu-rep');
    fs.writeFileSync(report, 'report bytes');
    assert.equal(fs.readFileSync(safeCopyFile(ws, 'kept/r.ncu-rep', report), 'utf8'), 'report bytes');
    fs.symlinkSync(canary, path.join(ws, 'kept', 'planted.ncu-rep'));
    const before = snapshot();
    assert.throws(
      () => safeCopyFile(ws, 'kept/planted.ncu-rep', report),
      (e: Error) => e instanceof SafeWriteError && e.refusal === 'symlink',
    );
    assert.equal(snapshot(), before);
    assert.deepEqual(fs.readdirSync(path.join(ws, 'kept')).sort(), ['planted.ncu-rep', 'r.ncu-rep']);
  });

  test('readHead reads a regular file only, never through a link or from a FIFO', () => {
    const { ws, canary } = workspaceWithOutside();
    fs.symlinkSync(canary, path.join(ws, 'l'));
    assert.equal(readHead(canary, 3)?.toString(), 'can');
    assert.equal(readHead(path.join(ws, 'l'), 3), null);
    assert.equal(readHead(ws, 3), null);
    if (process.platform !== 'win32') {
      execFileSync('mkfifo', [path.join(ws, 'fifo')]);
      assert.equal(readHead(path.join(ws, 'fifo'), 3), null);
    }
  });
});
