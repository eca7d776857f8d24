// The resolved CUDA toolchain for one workspace: which tools exist, their versions, the GPU
// (if any) and the target arch every variant is compiled for.
import { defaultProjectToolsBin, DiscoverOptions, findOptionalTool, findTool, ToolInfo } from './discover';
import { GpuInfo, readGpus } from './gpu';
import { ProcessRunner, runProcess } from './process';

/** Used when there is no GPU and neither settings nor compile flags name an arch. */
export const DEFAULT_ARCH = 'sm_90';

export interface Toolchain {
  nvcc: ToolInfo;
  cuobjdump: ToolInfo | null;
  nvdisasm: ToolInfo | null;
  ncu: ToolInfo | null;
  nvidiaSmi: ToolInfo | null;
  cxxfilt: ToolInfo | null;
  gpus: GpuInfo[];
  runner: ProcessRunner;
}

export interface ToolchainOptions extends DiscoverOptions {
  /** Skip nvidia-smi (tests, or a user who wants no GPU probing). */
  probeGpu?: boolean;
}

export async function detectToolchain(o: ToolchainOptions = {}): Promise<Toolchain> {
  const opts: DiscoverOptions = { projectToolsBin: defaultProjectToolsBin(), ...o, runner: o.runner ?? runProcess };
  const [nvcc, cuobjdump, nvdisasm, ncu, nvidiaSmi, cxxfilt] = await Promise.all([
    findTool('nvcc', opts),
    findOptionalTool('cuobjdump', opts),
    findOptionalTool('nvdisasm', opts),
    findOptionalTool('ncu', opts),
    o.probeGpu === false ? null : findOptionalTool('nvidia-smi', opts),
    findOptionalTool('c++filt', opts),
  ]);
  const gpus = nvidiaSmi ? await readGpus(nvidiaSmi.path, opts.runner!) : [];
  return { nvcc, cuobjdump, nvdisasm, ncu, nvidiaSmi, cxxfilt, gpus, runner: opts.runner! };
}

/** Target arch: explicit setting, then compile flags, then the first GPU, then DEFAULT_ARCH. */
export function chooseArch(
  setting: string | null | undefined,
  fromFlags: string | null,
  gpus: GpuInfo[],
): { arch: string; source: string } {
  if (setting) return { arch: setting, source: 'setting' };
  if (fromFlags) return { arch: fromFlags, source: 'compile flags' };
  const g = gpus.find(x => x.arch);
  if (g?.arch) return { arch: g.arch, source: g.name };
  return { arch: DEFAULT_ARCH, source: 'default (no GPU)' };
}

/** "nvcc 13.0 · sm_90 · H200" or "nvcc 13.0 · sm_90 · no GPU" for the status bar. */
export function toolchainSummary(t: Toolchain, arch: string): string {
  const gpu = t.gpus[0] ? t.gpus[0].name.replace(/^NVIDIA\s+/, '') : 'no GPU';
  return `nvcc ${t.nvcc.version ?? '?'} · ${arch} · ${gpu}`;
}

/** Demangles kernel names with c++filt (one process for all names); identity without it. */
export async function demangle(names: string[], t: Pick<Toolchain, 'cxxfilt' | 'runner'>): Promise<Map<string, string>> {
  const out = new Map(names.map(n => [n, n]));
  if (!t.cxxfilt || !names.length) return out;
  const r = await t.runner(t.cxxfilt.path, [], { input: names.join('\n') + '\n', timeoutMs: 20_000 });
  if (r.exitCode !== 0) return out;
  const lines = r.stdout.split('\n');
  names.forEach((n, i) => {
    if (lines[i]) out.set(n, lines[i].trim());
  });
  return out;
}
