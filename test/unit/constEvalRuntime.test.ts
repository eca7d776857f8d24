// A run-time operand decides a binary operator's (and min/max's) result on its own: the other
// operand is not evaluated (constEval.ts evalBinary), which spared a kernel of const float locals
// (`const float dx = coorx - atom.x;`) most of its lookups. The answers stay those of evaluating both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCudaParser, type Node } from '../../src/engine/parse/parser';
import { evalConst, type ConstScope, type EvalResult } from '../../src/engine/parse/constEval';

async function evaluate(expr: string, names: Record<string, EvalResult>): Promise<{ value: EvalResult; asked: string[] }> {
  const parser = await createCudaParser();
  const tree = parser.parse(`void f() { x = ${expr}; }`)!;
  try {
    const assignment = tree.rootNode.descendantsOfType('assignment_expression')[0]!;
    const asked: string[] = [];
    const scope: ConstScope = {
      values: new Map(),
      unboundTemplateParams: new Set(),
      resolve: (n: Node) => {
        asked.push(n.text);
        return names[n.text] ?? 'unknown';
      },
    };
    return { value: evalConst(assignment.childForFieldName('right'), scope), asked };
  } finally {
    tree.delete();
  }
}

test('a run-time left operand gives run-time without reading the right one', async () => {
  assert.deepEqual(await evaluate('n * (K + 1)', { n: 'runtime', K: 4 }), { value: 'runtime', asked: ['n'] });
  assert.deepEqual(await evaluate('min(n, K)', { n: 'runtime', K: 4 }), { value: 'runtime', asked: ['n'] });
});

test('any other left operand still reads the right one: run-time wins over unknown and dependent, as before', async () => {
  assert.deepEqual(await evaluate('U * n', { U: 'unknown', n: 'runtime' }), { value: 'runtime', asked: ['U', 'n'] });
  assert.deepEqual(await evaluate('D - n', { D: 'dependent', n: 'runtime' }), { value: 'runtime', asked: ['D', 'n'] });
  assert.deepEqual(await evaluate('max(U, n)', { U: 'unknown', n: 'runtime' }), { value: 'runtime', asked: ['U', 'n'] });
  assert.deepEqual(await evaluate('K * 2 + U', { K: 4, U: 'unknown' }), { value: 'unknown', asked: ['K', 'U'] });
  assert.deepEqual(await evaluate('(K << 2) / 3', { K: 4 }), { value: 5, asked: ['K'] });
});
