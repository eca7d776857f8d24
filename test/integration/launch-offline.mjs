#!/usr/bin/env node
// Runs the mocha suite in out/test/integration/suite/ INSIDE a real VS Code extension host,
// offline: code-server (from .tools, see scripts/setup-test-tools.sh) serves the workbench,
// headless Debian chromium (playwright-core) opens it with
//   ?folder=<repo>/cuda-samples&payload=[[extensionDevelopmentPath, <repo>],
//                                         [extensionTestsPath, <repo>/out/test/integration/suite/index]]
// the same mechanism @vscode/test-web uses. The workbench reports the suite's log through
// window.codeAutomationLog and its exit code through window.codeAutomationExit, both exposed
// to the page before it loads. Exits with mocha's exit code (1 on harness errors and timeouts).
// The extension under test is what package.json's main names: the esbuild bundle in dist/ (which
// starts dist/server.js), the same files the .vsix ships; `npm run build` writes both out/ and dist/.
//
//   npm run build && npm run test:integration
//   UNROLL_LENS_IT_TIMEOUT_S=600 UNROLL_LENS_KEEP_TMP=1 UNROLL_LENS_IT_VERBOSE=1 \
//     UNROLL_LENS_IT_GREP='CodeLens' node test/integration/launch-offline.mjs
//
// Artifacts: .test-artifacts/integration/ (automation.log = everything the workbench and the
// extension host logged, code-server.log, browser-console.log, vscode-logs/, failure.png when
// something went wrong).
import fs from 'node:fs';
import path from 'node:path';
import util from 'node:util';
import {
  HarnessError,
  freePort,
  interrupted,
  launchChromium,
  loadTools,
  makeLogger,
  makeRunDirs,
  remoteUri,
  repoRoot,
  onCleanup,
  requireBuilt,
  runCleanups,
  startCodeServer,
} from './lib/harness.mjs';

const log = makeLogger('test:integration');
const TIMEOUT_S = Number(process.env.UNROLL_LENS_IT_TIMEOUT_S ?? 300);
const VERBOSE = !!process.env.UNROLL_LENS_IT_VERBOSE;
const WORKBENCH_NOISE = [
  /^Resolv(ing|ed) connection token/,
  /^Creating a socket \(renderer-/,
  /^\[Service Worker\]/,
  /additional builtin extensions/,
  /^ChatSessionStore:/,
  /^Creation of workbench contribution/,
];
const workspace = path.join(repoRoot, 'cuda-samples');
const testsPath = path.join(repoRoot, 'out', 'test', 'integration', 'suite', 'index');

/** Every source file under `dir` (recursively) with its bytes. */
function snapshotSources(dir) {
  const out = new Map();
  const walk = d => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory() && !e.name.startsWith('.')) walk(p);
      else if (e.isFile() && /\.(cu|cuh|h|hpp|cpp)$/.test(e.name)) out.set(p, fs.readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

function restoreSources(before) {
  for (const [p, bytes] of before) {
    const now = fs.existsSync(p) ? fs.readFileSync(p) : null;
    if (now && now.equals(bytes)) continue;
    log(`warning: the run left ${path.relative(repoRoot, p)} changed on disk; restored it`);
    fs.writeFileSync(p, bytes);
  }
}

async function main() {
  requireBuilt(['out/test/integration/suite/index.js']);
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  if (pkg.main) requireBuilt([pkg.main, 'dist/server.js', 'dist/tree-sitter.wasm', 'dist/tree-sitter-cuda.wasm']);
  if (!fs.existsSync(workspace)) throw new HarnessError(`workspace folder ${workspace} does not exist`);
  const tools = loadTools();
  if (!tools.smokeTestDriver) log('warning: code-server was not patched for --enable-smoke-test-driver; ?payload= tests may be ignored');
  const dirs = makeRunDirs('integration');
  // extension.test.ts writes (and deletes) it-diagnostics-*.cu in the workspace; never leave one
  // behind, even when a run is interrupted
  const removeStrays = () => {
    for (const f of fs.readdirSync(workspace)) {
      if (/^it-diagnostics-.*\.cu$/.test(f)) fs.rmSync(path.join(workspace, f), { force: true });
    }
  };
  removeStrays();
  onCleanup(removeStrays);
  // The workspace is the repository's own samples: a test that saves an edit (or an editor that
  // writes one back) must not leave the checkout changed for the stages after it. Say so loudly
  // and put the bytes back.
  const sources = snapshotSources(workspace);
  onCleanup(() => restoreSources(sources));
  const port = await freePort();
  const server = await startCodeServer({
    tools,
    dirs,
    port,
    folder: workspace,
    log,
    extraArgs: tools.smokeTestDriver ? ['--enable-smoke-test-driver'] : [],
    logFile: path.join(dirs.artifacts, 'code-server.log'),
  });
  const { page } = await launchChromium(tools, dirs);
  log('chromium started');

  let finish;
  const finished = new Promise(r => (finish = r));
  // Everything the workbench and the extension host log arrives here; all of it goes to
  // automation.log, the workbench's own start-up chatter is left out of the console.
  const automationLog = fs.createWriteStream(path.join(dirs.artifacts, 'automation.log'));
  onCleanup(() => new Promise(r => automationLog.end(r)));
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    const line = util.format(...(Array.isArray(args) ? args : [args]));
    automationLog.write(`[${type}] ${line}\n`);
    if (!VERBOSE && WORKBENCH_NOISE.some(re => re.test(line))) return;
    (type === 'error' ? process.stderr : process.stdout).write(`  ${line}\n`);
  });
  await page.exposeFunction('codeAutomationExit', code => finish({ code }));
  page.on('crash', () => finish({ error: 'the browser page crashed' }));
  page.on('close', () => finish({ error: 'the browser page closed' }));
  const serverWatch = setInterval(() => {
    if (server.exited) finish({ error: `code-server exited (${JSON.stringify(server.exited)})` });
  }, 500);

  const payload = JSON.stringify([
    ['extensionDevelopmentPath', remoteUri(port, repoRoot)],
    ['extensionTestsPath', remoteUri(port, testsPath)],
    ['skipWelcome', 'true'],
    ['skipReleaseNotes', 'true'],
  ]);
  const url = `${server.url}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(payload)}`;
  log(`opening workbench on ${workspace} (extension ${repoRoot})`);
  await page.goto(url);
  page.waitForSelector('.monaco-workbench', { timeout: 120_000 }).then(
    () => log('workbench rendered; extension host is running the suite'),
    () => {},
  );

  let timer;
  const result = await Promise.race([
    finished,
    new Promise(
      r =>
        (timer = setTimeout(
          () =>
            r({
              error: `timed out after ${TIMEOUT_S}s waiting for the suite to report an exit code (set UNROLL_LENS_IT_TIMEOUT_S to change)`,
            }),
          TIMEOUT_S * 1000,
        )),
    ),
  ]);
  clearTimeout(timer);
  clearInterval(serverWatch);
  if (result.error) {
    await page.screenshot({ path: path.join(dirs.artifacts, 'failure.png') }).catch(() => {});
    throw new HarnessError(
      `${result.error}; see ${path.relative(repoRoot, dirs.artifacts)}/ (code-server.log, browser-console.log, vscode-logs/, failure.png)`,
    );
  }
  const code = Number(result.code) || 0;
  log(`extension tests finished with exit code ${code}`);
  if (code !== 0) await page.screenshot({ path: path.join(dirs.artifacts, 'failure.png') }).catch(() => {});
  return code;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (e) {
  if (interrupted()) await new Promise(() => {}); // the signal handler finishes and exits
  console.error(`[test:integration] ERROR: ${e instanceof HarnessError ? e.message : (e?.stack ?? e)}`);
  exitCode = 1;
} finally {
  await runCleanups();
}
log(exitCode === 0 ? 'PASS' : `FAIL (exit code ${exitCode})`);
process.exit(exitCode);
