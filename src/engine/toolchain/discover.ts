// Finds the CUDA tools: explicit settings first, then CUDA_HOME/CUDA_PATH, PATH, the standard
// /usr/local/cuda, and the project's own .tools/cuda-tools (where `npm run setup:cuda-tools`
// puts cuobjdump/nvdisasm on machines without a full toolkit).
import * as fs from 'fs';
import * as path from 'path';
import { ProcessRunner, runProcess } from './process';
import { LocatedTool, remedies } from '../base/remedies';

export type ToolName = 'nvcc' | 'cuobjdump' | 'nvdisasm' | 'ncu' | 'nvidia-smi' | 'c++filt';

export interface ToolInfo {
  name: ToolName;
  path: string;
  /** e.g. "13.0" for nvcc (release), "2025.3.1" for ncu; null when the tool did not say. */
  version: string | null;
  /** Where the path came from, for the log and error messages. */
  source: 'setting' | 'CUDA_HOME' | 'CUDA_PATH' | 'PATH' | '/usr/local/cuda' | 'project tools' | 'nsight-compute';
}

/** How to get a tool: the located ones' words depend on the surface (../base/remedies.ts); the others' do not. */
const OTHER_HINTS: Record<Exclude<ToolName, LocatedTool>, string> = {
  'nvidia-smi': 'nvidia-smi comes with the NVIDIA driver; without it Unroll Lens assumes no GPU.',
  'c++filt': 'c++filt comes with GNU binutils (apt-get install binutils); without it kernel names stay mangled.',
};

/** How to get a tool that discovery did not find (the same words as MissingToolError's). */
export function installHint(tool: ToolName): string {
  return tool === 'nvidia-smi' || tool === 'c++filt' ? OTHER_HINTS[tool] : remedies().missingTool[tool];
}

export class MissingToolError extends Error {
  constructor(
    readonly tool: ToolName,
    readonly searched: string[],
  ) {
    super(
      `${tool === 'ncu' ? 'ncu (Nsight Compute)' : tool} not found${searched.length ? ` (looked in: ${searched.join(', ')})` : ''}. ${installHint(tool)}`,
    );
  }
}

export interface DiscoverOptions {
  /** Explicit paths from settings, by tool. */
  paths?: Partial<Record<ToolName, string>>;
  /** CUDA installation root from settings (overrides CUDA_HOME). */
  cudaHome?: string;
  env?: NodeJS.ProcessEnv;
  /** The project's own tools folder (…/.tools/cuda-tools/bin). */
  projectToolsBin?: string;
  runner?: ProcessRunner;
  /** Also look in /usr/local/cuda and Nsight Compute's install folders (default true). */
  standardLocations?: boolean;
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Candidate locations in priority order, with the source we report for each. */
function candidates(tool: ToolName, o: DiscoverOptions): { p: string; source: ToolInfo['source'] }[] {
  const env = o.env ?? process.env;
  const exe = process.platform === 'win32' ? `${tool}.exe` : tool;
  const out: { p: string; source: ToolInfo['source'] }[] = [];
  const setting = o.paths?.[tool];
  if (setting) out.push({ p: setting, source: 'setting' });
  if (o.cudaHome) out.push({ p: path.join(o.cudaHome, 'bin', exe), source: 'setting' });
  if (env.CUDA_HOME) out.push({ p: path.join(env.CUDA_HOME, 'bin', exe), source: 'CUDA_HOME' });
  if (env.CUDA_PATH) out.push({ p: path.join(env.CUDA_PATH, 'bin', exe), source: 'CUDA_PATH' });
  for (const dir of (env.PATH ?? '').split(path.delimiter)) if (dir) out.push({ p: path.join(dir, exe), source: 'PATH' });
  if (o.standardLocations !== false) out.push({ p: path.join('/usr/local/cuda/bin', exe), source: '/usr/local/cuda' });
  if (tool === 'ncu' && o.standardLocations !== false) {
    // Nsight Compute installs under /opt/nvidia/nsight-compute/<version>/ and /usr/local/cuda/nsight-compute-*.
    for (const root of ['/opt/nvidia/nsight-compute', '/usr/local/cuda']) {
      try {
        const dirs = fs
          .readdirSync(root)
          .filter(d => /^(nsight-compute-)?\d/.test(d))
          .sort()
          .reverse();
        for (const d of dirs) out.push({ p: path.join(root, d, exe), source: 'nsight-compute' });
      } catch {
        /* not installed there */
      }
    }
  }
  if (o.projectToolsBin) out.push({ p: path.join(o.projectToolsBin, exe), source: 'project tools' });
  return out;
}

const VERSION_PATTERNS: Record<ToolName, RegExp> = {
  nvcc: /release (\d+\.\d+)/,
  cuobjdump: /release (\d+\.\d+)/,
  nvdisasm: /release (\d+\.\d+)/,
  ncu: /Version (\d+(?:\.\d+)+)/i,
  'nvidia-smi': /NVIDIA-SMI (\d+(?:\.\d+)+)/,
  'c++filt': /(\d+\.\d+(?:\.\d+)?)/,
};

const VERSION_ARGS: Record<ToolName, string[]> = {
  nvcc: ['--version'],
  cuobjdump: ['--version'],
  nvdisasm: ['--version'],
  ncu: ['--version'],
  'nvidia-smi': ['--version'],
  'c++filt': ['--version'],
};

export async function findTool(tool: ToolName, o: DiscoverOptions = {}): Promise<ToolInfo> {
  const list = candidates(tool, o);
  const hit = list.find(c => isExecutable(c.p));
  if (!hit) throw new MissingToolError(tool, [...new Set(list.map(c => path.dirname(c.p)))]);
  const run = o.runner ?? runProcess;
  const r = await run(hit.p, VERSION_ARGS[tool], { timeoutMs: 20_000 });
  const m = VERSION_PATTERNS[tool].exec(r.stdout + r.stderr);
  return { name: tool, path: hit.p, version: m ? m[1] : null, source: hit.source };
}

/** Finds a tool or returns null (for optional tools such as ncu without a GPU). */
export async function findOptionalTool(tool: ToolName, o: DiscoverOptions = {}): Promise<ToolInfo | null> {
  try {
    return await findTool(tool, o);
  } catch (e) {
    if (e instanceof MissingToolError) return null;
    throw e;
  }
}

/**
 * The repository's own tools folder, when running from a checkout (CLI, tests, dev host):
 * $UNROLL_LENS_TOOLS/cuda-tools/bin where that is set (as scripts/setup-cuda-tools.sh installs
 * there), else <package root>/.tools/cuda-tools/bin.
 */
export function defaultProjectToolsBin(env: NodeJS.ProcessEnv = process.env): string {
  if (env.UNROLL_LENS_TOOLS) return path.join(path.resolve(env.UNROLL_LENS_TOOLS), 'cuda-tools', 'bin');
  // This module runs from out/src/engine/toolchain/ (tsc) or inside dist/server.js (esbuild):
  // the package root is the nearest folder above with a package.json either way.
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return path.join(dir, '.tools', 'cuda-tools', 'bin');
}
