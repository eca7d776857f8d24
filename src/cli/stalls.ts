// `unroll-lens stalls`: duration and warp-stall breakdown of each kernel in an ncu report.
import * as fs from 'fs';
import { ScanInputError } from '../engine/parse/scan';
import { detectToolchain } from '../engine/toolchain/toolchain';
import { parseRawPage } from '../engine/profile/ncuCsv';
import { kernelProfile, stallsJson } from '../engine/profile/stalls';
import { defineCommand } from './args';
import { CliIO, EXIT, UsageError } from './io';

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
  ],
  async run({ options, positionals }, io) {
    if (!positionals.length) throw new UsageError('stalls needs a .ncu-rep report or a `--page raw --csv` export');
    if (positionals.length > 1) throw new UsageError('stalls takes one report or CSV file');
    return stalls(positionals[0], !!options.json, io);
  },
});

async function stalls(input: string, json: boolean, io: CliIO): Promise<number> {
  if (!fs.existsSync(input)) throw new ScanInputError(`no such file: ${input}`);
  let csv: string;
  if (input.endsWith('.ncu-rep')) {
    const t = await detectToolchain({ probeGpu: false }).catch(() => null);
    const ncu = t?.ncu;
    if (!ncu || !t)
      throw new ScanInputError(
        'reading a .ncu-rep needs ncu (Nsight Compute); export it elsewhere with `ncu -i report.ncu-rep --csv --page raw > report.csv` and pass the CSV',
      );
    const r = await t.runner(ncu.path, ['--import', input, '--csv', '--page', 'raw'], { timeoutMs: 120_000 });
    if (r.exitCode !== 0) throw new ScanInputError(`ncu could not read ${input}: ${(r.stderr || r.stdout).trim()}`);
    csv = r.stdout;
  } else {
    try {
      csv = fs.readFileSync(input, 'utf8');
    } catch {
      throw new ScanInputError(`cannot read file: ${input}`);
    }
  }
  const rows = parseRawPage(csv).kernels;
  if (!rows.length) throw new ScanInputError(`${input}: no profiled kernels found (expected ncu's raw page: --csv --page raw)`);
  const out = stallsJson(rows);
  if (json) {
    io.out(JSON.stringify(out, null, 2) + '\n');
    return EXIT.ok;
  }
  // One block per kernel: median duration over its profiled launches, mean stall shares.
  const groups = new Map<string, number[]>();
  out.kernels.forEach((k, i) => groups.set(k.name, [...(groups.get(k.name) ?? []), i]));
  for (const [name, idx] of groups) {
    const durations = idx
      .map(i => out.kernels[i].durationNs)
      .filter((d): d is number => d !== null)
      .sort((a, b) => a - b);
    const median = durations.length ? durations[Math.floor(durations.length / 2)] : null;
    const occ = idx.map(i => kernelProfile(rows[i]).achievedOccupancy).filter((x): x is number => x !== null);
    io.out(
      `${name}\n  ${idx.length} launch${idx.length === 1 ? '' : 'es'} · median duration ${median !== null ? (median / 1e3).toFixed(2) + ' us' : 'n/a'}` +
        `${occ.length ? ` · achieved occupancy ${(occ.reduce((a, b) => a + b, 0) / occ.length).toFixed(1)}%` : ''}\n`,
    );
    const mean = (reason: string, key: 'stallShare' | 'stalls') =>
      idx.reduce((a, i) => a + (out.kernels[i][key][reason] ?? 0), 0) / idx.length;
    const reasons = Object.keys(out.kernels[idx[0]].stallShare);
    for (const reason of reasons.sort((a, b) => mean(b, 'stallShare') - mean(a, 'stallShare')).slice(0, 6)) {
      io.out(
        `  ${reason.padEnd(20)} ${(mean(reason, 'stallShare') * 100).toFixed(1).padStart(5)}%  (${mean(reason, 'stalls').toFixed(2)} cycles per issued instruction)\n`,
      );
    }
  }
  return EXIT.ok;
}
