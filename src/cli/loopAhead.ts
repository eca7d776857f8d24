// A loop's variants started together with the file's table, so both share one pool of builds.
import { FileAnalysis, LoopReport, UnrollFactors, VariantInspector } from '../engine';

/**
 * The loop's builds, begun before the file's table is awaited: a template-heavy unit's
 * as-written build is the longest and used to run alone while the factors waited for it (part 4
 * of issue 39: 1.36× the hand builds). The builder's one pool keeps the total at its concurrency
 * and compiles a source asked for twice (the file as written and `full`) once.
 */
export interface LoopAhead {
  /** The loop's report; throws what inspectLoop throws (NotInstantiatedError among them). */
  result(): Promise<LoopReport>;
  /** The file did not compile or a usage error ended the command: stop the loop's builds and wait for them to go. */
  abandon(): Promise<void>;
}

export function startLoopAhead(
  inspector: VariantInspector,
  at: { file: string; text: string; analysis: FileAnalysis; line: number; factors: UnrollFactors; kernel?: string },
  opts: { signal: AbortSignal; onProgress: (key: string) => void },
): LoopAhead {
  const own = new AbortController();
  const stop = () => own.abort();
  opts.signal.addEventListener('abort', stop, { once: true });
  const report = inspector
    .inspectLoop(at.file, at.text, at.analysis, at.line, at.factors, {
      signal: own.signal,
      kernel: at.kernel,
      onProgress: (_d, _t, key) => opts.onProgress(key),
    })
    .finally(() => opts.signal.removeEventListener('abort', stop));
  // Awaited by result() or abandon(); never an unhandled rejection in between.
  report.catch(() => undefined);
  return {
    result: () => report,
    abandon: async () => {
      own.abort();
      await report.catch(() => undefined);
    },
  };
}
