// Reads that hung or exhausted memory (issue 23): a FIFO named as a response file, an #include
// target or a header's translation unit; a header that includes itself twice and a response file
// that names itself eight times (exponential); `--stalls /dev/zero` and a result file on /dev/zero
// or of 1.5 GB. Each case that could hang runs in a child process with a deadline, so a
// regression fails the test instead of hanging the suite. A canary file outside the temp folders
// must come out unchanged.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from './helpers';
import { BoundedReadError, ReadBudget, readBoundedText } from '../../src/engine/base/boundedRead';
import { Preprocessor } from '../../src/engine/parse/macros/environment';

const CLI = path.join(REPO_ROOT, 'bin', 'unroll-lens.js');
const OUT = path.join(REPO_ROOT, 'out');
const KERNEL = '__global__ void k(float* a) {\n  for (int i = 0; i < 4; ++i) a[i] = 0;\n}\n';
const noFifos = process.platform === 'win32' ? 'no FIFOs' : false;

let canary: string;
const CANARY_TEXT = 'canary: must stay as it is\n';
before(() => {
  canary = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-canary-')), 'canary.txt');
  fs.writeFileSync(canary, CANARY_TEXT);
});
after(() => assert.equal(fs.readFileSync(canary, 'utf8'), CANARY_TEXT));

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'ul-reads-'));
}

/** The CLI in `cwd`, killed after `ms`: `timedOut` instead of a hung suite. */
function cli(args: string[], cwd: string, ms = 20_000) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: ms, killSignal: 'SIGKILL' });
  return { code: r.status, out: r.stdout, err: r.stderr, timedOut: r.signal === 'SIGKILL' };
}

/** `script` (CommonJS, `out` is the build folder) in a child node, killed after `ms`. */
function isolated(script: string, ms = 10_000) {
  const r = spawnSync(process.execPath, ['-e', `const out = ${JSON.stringify(OUT)};\n${script}`], {
    encoding: 'utf8',
    timeout: ms,
    killSignal: 'SIGKILL',
  });
  return { code: r.status, out: r.stdout, err: r.stderr, timedOut: r.signal === 'SIGKILL' };
}

function compileDb(dir: string, args: string[]): void {
  fs.writeFileSync(path.join(dir, 'compile_commands.json'), JSON.stringify([{ directory: dir, file: 'a.cu', arguments: args }]));
}

describe('FIFOs never block a read', () => {
  test('a FIFO as the response file of compile_commands.json: scan finishes', t => {
    if (noFifos) return t.skip(noFifos);
    const d = tmp();
    fs.writeFileSync(path.join(d, 'a.cu'), KERNEL);
    execFileSync('mkfifo', [path.join(d, 'flags.rsp')]);
    compileDb(d, ['nvcc', '@flags.rsp', '-c', 'a.cu']);
    const r = cli(['scan', 'a.cu'], d);
    assert.equal(r.timedOut, false, 'scan hung on the FIFO response file');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /1 files, 1 device functions, 1 loops/);
  });

  test('a FIFO response file: the flags warn that it is not a regular file', () => {
    if (noFifos) return;
    const d = tmp();
    fs.writeFileSync(path.join(d, 'a.cu'), KERNEL);
    execFileSync('mkfifo', [path.join(d, 'flags.rsp')]);
    compileDb(d, ['nvcc', '@flags.rsp', '-c', 'a.cu']);
    const r = isolated(
      `const f = require(out + '/src/engine/toolchain/flags.js').flagsFromCompileCommands(${JSON.stringify(path.join(d, 'compile_commands.json'))}, ${JSON.stringify(path.join(d, 'a.cu'))});
       console.log(JSON.stringify(f.warnings));`,
    );
    assert.equal(r.timedOut, false, 'reading the flags hung');
    assert.match(r.out, /flags\.rsp is a FIFO \(named pipe\), not a regular file/);
  });

  test("a FIFO as compile_commands.json's translation unit of a header: the unit search finishes", t => {
    if (noFifos) return t.skip(noFifos);
    const d = tmp();
    fs.writeFileSync(path.join(d, 'h.cuh'), '__device__ int f() { return 1; }\n');
    execFileSync('mkfifo', [path.join(d, 'a.cu')]);
    compileDb(d, ['nvcc', '-c', 'a.cu']);
    const r = isolated(
      `const u = require(out + '/src/engine/variants/translationUnit.js').unitsFromCompileCommands(${JSON.stringify(path.join(d, 'h.cuh'))}, [${JSON.stringify(d)}]);
       console.log(JSON.stringify(u));`,
    );
    assert.equal(r.timedOut, false, 'the unit search hung on the FIFO');
    assert.equal(r.out.trim(), '[]');
  });

  test('a FIFO compile_commands.json: scan finishes', t => {
    if (noFifos) return t.skip(noFifos);
    const d = tmp();
    fs.writeFileSync(path.join(d, 'a.cu'), KERNEL);
    execFileSync('mkfifo', [path.join(d, 'compile_commands.json')]);
    const r = cli(['scan', 'a.cu'], d);
    assert.equal(r.timedOut, false, 'scan hung on the FIFO compile database');
    assert.equal(r.code, 0, r.err);
  });

  test('a header read as an #include target that is (or became) a FIFO: refused, not read', () => {
    if (noFifos) return;
    const d = tmp();
    const fifo = path.join(d, 'h.h');
    execFileSync('mkfifo', [fifo]);
    // The header cache is read directly: include resolution stats first, so only a file swapped
    // for a FIFO after that stat reaches this read.
    const r = isolated(
      `const { Preprocessor } = require(out + '/src/engine/parse/macros/environment.js');
       console.log(JSON.stringify(new Preprocessor().header(${JSON.stringify(fifo)})));`,
    );
    assert.equal(r.timedOut, false, 'reading the header hung');
    assert.equal(r.out.trim(), 'null');
  });

  test('boundedRead: FIFOs, devices, directories and sockets are refused by kind', () => {
    const d = tmp();
    if (!noFifos) execFileSync('mkfifo', [path.join(d, 'p')]);
    const cases: [string, RegExp][] = [
      ['/dev/zero', /is a character device, not a regular file/],
      ['/dev/null', /is a character device, not a regular file/],
      [d, /is a directory, not a regular file/],
      [path.join(d, 'missing'), /missing does not exist/],
    ];
    if (!noFifos) cases.push([path.join(d, 'p'), /is a FIFO \(named pipe\), not a regular file/]);
    for (const [file, message] of cases) {
      assert.throws(
        () => readBoundedText(file, { maxBytes: 1024 }),
        (e: unknown) => e instanceof BoundedReadError && message.test(e.message),
        file,
      );
    }
  });
});

describe('include and response-file expansion is bounded in total work', () => {
  test('a guardless header that includes itself twice: scan finishes and warns that includes were cut', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'self.h'), '#include "self.h"\n#include "self.h"\n');
    fs.writeFileSync(path.join(d, 'a.cu'), '#include "self.h"\n' + KERNEL);
    const r = cli(['scan', '--json', '.'], d, 30_000);
    assert.equal(r.timedOut, false, 'scan hung on the self-including header');
    assert.equal(r.code, 0, r.err);
    const file = JSON.parse(r.out).files[0];
    assert.equal(file.kernels.length, 1);
    assert.match(file.warnings?.[0] ?? '', /includes stopped after entering 50000 headers \(at .*self\.h/);
    assert.match(cli(['scan', '.'], d, 30_000).out, /warning: a\.cu: includes stopped after entering 50000 headers/);
  });

  test('the preprocessor on a self-including header returns the macros read so far and says it was cut short', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'self.h'), '#define BEFORE 1\n#include "self.h"\n#include "self.h"\n');
    const r = isolated(
      `const { Preprocessor } = require(out + '/src/engine/parse/macros/environment.js');
       const env = new Preprocessor().run(${JSON.stringify(path.join(d, 'a.cu'))}, '#include "self.h"\\n#define AFTER 2\\n',
         { includeDirs: [], systemIncludeDirs: [], defines: [], arch: 'sm_90' });
       console.log(JSON.stringify({ before: env.macros.has('BEFORE'), after: env.macros.has('AFTER'), truncated: env.truncated }));`,
    );
    assert.equal(r.timedOut, false, 'the preprocessor did not finish');
    const env = JSON.parse(r.out) as { before: boolean; after: boolean; truncated: string | null };
    assert.ok(env.before && env.after, r.out);
    assert.match(env.truncated ?? '', /includes stopped/);
  });

  test('a guarded header included many times is not cut short', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'g.h'), '#ifndef G_H\n#define G_H\n#include "g.h"\n#include "g.h"\n#endif\n');
    const env = new Preprocessor().run(path.join(d, 'a.cu'), '#include "g.h"\n#include "g.h"\n', {
      includeDirs: [],
      systemIncludeDirs: [],
      defines: [],
      arch: 'sm_90',
    });
    assert.equal(env.truncated, null);
    assert.ok(env.macros.has('G_H'));
  });

  test('a response file that names itself eight times: scan finishes; the flags say the budget ran out', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'a.cu'), KERNEL);
    fs.writeFileSync(path.join(d, 'self.rsp'), '-DX=1 ' + Array(8).fill('@self.rsp').join(' ') + '\n');
    compileDb(d, ['nvcc', '@self.rsp', '-c', 'a.cu']);
    const r = cli(['scan', 'a.cu'], d);
    assert.equal(r.timedOut, false, 'scan hung on the self-including response file');
    assert.equal(r.code, 0, r.err);
    const f = isolated(
      `const f = require(out + '/src/engine/toolchain/flags.js').flagsFromCompileCommands(${JSON.stringify(path.join(d, 'compile_commands.json'))}, ${JSON.stringify(path.join(d, 'a.cu'))});
       console.log(JSON.stringify({ warnings: f.warnings, args: f.args.length }));`,
    );
    assert.equal(f.timedOut, false, 'expanding the response files hung');
    const { warnings, args } = JSON.parse(f.out) as { warnings: string[]; args: number };
    // Two bounds stand in the way: the cleaner's count of response files per command (16) comes
    // before the read budget (256 files, 4 MiB); either way one warning says so.
    const budget = warnings.filter(w => /response files expand past their budget|more than 16 response files/.test(w));
    assert.equal(budget.length, 1, `one budget warning, got ${JSON.stringify(warnings.slice(0, 5))}`);
    assert.ok(args < 10_000, `${args} arguments`);
  });

  test('ReadBudget counts files and bytes and remembers the first refusal', () => {
    const d = tmp();
    const f = path.join(d, 'x');
    fs.writeFileSync(f, 'abcd');
    const b = new ReadBudget(2, 100);
    readBoundedText(f, { maxBytes: 10, budget: b });
    readBoundedText(f, { maxBytes: 10, budget: b });
    assert.throws(() => readBoundedText(f, { maxBytes: 10, budget: b }), /budget is 2 files/);
    assert.match(b.exhausted ?? '', /already read 2 files/);
    assert.equal(b.files, 2);
    assert.equal(b.bytes, 8);
    const small = new ReadBudget(10, 6);
    readBoundedText(f, { maxBytes: 10, budget: small });
    assert.throws(
      () => readBoundedText(f, { maxBytes: 10, budget: small }),
      (e: unknown) => e instanceof BoundedReadError && e.reason === 'budget',
    );
  });
});

describe('no read exhausts memory', () => {
  test('sass --stalls /dev/zero: refused at once (exit 2), memory stays small', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'a.cu'), KERNEL);
    const r = cli(['sass', 'a.cu', '--loop', '2', '--listing', '--stalls', '/dev/zero'], d, 15_000);
    assert.equal(r.timedOut, false, '--stalls /dev/zero read until killed');
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /--stalls: stall samples file \/dev\/zero is a character device, not a regular file/);
  });

  test('sass --stalls on a 1.5 GB file: refused by its size before reading', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'a.cu'), KERNEL);
    const big = path.join(d, 'big.csv');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, 1536 * 1024 * 1024); // sparse: no disk used
    const r = cli(['sass', 'a.cu', '--loop', '2', '--listing', '--stalls', big], d, 15_000);
    assert.equal(r.timedOut, false);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /big\.csv is 1536\.0 MiB; stall samples files over 256\.0 MiB are refused/);
  });

  test('a result file on /dev/zero, a FIFO or of 1.5 GB (the server\'s "open result"): a clear error, nothing read', () => {
    const d = tmp();
    const big = path.join(d, 'big.json');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, 1536 * 1024 * 1024);
    const files = ['/dev/zero', big];
    if (!noFifos) {
      execFileSync('mkfifo', [path.join(d, 'p.json')]);
      files.push(path.join(d, 'p.json'));
    }
    // In a child: before the fix these read until memory ran out (or forever, for the FIFO).
    const r = isolated(
      `const { loadResult } = require(out + '/src/engine/sweep/store.js');
       const before = process.memoryUsage().rss;
       const errors = ${JSON.stringify(files)}.map(f => { try { loadResult(f); return 'loaded'; } catch (e) { return e.message; } });
       console.log(JSON.stringify({ errors, grew: process.memoryUsage().rss - before }));`,
      15_000,
    );
    assert.equal(r.timedOut, false, 'reading a result file did not finish');
    const { errors, grew } = JSON.parse(r.out) as { errors: string[]; grew: number };
    assert.match(errors[0], /result file \/dev\/zero is a character device, not a regular file/);
    assert.match(errors[1], /big\.json is 1536\.0 MiB; result files over 64\.0 MiB are refused/);
    if (errors[2]) assert.match(errors[2], /is a FIFO \(named pipe\), not a regular file/);
    assert.ok(grew < 256 * 1024 * 1024, `reading refused files took ${grew} bytes`);
  });

  test('a file that grows past its cap while read (a /proc-like size of 0) stops at the cap', () => {
    if (!fs.existsSync('/proc/self/status')) return;
    // /proc files report size 0 and still have content: read to the end within the cap, or refused past it.
    assert.match(readBoundedText('/proc/self/status', { maxBytes: 1 << 20 }), /^Name:/);
    assert.throws(
      () => readBoundedText('/proc/self/status', { maxBytes: 16 }),
      /longer than 16 bytes \(more than its size said\); files over 16 bytes are refused/,
    );
  });
});
