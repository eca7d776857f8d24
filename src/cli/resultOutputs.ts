// The result files `bench` and `sweep` both write besides stdout: --csv, --t4, --report and
// --save, from the one result type (SweepResult). The options, their check before any work and
// their writing at the end are this file's, so both commands offer and treat them alike.
import * as fs from 'fs';
import * as path from 'path';
import { saveResult, sweepCsv, sweepT4 } from '../engine';
import { loadPanelAssets, reportHtml } from '../panelHtml';
import type { SweepResult } from '../schema/types';
import type { OptionSpec } from './args';
import { BadInputError, CliIO } from './io';
import { checkOutputs, OutputFile, writeOutputFile } from './outputs';

export const RESULT_OUTPUT_OPTIONS = {
  csv: { type: 'string', value: 'FILE', help: 'also write one CSV row per variant', default: 'none' },
  t4: {
    type: 'string',
    value: 'FILE',
    help: 'also write the results in the T4 autotuning schema (Kernel Tuner and others read it)',
    default: 'none',
  },
  report: {
    type: 'string',
    value: 'FILE',
    help: "also write a self-contained HTML report (the editor's results panel, offline)",
    default: 'none',
  },
  force: {
    type: 'boolean',
    help: 'let --csv, --t4 and --report replace an existing file that Unroll Lens did not write (never the input, a link or a folder)',
  },
  save: {
    type: 'string',
    value: 'DIR',
    help: 'also save the result under DIR/.unroll-lens/results, where the editor lists saved results',
    default: 'none',
  },
} satisfies Record<string, OptionSpec>;

/** What the user asked to be written, from the parsed options. */
export interface ResultOutputs {
  files: OutputFile[];
  force: boolean;
  save: string | undefined;
}

export function resultOutputsOf(options: { csv?: string; t4?: string; report?: string; force?: boolean; save?: string }): ResultOutputs {
  const all: [OutputFile['option'], string | undefined][] = [
    ['csv', options.csv],
    ['t4', options.t4],
    ['report', options.report],
  ];
  return {
    files: all.filter((x): x is [OutputFile['option'], string] => x[1] !== undefined).map(([option, file]) => ({ option, file })),
    force: !!options.force,
    save: options.save,
  };
}

/** Throws before anything is built when an output may not be written (outputs.ts says what may). */
export function checkResultOutputs(o: ResultOutputs, input: string): void {
  checkOutputs(o.files, { force: o.force, inputs: [input], saveDir: o.save });
}

/** Writes every asked output; one that fails (the disk changed since the check) does not cost the others. */
export function writeResultOutputs(result: SweepResult, o: ResultOutputs, io: CliIO): void {
  const render = {
    csv: () => sweepCsv(result),
    t4: () => JSON.stringify(sweepT4(result), null, 2) + '\n',
    // paths relative to where the command ran: a report is shared, this machine's folders are not
    report: () => reportHtml(result, loadPanelAssets(), { baseDir: process.cwd() }),
  };
  const failed: Error[] = [];
  for (const out of o.files) {
    try {
      writeOutputFile(out, render[out.option](), o.force);
    } catch (e) {
      failed.push(e as Error);
    }
  }
  try {
    if (o.save) io.err(`saved ${saveInto(o.save, result)}\n`);
  } catch (e) {
    failed.push(e as Error);
  }
  if (failed.length) throw failed.length === 1 ? failed[0] : new BadInputError(failed.map(e => e.message).join('\n'));
}

/** --save: the folder is the user's (created when missing); below it, no link may lead out. */
function saveInto(dir: string, result: SweepResult): string {
  try {
    fs.mkdirSync(path.resolve(dir), { recursive: true });
    return saveResult(path.resolve(dir), result);
  } catch (e) {
    throw new BadInputError(`--save ${dir}: ${(e as Error).message}`);
  }
}
