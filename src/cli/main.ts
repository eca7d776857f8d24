// `unroll-lens` command line: the same engine as the language server, headless.
// A subcommand is one file exporting a `defineCommand(...)`, registered by one line in COMMANDS.
import type { CliCommand } from './args';
import { optionRows } from './args';
import { CliIO, cliVersion, defaultIO, EXIT, exitCodeFor, UsageError } from './io';
import { scanCommand } from './scan';
import { sassCommand } from './sass';
import { benchCommand } from './bench';
import { compareCommand } from './compare';
import { stallsCommand } from './stalls';
import { sweepCommand } from './sweep';
import { cacheCommand } from './cache';
import { slurmTaskMain } from './slurm';

export type { CliIO } from './io';
export { UsageError } from './io';
export { renderTable } from './scan';

/** Every subcommand, in the order `unroll-lens --help` lists them. */
export const COMMANDS: readonly CliCommand[] = [
  scanCommand,
  sassCommand,
  benchCommand,
  compareCommand,
  sweepCommand,
  stallsCommand,
  cacheCommand,
];

export function usage(): string {
  return [
    'Usage: unroll-lens <command> [options]',
    '       unroll-lens <command> --help    options and exit codes of one command',
    '       unroll-lens --version',
    '',
    'Commands:',
    optionRows(COMMANDS.map(c => [c.name, c.summary])),
    '',
    'Options:',
    optionRows([
      ['-h, --help', 'this help'],
      ['--version', 'print the version and exit'],
    ]),
    '',
    'Exit codes:',
    optionRows([
      [String(EXIT.ok), 'success (--help and --version too)'],
      [
        String(EXIT.failed),
        'scan --strict found a diagnostic; sass: the file as written does not compile; bench: a variant failed; ' +
          'sweep: no variant finished ok',
      ],
      [
        String(EXIT.usage),
        'bad usage (no command, unknown command or option, missing or bad value), a missing or unreadable input, ' +
          'or a tool the command needs (nvcc, ncu) not found',
      ],
      [
        String(EXIT.badInput),
        'stalls: the CSV is cut off or damaged (nothing is reported from it); sweep: an output file it may not write (not written by Unroll Lens, without --force); sass, bench: nvcc rejected a compile flag (named)',
      ],
      [String(EXIT.internal), 'internal error: a bug in Unroll Lens (stack trace on stderr)'],
      [String(EXIT.cancelled), 'cancelled with Ctrl-C, SIGTERM or SIGHUP'],
    ]),
    '',
    'JSON contracts and examples: docs/cli.md',
    '',
  ].join('\n');
}

/** Runs one command line; resolves with the exit code (bin/unroll-lens.js sets it). */
export async function main(argv: string[], io: CliIO = defaultIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.err(usage());
    return EXIT.usage;
  }
  if (name === '-h' || name === '--help') {
    io.out(usage());
    return EXIT.ok;
  }
  if (name === '--version') {
    io.out(`unroll-lens ${cliVersion()}\n`);
    return EXIT.ok;
  }
  // internal: one array task of a Slurm sweep, run by the job script the sweep wrote (not listed)
  if (name === 'slurm-task') return runGuarded(() => slurmTaskMain(rest, io), 'slurm-task', io);
  const command = COMMANDS.find(c => c.name === name);
  if (!command) {
    io.err(`unroll-lens: unknown ${name.startsWith('-') ? 'option' : 'command'} '${name}'\n\n${usage()}`);
    return EXIT.usage;
  }
  return runGuarded(() => command.main(rest, io), command.name, io);
}

/** A command's exit code; an error it throws said on stderr and mapped to its code. */
async function runGuarded(f: () => Promise<number>, name: string, io: CliIO): Promise<number> {
  try {
    return await f();
  } catch (e) {
    const code = exitCodeFor(e);
    if (code === EXIT.internal) {
      io.err(`unroll-lens: internal error (please report it): ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    } else {
      io.err(`unroll-lens: ${(e as Error).message}\n`);
      if (e instanceof UsageError) io.err(`Run 'unroll-lens ${name} --help' for its options.\n`);
    }
    return code;
  }
}
