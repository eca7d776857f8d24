// Issue 23, leaks: the language server stopped while it builds leaves no process and no temp
// file. It used to die on SIGTERM at once (Node's default), leaving nvcc running (in a process
// group of its own) and nvcc's tmpxft_* files in $TMPDIR. The real server runs over --stdio in a
// trusted workspace with a fake slow nvcc first on PATH; opening a file with a kernel starts its
// background build; then the server is stopped: by SIGTERM, by SIGINT, by its client going away
// (stdin closed), or killed (SIGKILL, which only the watchdog can answer).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { contents, fakeSlowTool, killAll, processesWithEnv, started, until } from './leakHelpers';

const SERVER = path.join(__dirname, '..', '..', 'src', 'server', 'main.js');
const SOURCE = '__global__ void k(float* y, int n) {\n  for (int i = 0; i < n; ++i) y[i] *= 2.0f;\n}\n';

interface Session {
  server: ChildProcess;
  root: string;
  tmp: string;
  marker: string;
  canary: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/** Starts the server and opens a file, whose background build runs the fake nvcc; resolves once it runs. */
async function buildingServer(): Promise<Session> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-leak-srv-'));
  const [bin, tmp, cache, ws] = ['bin', 'tmp', 'cache', 'ws'].map(d => path.join(root, d));
  for (const d of [bin, tmp, cache, ws]) fs.mkdirSync(d);
  const record = path.join(root, 'started');
  fakeSlowTool(path.join(bin, 'nvcc'), record);
  const canary = path.join(root, 'canary.txt');
  fs.writeFileSync(canary, 'canary');
  const file = path.join(ws, 'k.cu');
  fs.writeFileSync(file, SOURCE);
  const server = spawn(process.execPath, [SERVER, '--stdio'], {
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}`, TMPDIR: tmp, XDG_CACHE_HOME: cache },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  server.stderr!.on('data', d => (err = (err + String(d)).slice(-4000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(r =>
    server.on('exit', (code, signal) => r({ code, signal })),
  );
  const conn = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  conn.onNotification(() => undefined);
  conn.onRequest(() => null); // window/workDoneProgress/create and the like
  conn.onError(() => undefined);
  conn.onClose(() => undefined);
  conn.listen();
  const s: Session = { server, root, tmp, marker: `TMPDIR=${tmp}`, canary, exited, stderr: () => err };
  try {
    const rootUri = pathToFileURL(ws).href;
    await conn.sendRequest('initialize', {
      processId: null,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: 'ws' }],
      capabilities: {},
      initializationOptions: { trusted: true },
    });
    await conn.sendNotification('initialized', {});
    await conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri: pathToFileURL(file).href, languageId: 'cuda-cpp', version: 1, text: SOURCE },
    });
    await until(
      'the background build to run nvcc',
      () => started(record).length > 0,
      60_000,
      () => err,
    );
  } catch (e) {
    server.kill('SIGKILL');
    throw e;
  }
  return s;
}

async function assertNothingLeft(s: Session): Promise<void> {
  try {
    await until(
      'no process of the server left',
      () => processesWithEnv(s.marker).length === 0,
      4000,
      () => JSON.stringify(processesWithEnv(s.marker)),
    );
    await until(
      'an empty temp folder',
      () => contents(s.tmp).length === 0,
      4000,
      () => contents(s.tmp).join(', '),
    );
    assert.equal(fs.readFileSync(s.canary, 'utf8'), 'canary');
  } finally {
    killAll(processesWithEnv(s.marker).map(p => p.pid));
  }
  fs.rmSync(s.root, { recursive: true, force: true });
}

describe('language server: stopped while it builds, it leaves no process and no temp file', { concurrency: true }, () => {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    test(`${signal}: exits ${code}, nvcc and its descendants killed, no tmpxft_* file`, async () => {
      const s = await buildingServer();
      s.server.kill(signal);
      assert.equal((await s.exited).code, code, s.stderr());
      await assertNothingLeft(s);
    });
  }

  test('the client goes away (stdin closed): the same', async () => {
    const s = await buildingServer();
    s.server.stdin!.end();
    await s.exited;
    await assertNothingLeft(s);
  });

  test('SIGKILL: the watchdog kills nvcc and its descendants and removes the temp folder', async () => {
    const s = await buildingServer();
    s.server.kill('SIGKILL');
    await s.exited;
    await assertNothingLeft(s);
  });
});
