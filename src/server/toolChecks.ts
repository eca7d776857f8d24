// The toolchain as the Get Started walkthrough checks it and the language status item shows it:
// each check says what was found where (versions, paths, GPUs) or what is missing and how to fix
// it, in the words the rest of the server uses (discovery's install hints, the GPU-readiness
// texts, permissionHelp's counter fix). Pure: the survey, the counter permission and the settings
// come in, the wire answer goes out.
import {
  ENABLE_COUNTERS,
  ToolInfo,
  ToolName,
  ToolSurvey,
  installHint,
  shortGpuName,
  timerFor,
  toolchainSummary,
  type CounterPermission,
} from '../engine';
import { EDITOR_GPU_BLOCKER_TEXT } from './gpuReadinessText';
import { Settings, TOOL_CHECKS, ToolCheckResult, ToolchainInfo } from '../protocol';

/** What the survey's disassemblers leave out, or null when both are there. */
function disassemblerGap(t: Pick<ToolSurvey, 'nvdisasm' | 'cuobjdump'>): string | null {
  if (!t.nvdisasm && !t.cuobjdump) return 'neither nvdisasm nor cuobjdump found: counts come from the cubin, without per-loop attribution';
  if (!t.nvdisasm) return 'nvdisasm not found: effective unroll needs its line info';
  return null;
}

/** The disassemblers' gap and how to close it (null when both are there): the status bar's problem line. */
export function disassemblerProblem(t: Pick<ToolSurvey, 'nvdisasm' | 'cuobjdump'>): string | null {
  const gap = disassemblerGap(t);
  return gap && `${gap}. Install the CUDA Toolkit or run \`npm run setup:cuda-tools\`.`;
}

function tool(name: ToolName, t: ToolInfo | null): ToolCheckResult['tools'][number] {
  return t ? { name, version: t.version, path: t.path, source: t.source } : { name, version: null, path: null, source: null };
}

function found(t: ToolInfo): string {
  return `${t.name}${t.version ? ` ${t.version}` : ''} at ${t.path} (${t.source})`;
}

function nvccCheck(s: ToolSurvey): ToolCheckResult {
  const tools = [tool('nvcc', s.nvcc)];
  if (s.nvcc) return { id: 'nvcc', found: true, severity: 'ok', message: found(s.nvcc), fix: null, tools };
  const searched = s.nvccMissing?.searched.length ? ` (looked in: ${s.nvccMissing.searched.join(', ')})` : '';
  return {
    id: 'nvcc',
    found: false,
    severity: 'error',
    message: `nvcc not found${searched}: nothing can be built, so no SASS and no benchmarks`,
    fix: installHint('nvcc'),
    tools,
  };
}

function disassemblersCheck(s: ToolSurvey): ToolCheckResult {
  const tools = [tool('cuobjdump', s.cuobjdump), tool('nvdisasm', s.nvdisasm)];
  const gap = disassemblerGap(s);
  const have = [s.cuobjdump, s.nvdisasm].filter((t): t is ToolInfo => t !== null).map(found);
  if (!gap) return { id: 'disassemblers', found: true, severity: 'ok', message: have.join('; '), fix: null, tools };
  const missing = (['cuobjdump', 'nvdisasm'] as const).filter(n => !s[n]);
  return {
    id: 'disassemblers',
    found: false,
    severity: 'warning',
    message: [...have, gap].join('; '),
    fix: missing.map(installHint).join(' '),
    tools,
  };
}

/** ncu is needed by the ncu timer and by the CUPTI timer's counters; else it is optional. */
function ncuCheck(s: ToolSurvey, settings: Settings): ToolCheckResult {
  const tools = [tool('ncu', s.ncu)];
  if (s.ncu) return { id: 'ncu', found: true, severity: 'ok', message: found(s.ncu), fix: null, tools };
  const p = settings.profile;
  const timer = timerFor(p);
  const neededBy = timer.needsNcu
    ? `unrollLens.profile.timer is ${timer.name}`
    : p.counters === 'on'
      ? 'unrollLens.profile.counters is on'
      : null;
  return {
    id: 'ncu',
    found: false,
    severity: neededBy ? 'warning' : 'info',
    message: neededBy
      ? `ncu (Nsight Compute) not found, and ${neededBy}: benchmarks stop until it is there`
      : 'ncu (Nsight Compute) not found: optional, since the CUPTI timer (unrollLens.profile.timer: cupti, the default) times kernels and samples stalls without it; ncu adds the ncu timer and instruction counters (unrollLens.profile.counters)',
    fix: installHint('ncu'),
    tools,
  };
}

/** Whether the settings ask for anything that reads the GPU performance counters. */
function countersWanted(settings: Settings): boolean {
  const p = settings.profile;
  return timerFor(p).needsCounterPermission || p.stalls === 'on' || p.counters === 'on' || p.sourceStalls;
}

function gpuCheck(s: ToolSurvey, permission: CounterPermission, settings: Settings): ToolCheckResult {
  const tools = [tool('nvidia-smi', s.nvidiaSmi)];
  if (settings.profile.launcher.length)
    return {
      id: 'gpu',
      found: true,
      severity: 'info',
      message: `runs go through unrollLens.profile.launcher (${settings.profile.launcher[0]} …): the GPU and its counter permission are the node's it reaches, which this machine cannot check`,
      fix: null,
      tools,
    };
  if (!s.gpus.length)
    return {
      id: 'gpu',
      found: false,
      severity: 'info',
      message: s.nvidiaSmi ? EDITOR_GPU_BLOCKER_TEXT['no-gpu'] : 'no GPU on this machine (no nvidia-smi, so no NVIDIA driver)',
      fix: 'SASS, effective unroll and the instruction-cache model need no GPU. For benchmarks, run VS Code on (or Remote-SSH into) a machine with an NVIDIA GPU and driver, or set unrollLens.profile.launcher (e.g. ["srun", "--gres=gpu:1"]) to run on a GPU node.',
      tools,
    };
  const gpus = s.gpus.map(
    g => `GPU ${g.index}: ${g.name} (${[g.arch, g.driverVersion && `driver ${g.driverVersion}`].filter(Boolean).join(', ')})`,
  );
  const message = `${gpus.join('; ')}; ${permission.detail}`;
  if (permission.access !== 'restricted')
    return { id: 'gpu', found: true, severity: permission.access === 'unknown' ? 'info' : 'ok', message, fix: null, tools };
  const cupti = !timerFor(settings.profile).needsCounterPermission
    ? 'The CUPTI timer (your unrollLens.profile.timer) times kernels without that permission; stall reasons and counters need it. '
    : 'The ncu timer (your unrollLens.profile.timer) needs it; the CUPTI timer (unrollLens.profile.timer: cupti) times kernels without it. ';
  return {
    id: 'gpu',
    found: false,
    severity: countersWanted(settings) ? 'warning' : 'info',
    message,
    fix: `${cupti}${permission.fix ?? ENABLE_COUNTERS}`,
    tools,
  };
}

const RANK = { ok: 0, info: 0, warning: 1, error: 2 } as const;

/** Every check, the status line and its detail, from a survey of the tools. */
export function toolchainInfo(s: ToolSurvey, permission: CounterPermission, settings: Settings, arch: string): ToolchainInfo {
  const checks = [nvccCheck(s), disassemblersCheck(s), ncuCheck(s, settings), gpuCheck(s, permission, settings)];
  const worst = Math.max(...checks.map(c => RANK[c.severity]));
  const version = (n: string, t: ToolInfo | null) => (t ? `${n} ${t.version ?? '?'}` : `${n} missing`);
  const gpus = s.gpus.length ? `GPU: ${s.gpus.map(g => `${shortGpuName(g.name)}${g.arch ? ` (${g.arch})` : ''}`).join(', ')}` : 'no GPU';
  const counters = s.gpus.length
    ? ` · counters ${{ open: 'allowed', admin: 'allowed (admin)', restricted: 'restricted (ERR_NVGPUCTRPERM)', unknown: 'not known' }[permission.access]}`
    : '';
  return {
    trusted: true,
    text: toolchainSummary(s, arch),
    detail: `${version('cuobjdump', s.cuobjdump)} · ${version('nvdisasm', s.nvdisasm)} · ${version('ncu', s.ncu)} · ${gpus}${counters}`,
    severity: worst === 2 ? 'error' : worst === 1 ? 'warning' : 'information',
    checks,
  };
}

/**
 * No survey to show: the workspace is not trusted (nothing runs, not even `nvcc --version`), or
 * looking for the tools failed. Every check says why and how to fix it.
 */
export function unavailableToolchainInfo(why: { trusted: boolean; text: string; reason: string; fix: string }): ToolchainInfo {
  return {
    trusted: why.trusted,
    text: why.text,
    detail: why.reason,
    severity: why.trusted ? 'error' : 'warning',
    checks: TOOL_CHECKS.map(id => ({
      id,
      found: false,
      severity: why.trusted ? 'error' : 'warning',
      message: `not checked: ${why.reason}`,
      fix: why.fix,
      tools: [],
    })),
  };
}

/** How to let Unroll Lens run the tools in an untrusted workspace. */
export const TRUST_FIX =
  'Trust this workspace (command "Workspaces: Manage Workspace Trust") to let Unroll Lens run nvcc, the disassemblers and the GPU tools.';
