// Issue 23: a planted result file named the file Apply edits. Apply's edits are now made only to
// the document the result was measured from, inside a workspace folder (real paths), while it has
// the measured text (sha256; other factors on the swept loops allowed, after an earlier Apply).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze } from './helpers';
import { ApplyTarget, applyTargetProblem, sha256, textAsWritten } from '../../src/engine/sweep/applyTarget';
import { applyProblem } from '../../src/server/results';

const SRC = `__global__ void k(float* a, int n) {
  #pragma unroll 2
  for (int i = 0; i < n; ++i) a[i] *= 2.0f;
  for (int j = 0; j < 8; ++j) a[j] += 1.0f;
}
`;
const LOOPS = [
  { line: 3, written: 2 },
  { line: 4, written: 'default' as const },
];

/** Temp folders of this file, removed at the end. */
const made: string[] = [];
after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

function setup() {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-apply-'));
  made.push(top);
  const ws = path.join(top, 'ws');
  const outside = path.join(top, 'outside');
  fs.mkdirSync(ws);
  fs.mkdirSync(outside);
  const doc = path.join(ws, 'k.cu');
  const foreign = path.join(outside, 'other.cu');
  fs.writeFileSync(doc, SRC);
  fs.writeFileSync(foreign, SRC);
  return { ws, outside, doc, foreign };
}

async function target(over: Partial<ApplyTarget> & { documentPath: string; workspaceFolders: string[] }): Promise<ApplyTarget> {
  const text = over.documentText ?? SRC;
  return {
    resultFile: over.documentPath,
    sourceSha256: sha256(SRC),
    loops: LOOPS,
    documentText: text,
    analysis: await analyze(text),
    ...over,
  };
}

describe('which document Apply may edit', () => {
  test('the result measured from the open document, inside the workspace, same text: allowed', async () => {
    const { ws, doc } = setup();
    assert.equal(applyTargetProblem(await target({ documentPath: doc, workspaceFolders: [ws] })), null);
    // Older results carry no hash: the workspace check and the user's confirmation still hold.
    assert.equal(applyTargetProblem(await target({ documentPath: doc, workspaceFolders: [ws], sourceSha256: undefined })), null);
  });

  test('a planted result naming another file (outside, or another file in the workspace) is refused for this document', async () => {
    const { ws, doc, foreign } = setup();
    fs.writeFileSync(path.join(ws, 'b.cu'), SRC);
    for (const named of [foreign, path.join(ws, 'b.cu'), '/home/user/.bashrc', '', 'k.cu\0x']) {
      const p = applyTargetProblem(await target({ documentPath: doc, resultFile: named, workspaceFolders: [ws] }));
      assert.match(p ?? '', /Apply edits only the document a result was measured from/, named);
    }
  });

  test('the document the result names lies outside the workspace (directly, or through a link inside it): refused', async () => {
    const { ws, outside, foreign } = setup();
    assert.match(
      applyTargetProblem(await target({ documentPath: foreign, workspaceFolders: [ws] })) ?? '',
      /outside the workspace folders/,
    );
    fs.symlinkSync(outside, path.join(ws, 'vendor'));
    const viaLink = path.join(ws, 'vendor', 'other.cu');
    assert.match(
      applyTargetProblem(await target({ documentPath: viaLink, workspaceFolders: [ws] })) ?? '',
      /outside the workspace folders/,
    );
  });

  test('a text that changed since the measurement is refused; other factors on the swept loops (an earlier Apply) are not', async () => {
    const { ws, doc } = setup();
    const changed = SRC.replace('2.0f', '3.0f');
    assert.match(
      applyTargetProblem(await target({ documentPath: doc, workspaceFolders: [ws], documentText: changed })) ?? '',
      /changed since the result was measured/,
    );
    const applied = SRC.replace('#pragma unroll 2', '#pragma unroll 8');
    assert.equal(textAsWritten(applied, await analyze(applied), LOOPS), SRC);
    assert.equal(applyTargetProblem(await target({ documentPath: doc, workspaceFolders: [ws], documentText: applied })), null);
    assert.match(
      applyTargetProblem(await target({ documentPath: doc, workspaceFolders: [ws], sourceSha256: 'ab'.repeat(31) + 'zz' })) ?? '',
      /malformed source hash/,
    );
  });

  test('no workspace folder: only a result with the hash of this very text', async () => {
    const { doc } = setup();
    assert.equal(applyTargetProblem(await target({ documentPath: doc, workspaceFolders: [] })), null);
    assert.match(
      applyTargetProblem(await target({ documentPath: doc, workspaceFolders: [], sourceSha256: undefined })) ?? '',
      /no workspace folder/,
    );
  });

  test("the server's pragmaEdits check: a request without the result, or naming another file, gets a problem and no edits", async () => {
    const { ws, doc, foreign } = setup();
    const analysis = await analyze(SRC);
    const factors = { 3: 4 };
    const measured = { file: doc, sourceSha256: sha256(SRC), loops: LOOPS };
    const uri = `file://${doc}`;
    assert.equal(applyProblem({ uri, factors, measured }, doc, SRC, analysis, [ws]), null);
    assert.match(applyProblem({ uri, factors } as never, doc, SRC, analysis, [ws]) ?? '', /needs the result/);
    assert.match(applyProblem({ uri, factors, measured: { ...measured, file: foreign } }, doc, SRC, analysis, [ws]) ?? '', /measured on/);
    assert.match(applyProblem({ uri, factors, measured }, null, SRC, analysis, [ws]) ?? '', /only files on disk/);
  });
});
