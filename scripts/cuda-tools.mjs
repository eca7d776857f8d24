// The SASS readers (cuobjdump/nvdisasm) where the CLI looks for them, and their installation into
// .tools/ through scripts/setup-cuda-tools.sh (as `npm test` does) when nvdisasm is found nowhere.
// `npm run demo` uses it before its SASS steps; run alone (`node scripts/cuda-tools.mjs`), it
// exits 0 when nvdisasm is there (found or installed) and 1 with the reason otherwise.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where the CLI finds a tool (PATH, CUDA_HOME, CUDA_PATH, /usr/local/cuda, the project's tools), or null. */
export function findTool(tool, env = process.env) {
  const tools = env.UNROLL_LENS_TOOLS ? path.resolve(env.UNROLL_LENS_TOOLS) : path.join(ROOT, '.tools');
  const dirs = [
    ...(env.CUDA_HOME ? [path.join(env.CUDA_HOME, 'bin')] : []),
    ...(env.CUDA_PATH ? [path.join(env.CUDA_PATH, 'bin')] : []),
    ...(env.PATH ?? '').split(path.delimiter).filter(Boolean),
    '/usr/local/cuda/bin',
    path.join(tools, 'cuda-tools', 'bin'),
  ];
  for (const d of dirs) {
    const p = path.join(d, tool);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * nvdisasm's path, installing cuobjdump/nvdisasm into .tools/ first when it is missing. Null when
 * it could not be installed (offline, no Debian archive): the reason has been printed.
 */
export function ensureCudaTools({ env = process.env, log = console.log } = {}) {
  const found = findTool('nvdisasm', env);
  if (found) return found;
  log('\nnvdisasm not found: installing cuobjdump/nvdisasm into .tools/ (scripts/setup-cuda-tools.sh, as `npm test` does)…');
  const r = spawnSync('bash', [path.join(ROOT, 'scripts', 'setup-cuda-tools.sh')], { cwd: ROOT, stdio: 'inherit', env });
  const after = r.status === 0 ? findTool('nvdisasm', env) : null;
  if (!after)
    log(
      `\ncould not install cuobjdump/nvdisasm (${r.error ? r.error.message : `setup-cuda-tools.sh exited ${r.status ?? r.signal}`}; offline, or no Debian archive?): ` +
        'the loop tables below show kernel counts only, and their loop columns stay unknown (each says why in a note). Run `npm run setup:cuda-tools` once online, or install the CUDA Toolkit, then `npm run demo` again.',
    );
  return after;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const p = ensureCudaTools();
  if (p) console.log(`nvdisasm: ${p}`);
  process.exit(p ? 0 : 1);
}
