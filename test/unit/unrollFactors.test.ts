// The unroll factor list as one value (issue 38): parsed once where it comes in (the setting, the
// --factors flag, a request's factors), then carried unchanged to the sweep space's loop axes and
// from their points into the variant's pragma text.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { analyze, lineOf } from './helpers';
import { propertyRuns } from './propertyRuns';
import { factorLabel, parseVariantFactor, UnrollFactor, UnrollFactors, UnrollFactorsError } from '../../src/engine/variants/factors';
import { resolveSpace, SweepSpaceError, variantFactorsOf } from '../../src/engine/sweep/space';
import { makeVariantSource } from '../../src/engine/variants/rewrite';
import { DEFAULT_UNROLL_FACTORS } from '../../src/schema/ranges';
import { DEFAULT_SETTINGS, readSettings } from '../../src/settings';
import { factorsOption } from '../../src/cli/args';
import { UsageError } from '../../src/cli/io';
import { requestedFactors } from '../../src/server/unrollFactors';

const SRC = `__global__ void k(float* a, int n) {
  #pragma unroll 4
  for (int i = 0; i < n; ++i) a[i] = 0;
  for (int j = 0; j < n; ++j) a[j] += 1;
}
`;
const FILE = '/x/k.cu';
const I = lineOf(SRC, 'int i = 0');
const J = lineOf(SRC, 'int j = 0');

/** Each point's variant of the loop at line I, as the rewrite writes it: what a list reaches in the end. */
async function variantsOf(factors: UnrollFactors): Promise<string[]> {
  const a = await analyze(SRC, FILE);
  const space = resolveSpace(a, FILE, { kernel: 'k', loops: [I], factors });
  // the axis holds the very list the edge parsed: no copy, no second parse
  assert.equal(space.factors, factors);
  assert.equal(space.axes[0].values, factors.values);
  return [...space.points()].map(p => makeVariantSource(SRC, a, variantFactorsOf(p), FILE).split('\n')[lineOf(SRC, '#pragma unroll 4')]);
}

describe('UnrollFactors: the list, its default, its labels and its refusals', () => {
  test('parse: words in any case, spaces, repeats dropped in order; a list of pieces reads as one list', () => {
    assert.deepEqual(UnrollFactors.parse(' Default, 4 ,FULL,4,1').toJSON(), ['default', 4, 'full', 1]);
    assert.deepEqual(UnrollFactors.parse(['8', '4,full']).toJSON(), [8, 4, 'full']);
    assert.equal(UnrollFactors.parse('4096').size, 1);
    assert.equal(UnrollFactors.parse('default,1,4,full').text(), 'default,1,4,full');
    assert.deepEqual([...UnrollFactors.parse('2,full')], [2, 'full']);
  });

  test('refusals say what to write, word for word as before', () => {
    const refused = (text: string | string[], message: string) =>
      assert.throws(
        () => UnrollFactors.parse(text),
        (e: unknown) => e instanceof UnrollFactorsError && e.message === message,
      );
    refused('', 'empty factor list');
    refused(' , ', 'empty factor list');
    refused([], 'empty factor list');
    refused('8,,4', "an empty factor between commas in '8,,4': write factors as 8,4 or default,1,full");
    refused('8,4,', "an empty factor between commas in '8,4,': write factors as 8,4 or default,1,full");
    refused(['8', '', '4'], "an empty factor between commas in '8,,4': write factors as 8,4 or default,1,full");
    refused('0', "bad unroll factor '0': use default, full or an integer from 1 to 4096");
    refused('x', "bad unroll factor 'x': use default, full or an integer from 1 to 4096");
    refused('2.5', "bad unroll factor '2.5': use default, full or an integer from 1 to 4096");
    refused('-4', "bad unroll factor '-4': use default, full or an integer from 1 to 4096");
    refused('4097', "unroll factor '4097' is out of range: use default, full or an integer from 1 to 4096");
    // typed values meet the same range
    assert.throws(() => UnrollFactors.of([0]), /bad unroll factor: expected default, full or an integer from 1 to 4096, got 0/);
    assert.throws(() => UnrollFactors.of([2.5]), UnrollFactorsError);
    assert.throws(() => UnrollFactors.of(['none' as UnrollFactor]), UnrollFactorsError);
    assert.equal(UnrollFactors.of([]), UnrollFactors.NONE);
    assert.deepEqual(UnrollFactors.of([4, 4, 'full']).toJSON(), [4, 'full']);
  });

  test('one default list: the setting, the CLI and the engine', () => {
    assert.deepEqual(UnrollFactors.DEFAULT.toJSON(), [...DEFAULT_UNROLL_FACTORS]);
    assert.deepEqual(UnrollFactors.DEFAULT.toJSON(), ['default', 1, 2, 4, 8, 16, 'full']);
    assert.deepEqual(DEFAULT_SETTINGS.unrollFactors, ['default', '1', '2', '4', '8', '16', 'full']);
    assert.equal(factorsOption(undefined), UnrollFactors.DEFAULT);
    assert.deepEqual(requestedFactors(undefined, DEFAULT_SETTINGS).toJSON(), UnrollFactors.DEFAULT.toJSON());
  });

  test('labels, the variant factor and JSON', () => {
    assert.deepEqual(UnrollFactors.parse('default,4,full').labels(), ['compiler default', 'unroll 4', 'full unroll']);
    assert.equal(factorLabel(16), 'unroll 16');
    assert.equal(parseVariantFactor(' As-Written '), 'as-written');
    assert.equal(parseVariantFactor('FULL'), 'full');
    assert.throws(() => parseVariantFactor('0'), /bad unroll factor '0'/);
    // results and Slurm specs hold the plain list, as they did before the type
    assert.equal(JSON.stringify({ factors: UnrollFactors.parse('default,4,full') }), '{"factors":["default",4,"full"]}');
    assert.equal(JSON.stringify(UnrollFactors.NONE), '[]');
  });

  test('property: parse(text(x)) is x, and text(parse(s)) is s, for any list of factors', () => {
    const factor = fc.oneof(fc.constant<UnrollFactor>('default'), fc.constant<UnrollFactor>('full'), fc.integer({ min: 1, max: 4096 }));
    fc.assert(
      fc.property(fc.uniqueArray(factor, { minLength: 1, maxLength: 12, selector: f => String(f) }), list => {
        const x = UnrollFactors.of(list);
        assert.deepEqual(x.toJSON(), list);
        assert.deepEqual(UnrollFactors.parse(x.text()).toJSON(), list);
        assert.equal(UnrollFactors.parse(x.text()).text(), x.text());
      }),
      propertyRuns(500, 38, 20_000),
    );
  });
});

describe('UnrollFactors from each edge to the variant', () => {
  test('the setting: readSettings drops a bad entry, the rest is parsed once and reaches the pragmas', async () => {
    const warnings: string[] = [];
    const s = readSettings({ unrollFactors: ['2', 'bogus', 'full', 'default'] }, m => warnings.push(m));
    assert.equal(warnings.length, 1);
    const factors = requestedFactors(undefined, s);
    assert.deepEqual(factors.toJSON(), [2, 'full', 'default']);
    // parsed once per settings value: the same list for every request until the settings change
    assert.equal(requestedFactors(undefined, s), factors);
    assert.notEqual(requestedFactors(undefined, readSettings({ unrollFactors: ['2', 'full', 'default'] })), factors);
    assert.deepEqual(await variantsOf(factors), ['  #pragma unroll 2', '  #pragma unroll', '  ']);
  });

  test('the --factors flag: parsed by factorsOption, reaches the pragmas; a slip is a usage error with the same message', async () => {
    const factors = factorsOption('8, FULL,1');
    assert.deepEqual(await variantsOf(factors), ['  #pragma unroll 8', '  #pragma unroll', '  #pragma unroll 1']);
    assert.throws(
      () => factorsOption('8,,4'),
      (e: unknown) =>
        e instanceof UsageError &&
        e.message === "--factors: an empty factor between commas in '8,,4': write factors as 8,4 or default,1,full",
    );
    assert.throws(
      () => factorsOption('='),
      (e: unknown) => e instanceof UsageError && /^--factors: bad unroll factor '='/.test(e.message),
    );
  });

  test("a request's factors: parsed over the setting, reach the pragmas; an empty sweep list is a sweep of parameters only", async () => {
    const s = readSettings({ unrollFactors: ['2'] });
    const factors = requestedFactors(['16', 'default'], s);
    assert.deepEqual(await variantsOf(factors), ['  #pragma unroll 16', '  ']);
    assert.throws(
      () => requestedFactors(['4', '1e+23'], s),
      /^Error: bad unroll factor '1e\+23': use default, full or an integer from 1 to 4096$/,
    );
    assert.throws(() => requestedFactors([], s), /^Error: empty factor list$/);
    // the sweep request: [] is no loop axis, which a kernel with loops refuses as before
    assert.equal(requestedFactors([], s, true), UnrollFactors.NONE);
    const a = await analyze(SRC, FILE);
    assert.throws(
      () => resolveSpace(a, FILE, { kernel: 'k', factors: UnrollFactors.NONE }),
      (e: unknown) => e instanceof SweepSpaceError && e.message === 'empty factor list',
    );
    // a kernel's two loops each get an axis of the same list
    const both = resolveSpace(a, FILE, { kernel: 'k', factors });
    assert.deepEqual(
      both.axes.map(x => (x.kind === 'loop' ? [x.lines, x.values] : null)),
      [
        [[I], [16, 'default']],
        [[J], [16, 'default']],
      ],
    );
  });
});
