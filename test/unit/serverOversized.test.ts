// A document over the source cap (32 MiB, the CLI's too) is refused by the language server with a
// warning and one diagnostic, and analysed again once it is smaller (issue 37: it went silent).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { IPCMessageReader, IPCMessageWriter, createMessageConnection } from 'vscode-jsonrpc/node';
import { MAX_SOURCE_BYTES } from '../../src/schema/ranges';

const KERNEL = '__global__ void k(float* a) {\n#pragma unroll 4\n  for (int i = 0; i < 64; ++i) a[i] += 1.0f;\n}\n';

describe('language server: a document over the source cap', () => {
  test('is refused with a warning and a diagnostic, and served again once it is under the cap', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-srv-big-'));
    const uri = pathToFileURL(path.join(dir, 'big.cu')).href;
    const server = fork(path.join(__dirname, '..', '..', 'src', 'server', 'main.js'), ['--node-ipc'], {
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const conn = createMessageConnection(new IPCMessageReader(server), new IPCMessageWriter(server));
    const diagnostics: { uri: string; diagnostics: { message: string }[] }[] = [];
    const warnings: string[] = [];
    conn.onNotification('textDocument/publishDiagnostics', p => diagnostics.push(p as (typeof diagnostics)[number]));
    conn.onNotification(() => undefined);
    conn.onRequest('window/showMessageRequest', (p: { message: string }) => (warnings.push(p.message), null));
    conn.onRequest(() => null);
    conn.listen();
    const until = async (ok: () => boolean) => {
      for (let i = 0; i < 300 && !ok(); i++) await new Promise(r => setTimeout(r, 50));
      return ok();
    };
    try {
      const rootUri = pathToFileURL(dir).href;
      await conn.sendRequest('initialize', {
        processId: process.pid,
        rootUri,
        workspaceFolders: [{ uri: rootUri, name: 'ws' }],
        capabilities: {},
      });
      conn.sendNotification('initialized', {});
      const padding = '// ' + 'x'.repeat(1021) + '\n';
      const big = KERNEL + padding.repeat(Math.ceil(MAX_SOURCE_BYTES / padding.length) + 1);
      conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'cuda-cpp', version: 1, text: big } });
      assert.ok(await until(() => diagnostics.some(d => d.uri === uri)), 'a diagnostic for the big file');
      const said = diagnostics.find(d => d.uri === uri)!.diagnostics;
      assert.equal(said.length, 1);
      assert.match(said[0].message, /does not analyse this file: it is 32\.\d MiB, over the 32 MiB it reads/);
      assert.ok(await until(() => warnings.length > 0), 'a warning');
      assert.match(warnings[0], /big\.cu: Unroll Lens does not analyse this file/);
      const lenses = (await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as unknown[] | null;
      assert.ok(!lenses || lenses.length === 0, 'no CodeLens for it');
      // the user deletes the padding: served again, its pragma seen
      conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: 2 }, contentChanges: [{ text: KERNEL }] });
      assert.ok(
        await until(() => {
          const last = diagnostics.filter(d => d.uri === uri).at(-1);
          return !!last && !last.diagnostics.some(d => /does not analyse/.test(d.message));
        }),
        'the warning is gone once it is small',
      );
      const after = (await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as unknown[] | null;
      assert.ok(after && after.length > 0, 'CodeLens again');
    } finally {
      conn.dispose();
      server.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
