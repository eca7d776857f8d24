// A loop's variants started together with the file's table, so both share one pool of builds.
import { FileAnalysis, FileSassReport, LoopReport, UnrollFactors, VariantInspector } from '../engine';

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

function startLoopAhead(
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

/**
 * The file's table and, with a loop, its variants begun at once (one pool of builds); the loop's
 * builds stop when the file's table throws. The caller abandons `ahead` when the table says the
 * file did not compile or a flag names nothing.
 */
export async function fileWithLoopAhead(
  inspector: VariantInspector,
  at: { file: string; text: string; analysis: FileAnalysis; line: number | null; factors: UnrollFactors; kernel?: string },
  opts: { signal: AbortSignal; onFileProgress: () => void; onLoopProgress: (key: string) => void },
): Promise<{ fileReport: FileSassReport; ahead: LoopAhead | null }> {
  const fileP = inspector.inspectFile(at.file, at.text, at.analysis, { signal: opts.signal, onProgress: opts.onFileProgress });
  const ahead =
    at.line !== null ? startLoopAhead(inspector, { ...at, line: at.line }, { signal: opts.signal, onProgress: opts.onLoopProgress }) : null;
  try {
    return { fileReport: await fileP, ahead };
  } catch (e) {
    await ahead?.abandon();
    throw e;
  }
}
