// The language server keeps the parser's WebAssembly on V8's baseline compiler (wasmTiers.ts): by
// default the first parse of any file makes V8 optimise the parser's largest functions in the
// background, about a second of CPU that on a machine with few cores delays the next file's first
// CodeLens. V8's own trace of each function it compiles says which compiler did it.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { fork, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { IPCMessageReader, IPCMessageWriter, createMessageConnection } from 'vscode-jsonrpc/node';
import { SAMPLES } from './helpers';

const TRACE = '--trace-wasm-compilation-times';
const OPTIMISED = /using TurboFan/;
/** A function of the parse loop or the lexer optimised: the compile that costs a second (bodies of 30–100 KB). */
const LARGE_OPTIMISED = /using TurboFan.*bodysize (\d{5,})/;
const BASELINE = /using Liftoff/;
/** Long enough for a background optimisation the parse started to finish and be traced. */
const SETTLE_MS = 3000;
/** The most the first test waits for V8 to optimise (it stops as soon as it has): a loaded machine compiles slowly. */
const OPTIMISE_WAIT_MS = 30000;
const SAMPLE = path.join(SAMPLES, 'matmul_unroll.cu');

describe('language server: the parser stays on the baseline compiler', () => {
  test("without the flag, a first parse makes V8 optimise the parser's large functions (what the server avoids)", async () => {
    const parserModule = path.join(__dirname, '..', '..', 'src', 'engine', 'parse', 'parser.js');
    const script = `require(${JSON.stringify(parserModule)}).createCudaParser().then(p => {
      p.parse(require('fs').readFileSync(${JSON.stringify(SAMPLE)}, 'utf8'));
      setTimeout(() => {}, ${OPTIMISE_WAIT_MS});
    });`;
    const child = spawn(process.execPath, [TRACE, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (LARGE_OPTIMISED.test(out)) child.kill();
    });
    await new Promise(resolve => child.on('exit', resolve));
    assert.match(out, BASELINE, 'the trace names the compiler');
    assert.match(out, LARGE_OPTIMISED);
  });

  test('the server parses and analyses a file with no function optimised', async () => {
    const server = fork(path.join(__dirname, '..', '..', 'src', 'server', 'main.js'), ['--node-ipc'], {
      execArgv: [TRACE],
      stdio: ['ignore', 'pipe', 'ignore', 'ipc'],
    });
    let out = '';
    server.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const conn = createMessageConnection(new IPCMessageReader(server), new IPCMessageWriter(server));
    conn.onNotification(() => undefined);
    conn.onRequest(() => null);
    conn.listen();
    try {
      await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
      conn.sendNotification('initialized', {});
      const uri = pathToFileURL(SAMPLE).href;
      conn.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId: 'cuda-cpp', version: 1, text: fs.readFileSync(SAMPLE, 'utf8') },
      });
      const lenses = (await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as { command?: unknown }[];
      assert.ok(lenses.length > 0, 'lenses for the sample');
      await Promise.all(lenses.filter(l => !l.command).map(l => conn.sendRequest('codeLens/resolve', l)));
      await new Promise(resolve => setTimeout(resolve, SETTLE_MS));
    } finally {
      await conn.sendRequest('shutdown').catch(() => undefined);
      conn.sendNotification('exit');
      await new Promise(resolve => server.on('exit', resolve));
      conn.dispose();
    }
    assert.match(out, BASELINE, 'the trace names the compiler');
    assert.doesNotMatch(out, OPTIMISED);
  });
});

describe('CLI scan: one thread, baseline code (the exit would wait for the compile)', () => {
  test('a scan of one file optimises no function', async () => {
    const bin = path.join(__dirname, '..', '..', '..', 'bin', 'unroll-lens.js');
    const child = spawn(process.execPath, [TRACE, bin, 'scan', '--json', '--fresh', SAMPLE], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise(resolve => child.on('exit', resolve));
    assert.equal(code, 0);
    assert.match(out, /"kernels"/, 'the scan answered');
    assert.match(out, BASELINE, 'the trace names the compiler');
    assert.doesNotMatch(out, OPTIMISED);
  });

  test('a scan of many small files on two threads stays on baseline code too (under BASELINE_SCAN_BYTES of source)', async () => {
    // Two threads on a 2-core machine: the optimising compile took the second core (100 files,
    // 1.4 MB: 10 % slower than on baseline code; scanPool.ts).
    const bin = path.join(__dirname, '..', '..', '..', 'bin', 'unroll-lens.js');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-wasm-tiers-'));
    try {
      for (let i = 0; i < 16; i++) fs.copyFileSync(SAMPLE, path.join(dir, `${i}.cu`));
      const child = spawn(process.execPath, [TRACE, bin, 'scan', '--json', '--fresh', dir], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, UNROLL_LENS_SCAN_THREADS: '2' },
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise(resolve => child.on('exit', resolve));
      assert.equal(code, 0);
      assert.equal(out.match(/"path":/g)?.length, 16, 'every file scanned');
      assert.match(out, BASELINE, 'the trace names the compiler');
      assert.doesNotMatch(out, OPTIMISED);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
