#!/usr/bin/env node
// Rewrites the `$ npx unroll-lens [command] --help` blocks of docs/cli.md with the built CLI's real
// help (after `npm run build`); test/unit/cli.test.ts fails when they differ.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { COMMANDS, usage } = require(path.join(ROOT, 'out', 'src', 'cli', 'main.js'));
const file = path.join(ROOT, 'docs', 'cli.md');
let doc = fs.readFileSync(file, 'utf8');
const blocks = [['', usage()], ...COMMANDS.map(c => [`${c.name} `, c.help()])];
for (const [cmd, help] of blocks) {
  const head = `$ npx unroll-lens ${cmd}--help\n`;
  const start = doc.indexOf(head);
  if (start < 0) throw new Error(`docs/cli.md has no block for '${head.trim()}'`);
  const end = doc.indexOf('```', start);
  doc = doc.slice(0, start) + head + help + (help.endsWith('\n') ? '' : '\n') + doc.slice(end);
}
fs.writeFileSync(file, doc);
console.log(`docs/cli.md: ${blocks.length} help blocks written`);
