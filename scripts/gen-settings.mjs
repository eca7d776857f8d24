#!/usr/bin/env node
// Writes what package.json (contributes.configuration, capabilities.untrustedWorkspaces) and
// docs/settings.md say about settings, from the declaration in src/settings.ts (the README links
// to docs/settings.md). Needs the compiled out/ (npm run gen:settings compiles first).
//
//   npm run gen:settings                   # write the files
//   node scripts/gen-settings.mjs --check  # exit 1 when a file is out of date (what the unit test checks)
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifestJs = path.join(root, 'out', 'src', 'settingsManifest.js');
if (!fs.existsSync(manifestJs)) {
  console.error('gen-settings: out/ is missing: run `npm run build` first (or `npm run gen:settings`)');
  process.exit(2);
}
const m = createRequire(import.meta.url)(manifestJs);
const check = process.argv.includes('--check');

const files = [
  ['package.json', text => m.generatePackageJson(text)],
  ['docs/settings.md', () => m.settingsMarkdown()],
];
let stale = 0;
for (const [rel, generate] of files) {
  const file = path.join(root, rel);
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const wanted = generate(current);
  if (wanted === current) continue;
  stale++;
  if (check) console.error(`gen-settings: ${rel} is out of date with src/settings.ts`);
  else {
    fs.writeFileSync(file, wanted);
    console.log(`gen-settings: wrote ${rel}`);
  }
}
if (!stale) console.log('gen-settings: package.json and docs/settings.md are up to date');
process.exit(check && stale ? 1 : 0);
