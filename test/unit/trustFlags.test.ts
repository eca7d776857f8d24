// nvcc pastes -D, -I, -Xcompiler and -ccbin values into command lines it runs with sh, so a
// compile_commands.json could run commands when a file is analysed. These tests use the real nvcc:
// first that the attack works on nvcc itself (so the tests prove something), then that no flag
// from a database or the settings gets one through, and that the build refuses what slips past.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { CompileFlags, flagsFromCompileCommands, flagsFromSettings } from '../../src/engine/toolchain/flags';
import { VariantBuilder } from '../../src/engine/variants/build';
import { main } from '../../src/cli/main';
import { pathToFileURL } from 'url';
import type { Connection } from 'vscode-languageserver/node';
import { CudaDocuments } from '../../src/engine/parse/documents';
import { DEFAULT_SETTINGS } from '../../src/settings';
import { ServerToolchain } from '../../src/server/toolchain';
import { VariantService } from '../../src/server/variants';
import { DocumentFactsStore } from '../../src/server/facts';

let toolchain: Toolchain | null = null;
let skip: string | false = false;

before(async () => {
  try {
    toolchain = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

const KERNEL = `__global__ void k(int *p) {
#ifdef BLOCK
  p[0] = BLOCK;
#endif
#ifdef VERSION
  static_assert(sizeof(VERSION) == 4, "VERSION is the string \\"1.2\\"");
  p[1] = VERSION[0];
#endif
}
`;

function project(command: string, files: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-trust-'));
  const marker = (n: string) => path.join(dir, `pwned-${n}`);
  fs.writeFileSync(path.join(dir, 'k.cu'), KERNEL);
  for (const [name, text] of Object.entries(files))
    fs.writeFileSync(
      path.join(dir, name),
      text.replace(/MARK\((\w+)\)/g, (_m, n: string) => marker(n)),
    );
  const db = path.join(dir, 'compile_commands.json');
  fs.writeFileSync(
    db,
    JSON.stringify([{ directory: dir, file: 'k.cu', command: command.replace(/MARK\((\w+)\)/g, (_m, n: string) => marker(n)) }]),
  );
  return { dir, db, file: path.join(dir, 'k.cu'), marker };
}

async function build(flags: CompileFlags, file: string) {
  const t = toolchain!;
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-trust-cache-'));
  const builder = new VariantBuilder({ nvcc: t.nvcc, arch: 'sm_90', flags, cacheDir, runner: t.runner });
  const [r] = await builder.buildAll([{ key: 'k', source: fs.readFileSync(file, 'utf8'), originalPath: file }]);
  return { r, builder };
}

describe('nvcc never runs shell syntax from a repository', () => {
  test('control: nvcc itself does run $(…) in a -D value (the attack is real)', async t => {
    if (skip) return t.skip(skip);
    const p = project('nvcc -c k.cu');
    const r = await toolchain!.runner(
      toolchain!.nvcc.path,
      ['-cubin', '-arch=sm_90', `-DX=$(touch ${p.marker('control')})`, '-o', path.join(p.dir, 'k.cubin'), p.file],
      {
        cwd: p.dir,
      },
    );
    assert.equal(r.exitCode, 0, r.stderr);
    assert.ok(fs.existsSync(p.marker('control')), 'nvcc ran the command substitution: the vector these tests guard against');
  });

  test('-D $(…), -Xcompiler `…`, -ccbin "sh -c …", -I $(…), -U;…, -wrapper: all dropped with a warning naming flag, file and why; the build runs and touches nothing', async t => {
    if (skip) return t.skip(skip);
    const p = project(
      [
        'nvcc',
        `"-DX=\\$(touch MARK(d))"`,
        "'-Xcompiler=`touch MARK(xc)`'",
        `-ccbin "sh -c 'touch MARK(ccbin)'"`,
        "'-I/tmp/$(touch MARK(inc))'",
        "'-isystem' '/x;touch MARK(isys)'",
        "'-UY;touch MARK(undef)'",
        '-Xcompiler=-wrapper,/usr/bin/touch,MARK(wrapper)',
        '-Xcompiler=@MARK(gccrsp)',
        '-Xptxas=-o,MARK(ptxas)',
        "'-Wall|touch MARK(fwd)'",
        "'--maxrregcount=32&&touch MARK(keep)'",
        '-DBLOCK=16',
        '-c k.cu -o k.o',
      ].join(' '),
    );
    const f = flagsFromCompileCommands(p.db, p.file)!;
    const w = f.warnings.join('\n');
    const from = `(from ${p.db}, entry for ${p.file})`;
    for (const [flag, why] of [
      ['-DX=$(touch', /"\$" \(shell command substitution\)/],
      ['-Xcompiler=`touch', /contains "`", which nvcc would hand to sh/],
      ['-ccbin sh -c', /host compiler is never taken from compile_commands\.json/],
      ['-I/tmp/$(touch', /contains "\$"/],
      ['-isystem /x;touch', /contains ";"/],
      ['-UY;touch', /not a macro name/],
      ['-Xcompiler=-wrapper', /-wrapper names a file or program for the host compiler/],
      ['-Wall|touch', /contains "\|"/],
      ['-Xcompiler=@', /@\/.* names a file or program for the host compiler/],
      ['-Xptxas=-o', /-o names a file for ptxas/],
      ['--maxrregcount=32&&touch', /contains "&"/],
    ] as const) {
      const line = f.warnings.find(x => x.includes(`dropped ${JSON.stringify(flag).slice(0, -1)}`));
      assert.ok(line, `a warning for ${flag} in:\n${w}`);
      assert.ok(line.includes(from), line);
      assert.match(line, why);
    }
    assert.deepEqual(f.args, ['-DBLOCK=16']);
    const { r } = await build(f, p.file);
    assert.equal(r.status, 'ok', JSON.stringify(r.messages));
    const touched = fs.readdirSync(p.dir).filter(n => n.startsWith('pwned-'));
    assert.deepEqual(touched, []);
  });

  test('response files: one outside the database folder is not read; flags inside one are checked like any other', async t => {
    if (skip) return t.skip(skip);
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-trust-evil-'));
    const p = project(`nvcc --options-file ${path.join(outside, 'evil')} @inside.rsp -optf inside.rsp -c k.cu`, {
      'inside.rsp': '"-DZ=$(touch MARK(rsp))" -DBLOCK=4',
    });
    fs.writeFileSync(path.join(outside, 'evil'), `-DBLOCK=1 -DOUT=1`);
    const f = flagsFromCompileCommands(p.db, p.file)!;
    const w = f.warnings.join('\n');
    assert.match(
      w,
      new RegExp(`response file ${path.join(outside, 'evil')} \\(from .*\\) is outside the build.s folders \\(${p.dir}\\); not read`),
    );
    assert.match(w, /dropped "-DZ=\$\(touch .*shell command substitution/);
    assert.ok(!f.args.includes('-DOUT=1'));
    assert.ok(!f.args.some(a => a.includes('optf') || a.includes('options-file') || a.startsWith('@')), 'nvcc never gets a response file');
    const { r } = await build(f, p.file);
    assert.equal(r.status, 'ok', JSON.stringify(r.messages));
    assert.ok(!fs.existsSync(p.marker('rsp')));
  });

  test('quoted string defines (-DVERSION="1.2") reach the code through a generated header, never through sh', async t => {
    if (skip) return t.skip(skip);
    // pre.h, pre-included by the project, already needs VERSION: the generated header comes first.
    const p = project(`nvcc -include pre.h '-DVERSION="1.2"' -DBLOCK=16 '-DSP=a b' -c k.cu`, {
      'pre.h': 'static_assert(sizeof(VERSION) == 4, "defined before the project\'s -include");\n',
    });
    const f = flagsFromCompileCommands(p.db, p.file)!;
    assert.deepEqual(f.args, ['-include', path.join(p.dir, 'pre.h'), '-DBLOCK=16']);
    assert.deepEqual(f.headerDefines, ['#define VERSION "1.2"', '#define SP a b']);
    // The kernel static_asserts sizeof(VERSION) == 4: the build only succeeds if the string arrived intact.
    const { r } = await build(f, p.file);
    assert.equal(r.status, 'ok', JSON.stringify(r.messages));
    // The header is part of the cache key: a different value is a different build.
    const other = await build({ ...f, headerDefines: ['#define VERSION "1.23"'] }, p.file);
    assert.notEqual(other.r.hash, r.hash);
    assert.equal(other.r.status, 'failed'); // the static_assert sees the longer string
  });

  test('settings are checked too: -ccbin may be chosen there, but not with shell syntax', async t => {
    if (skip) return t.skip(skip);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-trust-set-'));
    const f = flagsFromSettings(
      {
        nvccArgs: ['-ccbin', `sh -c 'touch ${dir}/pwned'`, '-ccbin', 'g++', `-Xcompiler=$(touch ${dir}/pwned)`],
        defines: [`X=\`touch ${dir}/pwned\``, 'BLOCK=2'],
        includePaths: [`inc$(touch ${dir}/pwned)`],
      },
      dir,
    );
    assert.deepEqual(f.args, ['-DBLOCK=2', '-ccbin', 'g++']);
    assert.equal(f.warnings.filter(w => /dropped/.test(w)).length, 4, f.warnings.join('\n'));
    fs.writeFileSync(path.join(dir, 'k.cu'), KERNEL);
    const { r } = await build(f, path.join(dir, 'k.cu'));
    assert.equal(r.status, 'ok', JSON.stringify(r.messages));
    assert.ok(!fs.existsSync(path.join(dir, 'pwned')));
  });

  test('last line of defence: flags that bypass cleaning (e.g. sweep defines) are refused before nvcc runs, and not cached', async t => {
    if (skip) return t.skip(skip);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-trust-gate-'));
    fs.writeFileSync(path.join(dir, 'k.cu'), KERNEL);
    const flags: CompileFlags = { args: [`-DX=$(touch ${dir}/pwned)`], arch: null, source: 'test', directory: dir, warnings: [] };
    const { r, builder } = await build(flags, path.join(dir, 'k.cu'));
    assert.equal(r.status, 'failed');
    assert.equal(r.failureKind, 'flags');
    assert.match(r.messages[0].message, /not running nvcc: argument "-DX=\$\(touch .*" is unsafe: its value contains "\$"/);
    assert.equal(builder.compiles, 0);
    assert.ok(!fs.existsSync(path.join(dir, 'pwned')));
  });

  test('unroll-lens sass on a file with a hostile compile_commands.json: warns, counts, runs nothing', async t => {
    if (skip) return t.skip(skip);
    const p = project(`nvcc "-DX=\\$(touch MARK(cli))" '-Xcompiler=\`touch MARK(cli2)\`' -DBLOCK=16 -c k.cu`);
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = path.join(p.dir, 'cache'); // the CLI's default cache, kept out of the user's
    let out = '';
    let err = '';
    try {
      const code = await main(['sass', p.file], { out: s => (out += s), err: s => (err += s), isTTY: false });
      assert.equal(code, 0, err);
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    }
    assert.match(err, /unroll-lens: dropped "-DX=\$\(touch .*shell command substitution/);
    assert.match(err, /unroll-lens: dropped "-Xcompiler=`touch .*contains "`"/);
    assert.match(out, /^k\(int\*\)/m);
    assert.deepEqual(
      fs.readdirSync(p.dir).filter(n => n.startsWith('pwned-')),
      [],
    );
  });
});

describe('a repository never chooses the host compiler (-ccbin), CLI and server alike', () => {
  // A program inside the repository, named without any shell syntax: the flag is dropped with a
  // warning naming it, whether written in the entry, as --compiler-bindir or inside a response file.
  const COMMAND = `nvcc -ccbin ./evil-cc --compiler-bindir=tools "-DX=\\$(touch MARK(d))" @inside.rsp -DBLOCK=16 -c k.cu`;
  const FILES = {
    'evil-cc': '#!/bin/sh\ntouch MARK(ccbin)\nexec g++ "$@"\n',
    'inside.rsp': '-ccbin=./evil-cc -DVERSION_OK=1',
  };
  function hostile() {
    const p = project(COMMAND, FILES);
    fs.chmodSync(path.join(p.dir, 'evil-cc'), 0o755);
    fs.mkdirSync(path.join(p.dir, 'tools'));
    fs.copyFileSync(path.join(p.dir, 'evil-cc'), path.join(p.dir, 'tools', 'g++'));
    fs.chmodSync(path.join(p.dir, 'tools', 'g++'), 0o755);
    return p;
  }
  const warned = (text: string) => {
    assert.match(
      text,
      /dropped "-ccbin \.\/evil-cc" \(from .*compile_commands\.json, entry for .*k\.cu\): the host compiler is never taken from compile_commands\.json/,
    );
    assert.match(text, /dropped "--compiler-bindir=tools".*: the host compiler is never taken/);
    assert.match(text, /dropped "-ccbin=\.\/evil-cc".*: the host compiler is never taken/);
    assert.match(text, /dropped "-DX=\$\(touch .*shell command substitution/);
  };

  test('unroll-lens sass: warns naming each one, builds with the default host compiler, runs nothing of the repo', async t => {
    if (skip) return t.skip(skip);
    const p = hostile();
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = path.join(p.dir, 'cache');
    let out = '';
    let err = '';
    try {
      const code = await main(['sass', p.file], { out: s => (out += s), err: s => (err += s), isTTY: false });
      assert.equal(code, 0, err);
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    }
    warned(err);
    assert.match(out, /^k\(int\*\)/m);
    assert.deepEqual(
      fs.readdirSync(p.dir).filter(n => n.startsWith('pwned-')),
      [],
    );
  });

  test('language server (trusted workspace): the same flags are dropped and logged; the background build runs nothing of the repo', async t => {
    if (skip) return t.skip(skip);
    const p = hostile();
    const log: string[] = [];
    const progress = {
      begin: () => undefined,
      report: () => undefined,
      done: () => undefined,
      token: { onCancellationRequested: () => undefined },
    };
    const connection = {
      sendNotification: () => undefined,
      console: { log: (m: string) => log.push(m) },
      window: { createWorkDoneProgress: async () => progress, showWarningMessage: async () => undefined },
    } as unknown as Connection;
    const tc = new ServerToolchain(
      connection,
      () => DEFAULT_SETTINGS,
      () => [p.dir],
    );
    tc.setTrusted(true);
    const facts = new DocumentFactsStore(() => undefined);
    const service = new VariantService(
      connection,
      tc,
      facts,
      () => DEFAULT_SETTINGS,
      () => path.join(p.dir, 'cache'),
    );
    const uri = pathToFileURL(p.file).toString();
    const docs = await CudaDocuments.create();
    await service.buildFile(uri, KERNEL, docs.analyzeOnce(KERNEL, p.file));
    warned(log.join('\n'));
    assert.equal(facts.get(uri, KERNEL)?.file?.status, 'ok', log.join('\n'));
    assert.deepEqual(
      fs.readdirSync(p.dir).filter(n => n.startsWith('pwned-')),
      [],
    );
  });
});
