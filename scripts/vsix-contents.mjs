// What the .vsix holds, shared by scripts/package-vsix.mjs (which builds it and checks the archive)
// and test/unit/vsixPackage.test.ts (which checks the same list without zipping, for the unit stage):
//   RUNTIME_FILES        the files the extension loads at run time, with who loads each
//   isAllowed(name)      whether an archive entry may be in the package at all
//   packagedReadme(root) the self-contained README vsce packages (images as data: URLs)
//   vsixFileList(root)   the files `vsce package` would put in, found the way vsce finds them
//                        (its listFiles and .vscodeignore), with their sizes
//   estimateVsixBytes(files)  the .vsix's size from that list: each file deflated as vsce's zip
//                        library does, plus the zip headers and vsce's two generated files
//   contentsTable(rows)  the listing `npm run package` prints and writes to .test-artifacts/vsix-contents.txt
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import zlib from 'node:zlib';

/**
 * Everything the extension reads from its own folder at run time (scripts/bundle.mjs and
 * scripts/build-webview.mjs write dist/). package.json's main is added by the callers.
 */
export const RUNTIME_FILES = [
  // the language server: src/extension/client.ts starts dist/server.js next to dist/extension.js
  'dist/server.js',
  // the CUDA parser: src/engine/parse/parser.ts loads both next to the running bundle
  'dist/tree-sitter.wasm',
  'dist/tree-sitter-cuda.wasm',
  // the results panel: src/extension/panel/resultsPanel.ts (and src/panelHtml.ts for the report)
  'dist/webview/panel.js',
  'dist/webview/panel.css',
  // the SASS listings' TextMate grammar (package.json contributes.grammars)
  'syntaxes/unroll-lens-sass.tmLanguage.json',
  // the CUPTI kernel timer's source: the server builds it with the user's nvcc (--timer cupti)
  'native/cupti_timer.c',
  // the Get Started walkthrough: each step's markdown (package.json contributes.walkthroughs) and
  // the sample kernel its last step opens (src/extension/commands/openWalkthrough.ts copies it)
  'walkthrough/nvcc.md',
  'walkthrough/disassemblers.md',
  'walkthrough/ncu.md',
  'walkthrough/gpu.md',
  'walkthrough/benchmark.md',
  'walkthrough/sample/first_benchmark.cu',
];

/** Entries vsce adds or renames on its own: the manifest, the README and the license. */
const VSCE_ENTRIES = [
  '[Content_Types].xml',
  'extension.vsixmanifest',
  'extension/package.json',
  'extension/readme.md',
  'extension/LICENSE.txt',
];

/**
 * Whether an archive entry may be in the package: vsce's own entries and what the extension
 * loads. Anything else (out/, node_modules, sources, tests, tools, source maps, the CLI, the
 * samples, docs) is a leak.
 */
export function isAllowed(name) {
  return (
    VSCE_ENTRIES.includes(name) ||
    /^extension\/dist\/[^/]+\.(js|wasm)$/.test(name) ||
    /^extension\/dist\/webview\/panel\.(js|css)$/.test(name) ||
    name === 'extension/syntaxes/unroll-lens-sass.tmLanguage.json' ||
    name === 'extension/native/cupti_timer.c' ||
    /^extension\/walkthrough\/[^/]+\.md$/.test(name) ||
    name === 'extension/walkthrough/sample/first_benchmark.cu'
  );
}

const IMAGE_TYPES = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif' };
export const isRelative = target => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#');

/**
 * The README as packaged. The installed extension's details page renders it in a webview whose
 * content policy admits only https: and data: images and that has no base URL inside the
 * extension, so a relative image shows nothing, and vsce's default (prefixing the repository URL
 * from package.json) points at a host that does not serve the files. The packaged README therefore
 * carries its images as data: URLs, and links to repository files that are not in the package
 * become plain text. Throws on an image it cannot embed.
 */
export function packagedReadme(root) {
  let embedded = 0;
  const text = fs
    .readFileSync(path.join(root, 'README.md'), 'utf8')
    .replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, (all, alt, target) => {
      if (!isRelative(target)) return all;
      const file = path.join(root, decodeURI(target));
      const type = IMAGE_TYPES[path.extname(file).toLowerCase()];
      if (!type) throw new Error(`README.md: image ${target} is not a PNG, JPEG or GIF (vsce refuses SVG data URLs)`);
      if (!fs.existsSync(file)) throw new Error(`README.md: image ${target} does not exist`);
      embedded++;
      return `![${alt}](data:${type};base64,${fs.readFileSync(file).toString('base64')})`;
    })
    .replace(/(?<!!)\[([^\]]+)\]\(([^)\s]+)\)/g, (all, linkText, target) => (isRelative(target) ? linkText : all));
  return { text, embedded };
}

/**
 * The files `vsce package --no-dependencies` puts into the package, as archive entry names with
 * their local path (or the packaged README's text) and size. The list is vsce's own (its
 * listFiles, reading .vscodeignore), so no zipping is needed to know what goes in.
 */
export async function vsixFileList(root) {
  const require = createRequire(path.join(root, 'package.json'));
  const vsce = require('@vscode/vsce');
  const listed = await vsce.listFiles({ cwd: root, packageManager: vsce.PackageManager.None });
  return listed.map(rel => {
    if (rel === 'README.md') {
      const { text } = packagedReadme(root);
      return { name: 'extension/readme.md', text, size: Buffer.byteLength(text) };
    }
    // vsce ships LICENSE (no extension) as LICENSE.txt
    const name = `extension/${rel === 'LICENSE' ? 'LICENSE.txt' : rel}`;
    const local = path.join(root, rel);
    return { name, local, size: fs.statSync(local).size };
  });
}

/** Bytes vsce's generated extension.vsixmanifest and [Content_Types].xml take in the zip (measured about 1.1 KB; with room). */
const GENERATED_ALLOWANCE = 2048;

/**
 * The .vsix's size for `files` (from vsixFileList): each file deflated at zlib's default level, as
 * yazl (vsce's zip library) does, plus the local and central zip headers, the data descriptor and
 * the end record, plus vsce's generated files. Adds each file's compressed size to its row.
 */
export function estimateVsixBytes(files) {
  let bytes = 22 + GENERATED_ALLOWANCE;
  for (const f of files) {
    const data = f.text !== undefined ? Buffer.from(f.text) : fs.readFileSync(f.local);
    f.compressed = Math.min(zlib.deflateRawSync(data).length, data.length);
    bytes += f.compressed + 30 + 16 + 46 + 2 * Buffer.byteLength(f.name);
  }
  return bytes;
}

const kib = n => `${(n / 1024).toFixed(1)} KiB`;

/**
 * The contents as a table, largest first: size, size in the archive, path; then the totals.
 * `rows`: { name, size, compressed }; `archiveBytes`: the .vsix's size on disk, when there is one.
 */
export function contentsTable(rows, archiveBytes) {
  const sorted = [...rows].sort((a, b) => b.size - a.size || a.name.localeCompare(b.name));
  const size = sorted.reduce((s, r) => s + r.size, 0);
  const compressed = sorted.reduce((s, r) => s + r.compressed, 0);
  const line = (a, b, c) => `${a.padStart(12)}  ${b.padStart(12)}  ${c}`;
  return [
    line('size', 'in archive', 'path'),
    ...sorted.map(r => line(kib(r.size), kib(r.compressed), r.name)),
    line(
      kib(size),
      kib(compressed),
      `total: ${sorted.length} files${archiveBytes ? `, ${archiveBytes} bytes (${kib(archiveBytes)}) on disk` : ''}`,
    ),
  ].join('\n');
}
