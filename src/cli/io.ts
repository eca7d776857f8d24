// What every `unroll-lens` subcommand shares: where output goes, the usage error, and which
// exit code an error becomes. Subcommands import this, never main.ts (no import cycle).
import { FileDoesNotCompileError, MissingToolError, ScanInputError, SharedFolderError, SlurmRefusedError } from '../engine';

export interface CliIO {
  out: (s: string) => void;
  err: (s: string) => void;
  /** stderr is a terminal: progress bars are drawn there. */
  isTTY: boolean;
}

export const defaultIO: CliIO = {
  out: s => process.stdout.write(s),
  err: s => process.stderr.write(s),
  isTTY: !!process.stderr.isTTY,
};

/** Bad command line: unknown option, missing or bad value, wrong number of files. */
export class UsageError extends Error {}

/** Input whose content is damaged or incomplete (a cut-off CSV): exit 65, never a result. */
export class BadInputError extends Error {}

/** Exit codes of every subcommand; the help texts and docs/cli.md list the same. */
export const EXIT = {
  ok: 0,
  /** scan --strict found a diagnostic; sass: the file as written does not compile; bench: a variant failed. */
  failed: 1,
  /** Bad usage, a missing or unreadable input, or a tool the command needs is not installed. */
  usage: 2,
  /** The input's content is damaged or incomplete (a truncated CSV), or nvcc rejected a compile flag: EX_DATAERR. */
  badInput: 65,
  /** A bug in Unroll Lens: the stack trace goes to stderr. EX_SOFTWARE, so scripts can tell it from findings (1). */
  internal: 70,
  /** Cancelled with Ctrl-C (128 + SIGINT, what a shell reports for an interrupted program). */
  cancelled: 130,
} as const;

/** Errors the user can fix (their message says how) exit 2; anything else is a bug. */
export function exitCodeFor(e: unknown): number {
  // a shared folder holding what we did not write (a manifest whose seal fails, a link out): its content is bad input
  if (e instanceof BadInputError || e instanceof SharedFolderError) return EXIT.badInput;
  // A compile flag nvcc or a tool rejected is bad input (the message names it); other compile errors are findings.
  if (e instanceof FileDoesNotCompileError) return e.badFlag ? EXIT.badInput : EXIT.failed;
  // sbatch refusing the job's options (or missing) is the user's to change, in sbatch's own words
  return e instanceof UsageError || e instanceof ScanInputError || e instanceof MissingToolError || e instanceof SlurmRefusedError
    ? EXIT.usage
    : EXIT.internal;
}

/** The package's version. A require (not fs) so that esbuild inlines package.json when it bundles the CLI (scripts/device/bundle-cli.mjs). */
export function cliVersion(): string {
  // Relative to the compiled file: out/src/cli/io.js → the repository's package.json.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a require is what esbuild inlines
  const pkg = require('../../../package.json') as { version?: string };
  return pkg.version ?? 'unknown';
}

/** The signals that cancel a running command as Ctrl-C does: children killed, temp folders removed, exit 130. */
const CANCEL_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Aborts `ac` on Ctrl-C, SIGTERM or SIGHUP (the first of them; a second signal of the same kind
 * has its default effect, so a stuck cleanup can still be killed). Returns the function that
 * removes the handlers.
 */
export function cancelOnSignals(ac: AbortController): () => void {
  const handlers = CANCEL_SIGNALS.map(sig => {
    const h = () => ac.abort();
    process.once(sig, h);
    return [sig, h] as const;
  });
  return () => {
    for (const [sig, h] of handlers) process.removeListener(sig, h);
  };
}
