// Every external tool runs through here: argument arrays (never a shell), a timeout, and
// cancellation that kills the whole process tree (nvcc spawns cicc/ptxas; a profiled program
// spawns its own children), so nothing is left running after a cancel. Each run has its own
// process group and temp folder, which processGuard.ts removes when the run ends, when we exit,
// and (through a watchdog process) when we are killed.
import { killGroup, processGuard } from './processGuard';

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Milliseconds before the process tree is killed and the result marked timedOut. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Text written to stdin. */
  input?: string;
  /** Called with output as it arrives (for logs and progress). */
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
  /**
   * Keep the inherited (or env's) TMPDIR instead of a private temp folder: for ncu's profiling
   * runs, which take turns through a lock file in $TMPDIR that other ncu processes must see.
   */
  sharedTemp?: boolean;
}

export interface ProcessResult {
  command: string;
  args: string[];
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  /** The executable could not be started (ENOENT, EACCES). */
  spawnError?: string;
  durationMs: number;
}

/** Replaceable so tests (and CI without a GPU) can answer with recorded outputs. */
export type ProcessRunner = (command: string, args: string[], options?: RunOptions) => Promise<ProcessResult>;

/** Grace period between SIGTERM and SIGKILL for a process tree. */
const KILL_GRACE_MS = 2000;

/** How long, after the tool exited, a descendant outside its group may keep its output open. */
const ORPHAN_GRACE_MS = 300;

export const runProcess: ProcessRunner = async (command, args, options = {}) => {
  const { execa } = await import('execa');
  const started = performance.now();
  let timedOut = false;
  let cancelled = false;
  const guard = processGuard.begin(options.sharedTemp === true);
  let child: ReturnType<typeof execa>;
  try {
    child = execa(command, args, {
      cwd: options.cwd,
      env: { ...options.env, ...guard.env },
      extendEnv: true,
      input: options.input,
      reject: false,
      stripFinalNewline: false,
      detached: true, // own process group, so the whole tree can be killed
      encoding: 'utf8',
      maxBuffer: 512 * 1024 * 1024,
    });
  } catch (e) {
    await processGuard.finish(guard, false); // nothing started: its temp folder goes
    throw e;
  }
  processGuard.started(guard, child.pid);
  // The tool is gone: what it left in its group goes now (ptxas outliving nvcc), and a descendant
  // in a session of its own that still holds the output open (we would wait for it) shortly after.
  let orphanTimer: NodeJS.Timeout | undefined;
  child.once('exit', () => {
    killGroup(child.pid, 'SIGKILL');
    orphanTimer = setTimeout(() => processGuard.signal(guard, 'SIGKILL'), ORPHAN_GRACE_MS);
    orphanTimer.unref();
  });
  if (options.onOutput) {
    child.stdout?.on('data', (d: Buffer) => options.onOutput!(d.toString(), 'stdout'));
    child.stderr?.on('data', (d: Buffer) => options.onOutput!(d.toString(), 'stderr'));
  }
  let graceTimer: NodeJS.Timeout | undefined;
  const stop = () => {
    processGuard.signal(guard, 'SIGTERM');
    graceTimer = setTimeout(() => processGuard.signal(guard, 'SIGKILL'), KILL_GRACE_MS);
    graceTimer.unref();
  };
  const timer = options.timeoutMs
    ? setTimeout(() => {
        timedOut = true;
        stop();
      }, options.timeoutMs)
    : undefined;
  const onAbort = () => {
    cancelled = true;
    stop();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const r = await child;
    const spawnError =
      r.failed && r.exitCode === undefined && !r.signal && !timedOut && !cancelled
        ? r.cause instanceof Error
          ? r.cause.message
          : r.shortMessage
        : undefined;
    return {
      command,
      args,
      exitCode: r.exitCode ?? null,
      signal: r.signal ?? null,
      stdout: String(r.stdout ?? ''),
      stderr: String(r.stderr ?? ''),
      timedOut,
      cancelled,
      spawnError,
      durationMs: performance.now() - started,
    };
  } finally {
    if (timer) clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    // Children of the tool that outlived it (e.g. ptxas after nvcc was killed) go too, then its temp folder.
    await processGuard.finish(guard, timedOut || cancelled);
    if (graceTimer) clearTimeout(graceTimer);
    if (orphanTimer) clearTimeout(orphanTimer);
  }
};

/** A tool run that reached its time limit and was killed. */
export interface ToolTimeout {
  /** "nvcc", "nvdisasm", … */
  tool: string;
  seconds: number;
  /** The input file it was working on (its last argument that names a file), when known. */
  file: string | null;
}

/**
 * A runner that gives each named tool its own time limit (`limits`: executable path → tool name
 * and milliseconds), whatever limit the caller asked for, and reports each run that timed out.
 * A call repeated with the same tool and arguments after a timeout is answered at once as timed
 * out again, so one hanging disassembler costs one limit, not one per caller.
 */
export function withToolTimeouts(
  runner: ProcessRunner,
  limits: Map<string, { tool: string; timeoutMs: number }>,
  onTimeout?: (t: ToolTimeout) => void,
): ProcessRunner {
  const timedOut = new Map<string, ProcessResult>();
  return async (command, args, options = {}) => {
    const limit = limits.get(command);
    if (!limit) return runner(command, args, options);
    const key = JSON.stringify([command, args]);
    const earlier = timedOut.get(key);
    if (earlier) return { ...earlier, durationMs: 0 };
    const r = await runner(command, args, { ...options, timeoutMs: limit.timeoutMs });
    if (r.timedOut) {
      timedOut.set(key, r);
      const file = [...args].reverse().find(a => !a.startsWith('-') && /\.\w+$/.test(a)) ?? null;
      onTimeout?.({ tool: limit.tool, seconds: limit.timeoutMs / 1000, file });
    }
    return r;
  };
}
