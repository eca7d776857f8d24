// The CUPTI kernel timer (native/cupti_timer.c, shipped as source) built into a shared library
// with the user's own nvcc, once per toolkit, and kept beside the build cache. The toolkit's
// CUPTI is found in its include/ and lib64/ (CUDA 13) or extras/CUPTI/ (older layouts); the
// library gets an rpath to libcupti, because the driver loads it without LD_LIBRARY_PATH.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { Toolchain } from '../../toolchain/toolchain';
import { packageRoot } from '../../../packageRoot';

/** Why the timer cannot be built here (no CUPTI in the toolkit, no source, nvcc refused it). */
export class TimerUnavailableError extends Error {}

const SOURCE = path.join('native', 'cupti_timer.c');
const LIBRARY = 'libunroll_lens_timer.so';

/**
 * The toolkit nvcc belongs to. nvcc may be a wrapper script (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`)
 * or a link, so nvcc itself is asked: its dry run prints `TOP=<toolkit>/bin/..`.
 */
export async function toolkitRoot(toolchain: Toolchain, signal?: AbortSignal): Promise<string> {
  const r = await toolchain.runner(toolchain.nvcc.path, ['--dryrun', '-E', '-x', 'cu', '/dev/null', '-o', '/dev/null'], {
    timeoutMs: 60_000,
    signal,
  });
  const top = /^#\$ TOP=(.+)$/m.exec(`${r.stdout}\n${r.stderr}`)?.[1]?.trim();
  return path.resolve(top ?? path.join(path.dirname(fs.realpathSync(toolchain.nvcc.path)), '..'));
}

/** The toolkit's CUPTI headers and library folder, or null when it has none. */
export function cuptiPaths(root: string): { include: string; lib: string } | null {
  for (const base of [root, path.join(root, 'extras', 'CUPTI')]) {
    const include = path.join(base, 'include');
    for (const lib of [path.join(base, 'lib64'), path.join(base, 'lib')]) {
      if (fs.existsSync(path.join(include, 'cupti.h')) && fs.existsSync(path.join(lib, 'libcupti.so'))) return { include, lib };
    }
  }
  return null;
}

/** What the library depends on: its source, the compiler, and the CUPTI it links (a toolkit update rebuilds it). */
function libraryKey(source: string, nvccPath: string, nvccVersion: string | null, cupti: { include: string; lib: string }): string {
  const h = crypto
    .createHash('sha256')
    .update(source)
    .update(`\0${nvccPath}\0${nvccVersion ?? ''}\0${cupti.include}\0${cupti.lib}`);
  for (const f of [path.join(cupti.include, 'cupti_activity.h'), path.join(cupti.lib, 'libcupti.so')]) {
    const st = fs.statSync(f);
    h.update(`\0${st.size}\0${st.mtimeMs}`);
  }
  return h.digest('hex').slice(0, 24);
}

/**
 * The timer library's path, built on first use: `<cacheDir>/../timer/<key>/libunroll_lens_timer.so`.
 * Built into a temporary name in its folder and renamed, so a concurrent process sees the whole
 * library or none. Throws TimerUnavailableError with the reason.
 */
export async function timerLibrary(o: {
  toolchain: Toolchain;
  cacheDir: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}): Promise<string> {
  const nvcc = o.toolchain.nvcc;
  const root = await toolkitRoot(o.toolchain, o.signal);
  const cupti = cuptiPaths(root);
  if (!cupti)
    throw new TimerUnavailableError(
      `no CUPTI in the toolkit of ${nvcc.path} (${root}: looked for include/cupti.h and lib64/libcupti.so, also under extras/CUPTI): time with --timer ncu`,
    );
  let source: string;
  const sourcePath = path.join(packageRoot(__dirname), SOURCE);
  try {
    source = fs.readFileSync(sourcePath, 'utf8');
  } catch (e) {
    throw new TimerUnavailableError(`the timer's source is missing (${sourcePath}: ${(e as Error).message})`);
  }
  const dir = path.join(path.dirname(o.cacheDir), 'timer', libraryKey(source, nvcc.path, nvcc.version, cupti));
  const lib = path.join(dir, LIBRARY);
  if (fs.existsSync(lib)) return lib;
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `.${LIBRARY}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`);
  const r = await o.toolchain.runner(
    nvcc.path,
    [
      '-shared',
      '-Xcompiler',
      '-fPIC',
      '-O2',
      '-I',
      cupti.include,
      '-L',
      cupti.lib,
      '-lcupti',
      '-Xlinker',
      `-rpath,${cupti.lib}`,
      '-o',
      tmp,
      // C++: CUPTI's profiler host header (the range profiler's gpu__time_duration) includes <string>
      '-x',
      'c++',
      sourcePath,
    ],
    { timeoutMs: o.timeoutMs ?? 300_000, signal: o.signal, cwd: dir },
  );
  if (r.exitCode !== 0 || !fs.existsSync(tmp)) {
    fs.rmSync(tmp, { force: true });
    if (r.cancelled) throw new TimerUnavailableError('cancelled while building the CUPTI timer');
    const why = (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ') || `exit ${r.exitCode ?? r.signal}`;
    throw new TimerUnavailableError(`nvcc could not build the CUPTI timer: ${why}`);
  }
  fs.renameSync(tmp, lib);
  return lib;
}
