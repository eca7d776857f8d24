// The line a project bench prints on its builds (issue 39): what the first and each further build
// cost, and, when one copy built every variant one after another, how to build two at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { projectBuildsNote } from '../../src/engine/sweep/runners/projectPrograms';

const tree = (n: number) => ({ root: '/src/ggml', dir: `/cache/projects/ggml-1/${n}/tree` });
const build = (label: string, ms: number) => ({ label, ms, status: 'ok' as const });

test('no build: no note', () => {
  assert.equal(projectBuildsNote([], [tree(0)]), null);
});

test('the first build and each further one, with the copies named', () => {
  const note = projectBuildsNote([build('as written', 189_000), build('×2', 12_400)], [tree(0)])!;
  assert.equal(
    note,
    "built by the project's build command in a copy of /src/ggml (/cache/projects/ggml-1/0/tree): first build 189.0 s, then ×2 12.4 s",
  );
});

test('one copy and three builds one after another: the note says how to build two at once', () => {
  const note = projectBuildsNote([build('as written', 14_000), build('×2', 13_000), build('×4', 12_000)], [tree(0)])!;
  assert.match(note, /then ×2 13\.0 s, ×4 12\.0 s; the builds ran one after another in one copy: --build-copies 2/);
  assert.match(note, /unrollLens\.project\.buildCopies/);
});

test('two copies: both named, no hint', () => {
  const note = projectBuildsNote([build('as written', 14_000), build('×2', 13_000), build('×4', 12_000)], [tree(0), tree(1)])!;
  assert.match(note, /in 2 copies of \/src\/ggml \(\/cache\/projects\/ggml-1\/0\/tree, \/cache\/projects\/ggml-1\/1\/tree\)/);
  assert.doesNotMatch(note, /--build-copies/);
});
