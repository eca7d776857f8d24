// The language server reads each open file's macros from its headers: hover names the header
// and line a macro comes from; editing a #define in the file, or changing the header on disk
// (a watched-file event or a save), gives the new meaning without reopening anything.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { fork } from 'child_process';
import { IPCMessageReader, IPCMessageWriter, createMessageConnection, MessageConnection } from 'vscode-jsonrpc/node';
import { MacroService } from '../../src/server/macros';
import { DEFAULT_SETTINGS } from '../../src/settings';

const HEADER_V1 = [
  '#pragma once',
  '#define K_STR_(x) #x',
  '#define K_STR(x) K_STR_(x)',
  '#define K_UNROLL(n) _Pragma(K_STR(unroll n))',
  '#define K_DEV __device__',
  '',
].join('\n');
const SOURCE = [
  '#include "inc/cfg.h"',
  'K_DEV void f(float* a, int n) {',
  '  K_UNROLL(4)',
  '  for (int i = 0; i < n; ++i) a[i] = 0;',
  '}',
  '',
].join('\n');

async function withServer(dir: string, run: (conn: MessageConnection) => Promise<void>): Promise<void> {
  const server = fork(path.join(__dirname, '..', '..', 'src', 'server', 'main.js'), ['--node-ipc'], {
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  const conn = createMessageConnection(new IPCMessageReader(server), new IPCMessageWriter(server));
  conn.onNotification(() => undefined);
  conn.onRequest(() => null);
  conn.listen();
  try {
    const rootUri = pathToFileURL(dir).href;
    await conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: 'ws' }],
      capabilities: {},
    });
    conn.sendNotification('initialized', {});
    await run(conn);
  } finally {
    conn.dispose();
    server.kill();
  }
}

/** Hover text once it matches `re` (a file opens with the built-in table; its own follows). */
async function hoverUntil(conn: MessageConnection, uri: string, line: number, re: RegExp): Promise<string> {
  let last = '';
  for (let i = 0; i < 100; i++) {
    last = await hoverText(conn, uri, line);
    if (re.test(last)) return last;
    await new Promise(r => setTimeout(r, 100));
  }
  return last;
}

async function hoverText(conn: MessageConnection, uri: string, line: number): Promise<string> {
  const h = (await conn.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line, character: 4 } })) as {
    contents: { value: string };
  } | null;
  return h?.contents.value ?? '';
}

describe('language server: macros from headers', () => {
  test('hover names the header; a changed header or an edited #define gives the new meaning', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-srv-macros-'));
    fs.mkdirSync(path.join(dir, 'inc'));
    const header = path.join(dir, 'inc', 'cfg.h');
    fs.writeFileSync(header, HEADER_V1);
    fs.writeFileSync(path.join(dir, 'k.cu'), SOURCE);
    const uri = pathToFileURL(path.join(dir, 'k.cu')).href;
    await withServer(dir, async conn => {
      conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'cuda-cpp', version: 1, text: SOURCE } });
      const first = await hoverUntil(conn, uri, 3, /cfg\.h/);
      assert.match(first, /`K_UNROLL\(4\)` \(expands to `#pragma unroll 4`, cfg\.h:4\) → unroll 4 requested/);
      assert.match(first, /Qualified by \| `K_DEV` → `__device__` \(cfg\.h:5\)/);

      // The header changes on disk: the project now disables unrolling through the same macro.
      fs.writeFileSync(header, HEADER_V1.replace('_Pragma(K_STR(unroll n))', '_Pragma("unroll 1")'));
      fs.utimesSync(header, new Date(), new Date(Date.now() + 5000));
      conn.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: pathToFileURL(header).href, type: 2 }] });
      const second = await hoverText(conn, uri, 3);
      assert.match(second, /`K_UNROLL\(4\)` \(expands to `#pragma unroll 1`, cfg\.h:4\) → unroll 1 \(disabled\)/);

      // A #define in the file itself, typed in the editor, overrides the header's.
      const edit = '#define K_UNROLL(n) _Pragma("unroll 8")\n';
      conn.sendNotification('textDocument/didChange', {
        textDocument: { uri, version: 2 },
        contentChanges: [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 0 } }, text: edit }],
      });
      const third = await hoverText(conn, uri, 4);
      assert.match(third, /`K_UNROLL\(4\)` \(expands to `#pragma unroll 8`, k\.cu:2\)/);
    });
    fs.rmSync(dir, { recursive: true });
  });

  test("a .h whose device code shows only through its project's macros is served", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-srv-macros-'));
    fs.mkdirSync(path.join(dir, 'inc'));
    fs.writeFileSync(path.join(dir, 'inc', 'cfg.h'), HEADER_V1);
    const ops =
      '#include "cfg.h"\nK_DEV float sum8(const float* a) {\n  float s = 0;\n  K_UNROLL(2)\n  for (int i = 0; i < 8; ++i) s += a[i];\n  return s;\n}\n';
    fs.writeFileSync(path.join(dir, 'inc', 'ops.h'), ops);
    const uri = pathToFileURL(path.join(dir, 'inc', 'ops.h')).href;
    await withServer(dir, async conn => {
      conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'cpp', version: 1, text: ops } });
      assert.match(await hoverUntil(conn, uri, 4, /cfg\.h/), /`K_UNROLL\(2\)` \(expands to `#pragma unroll 2`, cfg\.h:4\)/);
    });
    fs.rmSync(dir, { recursive: true });
  });
});

describe('MacroService: headers no flags name', () => {
  test('a header library opened without flags finds its headers in the workspace folder and its include/', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-ws-'));
    fs.mkdirSync(path.join(root, 'include/lib'), { recursive: true });
    fs.mkdirSync(path.join(root, 'src'));
    fs.writeFileSync(path.join(root, 'include/lib/cfg.h'), '#pragma once\n#define LIB_DEV __device__\n#define LIB_UNROLL #pragma unroll\n');
    const file = path.join(root, 'src/k.cu');
    const text = '#include <lib/cfg.h>\nLIB_DEV void f(float* a) {\n  LIB_UNROLL\n  for (int i = 0; i < 4; ++i) a[i] = 0;\n}\n';
    const toolchain = (folders: string[]) =>
      ({
        trusted: true,
        folders: () => folders,
        flagsFor: () => ({ args: [], directory: root, arch: null, source: 'settings', warnings: [] }),
      }) as unknown as ConstructorParameters<typeof MacroService>[0];
    const inWorkspace = new MacroService(
      toolchain([root]),
      () => DEFAULT_SETTINGS,
      () => undefined,
    ).tableFor(file, text);
    assert.equal(inWorkspace.qualifier('LIB_DEV')?.qualifier, 'device');
    assert.equal(inWorkspace.pragma('LIB_UNROLL')?.expandsTo, 'unroll');
    // Outside every workspace folder: still found, last, through the file's ancestors' include/.
    const outside = new MacroService(
      toolchain([path.join(os.tmpdir(), 'elsewhere')]),
      () => DEFAULT_SETTINGS,
      () => undefined,
    ).tableFor(file, text);
    assert.equal(outside.qualifier('LIB_DEV')?.origin.kind, 'header');
    // A header in no conventional place: not found.
    fs.renameSync(path.join(root, 'include'), path.join(root, 'hdrs'));
    const blind = new MacroService(
      toolchain([path.join(os.tmpdir(), 'elsewhere')]),
      () => DEFAULT_SETTINGS,
      () => undefined,
    ).tableFor(file, text);
    assert.equal(blind.qualifier('LIB_DEV'), undefined);
  });
});
