// How V8 compiles the parser's WebAssembly in the language server and in a short scan. By default V8 starts every
// function on its baseline compiler (Liftoff) and recompiles the hot ones with TurboFan in the
// background. The parser's lexer and parse loop are single functions of 30–100 KB, so the first
// parse of any file, however small, makes V8 spend about a second of CPU optimising them; on a
// machine with few cores that compile takes the CPU the next file's open needs (a 5,000-line file's
// first CodeLens: ~370 ms with it, ~250 ms without). Baseline code parses that file in ~80 ms
// instead of ~40 ms once optimised: the server trades that for never stalling behind the compile.
// A scan small enough for one thread, or under a few MB of source (scanPool.ts), in a process that
// ends with it (the CLI) does the same: the compile it starts is not done when the scan is, and
// the process's exit waits for it (a one-file scan idled 0.42 s before exiting; docs/measurements.md),
// or it takes the cores the scan's threads need. A larger scan keeps V8's default: CUTLASS's 825
// headers took 11 % longer on baseline code.
import * as v8 from 'v8';

/** The V8 flag that keeps WebAssembly on the baseline compiler. */
const BASELINE_WASM_FLAG = '--liftoff-only';

/** Must run before the parser's WebAssembly is compiled (CudaDocuments.create): V8 reads the flag then. */
export function compileWasmWithBaselineOnly(): void {
  v8.setFlagsFromString(BASELINE_WASM_FLAG);
}
