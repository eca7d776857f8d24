// What one compile came to: ok, failed (and why), timed out or cancelled, from the process
// result and nvcc's messages; and whether that outcome is deterministic enough to cache.
import * as fs from 'fs';
import { classifyFailure, CompilerMessage, CompileFailureKind } from '../toolchain/nvccErrors';
import type { ProcessResult } from '../toolchain/process';

export type BuildStatus = 'ok' | 'failed' | 'timeout' | 'cancelled';

/** Why a build failed: nvcc's kind of error, or that it timed out or was cancelled. */
export type BuildFailureKind = CompileFailureKind | 'timeout' | 'cancelled' | null;

/** Failures of the machine rather than the code (memory, disk, a killed tool): worth another try. */
const TRANSIENT =
  /memory allocation failure|out of memory|bad_alloc|cannot allocate memory|died due to signal|killed|no space left on device|resource temporarily unavailable|too many open files|file size limit exceeded|disk quota exceeded|read-only file system/i;

/**
 * The build's status and failure kind. A spawn error or a failure without an error message adds
 * one to `messages` (the list is the build's), naming the tool or nvcc's own output.
 */
export function compileOutcome(
  r: ProcessResult,
  messages: CompilerMessage[],
  tool: string,
  output: string,
): { status: BuildStatus; failureKind: BuildFailureKind } {
  let status: BuildStatus = 'ok';
  let failureKind: BuildFailureKind = null;
  if (r.cancelled) {
    status = 'cancelled';
    failureKind = 'cancelled';
  } else if (r.timedOut) {
    status = 'timeout';
    failureKind = 'timeout';
  } else if (r.spawnError) {
    status = 'failed';
    failureKind = 'internal';
    messages.push(internalMessage(`cannot run ${tool}: ${r.spawnError}`));
  } else if (r.exitCode !== 0 || !fs.existsSync(output)) {
    status = 'failed';
    failureKind = classifyFailure(messages, r.stderr) ?? 'internal';
    if (!messages.some(m => m.severity === 'error')) {
      messages.push({ ...internalMessage(r.stderr.trim() || `nvcc exited with ${r.exitCode ?? r.signal}`), kind: failureKind });
    }
  }
  return { status, failureKind };
}

/** Not a failure of the machine (memory, disk, a killed tool) that another try may not repeat. */
export function isDeterministic(r: ProcessResult, status: BuildStatus, failureKind: BuildFailureKind): boolean {
  return (
    status === 'ok' ||
    (status === 'failed' && !r.signal && !r.spawnError && r.exitCode !== null && failureKind !== 'internal' && !TRANSIENT.test(r.stderr))
  );
}

/** An internal error message (not nvcc's). */
export function internalMessage(message: string): CompilerMessage {
  return { file: null, line: null, column: null, severity: 'error', code: null, message, kind: 'internal' };
}
