// The server's kept CodeLens commands (lensStore.ts): an answer carries keys, resolve gives the lens.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { CodeLens } from 'vscode-languageserver/node';
import { LensStore } from '../../src/server/lensStore';

const at = (line: number) => ({ start: { line, character: 0 }, end: { line, character: 0 } });
const lens = (line: number, title: string): CodeLens => ({ range: at(line), command: { title, command: 'x', arguments: [{ line }] } });

describe('LensStore', () => {
  test('an answer carries ranges and keys; each key resolves to its lens; a lens left to the analysis passes through', () => {
    const store = new LensStore();
    const summary: CodeLens = { range: at(3), data: { uri: 'u', kernel: 0, kernelLine: 1, loop: 0, line: 4 } };
    const full = [lens(1, 'a'), summary, lens(2, 'b')];
    const answer = store.hold('u', () => full);
    assert.deepEqual(
      answer.map(l => l.range),
      full.map(l => l.range),
    );
    assert.ok(answer.every(l => !l.command));
    assert.equal(answer[1], summary);
    assert.deepEqual(store.resolve(answer[0]), full[0]);
    assert.deepEqual(store.resolve(answer[2]), full[2]);
    assert.equal(store.resolve(summary), null, 'not a held lens: the analysis resolves it');
    assert.equal(store.resolve({ range: at(0), data: { held: 'x' } }), null);
  });

  test('the two latest answers of a document resolve; older ones and closed documents give the lens back unresolved', () => {
    const store = new LensStore();
    const a1 = store.hold('u', () => [lens(1, 'one')]);
    const other = store.hold('v', () => [lens(1, 'v')]);
    const a2 = store.hold('u', () => [lens(1, 'two')]);
    assert.equal(store.resolve(a1[0])?.command?.title, 'one', 'in flight when the next answer came');
    const a3 = store.hold('u', () => [lens(1, 'three')]);
    assert.equal(store.resolve(a1[0]), a1[0], 'three answers later');
    assert.equal(store.resolve(a2[0])?.command?.title, 'two');
    assert.equal(store.resolve(a3[0])?.command?.title, 'three');
    assert.equal(store.resolve(other[0])?.command?.title, 'v', "another document's answers are its own");
    store.forget('u');
    assert.equal(store.resolve(a3[0]), a3[0]);
    assert.equal(store.resolve(other[0])?.command?.title, 'v');
  });

  test('an answer keeps how to build its lenses, not the lenses: one build to answer, one for a burst of resolves', () => {
    const store = new LensStore();
    let builds = 0;
    const build = () => {
      builds++;
      return [lens(1, 'a'), lens(2, 'b'), lens(3, 'c')];
    };
    const answer = store.hold('u', build);
    assert.equal(builds, 1);
    assert.deepEqual(
      answer.map(l => store.resolve(l)?.command?.title),
      ['a', 'b', 'c'],
    );
    assert.equal(builds, 2, 'the three resolves built the lenses once');
    const next = store.hold('u', build);
    store.resolve(answer[0]);
    store.resolve(next[0]);
    assert.equal(builds, 4, "the first answer's lenses were still built; the second's built at its first resolve");
  });

  test('a build that no longer gives the lens at that place (settings changed since) leaves the lens unresolved', () => {
    const store = new LensStore();
    let shifted = false;
    const answer = store.hold('u', () => (shifted ? [lens(5, 'moved'), lens(6, 'other')] : [lens(1, 'a'), lens(2, 'b')]));
    shifted = true;
    assert.equal(store.resolve(answer[1]), answer[1]);
    assert.equal(store.resolve(answer[0]), answer[0]);
  });
});
