#!/usr/bin/env node
// `npm test` after the build: unit tests, the results panel's webview in headless Chromium, then
// the extension's suite inside a real VS Code (offline: code-server + headless Chromium), then
// the UI check on the packaged .vsix.
// Installs the test tools it needs through scripts/setup-cuda-tools.sh (cuobjdump/nvdisasm)
// and scripts/setup-test-tools.sh (Chromium, code-server). Prints one closing line
// "Tests: N passed, N failed" and exits non-zero on any failure.
//
//   UNROLL_LENS_TEST_STAGES=unit node scripts/test-all.mjs   # only some stages (comma list)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ARTIFACTS = path.join(ROOT, '.test-artifacts');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const stages = (process.env.UNROLL_LENS_TEST_STAGES ?? 'unit,slurm,webview,integration,ui')
  .split(',')
  .map(s => s.trim())
  .filter(Boolean);

/** Runs a command, echoing its output, and resolves with exit code and captured text. */
function run(cmd, args, opts = {}) {
  return new Promise(resolve => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let text = '';
    const onData = stream => chunk => {
      text += chunk;
      stream.write(chunk);
    };
    child.stdout.on('data', onData(process.stdout));
    child.stderr.on('data', onData(process.stderr));
    child.on('close', code => resolve({ code: code ?? 1, text }));
    child.on('error', e => resolve({ code: 1, text: String(e) }));
  });
}

const results = [];
function record(stage, passed, failed, note = '') {
  results.push({ stage, passed, failed, note });
}

function findFiles(dir, suffix) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter(f => f.endsWith(suffix))
    .map(f => path.join(dir, f))
    .sort();
}

const t0 = Date.now();

let toolsReady = null;
async function setupTools() {
  toolsReady ??= (async () => {
    console.log('\n=== test tools (scripts/setup-test-tools.sh)');
    const r = await run('bash', [path.join(ROOT, 'scripts', 'setup-test-tools.sh')]);
    return r.code === 0;
  })();
  return toolsReady;
}

if (stages.includes('unit')) {
  // The SASS grammar test tokenizes with code-server's vscode-textmate: install the test tools
  // first when a later stage needs them anyway, or in CI (where a skipped test would hide a bug).
  if (process.env.CI || stages.includes('integration') || stages.includes('ui')) await setupTools();
  // The unit tests compile real variants with nvcc and read them back with cuobjdump/nvdisasm;
  // the setup script provides the two readers where the toolkit lacks them (CI).
  console.log('\n=== CUDA tools (scripts/setup-cuda-tools.sh)');
  const tools = await run('bash', [path.join(ROOT, 'scripts', 'setup-cuda-tools.sh')]);
  if (tools.code !== 0) record('cuda-tools', 0, 1, 'cuobjdump/nvdisasm could not be installed');
  console.log('\n=== unit tests (node:test)');
  const files = findFiles(path.join(ROOT, 'out', 'test', 'unit'), '.test.js');
  const tap = path.join(ARTIFACTS, 'unit.tap');
  const r = await run(process.execPath, [
    '--test',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${tap}`,
    ...files,
  ]);
  const summary = fs.existsSync(tap) ? fs.readFileSync(tap, 'utf8') : '';
  const pass = Number(/^# pass (\d+)/m.exec(summary)?.[1] ?? 0);
  const fail = Number(/^# fail (\d+)/m.exec(summary)?.[1] ?? (r.code ? 1 : 0));
  record('unit', pass, r.code && !fail ? 1 : fail);
}

if (stages.includes('slurm')) {
  // A real single-node Slurm cluster started by the test itself (test/slurm/): skipped, with its
  // reason, when not root or Slurm is missing, except under CI=true (.ci/run installs slurm-wlm).
  console.log('\n=== Slurm sweep against a real slurmctld + slurmd (test/slurm)');
  const tap = path.join(ARTIFACTS, 'slurm.tap');
  fs.rmSync(tap, { force: true });
  const r = await run(process.execPath, [
    '--test',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${tap}`,
    ...findFiles(path.join(ROOT, 'out', 'test', 'slurm'), '.test.js'),
  ]);
  const summary = fs.existsSync(tap) ? fs.readFileSync(tap, 'utf8') : '';
  const pass = Number(/^# pass (\d+)/m.exec(summary)?.[1] ?? 0);
  const fail = Number(/^# fail (\d+)/m.exec(summary)?.[1] ?? (r.code ? 1 : 0));
  const skipped = Number(/^# skipped (\d+)/m.exec(summary)?.[1] ?? 0);
  record('slurm', pass, r.code && !fail ? 1 : fail, skipped ? 'skipped: not root or Slurm missing' : '');
}

/** Chromium as the test tools manifest names it, else Debian's. */
function haveChromium() {
  const manifest = path.join(process.env.UNROLL_LENS_TOOLS || path.join(ROOT, '.tools'), 'test-tools.json');
  try {
    const p = JSON.parse(fs.readFileSync(manifest, 'utf8')).chromium;
    if (p && fs.existsSync(p)) return true;
  } catch {
    /* no manifest yet */
  }
  return fs.existsSync('/usr/bin/chromium');
}

if (stages.includes('webview')) {
  // Needs only Chromium (not code-server): the setup script runs when it is missing.
  if (!haveChromium() && !(await setupTools())) record('webview', 0, 1, 'test tools could not be installed');
  else {
    console.log('\n=== webview tests (results panel in headless Chromium)');
    const tap = path.join(ARTIFACTS, 'webview.tap');
    fs.rmSync(tap, { force: true }); // a crashed run must not report the last run's counts
    const r = await run(process.execPath, [
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      path.join(ROOT, 'test', 'webview', 'panel.test.mjs'),
    ]);
    const summary = fs.existsSync(tap) ? fs.readFileSync(tap, 'utf8') : '';
    const pass = Number(/^# pass (\d+)/m.exec(summary)?.[1] ?? 0);
    const fail = Number(/^# fail (\d+)/m.exec(summary)?.[1] ?? (r.code ? 1 : 0));
    record('webview', pass, r.code && !fail ? 1 : fail, 'screenshots in .test-artifacts/webview/');
  }
}

if (stages.includes('integration')) {
  if (!(await setupTools())) record('integration', 0, 1, 'test tools could not be installed');
  else {
    console.log('\n=== integration tests inside VS Code (code-server + headless Chromium)');
    const r = await run(process.execPath, [path.join(ROOT, 'test', 'integration', 'launch-offline.mjs')]);
    const passing = Number(/(\d+) passing/.exec(r.text)?.[1] ?? 0);
    const failing = Number(/(\d+) failing/.exec(r.text)?.[1] ?? 0);
    record('integration', passing, r.code !== 0 && failing === 0 ? 1 : failing, r.code !== 0 ? `exit ${r.code}` : '');
  }
}

if (stages.includes('ui')) {
  if (!(await setupTools())) record('ui', 0, 1, 'test tools could not be installed');
  else {
    console.log('\n=== UI check: packaged .vsix in code-server, CodeLens, SASS listing and SASS diff screenshots');
    const pack = await run(process.execPath, [path.join(ROOT, 'scripts', 'package-vsix.mjs')]);
    const r = pack.code === 0 ? await run(process.execPath, [path.join(ROOT, 'test', 'ui', 'screenshot.mjs')]) : pack;
    record('ui', r.code === 0 ? 1 : 0, r.code === 0 ? 0 : 1, r.code === 0 ? 'screenshot in .test-artifacts/' : `exit ${r.code}`);
  }
}

const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
console.log('\n=== summary');
for (const r of results) console.log(`  ${r.stage.padEnd(12)} ${r.passed} passed, ${r.failed} failed${r.note ? `  (${r.note})` : ''}`);
console.log(`  total time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
console.log(`Tests: ${passed} passed, ${failed} failed`);
process.exit(failed || !results.length ? 1 : 0);
