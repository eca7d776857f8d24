// Shared helpers for the offline VS Code test launchers (test/integration/launch-offline.mjs,
// test/ui/screenshot.mjs): code-server from <repo>/.tools (see scripts/setup-test-tools.sh),
// started in its own process group on a loopback port with private HOME / user-data /
// extensions dirs, and the Chromium the manifest names (Debian's, UNROLL_LENS_CHROMIUM's or the one
// unpacked without root) driven headless by playwright-core.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const toolsDir = process.env.UNROLL_LENS_TOOLS || path.join(repoRoot, '.tools');
export const artifactsRoot = path.join(repoRoot, '.test-artifacts');

const t0 = Date.now();
export const elapsed = () => ((Date.now() - t0) / 1000).toFixed(1);
export function makeLogger(tag) {
  return (...a) => console.log(`[${tag} +${elapsed()}s]`, ...a);
}

export class HarnessError extends Error {}

// ------------------------------------------------------------------ cleanup of child process groups
const groups = new Set(); // pids that lead a process group (spawned with detached: true = setsid)
const cleanups = []; // async cleanups (browser close, temp dirs), run once
function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}
process.on('exit', () => {
  // last resort: synchronous, cannot wait
  for (const pid of groups) killGroup(pid, 'SIGKILL');
});
let exiting = false;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, async () => {
    if (exiting) return;
    exiting = true;
    console.error(`\n[harness] ${sig}: stopping child processes`);
    await runCleanups();
    process.exit(sig === 'SIGINT' ? 130 : 143);
  });
}
export function onCleanup(fn) {
  cleanups.push(fn);
}
export const interrupted = () => exiting;
let cleanupRun = null;
/** Runs the registered cleanups once, newest first; every caller awaits the same run. */
export function runCleanups() {
  cleanupRun ??= (async () => {
    while (cleanups.length) {
      const fn = cleanups.pop();
      try {
        await fn();
      } catch (e) {
        console.error(`[harness] cleanup step failed: ${e?.message ?? e}`);
      }
    }
  })();
  return cleanupRun;
}

// ------------------------------------------------------------------ tools
export function loadTools() {
  const manifest = path.join(toolsDir, 'test-tools.json');
  if (!fs.existsSync(manifest)) {
    throw new HarnessError(`${manifest} not found: run 'npm run setup:test-tools' (bash scripts/setup-test-tools.sh) first`);
  }
  const tools = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  for (const key of ['codeServerEntry', 'node', 'chromium']) {
    // (without root the setup script may have had to leave one out: it says why)
    const why = { codeServerEntry: tools.codeServerMissing, chromium: tools.chromiumMissing }[key];
    if (!tools[key] && why) throw new HarnessError(`no ${key === 'chromium' ? 'Chromium' : 'code-server'} in ${manifest}: ${why}`);
    if (!tools[key] || !fs.existsSync(tools[key])) {
      throw new HarnessError(`${key} = ${tools[key]} (from ${manifest}) does not exist: run 'npm run setup:test-tools' again`);
    }
  }
  return tools;
}

export async function loadPlaywright() {
  try {
    return await import('playwright-core');
  } catch (e) {
    throw new HarnessError(`cannot load playwright-core (${e.message}): run 'npm ci' in ${repoRoot}`);
  }
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// ------------------------------------------------------------------ private dirs
/**
 * A private run directory: HOME, user-data, extensions, TMPDIR and the browser profile live in a
 * short temp path (VS Code creates unix sockets under some of them; long paths break those), logs
 * and screenshots go to .test-artifacts/<name>/.
 */
export function makeRunDirs(name, { keep = !!process.env.UNROLL_LENS_KEEP_TMP, settings = {} } = {}) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), `ul-${name}-`));
  const dirs = {
    base,
    home: path.join(base, 'home'),
    userData: path.join(base, 'user-data'),
    extensions: path.join(base, 'extensions'),
    tmp: path.join(base, 'tmp'),
    chromeProfile: path.join(base, 'chrome'),
    artifacts: path.join(artifactsRoot, name),
  };
  fs.rmSync(dirs.artifacts, { recursive: true, force: true }); // no stale logs/screenshots
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  fs.mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(dirs.userData, 'User', 'settings.json'),
    JSON.stringify(
      {
        'telemetry.telemetryLevel': 'off',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'extensions.ignoreRecommendations': true,
        'workbench.enableExperiments': false,
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'security.workspace.trust.enabled': false,
        'git.enabled': false,
        'update.mode': 'none',
        'chat.disableAIFeatures': true,
        'window.restoreWindows': 'none',
        'editor.stickyScroll.enabled': false,
        ...settings,
      },
      null,
      2,
    ),
  );
  onCleanup(() => {
    // keep VS Code's own logs (extension host, server) next to the other artifacts
    const logs = path.join(dirs.userData, 'logs');
    if (fs.existsSync(logs)) {
      fs.rmSync(path.join(dirs.artifacts, 'vscode-logs'), { recursive: true, force: true });
      fs.cpSync(logs, path.join(dirs.artifacts, 'vscode-logs'), { recursive: true });
    }
    if (!keep) fs.rmSync(base, { recursive: true, force: true });
  });
  return dirs;
}

export function privateEnv(dirs) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    // do not leak a surrounding VS Code / Electron session into the one under test
    if (k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE') continue;
    env[k] = v;
  }
  return Object.assign(env, {
    HOME: dirs.home,
    XDG_CONFIG_HOME: path.join(dirs.home, '.config'),
    XDG_DATA_HOME: path.join(dirs.home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(dirs.home, '.cache'),
    XDG_RUNTIME_DIR: dirs.tmp,
    TMPDIR: dirs.tmp,
    // No extension gallery: an empty one disables the marketplace queries the workbench would
    // otherwise send at startup (this machine has no network beyond loopback anyway).
    EXTENSIONS_GALLERY: '{}',
  });
}

function baseArgs(dirs) {
  return [
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--user-data-dir',
    dirs.userData,
    '--extensions-dir',
    dirs.extensions,
  ];
}

/** Runs a one-shot code-server CLI command (e.g. --install-extension) synchronously. */
export function codeServerCli(tools, dirs, args, logFile) {
  const r = spawnSync(tools.node, [tools.codeServerEntry, ...baseArgs(dirs), ...args], {
    env: privateEnv(dirs),
    encoding: 'utf8',
    timeout: 120_000,
  });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (logFile) fs.writeFileSync(logFile, out);
  if (r.error || r.status !== 0) {
    throw new HarnessError(`code-server ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${out}`);
  }
  return out;
}

/**
 * Starts code-server in its own process group (setsid) on 127.0.0.1:<port>, serving `folder`.
 * Resolves once /healthz answers. stop() ends the whole group (extension hosts, language servers).
 */
export async function startCodeServer({ tools, dirs, port, folder, extraArgs = [], logFile, log = () => {} }) {
  const out = fs.openSync(logFile, 'w');
  const args = [tools.codeServerEntry, ...baseArgs(dirs), '--bind-addr', `127.0.0.1:${port}`, ...extraArgs, folder];
  const t = Date.now();
  const child = spawn(tools.node, args, { env: privateEnv(dirs), stdio: ['ignore', out, out], detached: true });
  fs.closeSync(out);
  groups.add(child.pid);
  let exited = null;
  const exitPromise = new Promise(resolve =>
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    }),
  );
  const stop = async () => {
    if (!groups.has(child.pid)) return;
    killGroup(child.pid, 'SIGTERM');
    const done = await Promise.race([exitPromise.then(() => true), new Promise(r => setTimeout(() => r(false), 5000))]);
    // the leader may be gone while extension hosts / language servers linger: always sweep the group
    killGroup(child.pid, 'SIGKILL');
    if (!done) await Promise.race([exitPromise, new Promise(r => setTimeout(r, 2000))]);
    groups.delete(child.pid);
  };
  onCleanup(stop);
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (exited) {
      throw new HarnessError(
        `code-server exited early (${JSON.stringify(exited)}); its log ${logFile}:\n` + fs.readFileSync(logFile, 'utf8').slice(-4000),
      );
    }
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() - t > 60_000) throw new HarnessError(`code-server did not answer on ${url}/healthz within 60 s (log: ${logFile})`);
    await new Promise(r => setTimeout(r, 100));
  }
  log(`code-server ${tools.codeServerVersion} (pid/pgid ${child.pid}) listening on ${url} after ${((Date.now() - t) / 1000).toFixed(1)}s`);
  return {
    url,
    pid: child.pid,
    stop,
    get exited() {
      return exited;
    },
  };
}

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-default-apps',
  '--disable-extensions',
  '--no-default-browser-check',
];

/** Headless Debian chromium with a fresh profile; playwright kills its process group on exit. */
export async function launchChromium(tools, dirs, { width = 1400, height = 900 } = {}) {
  const { chromium } = await loadPlaywright();
  const ctx = await chromium.launchPersistentContext(dirs.chromeProfile, {
    executablePath: tools.chromium,
    headless: true,
    viewport: { width, height },
    args: CHROMIUM_ARGS,
    env: privateEnv(dirs),
    // our own signal handlers close the browser, stop code-server and remove the temp dirs;
    // playwright's would exit the process before that (it still kills the browser on 'exit')
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  onCleanup(() => Promise.race([ctx.close(), new Promise(r => setTimeout(r, 10_000))]));
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  const consoleLog = fs.createWriteStream(path.join(dirs.artifacts, 'browser-console.log'));
  onCleanup(() => new Promise(r => consoleLog.end(r)));
  page.on('console', m => consoleLog.write(`[${m.type()}] ${m.text()}\n`));
  page.on('pageerror', e => consoleLog.write(`[pageerror] ${e.stack ?? e.message}\n`));
  return { ctx, page };
}

/** Fails with a clear message when the compiled extension or suite is missing. */
export function requireBuilt(files) {
  const missing = files.filter(f => !fs.existsSync(path.join(repoRoot, f)));
  if (missing.length) {
    throw new HarnessError(`missing ${missing.join(', ')}: run 'npm run build' first`);
  }
}

/** vscode-remote URI of a path on the code-server host (used in ?payload=). */
export function remoteUri(port, p) {
  return `vscode-remote://127.0.0.1:${port}${p.split(path.sep).map(encodeURIComponent).join('/')}`;
}
