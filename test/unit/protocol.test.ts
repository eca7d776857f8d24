// The contract in src/protocol.ts: method names the client and server agree on, command ids that
// match package.json, and that a webview can bundle it (no Node built-ins).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { build } from 'esbuild';
import { REPO_ROOT } from './helpers';
import {
  AnalysisStatusNotification,
  BenchLoopRequest,
  Commands,
  CompareKernelsRequest,
  FileAnalysisRequest,
  LoopVariantsRequest,
  ToolchainStatusNotification,
} from '../../src/protocol';

test('custom LSP methods keep their names', () => {
  assert.deepEqual(
    [
      FileAnalysisRequest,
      LoopVariantsRequest,
      BenchLoopRequest,
      CompareKernelsRequest,
      AnalysisStatusNotification,
      ToolchainStatusNotification,
    ].map(m => m.method),
    [
      'unrollLens/fileAnalysis',
      'unrollLens/loopVariants',
      'unrollLens/benchLoop',
      'unrollLens/compareKernels',
      'unrollLens/analysisStatus',
      'unrollLens/toolchainStatus',
    ],
  );
});

test('Commands are exactly the commands package.json contributes', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
  const contributed: string[] = pkg.contributes.commands.map((c: { command: string }) => c.command);
  assert.deepEqual([...contributed].sort(), Object.values(Commands).sort());
});

test('a webview can bundle the protocol: no Node built-ins', async () => {
  const bundle = (contents: string) =>
    build({
      stdin: { contents, resolveDir: REPO_ROOT, loader: 'ts' },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
  const r = await bundle("export * from './src/protocol';");
  assert.equal(r.errors.length, 0);
  // The check has teeth: engine code (fs, crypto, child processes) does not bundle for the browser.
  await assert.rejects(bundle("export * from './src/engine/variants/inspect';"), /Could not resolve "(node:)?\w+"/);
});
