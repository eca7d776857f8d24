// `unroll-lens scan`: kernels, loops, pragmas, trip counts and manual unrolls, without a compiler.
import * as fs from 'fs';
import * as path from 'path';
import {
  ScanInputError,
  SkippedFile,
  collectScanFiles,
  computeFindings,
  defaultCacheDir,
  kernelLabel,
  loopLensSummary,
  manualUnrollSummary,
  scanCacheBeside,
  scanInParallel,
  toScanJson,
  type FileAnalysis,
} from '../engine';
import { defineCommand } from './args';
import { EXIT, UsageError } from './io';
import { checkInputFile } from './inputs';
import { Progress } from './progress';

export const scanCommand = defineCommand({
  name: 'scan',
  summary: 'List kernels, device functions, loops, unroll pragmas, trip counts and manual unrolls in .cu/.cuh files (no compiler needed).',
  synopsis: '<files|dirs>... [--json] [--strict] [--builtin-macros] [--fresh]',
  description:
    'Parses each file with tree-sitter, the same analysis as the editor. Directories are searched recursively for .cu and\n' +
    '.cuh files, and .h/.hpp/.inl headers that hold device code, also through qualifier macros the tree defines\n' +
    '(node_modules and dot-folders are skipped); files a walk does not scan are counted, and listed with the reason in\n' +
    '--json. Macros that qualify functions or spell unroll pragmas are expanded from the #defines each file sees: its\n' +
    "own and its headers', found through compile_commands.json (from the current directory up), the CUDA toolkit's\n" +
    "include directories, then the scanned directories and their include/ folders, with #if taken as for nvcc's device\n" +
    'pass. Names no readable header defines fall back to a built-in table of the CCCL, CUTLASS, CuTe and PyTorch\n' +
    'macros. Nothing is run. The table ends each file with the diagnostics the editor shows. Each analysis is kept in\n' +
    '$XDG_CACHE_HOME/unroll-lens/scans (default ~/.cache/unroll-lens/scans) and used again only while the file, every\n' +
    'header it read, every place its include search looked, its flags and this build of Unroll Lens are as they were.',
  options: {
    json: { type: 'boolean', help: 'machine-readable output (contract: docs/cli.md)' },
    strict: { type: 'boolean', help: 'exit 1 when a diagnostic is found (for CI gates)' },
    'builtin-macros': { type: 'boolean', help: 'do not read headers: recognise library macros from the built-in table only (faster)' },
    fresh: { type: 'boolean', help: 'analyse every file again: the scan cache is neither read nor written' },
  },
  exitCodes: [
    [EXIT.ok, 'scanned'],
    [EXIT.failed, '--strict and at least one diagnostic was found'],
    [EXIT.usage, 'bad usage, or a path that is missing, unreadable or holds no .cu/.cuh file (the message names it)'],
  ],
  async run({ options, positionals }, io) {
    if (!positionals.length) throw new UsageError('scan needs at least one file or directory');
    const json = !!options.json;
    // A FIFO or a device named x.cu would hang the read; a huge file is not hand-written source.
    // Named files are checked before anything reads them; a walk skips such files and lists them.
    const { files, skipped, texts } = collectScanFiles(positionals);
    for (const p of positionals) if (!isDirectory(p)) checkInputFile(p);
    if (!files.length) throw new ScanInputError(`no .cu or .cuh files (or headers with device code) in ${positionals.join(', ')}`);
    const headers = !options['builtin-macros'];
    const progress = new Progress('scan', files.length, io.isTTY && !json ? io.err : null);
    // Headers nothing else finds are looked for in the scanned folders (and their include/).
    const scanRoots = positionals.filter(isDirectory).map(p => path.resolve(p));
    const cache = options.fresh ? null : scanCacheBeside(defaultCacheDir());
    const results = await scanInParallel(
      files,
      texts,
      { cwd: process.cwd(), scanRoots, headers, exitsAfter: true },
      f => progress.tick(f),
      cache,
    );
    progress.done();
    if (cache && !cache.usable)
      io.err(
        `unroll-lens: warning: ${cache.dir} is not an Unroll Lens scan cache (it holds other files and no marker of ours): analyses are not cached there\n`,
      );
    io.out(json ? JSON.stringify(toScanJson(results, skipped), null, 2) + '\n' : renderTable(results, skipped));
    const findings = results.reduce((n, r) => n + computeFindings(r).length, 0);
    return options.strict && findings ? EXIT.failed : EXIT.ok;
  },
});

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

export function renderTable(results: FileAnalysis[], skipped: SkippedFile[] = []): string {
  const lines: string[] = [];
  let loops = 0;
  let kernels = 0;
  for (const r of results) {
    lines.push(`${r.path}${r.hasSyntaxErrors ? '  (syntax errors: best-effort results)' : ''}`);
    for (const w of r.readWarnings ?? []) lines.push(`  warning: ${w}`);
    if (!r.kernels.length) lines.push('  no device code');
    for (const k of r.kernels) {
      kernels++;
      lines.push(
        `  ${pad(String(k.line), 5)} ${kernelLabel(k)}${k.launchBounds ? ` __launch_bounds__(${k.launchBounds.join(', ')})` : ''}`,
      );
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
  // Headers without device code are the common case in a library: counted, not listed.
  const noDevice = skipped.filter(k => k.reason === 'no-device-code').length;
  for (const k of skipped) if (k.reason !== 'no-device-code') lines.push(`${k.path}  (skipped: ${k.reason})`, '');
  const skips = skipped.length
    ? `; skipped ${skipped.length} (${noDevice} headers without device code${skipped.length > noDevice ? `, ${skipped.length - noDevice} listed above` : ''})`
    : '';
  lines.push(`${results.length} files, ${kernels} device functions, ${loops} loops${skips}`);
  return lines.join('\n') + '\n';
}
