// The first CodeLens of a file being opened is answered from the parse alone (outline.ts) while its
// analysis runs step by step (CudaDocuments.analysisSteps); each loop's summary is resolved from the
// analysis later (codeLens/resolve). Once resolved, the lenses must be exactly those the analysis
// gives, and the analysis made in steps exactly the one made at once.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, fork } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { IPCMessageReader, IPCMessageWriter, createMessageConnection } from 'vscode-jsonrpc/node';
import type { CodeLens } from 'vscode-languageserver';
import { CudaDocuments } from '../../src/engine/parse/documents';
import { codeLenses, outlineCodeLenses, resolveCodeLens } from '../../src/server/features';
import { DEFAULT_SETTINGS } from '../../src/protocol';
import type { HeaderUnit } from '../../src/server/headers';
import { REPO_ROOT, SAMPLES } from './helpers';

function trackedCuda(): string[] {
  return execFileSync('git', ['ls-files', '*.cu', '*.cuh'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
}

/** Runs an open's analysis steps to the end; returns the analysis and the number of steps. */
function runSteps(docs: CudaDocuments, key: string) {
  const steps = docs.analysisSteps(key);
  let n = 0;
  for (;;) {
    const r = steps.next();
    if (r.done) return { analysis: r.value, steps: n };
    n++;
  }
}

describe('CodeLens from the parse, summaries resolved from the analysis', () => {
  test('every tracked .cu/.cuh: outline lenses, resolved, equal the analysis lenses; the analysis in steps equals the one at once', async () => {
    const docs = await CudaDocuments.create();
    const fresh = await CudaDocuments.create();
    const headers: (HeaderUnit | null)[] = [null, { unit: null, via: null }, { unit: '/p/unit.cu', via: 'chosen' }];
    let summaries = 0;
    for (const file of trackedCuda()) {
      const text = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
      const uri = pathToFileURL(path.join(REPO_ROOT, file)).href;
      docs.openParsed(uri, text, file);
      assert.equal(docs.analysed(uri), null, file);
      const outline = docs.outline(uri)!;
      const { analysis, steps } = runSteps(docs, uri);
      assert.ok(analysis, file);
      assert.equal(steps, outline.kernels.length, `${file}: one step per function`);
      assert.equal(docs.analysed(uri), analysis);
      assert.equal(JSON.stringify(analysis), JSON.stringify(fresh.open(uri, text, file)), `${file}: the analysis in steps`);
      assert.equal(outline.definesMain, docs.definesMain(uri), `${file}: defines main`);
      for (const header of headers)
        for (const program of [false, true]) {
          const early = outlineCodeLenses(uri, outline, DEFAULT_SETTINGS, null, header, program);
          summaries += early.filter(l => !l.command).length;
          const resolved = early.map((l): CodeLens => (l.command ? l : resolveCodeLens(l, analysis)));
          const full = codeLenses(uri, analysis, DEFAULT_SETTINGS, null, header, program);
          assert.deepEqual(resolved, full, `${file}: lenses (header ${JSON.stringify(header)}, program ${program})`);
        }
      docs.close(uri);
      fresh.close(uri);
    }
    assert.ok(summaries > 100, `summaries left to resolve: ${summaries}`);
  });

  test('a summary whose loop moved since is left unresolved (the next CodeLens request answers)', async () => {
    const docs = await CudaDocuments.create();
    const text = fs.readFileSync(path.join(SAMPLES, 'matmul_unroll.cu'), 'utf8');
    docs.openParsed('m', text);
    const early = outlineCodeLenses('m', docs.outline('m')!, DEFAULT_SETTINGS);
    const lens = early.find(l => !l.command)!;
    docs.update('m', [{ start: 0, length: 0, text: '\n' }]);
    assert.equal(runSteps(docs, 'm').analysis, docs.analysis('m'));
    assert.equal(resolveCodeLens(lens, docs.analysis('m')!), lens);
  });

  test('an edit during the steps: they give null and the next analysis is made whole', async () => {
    const docs = await CudaDocuments.create();
    const text = fs.readFileSync(path.join(SAMPLES, 'reduce_unroll.cu'), 'utf8');
    docs.openParsed('r', text);
    const steps = docs.analysisSteps('r');
    steps.next();
    docs.update('r', [{ start: 0, length: 0, text: '// x\n' }]);
    let r = steps.next();
    while (!r.done) r = steps.next();
    assert.equal(r.value, null);
    const fresh = await CudaDocuments.create();
    assert.equal(JSON.stringify(docs.analysis('r')), JSON.stringify(fresh.open('r', '// x\n' + text)));
  });

  test('the server: a CodeLens request with the open, its unresolved lenses resolved, equals the lenses after it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-srv-lens-'));
    const uri = pathToFileURL(path.join(dir, 'k.cu')).href;
    const server = fork(path.join(__dirname, '..', '..', 'src', 'server', 'main.js'), ['--node-ipc'], {
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const conn = createMessageConnection(new IPCMessageReader(server), new IPCMessageWriter(server));
    conn.onNotification(() => undefined);
    conn.onRequest(() => null);
    conn.listen();
    try {
      const init = (await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} })) as {
        capabilities: { codeLensProvider?: { resolveProvider?: boolean } };
      };
      assert.equal(init.capabilities.codeLensProvider?.resolveProvider, true);
      conn.sendNotification('initialized', {});
      const text = ['matmul_unroll.cu', 'reduce_unroll.cu', 'manual_forms.cu']
        .map(f => fs.readFileSync(path.join(SAMPLES, f), 'utf8'))
        .join('\n');
      conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'cuda-cpp', version: 1, text } });
      // The answers carry no command (the server keeps them): the client resolves each lens it shows.
      const resolveAll = async (lenses: CodeLens[]) => {
        assert.ok(lenses.every(l => !l.command && l.data !== undefined));
        const out: CodeLens[] = [];
        for (const l of lenses) out.push((await conn.sendRequest('codeLens/resolve', l)) as CodeLens);
        return out;
      };
      const first = (await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as CodeLens[];
      const resolved = await resolveAll(first);
      const afterAnswer = (await conn.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as CodeLens[];
      // (the first answer's lenses resolve until the document's next two answers)
      const after = await resolveAll(afterAnswer);
      assert.ok(after.length > 20 && after.every(l => l.command));
      assert.deepEqual(resolved, after);
      assert.ok(JSON.stringify(afterAnswer).length * 2 < JSON.stringify(after).length, 'the answer is the smaller part');
      // a summary as an open answers it, resolved by the server
      const docs = await CudaDocuments.create();
      docs.openParsed(uri, text);
      const early = outlineCodeLenses(uri, docs.outline(uri)!, DEFAULT_SETTINGS).filter(l => !l.command);
      const titles = await Promise.all(early.map(l => conn.sendRequest('codeLens/resolve', l) as Promise<CodeLens>));
      assert.deepEqual(
        titles.map(l => l.command?.title),
        after.filter(l => l.command?.command === 'unrollLens.showLoops').map(l => l.command?.title),
      );
    } finally {
      conn.dispose();
      server.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
