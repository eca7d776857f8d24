// Nothing we start outlives us, and no temp file of a tool we ran stays behind: the one mechanism
// behind runProcess, so every tool (nvcc and the host compiler, cicc and ptxas it starts, the
// disassemblers, ncu, the user's program in bench and sweep) gets it.
//
// - Each run leads its own process group (spawned detached) and carries an environment marker
//   (UNROLL_LENS_RUN=<session>.<n>) that its descendants inherit, even one that leaves the group.
// - Each run gets a private temp folder (TMPDIR, TMP, TEMP), under one temp root of this process,
//   so nvcc's tmpxft_* files and whatever a program writes there go with the folder. ncu's
//   profiling runs keep the inherited TMPDIR (sharedTemp): ncu serialises profiling through a lock
//   file there, which other ncu processes must see (gpuSlots.ts).
// - When a run ends (done, cancelled or timed out), its group is SIGKILLed (ptxas outliving a
//   killed nvcc), a cancelled or timed-out run's marked processes too, and its folder removed
//   once they are gone.
// - When we exit (normally, process.exit, or a signal whose handler exits), every live group and
//   marked process is killed and the temp root removed, synchronously ('exit' handler).
// - When we are killed (SIGKILL, OOM, crash), the watchdog (watchdog.ts) does the same.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { ChildProcess } from 'child_process';
import { startWatchdog, WATCHDOG_GRACE_MS } from './watchdog';

/** The environment variable that marks every process we start and its descendants. */
export const RUN_MARKER_VAR = 'UNROLL_LENS_RUN';

/** Where process groups and /proc exist; elsewhere only the tool's own pid can be killed. */
const POSIX = process.platform !== 'win32';
const PROC = process.platform === 'linux';

/** One tool run under the guard. */
interface GuardedRun {
  /** Environment entries the run adds (marker, and TMPDIR/TMP/TEMP unless sharedTemp). */
  env: Record<string, string>;
  /** Its private temp folder, or null with sharedTemp. */
  tempDir: string | null;
  /** Its process group (the tool's pid), once started. */
  pgid: number | null;
}

/** Sends `signal` to the group led by `pgid`, else to the process alone. */
export function killGroup(pgid: number | null | undefined, signal: NodeJS.Signals): void {
  if (!pgid) return;
  try {
    if (POSIX) process.kill(-pgid, signal);
    else process.kill(pgid, signal);
  } catch {
    try {
      process.kill(pgid, signal);
    } catch {
      /* already gone */
    }
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(POSIX ? -pgid : pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Pids (not ours) whose environment holds an entry starting with `entry` (NAME=value…). */
function markedProcesses(entry: string): number[] {
  if (!PROC) return [];
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue;
    let env: string;
    try {
      env = fs.readFileSync(`/proc/${n}/environ`, 'latin1');
    } catch {
      continue; // gone, or another user's
    }
    if (env.startsWith(entry) || env.includes(`\0${entry}`)) out.push(Number(n));
  }
  return out;
}

function rmQuiet(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    /* a file held open on a foreign file system: nothing more we can do */
  }
}

class ProcessGuard {
  /** Random per process: a marker that no other process's children carry. */
  readonly session = `${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
  private root: string | null = null;
  private watchdog: ChildProcess | null = null;
  private readonly live = new Set<GuardedRun>();
  private count = 0;
  private exitHook = false;

  /** The marker entry prefix of every run of this process. */
  get sessionEntry(): string {
    return `${RUN_MARKER_VAR}=${this.session}.`;
  }

  /** This process's temp root (created on first use, mode 0700, removed when we exit or die). */
  tempRoot(): string {
    if (this.root && fs.existsSync(this.root)) return this.root;
    this.ensureHooks();
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), `unroll-lens-${process.pid}-`));
    this.tell({ dir: this.root });
    return this.root;
  }

  /** A fresh private folder under the temp root (for a run, or for our own scratch files). */
  privateDir(prefix: string): string {
    return fs.mkdtempSync(path.join(this.tempRoot(), prefix));
  }

  /** Prepares a run: its marker and, unless `sharedTemp`, its private temp folder. */
  begin(sharedTemp: boolean): GuardedRun {
    this.ensureHooks();
    const env: Record<string, string> = { [RUN_MARKER_VAR]: `${this.session}.${++this.count}` };
    let tempDir: string | null = null;
    try {
      if (!sharedTemp) tempDir = this.privateDir('run-');
    } catch {
      /* the temp folder cannot be written: the tool runs with the inherited one, as before */
    }
    if (tempDir) env.TMPDIR = env.TMP = env.TEMP = tempDir;
    const run: GuardedRun = { env, tempDir, pgid: null };
    this.live.add(run);
    return run;
  }

  /** The run's tool started as `pid`, leader of its own group. */
  started(run: GuardedRun, pid: number | undefined): void {
    if (!pid) return;
    run.pgid = pid;
    this.tell({ add: pid });
  }

  /**
   * Signals the run's group and every process carrying its marker (a descendant that moved to a
   * session of its own would otherwise keep running, and keep our pipes open, so that the run
   * never ends).
   */
  signal(run: GuardedRun, signal: NodeJS.Signals): void {
    killGroup(run.pgid, signal);
    for (const pid of markedProcesses(this.entryOf(run))) killGroup(pid, signal);
  }

  private entryOf(run: GuardedRun): string {
    return `${RUN_MARKER_VAR}=${run.env[RUN_MARKER_VAR]}`;
  }

  /**
   * The run's tool has exited: kills what is left of its group and, when it was cancelled or
   * timed out, waits until no process carrying its marker is alive (killing each), then removes
   * its temp folder. (A zombie has no environment left in /proc, so it does not count: waiting
   * for the group to be empty instead would wait for whoever reaps orphans.)
   */
  async finish(run: GuardedRun, stopped: boolean): Promise<void> {
    killGroup(run.pgid, 'SIGKILL');
    const end = Date.now() + WATCHDOG_GRACE_MS;
    while (stopped && Date.now() < end) {
      const marked = PROC ? markedProcesses(this.entryOf(run)) : run.pgid && groupAlive(run.pgid) ? [run.pgid] : [];
      if (!marked.length) break;
      for (const pid of marked) killGroup(pid, 'SIGKILL');
      await new Promise(r => setTimeout(r, 10));
    }
    this.release(run);
  }

  private release(run: GuardedRun): void {
    if (run.pgid) this.tell({ gone: run.pgid });
    if (run.tempDir) rmQuiet(run.tempDir);
    this.live.delete(run);
  }

  /**
   * Kills every live run's group and every process carrying this process's marker, then removes
   * the temp root. Synchronous, for the 'exit' handler and a server shutting down.
   */
  reapAll(): void {
    for (const run of this.live) killGroup(run.pgid, 'SIGKILL');
    for (const pid of markedProcesses(this.sessionEntry)) killGroup(pid, 'SIGKILL');
    for (const run of [...this.live]) this.release(run);
    if (this.root) rmQuiet(this.root);
    this.root = null;
  }

  /** Runs in flight (for tests and the server's shutdown log). */
  get running(): number {
    return this.live.size;
  }

  private ensureHooks(): void {
    if (!this.exitHook) {
      this.exitHook = true;
      process.once('exit', () => this.reapAll());
    }
    if (POSIX && (!this.watchdog || this.watchdog.exitCode !== null || this.watchdog.signalCode !== null)) {
      this.watchdog = startWatchdog();
      this.tell({ marker: this.sessionEntry });
      if (this.root) this.tell({ dir: this.root });
      for (const run of this.live) if (run.pgid) this.tell({ add: run.pgid });
    }
  }

  private tell(message: { add: number } | { gone: number } | { marker: string } | { dir: string }): void {
    const stdin = this.watchdog?.stdin;
    if (stdin && !stdin.destroyed) stdin.write(`${JSON.stringify(message)}\n`);
  }
}

/** The guard of this process (one per process: one watchdog, one temp root). */
export const processGuard = new ProcessGuard();

/**
 * A fresh scratch folder: under `base` when the caller needs a particular place (a launcher's
 * nodes must see it), else under this process's temp root, which goes even if we are killed.
 */
export function scratchDir(base: string | undefined, prefix: string): string {
  if (!base) return processGuard.privateDir(prefix);
  fs.mkdirSync(base, { recursive: true });
  return fs.mkdtempSync(path.join(base, prefix));
}
