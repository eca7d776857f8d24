// `npm run fuzz [-- --cases N --seed S --server-cases M --max-steps K]`: many more cases than the
// unit test runs. Exit code 1 on any failure; each failure prints its seed and a reproducer.
//   --case-seed X   runs one case by its own seed (as a failure report names it)
import { caseSeed, createChecker, fuzzDocuments, generateCase, reproducer, runCase, shrink } from './fuzz';
import { fuzzServer } from './server';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i === -1) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v < 0) {
    console.error(`--${name} wants a non-negative number`);
    process.exit(2);
  }
  return v;
}

async function main(): Promise<void> {
  const seed = arg('seed', Date.now() % 1_000_000);
  const cases = arg('cases', 3000);
  const serverCases = arg('server-cases', 100);
  const maxSteps = arg('max-steps', 24);
  const one = process.argv.includes('--case-seed') ? arg('case-seed', 0) : null;
  if (one !== null) {
    const ck = await createChecker();
    const c = generateCase(one, undefined, maxSteps);
    const f = runCase(ck, c);
    if (!f) return console.log(`case seed ${one}: passes (${c.steps.length} steps)`);
    const s = shrink(ck, c, f);
    const parser = s.failure.parserDivergence ? " (parser divergence: the incremental syntax tree differs from a fresh parse's)" : '';
    console.log(`case seed ${one}: step ${s.failure.step}${parser}: ${s.failure.message}\n${reproducer(c, s.steps)}`);
    process.exitCode = 1;
    return;
  }
  console.log(`fuzz: documents ${cases} cases, server ${serverCases} cases, seed ${seed} (first case seed ${caseSeed(seed, 0)})`);
  const every = Math.max(1, Math.round(cases / 20));
  const docs = await fuzzDocuments({
    seed,
    cases,
    maxSteps,
    maxFailures: 10,
    onCase: (i, s) => {
      if ((i + 1) % every === 0)
        console.log(
          `  ${i + 1}/${cases} cases, ${s.steps} edits, ${s.checks} checks, ${s.failures.length} failures, ${((Date.now() - t0) / 1000).toFixed(1)} s`,
        );
    },
  });
  for (const f of docs.failures) console.log(`\nFAIL ${f.report}`);
  console.log(
    `documents: ${docs.cases} cases, ${docs.steps} edits, ${docs.checks} checks against a fresh parse, ${docs.failures.length} failures, ${(docs.ms / 1000).toFixed(1)} s`,
  );
  if (docs.parserDivergences.length)
    console.log(
      `  ${docs.parserDivergences.length} cases where tree-sitter's incremental tree of broken code differs from a fresh parse's (not failures; --case-seed shows one): ${docs.parserDivergences.slice(0, 10).join(', ')}`,
    );
  const srv = await fuzzServer({ seed, cases: serverCases, maxSteps: maxSteps * 2 });
  for (const f of srv.failures) console.log(`\nFAIL server ${f}`);
  console.log(
    `server: ${srv.cases} cases, ${srv.changes} didChange, ${srv.requests} requests, ${srv.failures.length} failures, ${srv.parserDivergences.length} parser divergences, ${(srv.ms / 1000).toFixed(1)} s`,
  );
  if (docs.failures.length || srv.failures.length) process.exitCode = 1;
}

const t0 = Date.now();
main().catch(e => {
  console.error(e);
  process.exitCode = 1;
});
