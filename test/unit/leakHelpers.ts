// What the leak tests share (issue 23, leaks): a fake slow tool that behaves as nvcc does where
// it matters (temp files in $TMPDIR, a child and a grandchild, one of them in a session of its
// own), and ways to find what a process left behind: live processes by an environment entry
// (/proc/PID/environ, which every descendant inherits), files in a temp folder.
import * as fs from 'fs';
import * as path from 'path';

/** True where `setsid` can start a grandchild outside its parent's process group. */
export const HAS_SETSID = ['/usr/bin/setsid', '/bin/setsid'].some(p => fs.existsSync(p));

/**
 * Writes an executable shell script that answers --version like nvcc 13.0, else: creates nvcc's
 * kind of temp files in $TMPDIR (tmpxft_<pid>_…), starts a child (`sh -c 'sleep …'`, whose
 * `sleep` is a grandchild) and, with setsid, a grandchild in its own session, records
 * "<pid> <child pid> <$TMPDIR>" in `record`, and waits (`exitAfterStart`: exits 0 at once,
 * leaving its children running, as ptxas can outlive nvcc).
 */
export function fakeSlowTool(file: string, record: string, o: { exitAfterStart?: boolean } = {}): void {
  fs.writeFileSync(
    file,
    [
      '#!/bin/sh',
      'case "$1" in --version) echo "Cuda compilation tools, release 13.0, V13.0.48"; exit 0;; --list-gpu-code) echo sm_90; exit 0;; esac',
      't="${TMPDIR:-/tmp}"',
      ': > "$t/tmpxft_$$_00000000-1.cpp"',
      'mkdir -p "$t/tmpxft_$$_00000000"',
      ': > "$t/tmpxft_$$_00000000/a.module_id"',
      "sh -c 'sleep 120; :' &",
      'child=$!',
      HAS_SETSID ? "setsid sh -c 'sleep 120; :' &" : '',
      `echo "$$ $child $t" >> "${record}"`,
      o.exitAfterStart ? 'exit 0' : 'wait',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
}

/** The lines of `record` written so far: pid, child pid and TMPDIR of each start of the fake tool. */
export function started(record: string): { pid: number; child: number; tmp: string }[] {
  if (!fs.existsSync(record)) return [];
  return fs
    .readFileSync(record, 'utf8')
    .split('\n')
    .filter(l => l.trim())
    .map(l => {
      const [pid, child, ...tmp] = l.split(' ');
      return { pid: Number(pid), child: Number(child), tmp: tmp.join(' ') };
    });
}

/** The process exists and is not a zombie (dead, its status not yet read by whoever reaps orphans here). */
export function alive(pid: number): boolean {
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return false;
  }
}

/** Live processes (not zombies) whose environment has an entry starting with `entry`, with their command names. */
export function processesWithEnv(entry: string): { pid: number; comm: string }[] {
  const out: { pid: number; comm: string }[] = [];
  for (const n of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue;
    try {
      const env = fs.readFileSync(`/proc/${n}/environ`, 'latin1');
      if (!env.split('\0').some(e => e.startsWith(entry))) continue;
      const stat = fs.readFileSync(`/proc/${n}/stat`, 'latin1');
      if (/\) Z /.test(stat)) continue; // a zombie is dead, waiting for its parent to read its status
      out.push({ pid: Number(n), comm: fs.readFileSync(`/proc/${n}/comm`, 'utf8').trim() });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

export async function until(what: string, ok: () => boolean, ms: number, detail: () => string = () => ''): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}${detail() ? `: ${detail()}` : ''}`);
    await new Promise(r => setTimeout(r, 25));
  }
}

/** Every path under `dir`, relative (empty when `dir` is gone). */
export function contents(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).map(p => path.normalize(p)).sort();
}

/** Kills what a failed test left (so one failure does not leave sleeping processes behind). */
export function killAll(pids: number[]): void {
  for (const p of pids)
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
}
