// `--build`, `--run`, `--check` and `--project-root`: a bench, sweep or compare through the
// project's own build and run (issue 39). The commands are the user's, typed on this command line
// (nothing of the repository's runs unless named here); they run in a copy of the project tree
// that Unroll Lens owns (engine/variants/projectTree.ts), never in the tree or its build folder.
import * as path from 'path';
import { ProjectError, closeProjectRun, openProjectRun, type ProjectRun } from '../engine';

export { closeProjectRun };
import { numberOption, type OptionTable } from './args';
import { SETTINGS } from '../settings';
import { CliIO, UsageError } from './io';

export const PROJECT_OPTIONS = {
  build: {
    type: 'string',
    value: '"CMD"',
    help:
      "build the project with this shell command, run from the project root, for each variant (the variant's file written into a copy of the " +
      'project first; e.g. "cmake -S . -B build -G Ninja && cmake --build build --target app"); needs --run',
    default: 'nvcc builds the file itself as a program',
  },
  run: {
    type: 'string',
    value: '"CMD"',
    help: 'run the project\'s program with this shell command, from the copy\'s root (e.g. "./build/bin/app --size 4096"); every launch of a kernel holding the loop is timed',
  },
  check: {
    type: 'string',
    value: '"CMD"',
    help:
      "after each variant's run, this shell command says whether its result is right: exit 0 = agrees with the file as written; " +
      '$UNROLL_LENS_STDOUT and $UNROLL_LENS_BASELINE_STDOUT name the two outputs',
    default: "the run's exit status and its checksum= lines",
  },
  'project-root': {
    type: 'string',
    value: 'DIR',
    help: 'the folder copied for --build and --run (it must hold the file and everything the build reads)',
    default: 'the working directory',
  },
  'build-copies': {
    type: 'string',
    value: 'N',
    help:
      "copies of the project variants are built in, N variants at once (1 to 8); each copy's first build builds everything, so more " +
      "than 1 pays when the project's whole build costs about what rebuilding the loop's file costs",
    setting: SETTINGS.project.buildCopies,
  },
  'build-timeout': {
    type: 'string',
    value: 'S',
    help: 'seconds one --build of a variant may take before it is killed (the first build of a copy builds everything)',
    setting: SETTINGS.project.buildTimeoutSeconds,
  },
} as const satisfies OptionTable;

/** The project's commands from the flags; null without --build and --run. */
export interface ProjectFlags {
  build: string;
  run: string;
  check: string | null;
  root: string;
  buildTimeoutMs: number;
  /** Copies variants are built in at once (--build-copies). */
  copies: number;
}

export function projectFlagsOf(o: {
  build?: string;
  run?: string;
  check?: string;
  'project-root'?: string;
  'build-timeout'?: string;
  'build-copies'?: string;
}): ProjectFlags | null {
  if (o.build === undefined && o.run === undefined) {
    for (const k of ['check', 'project-root'] as const)
      if (o[k] !== undefined) throw new UsageError(`--${k} is for a project's build and run: give --build and --run with it`);
    return null;
  }
  if (o.build === undefined || o.run === undefined)
    throw new UsageError('--build and --run go together: the project is built by one and its program started by the other');
  for (const k of ['build', 'run', 'check'] as const)
    if (o[k] !== undefined && !o[k]!.trim()) throw new UsageError(`--${k} needs a command`);
  const seconds = numberOption('build-timeout', o['build-timeout'], SETTINGS.project.buildTimeoutSeconds);
  return {
    build: o.build,
    run: o.run,
    check: o.check ?? null,
    root: path.resolve(o['project-root'] ?? process.cwd()),
    buildTimeoutMs: seconds * 1000,
    copies: numberOption('build-copies', o['build-copies'], SETTINGS.project.buildCopies),
  };
}

/**
 * The copies of the project (--build-copies), locked and brought up to date (a line on stderr
 * says where and what changed), for `file`. The caller releases them (closeProjectRun).
 */
export function openProject(f: ProjectFlags, file: string, cacheDir: string, io: CliIO, quiet: boolean): ProjectRun {
  const commands = { root: f.root, build: f.build, run: f.run, check: f.check };
  try {
    const { run, syncs } = openProjectRun(commands, { file, cacheDir, copies: f.copies, buildTimeoutMs: f.buildTimeoutMs });
    syncs.forEach((s, n) => {
      if (!quiet)
        io.err(
          `unroll-lens: project ${f.root} copied to ${run.trees[n].dir} (${s.copied} file${s.copied === 1 ? '' : 's'} copied, ${s.unchanged} unchanged, ` +
            `${s.removed} removed, ${(s.ms / 1000).toFixed(1)} s); --build and --run run there\n`,
        );
    });
    for (const x of syncs[0]?.skipped.slice(0, 5) ?? []) io.err(`unroll-lens: note: not copied: ${x}\n`);
    if ((syncs[0]?.skipped.length ?? 0) > 5) io.err(`unroll-lens: note: ${syncs[0].skipped.length - 5} more paths not copied\n`);
    return run;
  } catch (e) {
    if (e instanceof ProjectError) throw new UsageError(e.message);
    throw e;
  }
}
