// `unroll-lens` command line: the same engine as the language server, headless.
import { collectCudaFiles, scanFiles, ScanInputError, toScanJson } from '../engine/parse/scan';
import { computeFindings } from '../engine/parse/findings';
import { CudaDocuments } from '../engine/parse/documents';
import { loopLensSummary, kernelLabel, manualUnrollSummary } from '../engine/report/describe';
import type { FileAnalysis } from '../engine/parse/model';
import { Progress } from './progress';
import { sassCommand } from './sass';
import { benchCommand, stallsCommand } from './bench';
import { MissingToolError } from '../engine/toolchain/discover';

const USAGE = `Usage: unroll-lens <command> [options]

Commands:
  scan <files|dirs>... [--json]   List kernels, device functions, loops, unroll pragmas,
                                  trip counts and manual unrolls in .cu/.cuh files.
  sass <file> [--arch sm_90] [--loop LINE] [--factors default,1,2,4,8,16,full]
              [--kernel NAME] [--jobs N] [--json]
                                  Compile the file with nvcc and count its SASS per kernel;
                                  with --loop, build one variant per unroll factor of that
                                  loop and report instructions, registers, spills and the
                                  unroll factor nvcc really applied.
  bench <file> --loop LINE[,LINE…] [--kernel NAME] [--factors default,1,2,4,8,16,full]
               [--args "<program arguments>"] [--samples N] [--warmup N]
               [--clock-control base|none] [--timeout S] [--launcher "srun -p gpu"]
               [--source-stalls] [--keep-reports DIR] [--json]
                                  Build each variant as a program, check its result, time the
                                  kernel under Nsight Compute and report stall reasons (needs a GPU).
  stalls <report.ncu-rep | raw-page.csv> [--json]
                                  Duration and stall breakdown of each profiled kernel.
Options:
  --json        machine-readable output (contract: docs/cli.md)
  --strict      exit 1 when a diagnostic is found (for CI gates)
  -h, --help    this help
Exit codes: 0 success, 1 findings with --strict, 2 bad usage or unreadable input.`;

export interface CliIO {
  out: (s: string) => void;
  err: (s: string) => void;
  isTTY: boolean;
}

const defaultIO: CliIO = {
  out: s => process.stdout.write(s),
  err: s => process.stderr.write(s),
  isTTY: !!process.stderr.isTTY,
};

export async function main(argv: string[], io: CliIO = defaultIO): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '-h' || command === '--help') {
    io.out(USAGE + '\n');
    return command ? 0 : 2;
  }
  try {
    switch (command) {
      case 'scan': return await scanCommand(rest, io);
      case 'sass': return await sassCommand(rest, io);
      case 'bench': return await benchCommand(rest, io);
      case 'stalls': return await stallsCommand(rest, io);
      default:
        io.err(`unroll-lens: unknown command '${command}'\n\n${USAGE}\n`);
        return 2;
    }
  } catch (e) {
    if (e instanceof ScanInputError || e instanceof UsageError || e instanceof MissingToolError) {
      io.err(`unroll-lens: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

export class UsageError extends Error {}

async function scanCommand(args: string[], io: CliIO): Promise<number> {
  let json = false;
  let strict = false;
  const inputs: string[] = [];
  for (const a of args) {
    if (a === '--json') json = true;
    else if (a === '--strict') strict = true;
    else if (a === '-h' || a === '--help') { io.out(USAGE + '\n'); return 0; }
    else if (a.startsWith('-')) throw new UsageError(`unknown option '${a}' for scan`);
    else inputs.push(a);
  }
  if (!inputs.length) throw new UsageError('scan needs at least one file or directory');
  const files = collectCudaFiles(inputs);
  if (!files.length) throw new ScanInputError(`no .cu or .cuh files in ${inputs.join(', ')}`);
  const docs = await CudaDocuments.create();
  const progress = new Progress('scan', files.length, io.isTTY && !json ? io.err : null);
  const results: FileAnalysis[] = [];
  for (const f of files) {
    results.push(...(await scanFiles([f], docs)));
    progress.tick(f);
  }
  progress.done();
  if (json) {
    io.out(JSON.stringify(toScanJson(results), null, 2) + '\n');
  } else {
    io.out(renderTable(results));
  }
  const findings = results.reduce((n, r) => n + computeFindings(r).length, 0);
  return strict && findings ? 1 : 0;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

export function renderTable(results: FileAnalysis[]): string {
  const lines: string[] = [];
  let loops = 0;
  let kernels = 0;
  for (const r of results) {
    lines.push(`${r.path}${r.hasSyntaxErrors ? '  (syntax errors: best-effort results)' : ''}`);
    if (!r.kernels.length) lines.push('  no device code');
    for (const k of r.kernels) {
      kernels++;
      lines.push(`  ${pad(String(k.line), 5)} ${kernelLabel(k)}${k.launchBounds ? ` __launch_bounds__(${k.launchBounds.join(', ')})` : ''}`);
      for (const l of k.loops) {
        loops++;
        lines.push(`    ${pad(String(l.line), 5)} ${'  '.repeat(l.depth)}${pad(l.kind, 6)} ${loopLensSummary(k, l)}`);
      }
      for (const m of k.manualUnrolls) {
        lines.push(`    ${pad(`${m.line}-${m.endLine}`, 9)} ${manualUnrollSummary(m)}: ${m.detail}`);
      }
    }
    for (const f of computeFindings(r)) lines.push(`  ${f.span.line}: ${f.severity}: ${f.message} [${f.code}]`);
    lines.push('');
  }
  lines.push(`${results.length} files, ${kernels} device functions, ${loops} loops`);
  return lines.join('\n') + '\n';
}
