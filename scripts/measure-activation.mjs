#!/usr/bin/env node
// Measures how long activating an installed .vsix takes: the time `ext.activate()` takes inside
// a real VS Code extension host (code-server + headless Chromium, offline, as in
// test/integration/launch-offline.mjs) until the extension's activate() has resolved, which is
// after its language client has started the server and received the initialize answer.
// Each run is a fresh code-server with a fresh extensions dir: the .vsix is installed, an empty
// folder is opened (nothing activates the extension on its own), the extension host settles for
// 3 s, then a probe (passed as extensionTestsPath) calls ext.activate() and logs the time.
// Runs of the given packages alternate, so both see the same machine load.
//
//   npm run build && npm run package
//   node scripts/measure-activation.mjs --runs 7 before.vsix .test-artifacts/unroll-lens.vsix
//
// Prints per run and the median per package; results also in .test-artifacts/activation.json.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { fileURLToPath } from 'node:url';
import {
  HarnessError,
  artifactsRoot,
  codeServerCli,
  freePort,
  launchChromium,
  loadTools,
  makeLogger,
  makeRunDirs,
  remoteUri,
  runCleanups,
  startCodeServer,
} from '../test/integration/lib/harness.mjs';

const log = makeLogger('measure-activation');
const args = process.argv.slice(2);
const option = name => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const RUNS = Number(option('--runs') ?? 7);
const ONE = option('--one'); // internal: one measurement in this process (the harness cleans up once per process)
const vsixes = (ONE ? [ONE] : args).map(a => path.resolve(a));
if (!vsixes.length || !(RUNS > 0)) {
  console.error('usage: node scripts/measure-activation.mjs [--runs N] A.vsix [B.vsix …]');
  process.exit(2);
}
for (const v of vsixes) if (!fs.existsSync(v)) throw new Error(`${v} not found`);
const EXTENSION_ID = 'unroll-lens.unroll-lens';

async function measureOnce(vsix) {
  // The probe runs as the test runner of an empty development extension (VS Code runs
  // extensionTestsPath only together with an extensionDevelopmentPath).
  const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-probe-'));
  const emptyFolder = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-empty-'));
  fs.writeFileSync(
    path.join(probeDir, 'package.json'),
    JSON.stringify({
      name: 'activation-probe',
      publisher: 'unroll-lens',
      version: '0.0.0',
      engines: { vscode: '*' },
    }),
  );
  fs.writeFileSync(
    path.join(probeDir, 'probe.js'),
    `
const vscode = require('vscode');
exports.run = async () => {
  await new Promise(r => setTimeout(r, 3000)); // let the workbench finish starting
  const ext = vscode.extensions.getExtension(${JSON.stringify(EXTENSION_ID)});
  if (!ext) throw new Error('${EXTENSION_ID} is not installed');
  if (ext.isActive) throw new Error('${EXTENSION_ID} was already active: the measurement needs a cold start');
  const t0 = performance.now();
  await ext.activate();
  console.log('ACTIVATE_MS=' + (performance.now() - t0).toFixed(1));
};
`,
  );
  const tools = loadTools();
  const dirs = makeRunDirs('activation');
  codeServerCli(tools, dirs, ['--install-extension', vsix]);
  const port = await freePort();
  const server = await startCodeServer({
    tools,
    dirs,
    port,
    folder: emptyFolder,
    extraArgs: tools.smokeTestDriver ? ['--enable-smoke-test-driver'] : [],
    logFile: path.join(dirs.artifacts, 'code-server.log'),
  });
  const { page } = await launchChromium(tools, dirs);
  let finish;
  const done = new Promise(r => (finish = r));
  let ms = null;
  await page.exposeFunction('codeAutomationLog', (type, a) => {
    const line = util.format(...(Array.isArray(a) ? a : [a]));
    const m = /ACTIVATE_MS=([\d.]+)/.exec(line);
    if (m) ms = Number(m[1]);
    if (type === 'error' && /Error/.test(line)) log(`  ${line.slice(0, 300)}`);
  });
  await page.exposeFunction('codeAutomationExit', code => finish(code));
  const payload = JSON.stringify([
    ['extensionDevelopmentPath', remoteUri(port, probeDir)],
    ['extensionTestsPath', remoteUri(port, path.join(probeDir, 'probe'))],
    ['skipWelcome', 'true'],
    ['skipReleaseNotes', 'true'],
  ]);
  await page.goto(`${server.url}/?folder=${encodeURIComponent(emptyFolder)}&payload=${encodeURIComponent(payload)}`);
  const code = await Promise.race([done, new Promise(r => setTimeout(() => r('timeout'), 120_000))]);
  fs.rmSync(probeDir, { recursive: true, force: true });
  fs.rmSync(emptyFolder, { recursive: true, force: true });
  if (code !== 0 || ms === null) throw new HarnessError(`probe ended with ${code}, no time reported (logs: ${dirs.artifacts})`);
  return ms;
}

if (ONE) {
  let code = 1;
  try {
    console.log(`ACTIVATE_MS=${await measureOnce(vsixes[0])}`);
    code = 0;
  } catch (e) {
    console.error(`[measure-activation] ERROR: ${e?.message ?? e}`);
  } finally {
    await runCleanups();
  }
  process.exit(code);
}

const median = xs => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const results = Object.fromEntries(vsixes.map(v => [v, []]));
for (let i = 0; i < RUNS; i++) {
  for (const v of vsixes) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--one', v], { encoding: 'utf8', timeout: 300_000 });
    const ms = Number(/^ACTIVATE_MS=([\d.]+)/m.exec(r.stdout ?? '')?.[1]);
    if (!(ms > 0)) throw new Error(`run ${i + 1} of ${v} failed:\n${r.stdout}${r.stderr}`);
    results[v].push(ms);
    log(`run ${i + 1}/${RUNS} ${path.basename(v)}: ext.activate() ${ms.toFixed(0)} ms`);
  }
}
const summary = vsixes.map(v => ({
  vsix: path.relative(process.cwd(), v),
  runs: results[v],
  medianMs: median(results[v]),
  minMs: Math.min(...results[v]),
  maxMs: Math.max(...results[v]),
}));
for (const s of summary)
  log(`${s.vsix}: median ${s.medianMs.toFixed(0)} ms (min ${s.minMs.toFixed(0)}, max ${s.maxMs.toFixed(0)}, ${RUNS} runs)`);
fs.mkdirSync(artifactsRoot, { recursive: true });
fs.writeFileSync(
  path.join(artifactsRoot, 'activation.json'),
  JSON.stringify(
    {
      date: new Date().toISOString(),
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      loadavg: os.loadavg(),
      summary,
    },
    null,
    2,
  ),
);
