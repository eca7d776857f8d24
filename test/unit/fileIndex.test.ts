import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { createCudaParser, type Node } from '../../src/engine/parse/parser';
import { FileIndex } from '../../src/engine/parse/fileIndex';
import { MacroTable } from '../../src/engine/parse/macros';
import { REPO_ROOT } from './helpers';

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
    const tree = parser.parse(MacroTable.builtin.maskForParse(fs.readFileSync(path.join(REPO_ROOT, rel), 'utf8')))!;
    try {
      const want = walked(tree.rootNode);
      const index = new FileIndex(tree.rootNode, new Map());
      // Every name a walk finds, and names it does not (a substring, a keyword, an unused name).
      const probes = new Set([...want.call.keys(), ...want.function.keys(), ...want.template.keys(), 'i', 'a', 'for', 'x_never_used']);
      if (probes.size > 40) pastWalkLimit++;
      for (const name of probes) {
        const ids = (nodes: Node[]) => nodes.map(n => n.id);
        assert.deepEqual(ids(index.callsNamed(name)), want.call.get(name) ?? [], `${rel}: calls of ${name}`);
        assert.deepEqual(ids(index.functionsNamed(name)), want.function.get(name) ?? [], `${rel}: functions named ${name}`);
        assert.deepEqual(ids(index.templateTypesNamed(name)), want.template.get(name) ?? [], `${rel}: ${name}<…>`);
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
