// The server's segmented document text (serverText.ts) against vscode-languageserver-textdocument's
// TextDocument, which it replaces: the same offsets for every position and the same text after the
// same edits, line breaks of every kind, ranges past a line's end or the last line, reversed ranges,
// multi-line and whole-text changes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { ServerText, type ContentChange } from '../../src/server/serverText';
import { editMayChangeMacros } from '../../src/server/macros';
import { SegmentedText } from '../../src/engine';
import { SAMPLES } from './helpers';

function rng(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0;
    return s % n;
  };
}

const PIECES = ['\n', '\r\n', '\r', 'x', '#define A 1\n', '  ', '/* c */', 'for (int i = 0; i < 4; ++i)', '\u00e9\u2014', '\\\n', ''];

test('offsets and text after random edits equal TextDocument’s', () => {
  const base = fs.readFileSync(path.join(SAMPLES, 'matmul_unroll.cu'), 'utf8');
  for (let seed = 1; seed <= 40; seed++) {
    const r = rng(seed);
    const start = base.slice(0, 3000).replace(/\n/g, () => ['\n', '\r\n', '\r'][r(3)]);
    let doc = TextDocument.create('file:///a.cu', 'cuda-cpp', 1, start);
    const mine = ServerText.create('file:///a.cu', 'cuda-cpp', 1, start);
    for (let step = 0; step < 60; step++) {
      const lines = doc.lineCount;
      const pos = () => ({ line: r(lines + 2) - 1, character: r(40) - 1 });
      const text = Array.from({ length: r(3) }, () => PIECES[r(PIECES.length)]).join('');
      const change: ContentChange = r(40) === 0 ? { text: start.slice(r(200)) } : { range: { start: pos(), end: pos() }, text };
      for (let k = 0; k < 20; k++) {
        const p = pos();
        assert.equal(mine.offsetAt(p), doc.offsetAt(p), `seed ${seed} step ${step} ${JSON.stringify(p)}`);
      }
      if ('range' in change) {
        const a = doc.offsetAt(change.range.start);
        const b = doc.offsetAt(change.range.end);
        const old = doc.getText();
        const [s, e] = a <= b ? [a, b] : [b, a];
        assert.equal(editMayChangeMacros(mine.text, s, e - s, text), editMayChangeMacros(old, s, e - s, text));
      }
      doc = TextDocument.update(doc, [change], step + 2);
      assert.equal(mine.update([change], step + 2), mine);
      assert.equal(mine.version, doc.version);
      assert.equal(mine.length, doc.getText().length);
      assert.equal(mine.getText(), doc.getText(), `seed ${seed} step ${step}`);
    }
  }
});

test('editMayChangeMacros reads a segmented text as it reads the string', () => {
  const text = '#define N 4\n__global__ void k() {\n  /* a */ int x = N; \\\n  y;\n}\n';
  const seg = SegmentedText.of(text + 'z').replace(text.length, text.length + 1, ''); // read from its segments
  for (let at = 0; at <= text.length; at++)
    for (const inserted of ['', 'x', '#', '\n', '*/', '/'])
      for (const length of [0, 1, 2])
        if (at + length <= text.length)
          assert.equal(
            editMayChangeMacros(seg, at, length, inserted),
            editMayChangeMacros(text, at, length, inserted),
            `${at} ${length} ${inserted}`,
          );
});
