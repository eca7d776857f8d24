// Loads tree-sitter (WebAssembly build) with the CUDA grammar once per process.
// The wasm route avoids native modules, so the same code runs in VS Code's extension host,
// the CLI and tests on any platform.
import * as fs from 'fs';
import * as path from 'path';
import { Language, Parser, Tree, Node, Edit, Point } from 'web-tree-sitter';

export type { Tree, Node, Edit, Point, Parser };

let loaded: Promise<Language> | undefined;

/** Finds a wasm file next to this module (bundled layout) or through its package. */
function findWasm(fileName: string, specifier: string): string {
  const local = path.join(__dirname, fileName);
  if (fs.existsSync(local)) return local;
  try {
    return require.resolve(specifier);
  } catch {
    throw new Error(`Unroll Lens: ${specifier} not found; reinstall the dependencies (npm ci)`);
  }
}

/** The parser's runtime and the CUDA grammar, as files (what a cached analysis was computed with, besides our code). */
export function parserWasmFiles(): [runtime: string, grammar: string] {
  return [
    findWasm('tree-sitter.wasm', 'web-tree-sitter/tree-sitter.wasm'),
    findWasm('tree-sitter-cuda.wasm', 'tree-sitter-cuda/tree-sitter-cuda.wasm'),
  ];
}

function loadCudaLanguage(): Promise<Language> {
  if (!loaded) {
    loaded = (async () => {
      const [runtimeWasm, grammar] = parserWasmFiles();
      await Parser.init({ locateFile: () => runtimeWasm });
      return Language.load(grammar);
    })();
    loaded.catch(() => (loaded = undefined));
  }
  return loaded;
}

export async function createCudaParser(): Promise<Parser> {
  const language = await loadCudaLanguage();
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}

/** Byte offsets in tree-sitter's wasm build are UTF-16 code-unit offsets of the JS string. */
export function pointAt(text: string, index: number): Point {
  let row = 0;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) {
    row++;
    lineStart = i + 1;
  }
  return { row, column: index - lineStart };
}
