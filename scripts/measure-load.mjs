#!/usr/bin/env node
// The two parts of activation that bundling changes, timed in plain Node on the contents of
// .vsix files (no VS Code, so far less noise than scripts/measure-activation.mjs):
//   require: a fresh `node` loads the package's main module, with `vscode` replaced by an empty
//            stub (the extension's code loading; activate() is not called);
//   server:  a fresh `node <server module> --stdio` until it answers `initialize` (what the
//            language client waits for in activate()), timed from the spawn.
// Each .vsix is unpacked into a temp folder; runs alternate between the packages. Wall time and
// CPU time (user + system of that process; what a shared, loaded machine distorts least) are
// reported; the server's CPU time comes from /proc (Linux, 10 ms ticks).
//
//   node scripts/measure-load.mjs [--runs N] before.vsix .test-artifacts/unroll-lens.vsix
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 15;
if (!args.length) {
  console.error('usage: node scripts/measure-load.mjs [--runs N] A.vsix [B.vsix …]');
  process.exit(2);
}
const yauzl = createRequire(require.resolve('@vscode/vsce/package.json'))('yauzl');
const rpc = require('vscode-jsonrpc/node');

function unpack(vsix, dir) {
  return new Promise((resolve, reject) =>
    yauzl.open(vsix, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      zip.on('entry', e => {
        if (!e.fileName.startsWith('extension/') || e.fileName.endsWith('/')) return zip.readEntry();
        const to = path.join(dir, e.fileName.slice('extension/'.length));
        fs.mkdirSync(path.dirname(to), { recursive: true });
        zip.openReadStream(e, (err2, s) => {
          if (err2) return reject(err2);
          s.pipe(fs.createWriteStream(to)).on('finish', () => zip.readEntry());
        });
      });
      zip.on('end', resolve);
      zip.readEntry();
    }),
  );
}

/** Where the package's client starts its server (the out/ layout before bundling, dist/ after). */
function serverModule(dir) {
  for (const p of ['dist/server.js', 'out/src/server/main.js']) if (fs.existsSync(path.join(dir, p))) return path.join(dir, p);
  throw new Error(`no server module in ${dir}`);
}

function requireTime(main) {
  const code = `
    const Module = require('module');
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (r, ...a) { return r === 'vscode' ? 'vscode' : resolve.call(this, r, ...a); };
    require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: new Proxy({}, { get: () => function () {} }) };
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    require(${JSON.stringify(main)});
    const c = process.cpuUsage(c0);
    console.log(performance.now() - t0, (c.user + c.system) / 1000);`;
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`loading ${main} failed:\n${r.stderr}`);
  const [wall, cpu] = r.stdout.trim().split(' ').map(Number);
  return { wall, cpu };
}

const TICK_MS = 1000 / 100; // USER_HZ on Linux
function cpuMsOf(pid) {
  // fields after the parenthesised command name: utime and stime are the 12th and 13th
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
}

async function serverTime(module) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [module, '--stdio'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  conn.onNotification(() => {});
  conn.listen();
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {}, workspaceFolders: null });
  const ms = performance.now() - t0;
  const cpu = fs.existsSync(`/proc/${child.pid}/stat`) ? cpuMsOf(child.pid) : NaN;
  conn.dispose();
  child.kill();
  await new Promise(r => child.once('exit', r));
  return { wall: ms, cpu };
}

const median = xs => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const packages = [];
for (const vsix of args) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-unpacked-'));
  await unpack(path.resolve(vsix), dir);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  packages.push({ vsix, dir, main: path.join(dir, pkg.main), server: serverModule(dir), require: [], serverMs: [] });
}
for (let i = 0; i < RUNS; i++) {
  for (const p of packages) {
    p.require.push(requireTime(p.main));
    p.serverMs.push(await serverTime(p.server));
  }
}
const stats = (xs, key) => {
  const v = xs.map(x => x[key]);
  return `${median(v).toFixed(0)} ms (${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)})`;
};
for (const p of packages) {
  console.log(
    `${p.vsix} (${RUNS} runs, median (min–max)):\n` +
      `  require(main):                       wall ${stats(p.require, 'wall')}, CPU ${stats(p.require, 'cpu')}\n` +
      `  server spawn → initialize answered:  wall ${stats(p.serverMs, 'wall')}, CPU ${stats(p.serverMs, 'cpu')}`,
  );
  fs.rmSync(p.dir, { recursive: true, force: true });
}
console.log(
  `node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), load average ${os
    .loadavg()
    .map(l => l.toFixed(1))
    .join(' ')}`,
);
