// `unroll-lens stalls`: duration and warp-stall breakdown of each kernel in an ncu report.
import * as fs from 'fs';
import {
  RawPageError,
  RawPageStream,
  RawPageSummary,
  ScanInputError,
  detectToolchain,
  isProfileMetric,
  kernelProfile,
  readRawPageFile,
  stallsJson,
  type RawKernelRow,
} from '../engine';
import { defineCommand } from './args';
import { checkInputFile } from './inputs';
import { BadInputError, CliIO, EXIT, UsageError } from './io';

export const stallsCommand = defineCommand({
  name: 'stalls',
  summary: 'Duration and warp-stall breakdown of each kernel profiled in an ncu report or its raw-page CSV export.',
  synopsis: '<report.ncu-rep | raw-page.csv> [--json]',
  description:
    'Reads an ncu report (through `ncu --import … --csv --page raw`, so a .ncu-rep needs ncu) or a raw page exported with\n' +
    '`ncu -i report.ncu-rep --csv --page raw > report.csv` (no ncu needed). The table groups the launches of one kernel:\n' +
    'median duration, mean stall shares; --json lists every launch.',
  options: {
    json: { type: 'boolean', help: 'machine-readable output, one entry per profiled launch (contract: docs/cli.md)' },
  },
  exitCodes: [
    [EXIT.ok, 'read'],
    [EXIT.usage, 'bad usage, a missing file, no profiled kernel in it, or a .ncu-rep without ncu to read it'],
    [EXIT.badInput, 'the CSV is cut off or damaged (a row with missing cells, text that is not a row, no header): nothing is reported'],
  ],
  async run({ options, positionals }, io) {
    if (!positionals.length) throw new UsageError('stalls needs a .ncu-rep report or a `--page raw --csv` export');
    if (positionals.length > 1) throw new UsageError('stalls takes one report or CSV file');
    return stalls(positionals[0], !!options.json, io);
  },
});

async function stalls(input: string, json: boolean, io: CliIO): Promise<number> {
  if (!fs.existsSync(input)) throw new ScanInputError(`no such file: ${input}`);
  checkInputFile(input, null);
  const read = await launchReader(input);
  const checked: LaunchReader<number> = async onLaunch => {
    let summary: RawPageSummary;
    try {
      summary = await read(onLaunch);
    } catch (e) {
      if (e instanceof RawPageError) throw new BadInputError(`${input}: ${e.message}; nothing is reported from it`);
      if (e instanceof Error && 'code' in e) throw new ScanInputError(`cannot read file: ${input} (${e.message})`);
      throw e;
    }
    if (!summary.launches) throw new ScanInputError(`${input}: no profiled kernels found (expected ncu's raw page: --csv --page raw)`);
    return summary.launches;
  };
  if (json) await printLaunchesJson(checked, io);
  else printKernelTable(await groupByKernel(checked), io);
  return EXIT.ok;
}

/** Reads every profiled launch of a raw page, calling back once per launch row. */
type LaunchReader<T> = (onLaunch: (row: RawKernelRow) => void) => Promise<T>;

/** Where the launch rows come from: the CSV file as a stream, or what ncu prints for a report. */
async function launchReader(input: string): Promise<LaunchReader<RawPageSummary>> {
  if (!input.endsWith('.ncu-rep')) return onLaunch => readRawPageFile(input, { onLaunch, columns: isProfileMetric });
  const t = await detectToolchain({ probeGpu: false }).catch(() => null);
  const ncu = t?.ncu;
  if (!ncu || !t)
    throw new ScanInputError(
      'reading a .ncu-rep needs ncu (Nsight Compute); export it elsewhere with `ncu -i report.ncu-rep --csv --page raw > report.csv` and pass the CSV',
    );
  const r = await t.runner(ncu.path, ['--import', input, '--csv', '--page', 'raw'], { timeoutMs: 120_000 });
  if (r.exitCode !== 0) throw new ScanInputError(`ncu could not read ${input}: ${(r.stderr || r.stdout).trim()}`);
  return async onLaunch => {
    const reader = new RawPageStream({ onLaunch, columns: isProfileMetric });
    reader.push(r.stdout);
    return reader.end();
  };
}

/** --json: every launch, one entry each. */
async function printLaunchesJson(checked: LaunchReader<number>, io: CliIO): Promise<void> {
  // Two passes, so that damaged input prints nothing: the first checks the whole page, the
  // second prints one launch at a time (the same text as JSON.stringify of the whole list).
  await checked(() => {});
  let first = true;
  io.out('{\n  "kernels": [\n');
  await checked(row => {
    const entry = stallsJson([row]).kernels[0];
    io.out(`${first ? '' : ',\n'}    ${JSON.stringify(entry, null, 2).replace(/\n/g, '\n    ')}`);
    first = false;
  });
  io.out('\n  ]\n}\n');
}

/** The launches of one kernel, summed as they are read. */
interface KernelLaunches {
  launches: number;
  durations: number[];
  occupancy: { sum: number; n: number };
  /** The first launch's reasons (those the table lists), with sums over every launch. */
  reasons: string[];
  share: Map<string, number>;
  stalls: Map<string, number>;
}

// Aggregated launch by launch: per kernel, only sums and the durations are kept.
async function groupByKernel(checked: LaunchReader<number>): Promise<Map<string, KernelLaunches>> {
  const groups = new Map<string, KernelLaunches>();
  await checked(row => {
    const p = kernelProfile(row);
    let g = groups.get(p.name);
    if (!g) {
      g = {
        launches: 0,
        durations: [],
        occupancy: { sum: 0, n: 0 },
        reasons: Object.keys(p.stallShare),
        share: new Map(),
        stalls: new Map(),
      };
      for (const r of g.reasons) {
        g.share.set(r, 0);
        g.stalls.set(r, 0);
      }
      groups.set(p.name, g);
    }
    g.launches++;
    if (p.durationNs !== null) g.durations.push(p.durationNs);
    if (p.achievedOccupancy !== null) {
      g.occupancy.sum += p.achievedOccupancy;
      g.occupancy.n++;
    }
    for (const r of g.reasons) {
      g.share.set(r, g.share.get(r)! + (p.stallShare[r] ?? 0));
      g.stalls.set(r, g.stalls.get(r)! + (p.stalls[r] ?? 0));
    }
  });
  return groups;
}

// One block per kernel: median duration over its profiled launches, mean stall shares.
function printKernelTable(groups: Map<string, KernelLaunches>, io: CliIO): void {
  for (const [name, g] of groups) {
    const durations = g.durations.sort((a, b) => a - b);
    const median = durations.length ? durations[Math.floor(durations.length / 2)] : null;
    const n = g.launches;
    io.out(
      `${name}\n  ${n} launch${n === 1 ? '' : 'es'} · median duration ${median !== null ? (median / 1e3).toFixed(2) + ' us' : 'n/a'}` +
        `${g.occupancy.n ? ` · achieved occupancy ${(g.occupancy.sum / g.occupancy.n).toFixed(1)}%` : ''}\n`,
    );
    const mean = (reason: string, key: 'share' | 'stalls') => g[key].get(reason)! / n;
    for (const reason of g.reasons.sort((a, b) => mean(b, 'share') - mean(a, 'share')).slice(0, 6)) {
      io.out(
        `  ${reason.padEnd(20)} ${(mean(reason, 'share') * 100).toFixed(1).padStart(5)}%  (${mean(reason, 'stalls').toFixed(2)} cycles per issued instruction)\n`,
      );
    }
  }
}
