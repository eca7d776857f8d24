import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { createCudaParser, type Node } from '../../src/engine/parse/parser';
import { FileIndex } from '../../src/engine/parse/fileIndex';
import { MacroTable } from '../../src/engine/parse/macros';
import { REPO_ROOT } from './helpers';
import { SegmentedText } from '../../src/engine/parse/segmentedText';

/** The lookups as a walk of every node of the file gives them (what FileIndex did before issue 41). */
function walked(root: Node) {
  const byName = (type: string, nameOf: (n: Node) => string | undefined) => {
    const out = new Map<string, number[]>();
    for (const n of root.descendantsOfType(type)) {
      const name = n && nameOf(n);
      if (!n || !name) continue;
      if (!out.has(name)) out.set(name, []);
      out.get(name)!.push(n.id);
    }
    return out;
  };
  return {
    call: byName('call_expression', n => {
      let f = n.childForFieldName('function');
      if (f?.type === 'field_expression') f = f.childForFieldName('field');
      if (f?.type === 'template_function') f = f.childForFieldName('name');
      return f?.text.split('::').pop();
    }),
    function: byName('function_definition', n => {
      const decl = n.childForFieldName('declarator');
      return decl?.type === 'function_declarator' ? decl.childForFieldName('declarator')?.text.split('::').pop() : undefined;
    }),
    template: byName('template_type', n => n.childForFieldName('name')?.text),
  };
}

// The first 32 lookups of a kind read the places that spell the name; later ones read an index of
// the whole file built in one walk (fileIndex.ts WALK_LOOKUPS): files with more names test both.
test('lookups by name find exactly the nodes, in the order, that a walk of the whole tree finds', async () => {
  const parser = await createCudaParser();
  let pastWalkLimit = 0;
  const files = execFileSync('git', ['ls-files', '*.cu', '*.cuh'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
  let names = 0;
  for (const rel of files) {
    const masked = MacroTable.builtin.maskForParse(fs.readFileSync(path.join(REPO_ROOT, rel), 'utf8'));
    const tree = parser.parse(masked)!;
    try {
      const want = walked(tree.rootNode);
      // Searching the root's text, and the document's segmented text (what an editor keystroke uses).
      const index = new FileIndex(tree.rootNode, new Map());
      const segmented = new FileIndex(tree.rootNode, new Map(), undefined, SegmentedText.of(masked));
      // Every name a walk finds, and names it does not (a substring, a keyword, an unused name).
      const probes = new Set([...want.call.keys(), ...want.function.keys(), ...want.template.keys(), 'i', 'a', 'for', 'x_never_used']);
      if (probes.size > 40) pastWalkLimit++;
      for (const name of probes) {
        const ids = (nodes: Node[]) => nodes.map(n => n.id);
        assert.deepEqual(ids(index.callsNamed(name)), want.call.get(name) ?? [], `${rel}: calls of ${name}`);
        assert.deepEqual(ids(index.functionsNamed(name)), want.function.get(name) ?? [], `${rel}: functions named ${name}`);
        assert.deepEqual(ids(index.templateTypesNamed(name)), want.template.get(name) ?? [], `${rel}: ${name}<…>`);
        assert.deepEqual(ids(segmented.callsNamed(name)), want.call.get(name) ?? [], `${rel}: calls of ${name}, segmented`);
        assert.deepEqual(ids(segmented.functionsNamed(name)), want.function.get(name) ?? [], `${rel}: functions named ${name}, segmented`);
        names++;
      }
    } finally {
      tree.delete();
    }
  }
  assert.ok(names > 500, `only ${names} names compared`);
  assert.ok(pastWalkLimit >= 5, `only ${pastWalkLimit} files look up more names than the walk limit`);
});

test('a name looked up again after the whole-file index exists gives the same nodes, and the empty name none', async () => {
  const parser = await createCudaParser();
  const calls = Array.from({ length: 40 }, (_, i) => `  f${i}(x);`).join('\n');
  const tree = parser.parse(`__device__ void g(int x) {\n${calls}\n  f3(x); ns::f3(x); obj.f3(x); f3<8>(x);\n}\n`)!;
  try {
    const index = new FileIndex(tree.rootNode, new Map());
    const early = index.callsNamed('f3').map(n => n.text);
    for (let i = 0; i < 40; i++) index.callsNamed(`f${i}`);
    index.callsNamed('never_called');
    const fresh = new FileIndex(tree.rootNode, new Map());
    for (let i = 0; i < 40; i++) fresh.callsNamed(`f${i + 100}`);
    assert.deepEqual(early, ['f3(x)', 'f3(x)', 'ns::f3(x)', 'obj.f3(x)', 'f3<8>(x)']);
    assert.deepEqual(
      fresh.callsNamed('f3').map(n => n.text),
      early,
      'from the whole-file index',
    );
    assert.deepEqual(fresh.callsNamed(''), []);
  } finally {
    tree.delete();
  }
});

test('a lookup in a file that starts with blank lines and ends past its last item finds its names at both ends', async () => {
  // The root's text starts at the first item; the source text at offset 0 (FileIndex's search base).
  const parser = await createCudaParser();
  const text = `\n\n   \nf(1);__device__ void g() { f(2); }\n__device__ void f(int) {}f(3);\n\n`;
  const tree = parser.parse(text)!;
  try {
    const want = walked(tree.rootNode);
    for (const index of [
      new FileIndex(tree.rootNode, new Map()),
      new FileIndex(tree.rootNode, new Map(), undefined, SegmentedText.of(text)),
    ]) {
      assert.deepEqual(
        index.callsNamed('f').map(n => n.id),
        want.call.get('f'),
      );
      assert.deepEqual(
        index.functionsNamed('f').map(n => n.text),
        ['__device__ void f(int) {}'],
      );
    }
    assert.equal(want.call.get('f')?.length, 3, 'f(1) (the root starts there), f(2), f(3)');
    assert.equal(tree.rootNode.startIndex, 6);
  } finally {
    tree.delete();
  }
});
