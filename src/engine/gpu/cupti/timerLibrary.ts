// The CUPTI kernel timer (native/cupti_timer.c, shipped as source) built into a shared library
// with the user's own nvcc, once per toolkit and user, and kept beside the build cache, sealed
// with the user's installation key: the build cache may be a shared folder (Slurm, issue 37),
// where a library planted under our name would be loaded into every program we time. The toolkit's
// CUPTI is found in its include/ and lib64/ (CUDA 13) or extras/CUPTI/ (older layouts); the
// library gets an rpath to libcupti, because the driver loads it without LD_LIBRARY_PATH.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { Toolchain } from '../../toolchain/toolchain';
import { shellUnsafeArgument } from '../../toolchain/flags';
import { processGuard } from '../../toolchain/processGuard';
import { hashBoundedFile, readBoundedBuffer } from '../../base/boundedRead';
import { SafeWriteError, safeWriteFile } from '../../base/safeWrite';
import { installationKey } from '../../base/cacheKey';
import { seal, unseal } from '../../base/cacheEntry';
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

/** What the library depends on: its source, the compiler, the CUPTI it links (a toolkit update rebuilds it), and whose it is. */
function libraryKey(
  source: string,
  nvccPath: string,
  nvccVersion: string | null,
  cupti: { include: string; lib: string },
  keyId: string,
): string {
  const h = crypto
    .createHash('sha256')
    .update(source)
    .update(`\0${nvccPath}\0${nvccVersion ?? ''}\0${cupti.include}\0${cupti.lib}`)
    // a folder per installation key (per user): one user's library is never another's to load or replace
    .update(`\0${keyId}`);
  for (const f of [path.join(cupti.include, 'cupti_activity.h'), path.join(cupti.lib, 'libcupti.so')]) {
    const st = fs.statSync(f);
    h.update(`\0${st.size}\0${st.mtimeMs}`);
  }
  return h.digest('hex').slice(0, 24);
}

/** The timer library, and its sha256 as verified against its seal (what a Slurm task checks it against). */
export interface VerifiedLibrary {
  path: string;
  sha256: string;
}

const SEAL_FORMAT = 1;
const SEAL_PURPOSE = 'cupti-timer-library';
/** A real library is ~100 KB. */
const MAX_LIBRARY_BYTES = 64 * 1024 * 1024;

/**
 * The library at `lib` if its seal (`<lib>.seal`, this user's key over the key folder's name and
 * the library's sha256) verifies with the bytes there now; null otherwise (missing, planted,
 * replaced, another user's). The folder may be shared: what is there is never trusted unsealed.
 */
function sealedLibrary(lib: string, name: string): VerifiedLibrary | null {
  try {
    const text = readBoundedBuffer(`${lib}.seal`, { maxBytes: 4096, what: 'timer library seal', followLinks: false }).toString('utf8');
    const body = unseal(installationKey(), SEAL_FORMAT, SEAL_PURPOSE, [name], text) as { sha256?: unknown } | symbol;
    if (typeof body !== 'object' || !body || typeof body.sha256 !== 'string') return null;
    const sha256 = hashBoundedFile(lib, { maxBytes: MAX_LIBRARY_BYTES, what: 'CUPTI timer library', followLinks: false });
    return sha256 === body.sha256 ? { path: lib, sha256 } : null;
  } catch {
    return null;
  }
}

/**
 * The timer library's path, built on first use: `<cacheDir>/../timer/<key>/libunroll_lens_timer.so`.
 * Throws TimerUnavailableError with the reason.
 */
export async function timerLibrary(o: TimerLibraryOptions): Promise<string> {
  return (await verifiedTimerLibrary(o)).path;
}

interface TimerLibraryOptions {
  toolchain: Toolchain;
  cacheDir: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * The timer library and its verified sha256. The key folder is this user's (their installation
 * key is part of its name) and the library is used only while its seal verifies; otherwise it is
 * built again in a private temp folder, with nvcc given only relative names there and the
 * toolkit's own paths (each passing the one path-safety rule: nvcc runs its steps through sh),
 * and placed with the safe writer (never through a link), sealed. A concurrent process sees the
 * whole library or none.
 */
export async function verifiedTimerLibrary(o: TimerLibraryOptions): Promise<VerifiedLibrary> {
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
  const key = libraryKey(source, nvcc.path, nvcc.version, cupti, installationKey().id);
  const top = path.dirname(o.cacheDir);
  const lib = path.join(top, 'timer', key, LIBRARY);
  const known = sealedLibrary(lib, key);
  if (known) return known;
  const bytes = await buildPrivately(o, source, cupti);
  const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
  try {
    fs.mkdirSync(top, { recursive: true });
    const rel = path.join('timer', key, LIBRARY);
    // the library first, then its seal: a reader between the two finds the old seal and builds its own
    safeWriteFile(top, rel, bytes, { mode: 0o755 });
    safeWriteFile(top, `${rel}.seal`, seal(installationKey(), SEAL_FORMAT, SEAL_PURPOSE, [key], { sha256 }));
    return { path: lib, sha256 };
  } catch (e) {
    if (e instanceof SafeWriteError) throw new TimerUnavailableError(`the CUPTI timer library cannot be placed: ${e.message}`);
    throw e;
  }
}

/**
 * A copy of the library in this process's private temp folder (mode 0700, removed when we exit),
 * made from bytes whose sha256 is `l.sha256`: what a program run here loads, so a file swapped in
 * the (maybe shared) cache folder after its check is never loaded. TimerUnavailableError when the
 * library there no longer has its hash.
 */
export function privateTimerCopy(l: VerifiedLibrary): string {
  let bytes: Buffer;
  try {
    bytes = readBoundedBuffer(l.path, { maxBytes: MAX_LIBRARY_BYTES, what: 'CUPTI timer library', followLinks: false });
  } catch (e) {
    throw new TimerUnavailableError(`the CUPTI timer library cannot be read: ${(e as Error).message}`);
  }
  const sha = crypto.createHash('sha256').update(bytes).digest('hex');
  if (sha !== l.sha256)
    throw new TimerUnavailableError(
      `refused to load the CUPTI timer library ${l.path}: its sha256 is ${sha.slice(0, 16)}…, not the ${l.sha256.slice(0, 16)}… ` +
        'it was checked with (changed or replaced since); re-run to build it again',
    );
  const copy = path.join(processGuard.privateDir('timer-'), LIBRARY);
  fs.writeFileSync(copy, bytes, { mode: 0o700, flag: 'wx' });
  return copy;
}

/** Builds the library in a private temp folder (ours alone, removed after) and returns its bytes. */
async function buildPrivately(o: TimerLibraryOptions, source: string, cupti: { include: string; lib: string }): Promise<Buffer> {
  const work = processGuard.privateDir('timer-build-');
  try {
    fs.writeFileSync(path.join(work, 'cupti_timer.c'), source);
    // as C++: CUPTI's profiler host header (the range profiler's gpu__time_duration) includes <string>
    const args = ['-x', 'c++', '-shared', '-Xcompiler', '-fPIC', '-O2', '-I', cupti.include, '-L', cupti.lib, '-lcupti'];
    args.push('-Xlinker', `-rpath,${cupti.lib}`, '-o', LIBRARY, 'cupti_timer.c');
    const unsafe = shellUnsafeArgument(args);
    if (unsafe)
      throw new TimerUnavailableError(`not building the CUPTI timer with nvcc: ${unsafe} (the toolkit's path: move or link the toolkit)`);
    const r = await o.toolchain.runner(o.toolchain.nvcc.path, args, { timeoutMs: o.timeoutMs ?? 300_000, signal: o.signal, cwd: work });
    const built = path.join(work, LIBRARY);
    if (r.exitCode !== 0 || !fs.existsSync(built)) {
      if (r.cancelled) throw new TimerUnavailableError('cancelled while building the CUPTI timer');
      const why = (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ') || `exit ${r.exitCode ?? r.signal}`;
      throw new TimerUnavailableError(`nvcc could not build the CUPTI timer: ${why}`);
    }
    return readBoundedBuffer(built, { maxBytes: MAX_LIBRARY_BYTES, what: 'the built CUPTI timer library', followLinks: false });
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
