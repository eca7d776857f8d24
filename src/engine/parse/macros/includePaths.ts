// Where a file's headers are looked for: the CUDA toolkit's include directories (found by
// looking, never by running nvcc) and the include paths and defines in nvcc flags.
import * as fs from 'fs';
import * as path from 'path';
import type { PreprocessOptions } from './environment';

/**
 * The toolkit's include directories (`…/include`, `…/include/cccl`, also under `targets/<arch>/`),
 * from the nvcc path (a wrapper script's directory does not count: only one holding
 * cuda_runtime.h is the toolkit's), the CUDA home, `$CUDA_HOME`/`$CUDA_PATH` and /usr/local/cuda.
 * Found by looking, never by running nvcc.
 */
export function toolkitIncludeDirs(nvccPath: string | null, cudaHome?: string | null): string[] {
  const roots: string[] = [];
  if (nvccPath) {
    let real = nvccPath;
    try {
      real = fs.realpathSync(nvccPath);
    } catch {
      // keep the path as given
    }
    roots.push(path.dirname(path.dirname(real)));
  }
  for (const r of [cudaHome, process.env.CUDA_HOME, process.env.CUDA_PATH]) if (r) roots.push(r);
  // nvcc on PATH (looked up, not run), then the usual install places, newest version first.
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isFile(path.join(dir, 'nvcc'))) {
      try {
        roots.push(path.dirname(path.dirname(fs.realpathSync(path.join(dir, 'nvcc')))));
      } catch {
        // unreadable: skip
      }
    }
  }
  roots.push(
    '/usr/local/cuda',
    ...safeReaddir('/usr/local')
      .filter(d => /^cuda-\d/.test(d))
      .sort()
      .reverse()
      .map(d => path.join('/usr/local', d)),
  );
  const out: string[] = [];
  for (const root of roots) {
    const includes = [
      path.join(root, 'include'),
      ...safeReaddir(path.join(root, 'targets')).map(t => path.join(root, 'targets', t, 'include')),
    ];
    for (const inc of includes) {
      if (!isFile(path.join(inc, 'cuda_runtime.h'))) continue;
      for (const d of [inc, path.join(inc, 'cccl')]) if (isDir(d) && !out.includes(d)) out.push(d);
    }
    if (out.length) break;
  }
  return out;
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Include directories and defines out of nvcc flags (`-I`, `-isystem`, `-D`, `-U`), relative to `cwd`. */
export function preprocessInputsFromFlags(
  args: string[],
  cwd: string,
): Pick<PreprocessOptions, 'includeDirs' | 'systemIncludeDirs' | 'defines'> {
  const includeDirs: string[] = [];
  const systemIncludeDirs: string[] = [];
  const defines: string[] = [];
  const abs = (p: string) => (path.isAbsolute(p) ? p : path.resolve(cwd, p));
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = (short: string, long?: string): string | null => {
      if (a === short || (long && a === long)) return args[++i] ?? null;
      if (a.startsWith(short) && a.length > short.length) return a.slice(short.length).replace(/^=/, '');
      if (long && a.startsWith(long + '=')) return a.slice(long.length + 1);
      return null;
    };
    let v: string | null;
    if ((v = value('-isystem')) !== null) systemIncludeDirs.push(abs(v));
    else if ((v = value('-I', '--include-path')) !== null) includeDirs.push(abs(v));
    else if ((v = value('-D', '--define-macro')) !== null) defines.push(v);
    else if ((v = value('-U', '--undefine-macro')) !== null) defines.push('-' + v);
  }
  return { includeDirs, systemIncludeDirs, defines };
}
