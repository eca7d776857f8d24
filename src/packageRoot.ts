// Where this package's own files are (the results panel's bundle, the CUPTI timer's source),
// whether it runs from out/ (tsc), dist/ (the extension's bundles) or a bundled CLI.
import * as fs from 'fs';
import * as path from 'path';

/** The package root: the nearest directory above `from` holding a package.json. */
export function packageRoot(from: string = __dirname): string {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
