#!/usr/bin/env node
// The standard @vscode/test-electron launcher: downloads a VS Code build (into .vscode-test/),
// starts it with the extension under development and runs the same mocha suite as
// launch-offline.mjs (out/test/integration/suite/index) on <repo>/cuda-samples.
// For machines that can download VS Code; where only the npm registry is reachable use
// `npm run test:integration` (code-server + headless chromium) instead. Not run in CI.
//
//   npm run build && npm run test:integration:electron
//   VSCODE_TEST_VERSION=1.100.3 npm run test:integration:electron
// On a headless Linux box run it under a virtual display (xvfb-run -a ...).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const extensionTestsPath = path.join(repoRoot, 'out', 'test', 'integration', 'suite', 'index');
const workspace = path.join(repoRoot, 'cuda-samples');

if (!fs.existsSync(`${extensionTestsPath}.js`)) {
  console.error(`[test:integration:electron] ${extensionTestsPath}.js not found: run 'npm run build' first`);
  process.exit(1);
}

const { runTests } = await import('@vscode/test-electron');
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-electron-'));
try {
  const code = await runTests({
    version: process.env.VSCODE_TEST_VERSION ?? 'stable',
    extensionDevelopmentPath: repoRoot,
    extensionTestsPath,
    launchArgs: [
      workspace,
      '--disable-extensions', // only the extension under development
      '--disable-workspace-trust',
      '--skip-welcome',
      '--skip-release-notes',
      '--disable-gpu',
      `--user-data-dir=${userDataDir}`,
    ],
  });
  process.exitCode = code;
} catch (err) {
  console.error(`[test:integration:electron] FAILED: ${err instanceof Error ? err.message : err}`);
  process.exitCode = 1;
} finally {
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
