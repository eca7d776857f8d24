// The resolved CUDA toolchain for one workspace: which tools exist, their versions, the GPU
// (if any) and the target arch every variant is compiled for.
import { defaultProjectToolsBin, DiscoverOptions, findOptionalTool, findTool, MissingToolError, ToolInfo } from './discover';
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

/**
 * Every tool looked for, nvcc included: what a check of the toolchain reports (the editor's Get
 * Started walkthrough and language status). Without nvcc the others are still found, and
 * `nvccMissing` says where nvcc was looked for and how to get it.
 */
export interface ToolSurvey extends Omit<Toolchain, 'nvcc'> {
  nvcc: ToolInfo | null;
  nvccMissing: MissingToolError | null;
}

export async function surveyToolchain(o: ToolchainOptions = {}): Promise<ToolSurvey> {
  const opts: DiscoverOptions = { projectToolsBin: defaultProjectToolsBin(), ...o, runner: o.runner ?? runProcess };
  const nvccFound = findTool('nvcc', opts).then(
    nvcc => ({ nvcc, nvccMissing: null }),
    (e: unknown) => {
      if (e instanceof MissingToolError) return { nvcc: null, nvccMissing: e };
      throw e;
    },
  );
  const [nvcc, cuobjdump, nvdisasm, ncu, nvidiaSmi, cxxfilt] = await Promise.all([
    nvccFound,
    findOptionalTool('cuobjdump', opts),
    findOptionalTool('nvdisasm', opts),
    findOptionalTool('ncu', opts),
    o.probeGpu === false ? null : findOptionalTool('nvidia-smi', opts),
    findOptionalTool('c++filt', opts),
  ]);
  const gpus = nvidiaSmi ? await readGpus(nvidiaSmi.path, opts.runner!) : [];
  return { ...nvcc, cuobjdump, nvdisasm, ncu, nvidiaSmi, cxxfilt, gpus, runner: opts.runner! };
}

/** The toolchain builds need: the survey's, or its MissingToolError when there is no nvcc. */
export function toolchainOf(s: ToolSurvey): Toolchain {
  if (!s.nvcc) throw s.nvccMissing ?? new MissingToolError('nvcc', []);
  const { nvccMissing: _missing, ...rest } = s;
  return { ...rest, nvcc: s.nvcc };
}

export async function detectToolchain(o: ToolchainOptions = {}): Promise<Toolchain> {
  return toolchainOf(await surveyToolchain(o));
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

/** A GPU's name as a status line shows it: "H100 80GB HBM3" for "NVIDIA H100 80GB HBM3". */
export function shortGpuName(name: string): string {
  return name.replace(/^NVIDIA\s+/, '');
}

/** "nvcc 13.0 · sm_90 · H200" or "nvcc 13.0 · sm_90 · no GPU" for the status bar ("no nvcc · …" without one). */
export function toolchainSummary(t: Pick<ToolSurvey, 'nvcc' | 'gpus'>, arch: string): string {
  const gpu = t.gpus[0] ? shortGpuName(t.gpus[0].name) : 'no GPU';
  return `${t.nvcc ? `nvcc ${t.nvcc.version ?? '?'}` : 'no nvcc'} · ${arch} · ${gpu}`;
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
