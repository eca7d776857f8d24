// What the parse alone says about a file: its device functions and their loops, where they are,
// with no trip count or constant evaluated. The language server answers the first CodeLens of a
// file it opens from it while the analysis runs (a loop's summary, which needs the analysis, is
// resolved once it is done). The same functions and loops, in the same order, as the analysis
// lists (analyze.ts, analyzeFunction.ts); the analysis of a function that fails drops it there.
import type { Tree } from './parser';
import type { Kernel, Loop } from './model';
import { scanTopLevel } from './topLevel';
import { collectFunctions } from './deviceFunctions';
import { bodyNodesByType, collectLoops } from './bodyLoops';
import { definesMainIn } from './callGraph';

interface OutlineLoop extends Pick<Loop, 'line'> {
  /** The unroll pragma before the loop (its line), as `Loop.pragma`. */
  pragma: { line: number } | null;
}

export interface OutlineKernel extends Pick<Kernel, 'name' | 'qualifier' | 'line'> {
  loops: OutlineLoop[];
}

export interface FileOutline {
  kernels: OutlineKernel[];
  /** A function named `main` is defined: the file builds a program by itself. */
  definesMain: boolean;
}

/** Reads the macro table set by macroContext.withMacros, as the analysis does. */
export function outlineOf(tree: Tree): FileOutline {
  const top = scanTopLevel(tree.rootNode);
  const kernels = collectFunctions(top.functions).map(fn => {
    const body = fn.node.childForFieldName('body');
    const raw = body ? collectLoops(body, bodyNodesByType(body)) : [];
    const loops = raw
      .map(r => ({
        line: r.node.startPosition.row + 1,
        column: r.node.startPosition.column,
        pragma: r.pragma ? { line: r.pragma.node.startPosition.row + 1 } : null,
      }))
      .sort((a, b) => a.line - b.line || a.column - b.column)
      .map(({ line, pragma }) => ({ line, pragma }));
    return { name: fn.name, qualifier: fn.qualifier, line: fn.node.startPosition.row + 1, loops };
  });
  return { kernels, definesMain: definesMainIn(top) };
}
