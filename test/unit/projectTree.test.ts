// The copy of a project's source tree that a project's own build runs in (issue 39,
// engine/variants/projectTree.ts), tested on real temporary trees: what is copied and what never is
// (version control, CMake build folders, links out of the tree, FIFOs), incremental syncs, variants
// written into the copy only, the per-copy lock, the project commands' checks, removals that never
// go through a link, and the build's first error lines. Every source tree is byte-identical at the end.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { execFileSync, spawn, type ChildProcess } from 'child_process';
import {
  ProjectError,
  ProjectTree,
  checkProjectCommands,
  clearProjectCopies,
  firstErrorLines,
  projectCopiesInfo,
} from '../../src/engine/variants/projectTree';

const made: string[] = [];
/** Every source tree with the snapshot it must still have at the end (updated after the test's own edits). */
const sources = new Map<string, Record<string, string>>();

function tree(files: Record<string, string | Buffer> = {}): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-ptree-')));
  made.push(dir);
  for (const [rel, data] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), data);
  }
  return dir;
}

/** A fresh projects folder (the copies' home), below a folder of its own as the cache's is. */
function projectsDir(): string {
  return path.join(tree(), 'projects');
}

/** Every file's hash and modification time, every link's target, every other entry's kind under `dir`. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      const st = fs.lstatSync(p);
      if (e.isSymbolicLink()) out[rel] = `link:${fs.readlinkSync(p)}`;
      else if (e.isDirectory()) walk(p);
      else if (e.isFile()) out[rel] = `${crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex')} ${st.mtimeMs}`;
      else out[rel] = `special:${st.mode}`;
    }
  };
  walk(dir);
  return out;
}

/** Records what `root` holds now: the last test checks it is still so. */
function expectSource(root: string): void {
  sources.set(root, snapshot(root));
}

const has = (p: string) => fs.lstatSync(p, { throwIfNoEntry: false }) !== undefined;
const read = (p: string) => fs.readFileSync(p);

after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

function haveMkfifo(): boolean {
  try {
    execFileSync('mkfifo', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const REGULAR = {
  'src/main.cu': '#include "k/kernel.cuh"\nint main() { return 0; }\n',
  'src/k/kernel.cuh': '__global__ void k() {}\n',
  'inc/real.h': '#pragma once\n',
  'README.md': '# project\n',
  'data.bin': Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
};

describe('ProjectTree.sync: what the copy holds', () => {
  const outside = tree({ 'secret.h': 'outside the project\n' });
  const root = tree({
    ...REGULAR,
    '.git/HEAD': 'ref: refs/heads/main\n',
    '.git/objects/ab/cdef': 'object',
    'build/CMakeCache.txt': 'CMAKE_HOME_DIRECTORY:INTERNAL=/somewhere\n',
    'build/main.o': 'object file',
  });
  fs.symlinkSync('real.h', path.join(root, 'inc/alias.h'));
  fs.symlinkSync(path.join(root, 'inc/real.h'), path.join(root, 'top.h'));
  fs.symlinkSync(path.join(outside, 'secret.h'), path.join(root, 'out.h'));
  fs.symlinkSync('nowhere.h', path.join(root, 'broken.h'));
  expectSource(root);
  const projects = projectsDir();
  const t = ProjectTree.open(root, projects);
  after(() => t.close());

  test('first sync: every regular file copied with its content; .git, the CMake build folder and links out are not', () => {
    assert.equal(t.root, root);
    assert.ok(t.dir.startsWith(fs.realpathSync(projects) + path.sep), t.dir);
    const s = t.sync();
    assert.equal(s.copied, Object.keys(REGULAR).length);
    assert.equal(s.unchanged, 0);
    assert.equal(s.removed, 0);
    for (const rel of Object.keys(REGULAR)) {
      const copy = path.join(t.dir, rel);
      assert.ok(fs.lstatSync(copy).isFile(), rel);
      assert.deepEqual(read(copy), read(path.join(root, rel)), rel);
    }
    assert.equal(t.copyOf(path.join(root, 'src/main.cu')), path.join(t.dir, 'src/main.cu'));
    assert.throws(() => t.copyOf(path.join(outside, 'secret.h')), ProjectError);
    // never copied
    assert.ok(!has(path.join(t.dir, '.git')), '.git/ is not copied');
    assert.ok(!has(path.join(t.dir, 'build')), 'the CMake build folder is not copied');
    assert.ok(
      s.skipped.some(x => x.startsWith('build/') && x.includes('CMake build folder')),
      s.skipped.join('\n'),
    );
    assert.ok(!has(path.join(t.dir, 'out.h')), 'a link out of the project is not copied');
    assert.ok(
      s.skipped.some(x => x.startsWith('out.h ') && x.includes('link out of the project')),
      s.skipped.join('\n'),
    );
    assert.ok(!has(path.join(t.dir, 'broken.h')));
    assert.ok(s.skipped.some(x => x.startsWith('broken.h ') && x.includes('broken link')));
    assert.equal(s.skipped.length, 3, s.skipped.join('\n'));
    // links inside: links inside the copy, to the copy's file
    for (const link of ['inc/alias.h', 'top.h']) {
      const copy = path.join(t.dir, link);
      assert.ok(fs.lstatSync(copy).isSymbolicLink(), link);
      const target = path.resolve(path.dirname(copy), fs.readlinkSync(copy));
      assert.equal(target, path.join(t.dir, 'inc/real.h'), link);
      assert.equal(fs.realpathSync(copy), path.join(t.dir, 'inc/real.h'), link);
      assert.equal(fs.readFileSync(copy, 'utf8'), '#pragma once\n');
    }
  });

  test('second sync with nothing changed copies nothing; an edit is copied again; a deletion removes the copy', () => {
    const again = t.sync();
    assert.deepEqual(
      { copied: again.copied, unchanged: again.unchanged, removed: again.removed },
      { copied: 0, unchanged: Object.keys(REGULAR).length, removed: 0 },
    );
    fs.writeFileSync(path.join(root, 'src/main.cu'), 'int main() { return 1; } // edited, longer\n');
    expectSource(root);
    const edited = t.sync();
    assert.equal(edited.copied, 1);
    assert.equal(edited.unchanged, Object.keys(REGULAR).length - 1);
    assert.equal(fs.readFileSync(path.join(t.dir, 'src/main.cu'), 'utf8'), 'int main() { return 1; } // edited, longer\n');
    // touched, not changed (a checkout): the copy is kept, with its own time (no rebuild)
    const real = path.join(root, 'inc/real.h');
    const copyReal = path.join(t.dir, 'inc/real.h');
    const copyTime = fs.statSync(copyReal).mtimeMs;
    fs.utimesSync(real, 1_700_000_000, 1_700_000_000); // a time utimes sets exactly
    expectSource(root);
    const touched = t.sync();
    assert.deepEqual([touched.copied, touched.unchanged], [0, Object.keys(REGULAR).length]);
    assert.equal(fs.statSync(copyReal).mtimeMs, copyTime);
    // replaced by other bytes of the same size and time (another inode): copied again
    const st = fs.statSync(real);
    fs.writeFileSync(`${real}.new`, '#pragma 1nce\n');
    fs.utimesSync(`${real}.new`, 1_700_000_000, 1_700_000_000);
    fs.renameSync(`${real}.new`, real);
    const now = fs.statSync(real);
    assert.deepEqual([now.size, now.mtimeMs], [st.size, st.mtimeMs]);
    assert.notEqual(now.ino, st.ino);
    expectSource(root);
    assert.equal(t.sync().copied, 1);
    assert.equal(fs.readFileSync(path.join(t.dir, 'inc/real.h'), 'utf8'), '#pragma 1nce\n');
    // a file deleted in the source: its copy goes
    fs.rmSync(path.join(root, 'README.md'));
    expectSource(root);
    const removed = t.sync();
    assert.equal(removed.removed, 1);
    assert.equal(removed.copied, 0);
    assert.equal(removed.unchanged, Object.keys(REGULAR).length - 1);
    assert.ok(!has(path.join(t.dir, 'README.md')));
    assert.equal(t.sync().removed, 0, 'removed once');
  });

  test('the manifest outlives the lock: the next open of the same copy finds everything unchanged', () => {
    t.close();
    const t2 = ProjectTree.open(root, projects);
    try {
      assert.equal(t2.dir, t.dir);
      const s = t2.sync();
      assert.equal(s.copied, 0);
      assert.equal(s.unchanged, Object.keys(REGULAR).length - 1);
    } finally {
      t2.close();
    }
  });

  test('a FIFO is skipped (never opened)', { skip: haveMkfifo() ? false : 'no mkfifo' }, () => {
    const r = tree({ 'a.c': 'a' });
    execFileSync('mkfifo', [path.join(r, 'pipe')]);
    expectSource(r);
    const f = ProjectTree.open(r, projectsDir());
    try {
      const s = f.sync();
      assert.equal(s.copied, 1);
      assert.ok(!has(path.join(f.dir, 'pipe')));
      assert.ok(
        s.skipped.some(x => x.startsWith('pipe ') && x.includes('not a regular file')),
        s.skipped.join('\n'),
      );
    } finally {
      f.close();
    }
  });
});

describe('ProjectTree.writeVariant', () => {
  test('writes into the copy only, each write newer than the last; the next sync restores the original', () => {
    const root = tree({ 'src/k.cu': 'original kernel\n', 'src/other.cu': 'other\n' });
    expectSource(root);
    const src = path.join(root, 'src/k.cu');
    const before = fs.statSync(src);
    const t = ProjectTree.open(root, projectsDir());
    try {
      t.sync();
      const copy = path.join(t.dir, 'src/k.cu');
      t.writeVariant(src, 'variant 1\n');
      assert.equal(fs.readFileSync(copy, 'utf8'), 'variant 1\n');
      const m1 = fs.statSync(copy).mtimeMs;
      t.writeVariant(src, Buffer.from('variant 2\n'));
      const m2 = fs.statSync(copy).mtimeMs;
      assert.equal(fs.readFileSync(copy, 'utf8'), 'variant 2\n');
      assert.ok(m2 > m1, `mtime ${m2} after ${m1}`);
      t.writeVariant(src, 'variant 3\n');
      assert.ok(fs.statSync(copy).mtimeMs > m2);
      // the source: same bytes, same time
      assert.equal(fs.readFileSync(src, 'utf8'), 'original kernel\n');
      assert.equal(fs.statSync(src).mtimeMs, before.mtimeMs);
      assert.equal(fs.statSync(src).ino, before.ino);
      assert.throws(() => t.writeVariant(path.join(tree({ 'x.cu': '' }), 'x.cu'), 'v'), ProjectError);
      const s = t.sync();
      assert.equal(s.copied, 1);
      assert.equal(s.unchanged, 1);
      assert.equal(fs.readFileSync(copy, 'utf8'), 'original kernel\n');
      assert.equal(t.sync().copied, 0, 'restored once');
    } finally {
      t.close();
    }
  });
});

/** A child process that opens the copy of `root` and holds it until told `close` (or killed). */
class Holder {
  private out = '';
  readonly child: ChildProcess;
  constructor(root: string, projects: string) {
    const mod = require.resolve('../../src/engine/variants/projectTree');
    const script =
      'const { ProjectTree } = require(process.argv[1]);' +
      'const t = ProjectTree.open(process.argv[2], process.argv[3]);' +
      "process.stdout.write('dir ' + t.dir + '\\n');" +
      "process.stdin.on('data', d => { if (String(d).includes('close')) { t.close(); process.stdout.write('closed\\n'); } });";
    this.child = spawn(process.execPath, ['-e', script, mod, root, projects], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.child.stdout!.on('data', (d: Buffer) => (this.out += d.toString()));
  }
  async line(re: RegExp): Promise<RegExpMatchArray> {
    const t0 = Date.now();
    for (;;) {
      const m = this.out.match(re);
      if (m) return m;
      if (Date.now() - t0 > 20_000 || this.child.exitCode !== null) throw new Error(`no ${re} from the child: ${this.out}`);
      await new Promise(r => setTimeout(r, 20));
    }
  }
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const gone = new Promise(r => this.child.once('exit', r));
    this.child.kill('SIGKILL');
    await gone;
  }
}

describe('ProjectTree: one bench per copy (the lock)', () => {
  test('a copy locked by another process: the next open takes another slot; released, it is taken again', async () => {
    const root = tree({ 'a.c': 'a' });
    expectSource(root);
    const projects = projectsDir();
    const holder = new Holder(root, projects);
    try {
      const held = (await holder.line(/^dir (.+)$/m))[1];
      const mine = ProjectTree.open(root, projects);
      try {
        assert.notEqual(mine.dir, held);
        assert.equal(path.dirname(path.dirname(mine.dir)), path.dirname(path.dirname(held)), 'slots of one project folder');
      } finally {
        mine.close();
      }
      holder.child.stdin!.write('close\n');
      await holder.line(/^closed$/m);
      const again = ProjectTree.open(root, projects);
      try {
        assert.equal(again.dir, held, 'the released slot is taken again');
      } finally {
        again.close();
      }
    } finally {
      await holder.kill();
    }
  });

  test('a lock whose owner was killed is taken over', async () => {
    const root = tree({ 'a.c': 'a' });
    expectSource(root);
    const projects = projectsDir();
    const holder = new Holder(root, projects);
    const held = (await holder.line(/^dir (.+)$/m))[1];
    await holder.kill();
    assert.ok(has(path.join(path.dirname(held), 'lock')), 'the killed owner left its lock');
    const t = ProjectTree.open(root, projects);
    try {
      assert.equal(t.dir, held);
      assert.equal(fs.readFileSync(path.join(path.dirname(t.dir), 'lock'), 'utf8'), `${process.pid}\n`);
    } finally {
      t.close();
    }
  });

  test('close() releases; a lock file left by a dead pid is taken over', () => {
    const root = tree({ 'a.c': 'a' });
    expectSource(root);
    const projects = projectsDir();
    const first = ProjectTree.open(root, projects);
    const slot = path.dirname(first.dir);
    const lock = path.join(slot, 'lock');
    assert.equal(fs.readFileSync(lock, 'utf8'), `${process.pid}\n`);
    first.close();
    assert.ok(!has(lock), 'close() removes the lock');
    first.close(); // twice: nothing to do
    const second = ProjectTree.open(root, projects);
    assert.equal(second.dir, first.dir, 'after close() the first slot is free again');
    second.close();
    let dead = true;
    try {
      process.kill(999999, 0);
      dead = false;
    } catch (e) {
      dead = (e as NodeJS.ErrnoException).code === 'ESRCH';
    }
    if (!dead) return; // pid 999999 exists on this machine: nothing to check
    fs.writeFileSync(lock, '999999\n');
    const third = ProjectTree.open(root, projects);
    try {
      assert.equal(third.dir, first.dir, "a dead owner's lock is taken over");
      assert.equal(fs.readFileSync(lock, 'utf8'), `${process.pid}\n`);
    } finally {
      third.close();
    }
    // a lock that names nothing (an owner killed between creating and writing it) is taken over too
    fs.writeFileSync(lock, '');
    const fourth = ProjectTree.open(root, projects);
    assert.equal(fourth.dir, first.dir);
    fourth.close();
  });

  test('a second open in the same process while the first is open gets another slot', () => {
    const root = tree({ 'a.c': 'a' });
    expectSource(root);
    const projects = projectsDir();
    const a = ProjectTree.open(root, projects);
    const b = ProjectTree.open(root, projects);
    try {
      assert.notEqual(b.dir, a.dir);
    } finally {
      b.close();
      a.close();
    }
  });
});

describe('checkProjectCommands', () => {
  const real = tree({ 'CMakeLists.txt': '' });
  expectSource(real);
  const linkHome = tree();
  const viaLink = path.join(linkHome, 'proj');
  fs.symlinkSync(real, viaLink);
  const ok = { root: real, build: 'cmake --build build', run: './build/app --n 4', check: null };

  test('relative commands are accepted', () => {
    assert.doesNotThrow(() => checkProjectCommands(ok));
    assert.doesNotThrow(() =>
      checkProjectCommands({ ...ok, root: viaLink, check: 'cmp "$UNROLL_LENS_STDOUT" "$UNROLL_LENS_BASELINE_STDOUT"' }),
    );
    assert.doesNotThrow(() => checkProjectCommands({ ...ok, build: 'cd build && make -j8 && cd ..' }));
  });

  test("a command naming the root's absolute path, or its real path, is refused", () => {
    assert.throws(() => checkProjectCommands({ ...ok, build: `cmake --build ${real}/build` }), ProjectError);
    assert.throws(() => checkProjectCommands({ ...ok, run: `${real}/build/app` }), /run command names the project's own folder/);
    assert.throws(() => checkProjectCommands({ ...ok, check: `diff a ${real}/expected` }), /check command names/);
    // the root given through a link: both its path and its real path are refused
    assert.throws(() => checkProjectCommands({ ...ok, root: viaLink, build: `make -C ${viaLink}` }), ProjectError);
    assert.throws(() => checkProjectCommands({ ...ok, root: viaLink, build: `make -C ${real}` }), ProjectError);
    assert.throws(() => checkProjectCommands({ ...ok, root: `${real}/`, build: `make -C ${real}` }), ProjectError);
  });

  test('a blank command is refused; a null check is none', () => {
    assert.throws(() => checkProjectCommands({ ...ok, build: '' }), /the build command is empty/);
    assert.throws(() => checkProjectCommands({ ...ok, run: '  \t\n' }), /the run command is empty/);
    assert.throws(() => checkProjectCommands({ ...ok, check: ' ' }), ProjectError);
    assert.doesNotThrow(() => checkProjectCommands({ ...ok, check: null }));
  });

  test('a missing root, or a root that is a file, is refused', () => {
    assert.throws(
      () => checkProjectCommands({ ...ok, root: path.join(real, 'missing') }),
      (e: unknown) => {
        assert.ok(e instanceof ProjectError);
        assert.match(e.message, /no such folder/);
        return true;
      },
    );
    assert.throws(
      () => checkProjectCommands({ ...ok, root: path.join(real, 'CMakeLists.txt') }),
      (e: unknown) => {
        assert.ok(e instanceof ProjectError);
        assert.match(e.message, /is not a folder/);
        return true;
      },
    );
  });
});

describe('ProjectTree: removals never go through a link', () => {
  test('a folder of the copy replaced by a link out: the files there are never deleted', () => {
    const root = tree({ 'sub/a.c': 'a source\n', 'sub/b.c': 'b source\n', 'top.c': 'top\n' });
    const outside = tree({ 'a.c': 'precious, outside\n', 'b.c': 'also precious\n' });
    const outsideBefore = snapshot(outside);
    const t = ProjectTree.open(root, projectsDir());
    try {
      assert.equal(t.sync().copied, 3);
      fs.rmSync(path.join(t.dir, 'sub'), { recursive: true });
      fs.symlinkSync(outside, path.join(t.dir, 'sub'));
      // the source file goes, its folder stays: the sync refuses to write through the link (it throws) or
      // goes on; either way nothing outside is touched
      fs.rmSync(path.join(root, 'sub/a.c'));
      expectSource(root);
      let threw: unknown = null;
      try {
        t.sync();
      } catch (e) {
        threw = e;
      }
      assert.ok(threw === null || /link|outside/.test(String(threw)), String(threw));
      assert.deepEqual(snapshot(outside), outsideBefore);
      // the whole source folder goes: the walk never enters it, the removals find the link
      fs.rmSync(path.join(root, 'sub'), { recursive: true });
      expectSource(root);
      // the sync before replaced the planted link by a folder of ours: its copy of b.c goes now, nothing outside
      const s = t.sync();
      assert.equal(s.removed, 1);
      assert.equal(s.unchanged, 1);
      assert.deepEqual(snapshot(outside), outsideBefore);
      assert.equal(fs.readFileSync(path.join(outside, 'a.c'), 'utf8'), 'precious, outside\n');
    } finally {
      t.close();
    }
  });

  test('a copied file replaced by a link out is not followed when its source goes', () => {
    const root = tree({ 'a.c': 'a\n', 'b.c': 'b\n' });
    const outside = tree({ 'a.c': 'precious\n' });
    const t = ProjectTree.open(root, projectsDir());
    try {
      t.sync();
      fs.rmSync(path.join(t.dir, 'a.c'));
      fs.symlinkSync(path.join(outside, 'a.c'), path.join(t.dir, 'a.c'));
      fs.rmSync(path.join(root, 'a.c'));
      expectSource(root);
      assert.equal(t.sync().removed, 0);
      assert.equal(fs.readFileSync(path.join(outside, 'a.c'), 'utf8'), 'precious\n');
    } finally {
      t.close();
    }
  });
});

describe('firstErrorLines', () => {
  test("compiler errors and ninja's FAILED: lines first", () => {
    const out = [
      '[1/3] Building CUDA object CMakeFiles/lib.dir/src/a.cu.o',
      'FAILED: CMakeFiles/lib.dir/src/a.cu.o',
      '/usr/local/cuda/bin/nvcc -c src/a.cu -o a.o',
      'src/a.cu(12): error: identifier "x" is undefined',
      '',
      'compiling src/a.cu: done with -Werror=all-warnings',
      'ninja: build stopped: subcommand failed.',
    ].join('\n');
    assert.deepEqual(firstErrorLines(out), ['FAILED: CMakeFiles/lib.dir/src/a.cu.o', 'src/a.cu(12): error: identifier "x" is undefined']);
    assert.deepEqual(firstErrorLines('make[2]: *** [Makefile:12: a.o] Error 1\nmake: *** No rule to make target x.  Stop.\n'), [
      'make[2]: *** [Makefile:12: a.o] Error 1',
      'make: *** No rule to make target x.  Stop.',
    ]);
    const many = Array.from({ length: 20 }, (_, i) => `a.cu(${i}): error: e${i}`).join('\n');
    assert.equal(firstErrorLines(many).length, 8);
    assert.equal(firstErrorLines(many)[0], 'a.cu(0): error: e0', 'the first ones');
    assert.deepEqual(firstErrorLines(many, undefined, 2), ['a.cu(0): error: e0', 'a.cu(1): error: e1']);
  });

  test('no error lines: the last non-blank lines', () => {
    const out = Array.from({ length: 20 }, (_, i) => `step ${i}  `).join('\n\n') + '\n\n';
    assert.deepEqual(
      firstErrorLines(out),
      Array.from({ length: 8 }, (_, i) => `step ${12 + i}`),
    );
    assert.deepEqual(firstErrorLines(out, undefined, 3), ['step 17', 'step 18', 'step 19']);
    assert.deepEqual(firstErrorLines(''), []);
    const long = 'x'.repeat(400);
    assert.deepEqual(firstErrorLines(long), [`${'x'.repeat(300)}…`]);
  });

  test('a spawn error alone when given', () => {
    assert.deepEqual(firstErrorLines('a.cu(1): error: nope\nFAILED: a.o', 'spawn /bin/sh ENOENT'), ['spawn /bin/sh ENOENT']);
  });
});

describe('ProjectTree: changes of kind and where the cache lies', () => {
  test('a source file that becomes a folder, a folder that becomes a file, a link that becomes a file: the sync follows', () => {
    const root = tree({ 'x/inner.c': 'inner\n', 'y.c': 'y\n', 'real.h': 'h\n' });
    fs.symlinkSync('real.h', path.join(root, 'alias.h'));
    const t = ProjectTree.open(root, projectsDir());
    try {
      t.sync();
      fs.rmSync(path.join(root, 'x'), { recursive: true });
      fs.writeFileSync(path.join(root, 'x'), 'now a file\n');
      fs.rmSync(path.join(root, 'y.c'));
      fs.mkdirSync(path.join(root, 'y.c'));
      fs.writeFileSync(path.join(root, 'y.c/z.c'), 'z\n');
      fs.rmSync(path.join(root, 'alias.h'));
      fs.writeFileSync(path.join(root, 'alias.h'), 'now a file\n');
      expectSource(root);
      t.sync();
      assert.equal(fs.readFileSync(path.join(t.dir, 'x'), 'utf8'), 'now a file\n');
      assert.equal(fs.readFileSync(path.join(t.dir, 'y.c/z.c'), 'utf8'), 'z\n');
      assert.ok(fs.lstatSync(path.join(t.dir, 'alias.h')).isFile());
    } finally {
      t.close();
    }
  });

  test("a project root beside the projects folder (inside the cache's parent, e.g. under --shared-dir) is still copied", () => {
    const home = tree({ 'proj/a.c': 'a\n' });
    const root = path.join(home, 'proj');
    expectSource(root);
    const t = ProjectTree.open(root, path.join(home, 'projects'));
    try {
      const s = t.sync();
      assert.equal(s.copied, 1, JSON.stringify(s));
      assert.ok(has(path.join(t.dir, 'a.c')));
    } finally {
      t.close();
    }
  });
});

test('every source tree is byte-identical to what the tests left there (hash and mtime of every file)', () => {
  assert.ok(sources.size >= 8);
  for (const [root, expected] of sources) assert.deepEqual(snapshot(root), expected, root);
});

describe('cache info and clear: the project copies', () => {
  test('counted with their size; clear deletes the free copies, keeps one a bench holds, never follows a link out', () => {
    const root = tree({ 'a.c': 'a source\n', 'sub/b.c': 'b\n' });
    const outside = tree({ 'precious.txt': 'keep me\n' });
    const dir = projectsDir();
    const held = ProjectTree.open(root, dir);
    const free = ProjectTree.open(root, dir);
    held.sync();
    free.sync();
    fs.symlinkSync(outside, path.join(free.dir, 'out-link'));
    free.close();
    const info = projectCopiesInfo(dir);
    assert.equal(info.copies, 2);
    assert.ok(info.bytes >= 2 * 'a source\nb\n'.length, String(info.bytes));
    const gone = clearProjectCopies(dir);
    assert.deepEqual([gone.copies, gone.kept], [1, 1]);
    assert.ok(!fs.existsSync(free.dir), 'the free copy is gone');
    assert.ok(fs.existsSync(path.join(held.dir, 'a.c')), 'the held copy stays');
    assert.equal(fs.readFileSync(path.join(outside, 'precious.txt'), 'utf8'), 'keep me\n');
    held.close();
    assert.equal(clearProjectCopies(dir).copies, 1);
    assert.deepEqual(projectCopiesInfo(path.join(dir, 'none')), { location: path.join(dir, 'none'), copies: 0, bytes: 0 });
  });
});
