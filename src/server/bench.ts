// "Benchmark this loop" on the server: build, check, time and profile every unroll factor of one
// loop on the GPU. One run at a time per request; cancellable through the request's token.
import * as path from 'path';
import { CancellationToken, ProgressToken } from 'vscode-languageserver/node';
import type { FileAnalysis } from '../engine/parse/model';
import { benchLoop, BenchReport, runOptionsFromSettings } from '../engine/profile/bench';
import { parseFactorList } from '../engine/variants/rewrite';
import type { Settings } from '../protocol';
import type { DocumentFactsStore } from './facts';
import type { ServerToolchain } from './toolchain';
import { uriToPath } from './uri';

export class BenchService {
  constructor(
    private readonly toolchain: ServerToolchain,
    private readonly facts: DocumentFactsStore,
    private readonly settings: () => Settings,
    private readonly cacheDir: () => string,
  ) {}

  async benchLoop(
    uri: string,
    text: string,
    analysis: FileAnalysis,
    line: number,
    factorTexts: string[] | undefined,
    token: CancellationToken,
    workDoneToken?: ProgressToken,
  ): Promise<BenchReport> {
    const file = uriToPath(uri);
    if (!file) throw new Error('only files on disk can be benchmarked');
    const s = this.settings();
    if (!/\bmain\s*\(/.test(text) && !s.profile.compileCommand.length) {
      throw new Error(
        'this file has no main(): set unrollLens.profile.compileCommand (e.g. your make/nvcc line with {source} and {output}) and, if needed, runCommand, so Unroll Lens can build and run your program',
      );
    }
    const factors = parseFactorList((factorTexts ?? s.unrollFactors).join(','));
    const work = {
      title: 'Unroll Lens: benchmarking unroll variants on the GPU',
      message: `line ${line}`,
      building: `GPU ${path.basename(file)}:${line}`,
      token,
      workDoneToken,
    };
    return this.toolchain.runRequest(work, async (signal, progress) => {
      const t = await this.toolchain.tools(file);
      const flags = this.toolchain.flagsFor(file);
      // The file as written runs first, then one program per factor.
      const total = factors.length + 1;
      const report = await benchLoop(file, text, analysis, {
        toolchain: t,
        arch: this.toolchain.archFor(t, flags.arch),
        flags,
        cacheDir: this.cacheDir(),
        loops: [line],
        factors,
        ...runOptionsFromSettings(s.profile),
        // nvcc itself is also held to it by the toolchain's runner; this covers compileCommand (make, cmake).
        nvccTimeoutMs: s.toolchain.nvccTimeoutSeconds * 1000,
        sourceStalls: s.profile.sourceStalls,
        signal,
        onProgress: (msg, done) => progress(Math.round((Math.min(done, total) / total) * 100), msg),
      });
      this.facts.record(uri, text, f => f.benches.set(line, report));
      return report;
    });
  }
}
