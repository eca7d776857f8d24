// Bundles the CLI into one file with its wasm grammars, to carry to a GPU machine that has no
// Node packages (see scripts/device/run-cli-bench.sh and docs/measurements.md).
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const out = process.argv[2] ?? '.device/cli';
fs.mkdirSync(out, { recursive: true });
await build({
  entryPoints: ['out/src/cli/main.js'],
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  outfile: path.join(out, 'main.js'),
  logLevel: 'warning',
});
fs.copyFileSync(require.resolve('web-tree-sitter/tree-sitter.wasm'), path.join(out, 'tree-sitter.wasm'));
fs.copyFileSync(require.resolve('tree-sitter-cuda/tree-sitter-cuda.wasm'), path.join(out, 'tree-sitter-cuda.wasm'));
// The results panel's bundle for `sweep --report` (found beside the nearest package.json).
fs.mkdirSync(path.join(out, 'dist', 'webview'), { recursive: true });
for (const f of ['panel.js', 'panel.css']) fs.copyFileSync(path.join('dist', 'webview', f), path.join(out, 'dist', 'webview', f));
// The CUPTI kernel timer's source (--timer cupti builds it with the machine's nvcc).
fs.mkdirSync(path.join(out, 'native'), { recursive: true });
fs.copyFileSync(path.join('native', 'cupti_timer.c'), path.join(out, 'native', 'cupti_timer.c'));
const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
fs.writeFileSync(path.join(out, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version, private: true }) + '\n');
fs.writeFileSync(
  path.join(out, 'unroll-lens.js'),
  "#!/usr/bin/env node\nrequire('./main.js').main(process.argv.slice(2)).then(c => { process.exitCode = c; });\n",
);
console.log(`bundled CLI into ${out}`);
