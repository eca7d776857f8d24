// extensionTestsPath entry point: VS Code loads this module INSIDE the extension host (the same
// contract as @vscode/test-electron and @vscode/test-web) and awaits run(). Used by
// test/integration/launch-offline.mjs (code-server + headless chromium) and
// test/integration/launch-electron.mjs (downloaded VS Code).
import * as fs from 'fs';
import * as path from 'path';
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: 60_000, reporter: 'spec' });
  const grep = process.env.UNROLL_LENS_IT_GREP;
  if (grep) mocha.grep(grep);
  const files = fs
    .readdirSync(__dirname)
    .filter(f => f.endsWith('.test.js'))
    .sort();
  if (files.length === 0) return Promise.reject(new Error(`no *.test.js files in ${__dirname}`));
  for (const f of files) mocha.addFile(path.join(__dirname, f));
  return new Promise((resolve, reject) => {
    try {
      mocha.run(failures => {
        if (failures > 0) reject(new Error(`${failures} integration test(s) failed`));
        else resolve();
      });
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
