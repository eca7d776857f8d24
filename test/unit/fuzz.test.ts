// A bounded run of the language-server fuzzer (test/fuzz): random edit sequences and byte-level
// mutations of the cuda-samples; after every checked step the incremental state equals a fresh
// parse, and the server process, driven over IPC, stays up and agrees with a fresh open.
// `npm run fuzz` runs many more cases. UNROLL_LENS_FUZZ_SEED picks another seed.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createChecker, fuzzDocuments, generateCase, runCase } from '../fuzz/fuzz';
import { fuzzServer } from '../fuzz/server';

const SEED = Number(process.env.UNROLL_LENS_FUZZ_SEED ?? 20261122);

describe('fuzz: incremental documents and the language server', () => {
  test('random edits and byte mutations of the samples: the incremental state equals a fresh parse', async () => {
    const r = await fuzzDocuments({ seed: SEED, cases: 80, maxSteps: 12, maxFailures: 1 });
    assert.equal(r.failures.length, 0, r.failures.map(f => f.report).join('\n\n'));
    assert.ok(r.checks > 300, `only ${r.checks} checks`);
  });

  // Cases that once failed (fixed): each seed names one generated case (test/fuzz/fuzz.ts generateCase).
  test('cases that found bugs', async () => {
    const ck = await createChecker();
    const seeds = {
      2458027156: 'a host-body edit adds the only syntax error (fast path)',
      477372299: "a coarsening note's line (function moved, cached result)",
      2730868901: 'an edited template head (cache key)',
      669487890: 'an edit on a continuation line of a #define (server: editMayChangeMacros)',
      2504693247: '`/*` hides a later #undef (server: editMayChangeMacros)',
      3458115460: 'manual-unroll pair memo shared across functions of a broken tree',
      900012479: "a PM_KERNEL kernel's body edited: the fast path's lookup must know the kernels",
      4125150401: 'a name declared at namespace scope by broken pasted code (cache key: items digest)',
      242106343: "U+FEFF typed between items: JavaScript's white space, not the grammar's (fast path)",
      3732631596: '`#define` typed after `case 8:` turns the launch of `coarsen_potential<8>` into a macro value (fast path)',
      4135269002: 'backspaces make `}#if 0` an `#if` at its line start (server: editMayChangeMacros)',
      319748645: 'a declaration inside an ERROR node comes out of it unchanged: a namespace variable now (cache key: items digest)',
    };
    for (const [seed, what] of Object.entries(seeds)) {
      const f = runCase(ck, generateCase(Number(seed)));
      assert.equal(f, null, `seed ${seed} (${what}): ${f?.message}`);
    }
  });

  test('the server process over IPC: no crash, every request answered, same code lenses as a fresh open', async () => {
    const r = await fuzzServer({ seed: SEED, cases: 10, maxSteps: 30 });
    assert.equal(r.failures.length, 0, r.failures.join('\n\n'));
    assert.ok(r.changes > 50, `only ${r.changes} didChange`);
  });
});
