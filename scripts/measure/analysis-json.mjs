// The analysis JSON of every .cu/.cuh file the repository tracks, for checking that a change
// gives the same answers (issue 41): run it with the build of the base commit and with yours,
// then compare the two outputs byte for byte.
//
//   node scripts/measure/analysis-json.mjs [BUILD_ROOT] > analysis.json
//
// BUILD_ROOT: a checkout whose out/ holds the build to use (default: this one). Each file is
// analysed three ways: with the built-in macro table, with the macros its headers define (as
// `unroll-lens scan` reads them), and opened in the editor's document store (CudaDocuments.open).
import { execFileSync } from 'child_process';
import { createRequire } from 'module';
import * as fs from 'fs';
import * as path from 'path';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const build = path.resolve(process.argv[2] ?? repo);
const require = createRequire(path.join(build, 'package.json'));
const { CudaDocuments } = require(path.join(build, 'out/src/engine/parse/documents.js'));
const { MacroTables, optionsFromProject } = require(path.join(build, 'out/src/engine/parse/macros/index.js'));

const files = execFileSync('git', ['ls-files', '*.cu', '*.cuh'], { cwd: repo, encoding: 'utf8' }).split('\n').filter(Boolean).sort();
const docs = await CudaDocuments.create();
const tables = new MacroTables();
const optionsFor = optionsFromProject(repo, null, 'sm_90', []);
for (const rel of files) {
  const file = path.join(repo, rel);
  const text = fs.readFileSync(file, 'utf8');
  const builtin = docs.analyzeOnce(text, rel);
  const { table } = tables.tableFor(file, text, optionsFor(file));
  const headers = docs.analyzeOnce(text, rel, table);
  const opened = docs.open(rel, text, rel, table);
  docs.close(rel);
  process.stdout.write(JSON.stringify({ file: rel, builtin, headers, opened }) + '\n');
}
