#!/usr/bin/env node
// `npm test` after the build: unit tests, the results panel's webview in headless Chromium, then
// the extension's suite inside a real VS Code (offline: code-server + headless Chromium), then
// the UI check on the packaged .vsix.
// Installs the test tools it needs through scripts/setup-cuda-tools.sh (cuobjdump/nvdisasm)
// and scripts/setup-test-tools.sh (Chromium, code-server), neither of which needs root. Where a
// tool cannot be had (a user without root and without Chromium, say), the stages that need it are
// skipped with one line per missing tool saying what to install (scripts/test-plan.mjs); under CI
// that is a failure instead. Prints one closing line "Tests: N passed, N failed[, N skipped]"
// and exits non-zero on any failure.
//
//   UNROLL_LENS_TEST_STAGES=unit node scripts/test-all.mjs   # only some stages (comma list)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { availableTools, countSuiteTests, failNote, lacking, planStages, readManifest, skipLines, toolsDirOf } from './test-plan.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// (the TAP files; test/unit/testPlan.test.ts runs this script with its own folder)
const ARTIFACTS = process.env.UNROLL_LENS_TEST_ARTIFACTS || path.join(ROOT, '.test-artifacts');
fs.mkdirSync(ARTIFACTS, { recursive: true });
// Every test's temporary folders go under one folder of this run, removed when it ends: the unit
// stage alone used to leave about 100 folders in /tmp a run (ul-reads-*, ul-cache-*, …).
// (Not for the VS Code stages: their harness keeps its socket paths short under the system's.)
const SYSTEM_TMPDIR = process.env.TMPDIR;
const RUN_TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-test-run-'));
// as /tmp is: tests that run a script as another user (setupTestTools: as nobody) reach their folders
fs.chmodSync(RUN_TMP, 0o1777);
process.env.TMPDIR = RUN_TMP;
const systemTmpEnv = () => {
  const env = { ...process.env, TMPDIR: SYSTEM_TMPDIR };
  if (SYSTEM_TMPDIR === undefined) delete env.TMPDIR;
  return env;
};
process.on('exit', () => fs.rmSync(RUN_TMP, { recursive: true, force: true }));
const stages = (process.env.UNROLL_LENS_TEST_STAGES ?? 'unit,slurm,webview,integration,ui')
  .split(',')
  .map(s => s.trim())
  .filter(Boolean);

// node:test flags of every stage. A file whose process does not end stalls the whole run:
// test-exit-guard.mjs ends a file's process 30 s after its tests are done, and --test-timeout fails
// a test (a file included) that runs 15 minutes, naming it (the slowest unit suite takes 146 s on
// a 2-core machine).
const NODE_TEST = ['--test', '--import', pathToFileURL(path.join(ROOT, 'scripts', 'test-exit-guard.mjs')).href, '--test-timeout=900000'];

/** After this long without output, the process tree is printed (what a stalled stage is waiting on). */
const SILENCE_MS = 5 * 60_000;

function printProcessTree(why) {
  const ps = spawnSync('ps', ['-eo', 'pid,ppid,stat,etime,args', '--forest'], { encoding: 'utf8' });
  console.log(`\n[test-all] ${why}; processes:\n${(ps.stdout || ps.error?.message || '').slice(0, 20_000)}`);
}

/** Runs a command, echoing its output, and resolves with exit code and captured text. */
function run(cmd, args, opts = {}) {
  return new Promise(resolve => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    let text = '';
    let silence;
    const quiet = () => {
      clearTimeout(silence);
      silence = setTimeout(() => {
        printProcessTree(`no output for ${SILENCE_MS / 60_000} minutes`);
        quiet();
      }, SILENCE_MS);
    };
    quiet();
    const onData = stream => chunk => {
      text += chunk;
      stream.write(chunk);
      quiet();
    };
    child.stdout.on('data', onData(process.stdout));
    child.stderr.on('data', onData(process.stderr));
    const done = r => {
      clearTimeout(silence);
      resolve(r);
    };
    child.on('close', code => done({ code: code ?? 1, text }));
    child.on('error', e => done({ code: 1, text: String(e) }));
  });
}

const results = [];
function record(stage, passed, failed, note = '', skipped = 0) {
  results.push({ stage, passed, failed, note, skipped });
}

/** Counts from a node:test TAP file; a run that wrote none (it crashed) counts as one failure. */
function tapCounts(tap, exitCode) {
  const summary = fs.existsSync(tap) ? fs.readFileSync(tap, 'utf8') : '';
  const count = key => Number(new RegExp(`^# ${key} (\\d+)`, 'm').exec(summary)?.[1] ?? 0);
  const fail = Number(/^# fail (\d+)/m.exec(summary)?.[1] ?? (exitCode ? 1 : 0));
  return { pass: count('pass'), fail: exitCode && !fail ? 1 : fail, skipped: count('skipped') };
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
/** Runs scripts/setup-test-tools.sh once (browserOnly: just Chromium); true when it succeeded. */
async function setupTools({ browserOnly = false } = {}) {
  toolsReady ??= (async () => {
    console.log(`\n=== test tools (scripts/setup-test-tools.sh${browserOnly ? ', Chromium only' : ''})`);
    const env = browserOnly ? { ...process.env, UNROLL_LENS_SETUP_ONLY: 'browser' } : process.env;
    const r = await run('bash', [path.join(ROOT, 'scripts', 'setup-test-tools.sh')], { env });
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
    ...NODE_TEST,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${tap}`,
    ...files,
  ]);
  const c = tapCounts(tap, r.code);
  record('unit', c.pass, c.fail, '', c.skipped);
}

if (stages.includes('slurm')) {
  // A real single-node Slurm cluster started by the test itself (test/slurm/): skipped, with every
  // reason that holds (Slurm missing, not root: slurmSkipReason in test/slurm/cluster.ts), except
  // under CI=true (.ci/run installs slurm-wlm).
  console.log('\n=== Slurm sweep against a real slurmctld + slurmd (test/slurm)');
  const tap = path.join(ARTIFACTS, 'slurm.tap');
  fs.rmSync(tap, { force: true });
  const r = await run(process.execPath, [
    ...NODE_TEST,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${tap}`,
    ...findFiles(path.join(ROOT, 'out', 'test', 'slurm'), '.test.js'),
  ]);
  const c = tapCounts(tap, r.code);
  // The test's own reason (`Slurm is not installed …`, `not root …`, or both), as its TAP line records it.
  const why = c.skipped ? (/# SKIP (.+)$/m.exec(fs.existsSync(tap) ? fs.readFileSync(tap, 'utf8') : '')?.[1] ?? 'reason not recorded') : '';
  record('slurm', c.pass, c.fail, why && `skipped: ${why}`, c.skipped);
}

// The browser and VS Code stages: install what they need (without root), then run each stage
// whose tools are there, skip (or under CI fail) the others.
const toolStages = ['webview', 'integration', 'ui'].filter(s => stages.includes(s));
const toolsDir = toolsDirOf(ROOT, process.env);
const ci = !!process.env.CI;
let plan = [];
let available = null;
if (toolStages.length) {
  const needCodeServer = toolStages.some(s => s !== 'webview');
  const have = () => availableTools(process.env, readManifest(toolsDir), fs.existsSync);
  // The webview stage alone needs only Chromium: the setup script runs when it is missing.
  const setupOk = needCodeServer || !have().chromium.path ? await setupTools({ browserOnly: !needCodeServer }) : true;
  available = have();
  plan = planStages(toolStages, available, { ci });
  if (!setupOk) {
    // A setup error (not a tool that cannot be had without root) fails every stage it left
    // without a tool; the VS Code stages fail as before, since the error may have hit code-server.
    for (const p of plan) if (p.missing.length || p.stage !== 'webview') Object.assign(p, { action: 'fail', setupFailed: true });
  }
}
const planOf = stage => plan.find(p => p.stage === stage);
const skippedCounts = {};

function failForTools(p) {
  record(p.stage, 0, 1, p.setupFailed ? 'test tools could not be installed (see the setup output above)' : failNote(p, available));
}

if (planOf('webview')) {
  const p = planOf('webview');
  if (p.action === 'fail') failForTools(p);
  else {
    const noBrowser = p.missing.includes('chromium');
    console.log(`\n=== webview tests (results panel in headless Chromium${noBrowser ? '; no Chromium: its browser tests skip' : ''})`);
    const tap = path.join(ARTIFACTS, 'webview.tap');
    fs.rmSync(tap, { force: true }); // a crashed run must not report the last run's counts
    const r = await run(process.execPath, [
      ...NODE_TEST,
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      path.join(ROOT, 'test', 'webview', 'panel.test.mjs'),
      path.join(ROOT, 'test', 'webview', 'layout.test.mjs'),
    ]);
    const c = tapCounts(tap, r.code);
    if (noBrowser) skippedCounts.webview = c.skipped;
    record(
      'webview',
      c.pass,
      c.fail,
      noBrowser ? `browser tests skipped: ${lacking(p)}` : 'screenshots in .test-artifacts/webview/',
      c.skipped,
    );
  }
}

if (planOf('integration')) {
  const p = planOf('integration');
  if (p.action === 'fail') failForTools(p);
  else if (p.action === 'skip') {
    const suite = path.join(ROOT, 'test', 'integration', 'suite');
    const n = findFiles(suite, '.test.ts').reduce((sum, f) => sum + countSuiteTests(fs.readFileSync(f, 'utf8')), 0);
    skippedCounts.integration = n;
    console.log(`\n=== integration tests inside VS Code: skipped (${lacking(p)}; see the summary)`);
    record('integration', 0, 0, `skipped: ${lacking(p)}`, n);
  } else {
    console.log('\n=== integration tests inside VS Code (code-server + headless Chromium)');
    const r = await run(process.execPath, [path.join(ROOT, 'test', 'integration', 'launch-offline.mjs')], { env: systemTmpEnv() });
    const passing = Number(/(\d+) passing/.exec(r.text)?.[1] ?? 0);
    const failing = Number(/(\d+) failing/.exec(r.text)?.[1] ?? 0);
    record('integration', passing, r.code !== 0 && failing === 0 ? 1 : failing, r.code !== 0 ? `exit ${r.code}` : '');
  }
}

if (planOf('ui')) {
  const p = planOf('ui');
  if (p.action === 'fail') failForTools(p);
  else if (p.action === 'skip') {
    skippedCounts.ui = 1; // one check: the packaged extension in VS Code, with its screenshots
    console.log(`\n=== UI check: skipped (${lacking(p)}; see the summary)`);
    record('ui', 0, 0, `skipped: ${lacking(p)}`, 1);
  } else {
    console.log('\n=== UI check: packaged .vsix in code-server, CodeLens, SASS listing and SASS diff screenshots');
    const pack = await run(process.execPath, [path.join(ROOT, 'scripts', 'package-vsix.mjs')]);
    const r =
      pack.code === 0 ? await run(process.execPath, [path.join(ROOT, 'test', 'ui', 'screenshot.mjs')], { env: systemTmpEnv() }) : pack;
    record('ui', r.code === 0 ? 1 : 0, r.code === 0 ? 0 : 1, r.code === 0 ? 'screenshot in .test-artifacts/' : `exit ${r.code}`);
  }
}

const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
const skipped = results.reduce((n, r) => n + r.skipped, 0);
console.log('\n=== summary');
for (const r of results) {
  const counts = `${r.passed} passed, ${r.failed} failed${r.skipped ? `, ${r.skipped} skipped` : ''}`;
  console.log(`  ${r.stage.padEnd(12)} ${counts}${r.note ? `  (${r.note})` : ''}`);
}
console.log(`  total time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
// One line per tool that kept stages from running: what is missing, why, and what to install.
if (available) for (const line of skipLines(plan, available, skippedCounts)) console.log(line);
console.log(`Tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed || !results.length ? 1 : 0);
