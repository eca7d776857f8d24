import * as fs from 'fs';
import * as path from 'path';
import { execFileSync } from 'child_process';
import { before } from 'node:test';
import { CudaDocuments } from '../../src/engine/parse/documents';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import type { FileAnalysis, Kernel, Loop } from '../../src/engine/parse/model';

let docs: Promise<CudaDocuments> | undefined;

export function documents(): Promise<CudaDocuments> {
  docs ??= CudaDocuments.create();
  return docs;
}

export async function analyze(source: string, file = 'snippet.cu'): Promise<FileAnalysis> {
  return (await documents()).analyzeOnce(source, file);
}

export function kernel(a: FileAnalysis, name: string): Kernel {
  const k = a.kernels.find(x => x.name === name);
  if (!k) throw new Error(`no kernel ${name}; have ${a.kernels.map(x => x.name).join(', ')}`);
  return k;
}

export function loopAt(k: Kernel, line: number): Loop {
  const l = k.loops.find(x => x.line === line);
  if (!l) throw new Error(`no loop at line ${line} in ${k.name}; loops at ${k.loops.map(x => x.line).join(', ')}`);
  return l;
}

/** 1-based line of the first line containing `needle` (optionally the n-th occurrence). */
export function lineOf(source: string, needle: string, nth = 1): number {
  const lines = source.split('\n');
  let seen = 0;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].includes(needle) && ++seen === nth) return i + 1;
  }
  throw new Error(`'${needle}' not found`);
}

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
export const SAMPLES = path.join(REPO_ROOT, 'cuda-samples');

/** The toolkit's include/cccl, from nvcc on PATH (through symlinks), CUDA_HOME/CUDA_PATH or /usr/local/cuda*. */
export function findCcclInclude(): string | null {
  const candidates: string[] = [];
  for (const env of [process.env.CUDA_HOME, process.env.CUDA_PATH]) if (env) candidates.push(path.join(env, 'include', 'cccl'));
  try {
    const nvcc = execFileSync('bash', ['-c', 'command -v nvcc'], { encoding: 'utf8' }).trim();
    if (nvcc) {
      candidates.push(path.join(path.dirname(path.dirname(fs.realpathSync(nvcc))), 'include', 'cccl'));
      // A wrapper script on PATH: ask nvcc where its toolkit is.
      const dry = execFileSync(nvcc, ['--dryrun', '-x', 'cu', '-E', '/dev/null'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      const top = /TOP=(\S+)/.exec(dry)?.[1];
      if (top) candidates.push(path.join(top, 'include', 'cccl'));
    }
  } catch {
    /* no nvcc */
  }
  candidates.push('/usr/local/cuda/include/cccl');
  try {
    for (const d of fs.readdirSync('/usr/local').sort().reverse())
      if (/^cuda-\d/.test(d)) candidates.push(path.join('/usr/local', d, 'include', 'cccl'));
  } catch {
    /* no /usr/local */
  }
  return candidates.find(c => fs.existsSync(path.join(c, 'cub'))) ?? null;
}

/**
 * The CUDA tools for a test file that builds with nvcc: found once before its tests. Outside CI a
 * missing tool skips those tests with the reason; in CI it is an error (the test command installs
 * cuobjdump/nvdisasm). `needs`: the disassemblers the tests read.
 */
export function useCudaTools(needs: ('cuobjdump' | 'nvdisasm')[] = ['cuobjdump', 'nvdisasm']): {
  toolchain: Toolchain | null;
  skip: string | false;
} {
  const state: { toolchain: Toolchain | null; skip: string | false } = { toolchain: null, skip: false };
  before(async () => {
    try {
      state.toolchain = await detectToolchain({ probeGpu: false });
    } catch (e) {
      if (process.env.CI) throw e;
      state.skip = `no nvcc: ${(e as Error).message}`;
      return;
    }
    const missing = needs.filter(n => !state.toolchain![n]);
    if (missing.length) {
      if (process.env.CI) throw new Error(`${missing.join('/')} missing: scripts/setup-cuda-tools.sh should have installed them`);
      state.skip = `no ${missing.join('/')} (run npm run setup:cuda-tools)`;
    }
  });
  return state;
}
