// The watchdog: one small Node process per Unroll Lens process (CLI or language server) that
// outlives it only long enough to clean up after it. Node has no prctl(PR_SET_PDEATHSIG), and a
// SIGKILL (or an OOM kill, or a crash) gives us no chance to run any code, so the cleanup has to
// live in another process. The watchdog learns, over its stdin pipe, the process groups of the
// tools we run (nvcc, its cicc/ptxas/cc1plus, the disassemblers, ncu, the user's program), the
// environment marker every one of them inherits, and our temp folder; when the pipe reaches end of
// file (the kernel closes it the moment we die, however we die), it SIGKILLs those groups and any
// process still carrying our marker (a descendant that left its group with setsid), waits for
// them to go, removes the temp folder and exits.
//
// It is plain JavaScript run with `node -e` (the same Node executable that runs us, so nothing is
// compiled or installed, no root needed) and needs no file of its own, so the esbuild bundles
// carry it too. It runs in its own session: Ctrl-C in a terminal, or the terminal closing, does
// not reach it; it ignores SIGINT, SIGTERM and SIGHUP, as it ends by itself with its parent.
//
// Protocol: one JSON object a line (JSON, so no path can smuggle in a line of its own):
// {add: pgid} a group to kill, {gone: pgid} a group that is gone, {marker: "NAME=value"} the
// environment entry prefix of our processes, {dir: path} our temp folder (one we created).
import { spawn, type ChildProcess } from 'child_process';

/** How long the watchdog waits for killed processes to go before removing the temp folder. */
export const WATCHDOG_GRACE_MS = 2000;

const WATCHDOG_SOURCE = `'use strict';
const fs = require('fs');
const groups = new Set();
const dirs = new Set();
let marker = '';
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});
const pause = ms => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
function alive(g) { try { process.kill(-g, 0); return true; } catch (e) { return e.code === 'EPERM'; } }
function marked() {
  const out = [];
  let names = [];
  try { names = fs.readdirSync('/proc'); } catch { return out; }
  for (const n of names) {
    if (!/^[0-9]+$/.test(n) || Number(n) === process.pid) continue;
    let env;
    try { env = fs.readFileSync('/proc/' + n + '/environ', 'latin1'); } catch { continue; }
    if (env.startsWith(marker) || env.includes('\\0' + marker)) out.push(Number(n));
  }
  return out;
}
let reaped = false;
function reap() {
  if (reaped) return;
  reaped = true;
  const end = Date.now() + ${WATCHDOG_GRACE_MS};
  for (;;) {
    for (const g of groups) try { process.kill(-g, 'SIGKILL'); } catch {}
    const rest = marker ? marked() : [];
    for (const p of rest) try { process.kill(p, 'SIGKILL'); } catch {}
    // Linux: done when nothing carries the marker (a zombie's environment is empty); elsewhere
    // when the groups are empty.
    const left = process.platform === 'linux' ? rest : [...groups].filter(alive);
    if (!left.length || Date.now() > end) break;
    pause(20);
  }
  for (const d of dirs) try { fs.rmSync(d, { recursive: true, force: true, maxRetries: 3 }); } catch {}
  process.exit(0);
}
let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', d => {
  buf += d;
  for (let i = buf.indexOf('\\n'); i >= 0; i = buf.indexOf('\\n')) {
    let m;
    try { m = JSON.parse(buf.slice(0, i)); } catch { m = {}; }
    buf = buf.slice(i + 1);
    if (m.add > 0) groups.add(m.add);
    else if (m.gone > 0) groups.delete(m.gone);
    else if (typeof m.marker === 'string' && m.marker) marker = m.marker;
    else if (typeof m.dir === 'string' && m.dir.startsWith('/')) dirs.add(m.dir);
  }
});
process.stdin.on('end', reap);
process.stdin.on('close', reap);
process.stdin.on('error', reap);
`;

/** Starts the watchdog of this process: its stdin is the pipe whose end tells it we are gone. */
export function startWatchdog(): ChildProcess {
  const child = spawn(process.execPath, ['-e', WATCHDOG_SOURCE], {
    detached: true, // its own session: a terminal's Ctrl-C or hang-up is for us, not for it
    stdio: ['pipe', 'ignore', 'ignore'],
    // In the editor the server may run on Electron's executable: make it behave as Node.
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
  });
  // The watchdog must never keep us alive: neither the process nor its pipe holds the event loop.
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  child.stdin?.on('error', () => undefined); // it was killed: the next run starts another
  child.on('error', () => undefined); // it cannot start: group kills on exit and on cancel still hold
  return child;
}
