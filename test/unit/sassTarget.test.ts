import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { SassListingResult } from '../../src/protocol';
import {
  SASS_EXTENSION,
  decodeSassQuery,
  docRangesOf,
  encodeSassQuery,
  factorChoices,
  factorLabel,
  sassPath,
  sourceLineOf,
  withVariant,
} from '../../src/extension/sassTarget';

const SRC = 'file:///work/cuda%20samples/matmul_unroll.cu';

describe('SASS listing URIs', () => {
  test('the query round-trips every field, and absent fields stay absent', () => {
    const full = { uri: SRC, line: 51, factor: '16', arch: 'sm_90', normalise: true };
    assert.deepEqual(decodeSassQuery(encodeSassQuery(full)), full);
    const bare = { uri: SRC, line: 51 };
    assert.deepEqual(decodeSassQuery(encodeSassQuery(bare)), bare);
    for (const factor of ['as-written', 'default', 'full', '4'])
      assert.equal(decodeSassQuery(encodeSassQuery({ ...bare, factor })).factor, factor);
    // A URI with a query of its own survives (it is one encoded parameter).
    const odd = { uri: 'untitled:Untitled-1?x=1&line=3', line: 2 };
    assert.deepEqual(decodeSassQuery(encodeSassQuery(odd)), odd);
  });

  test('a query that names no listing is refused with a reason', () => {
    assert.throws(() => decodeSassQuery(''), /names no source file/);
    assert.throws(() => decodeSassQuery(`uri=${encodeURIComponent(SRC)}&line=0`), /bad line/);
    assert.throws(() => decodeSassQuery(`uri=${encodeURIComponent(SRC)}&line=3&factor=0`), /bad factor/);
    assert.throws(() => decodeSassQuery(`uri=${encodeURIComponent(SRC)}&line=3&arch=compute_90`), /bad arch/);
  });

  test('the path names the file, line, factor, arch and normalisation, with the listing extension', () => {
    assert.equal(sassPath({ uri: SRC, line: 51 }), `/matmul_unroll.cu line 51 · as-written${SASS_EXTENSION}`);
    assert.equal(
      sassPath({ uri: SRC, line: 51, factor: '8', arch: 'sm_80', normalise: true }),
      `/matmul_unroll.cu line 51 · unroll 8 · sm_80 · normalised${SASS_EXTENSION}`,
    );
    assert.equal(sassPath({ uri: 'file:///a/b/', line: 1 }), `/b line 1 · as-written${SASS_EXTENSION}`);
  });

  test('withVariant replaces what it names and drops as-written', () => {
    const t = { uri: SRC, line: 5, factor: '4', arch: 'sm_90' };
    assert.deepEqual(withVariant(t, { factor: '8' }), { uri: SRC, line: 5, factor: '8', arch: 'sm_90' });
    assert.deepEqual(withVariant(t, { factor: 'as-written', normalise: true }), { uri: SRC, line: 5, arch: 'sm_90', normalise: true });
    assert.deepEqual(withVariant(t, { arch: undefined }), { uri: SRC, line: 5, factor: '4' });
  });

  test('factor labels and choices', () => {
    assert.equal(factorLabel(undefined), 'as-written');
    assert.equal(factorLabel('16'), 'unroll 16');
    assert.equal(factorLabel('full'), 'full');
    assert.deepEqual(factorChoices(['default', '4', '4', 'as-written', 'full']), ['as-written', 'default', '4', 'full']);
  });
});

describe('listing lines ↔ source lines', () => {
  // 0 header, 1 header, 2 `// ── :46`, 3-4 line 46, 5 `// ── :51`, 6-7 line 51, 8 label, 9 line 52, 10 line 51 again
  const result: Pick<SassListingResult, 'sourceLines'> = { sourceLines: [null, null, 46, 46, 46, 51, 51, 51, null, 52, 51] };

  test('a listing line maps to its source line; headers and labels to none', () => {
    assert.equal(sourceLineOf(result, 3), 46);
    assert.equal(sourceLineOf(result, 0), null);
    assert.equal(sourceLineOf(result, 8), null);
    assert.equal(sourceLineOf(result, 99), null, 'past the end');
  });

  test('a source line maps to its runs of listing lines, in order', () => {
    assert.deepEqual(docRangesOf(result, 51), [
      { from: 5, to: 7 },
      { from: 10, to: 10 },
    ]);
    assert.deepEqual(docRangesOf(result, 46), [{ from: 2, to: 4 }]);
    assert.deepEqual(docRangesOf(result, 47), []);
  });
});
