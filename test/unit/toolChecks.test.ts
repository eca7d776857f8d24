// The Get Started walkthrough's checks and the language status item's text (issue 27): the
// counter permission read from the driver (recorded on an H100), each check's message and fix
// from a survey of the tools, and the server's ToolchainInfo answer (Restricted Mode runs nothing).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import type { Connection } from 'vscode-languageserver/node';
import {
  counterPermission,
  effectiveCapabilities,
  probeCounterPermission,
  restrictedToAdmins,
} from '../../src/engine/profile/counterPermission';
import { ENABLE_COUNTERS } from '../../src/engine/profile/permissionHelp';
import { installHint, MissingToolError, ToolInfo, ToolName } from '../../src/engine/toolchain/discover';
import type { GpuInfo } from '../../src/engine/toolchain/gpu';
import { toolchainOf, ToolSurvey } from '../../src/engine/toolchain/toolchain';
import { DEFAULT_SETTINGS, Settings, TOOL_CHECKS } from '../../src/protocol';
import { toolchainInfo, TRUST_FIX, unavailableToolchainInfo } from '../../src/server/toolChecks';
import { RESTRICTED_MODE, ServerToolchain } from '../../src/server/toolchain';

const REC = path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'gpu', 'h100', 'permission');
const rec = (f: string) => fs.readFileSync(path.join(REC, f), 'utf8');
const H100_PARAMS = rec('proc-driver-nvidia-params.txt');
const RESTRICTED_PARAMS = H100_PARAMS.replace('RmProfilingAdminOnly: 0', 'RmProfilingAdminOnly: 1');
const ROOT = rec('status-root.txt');
const NOBODY = rec('status-nobody.txt');
const statusWith = (uid: number, capEff: string) => `Uid:\t${uid}\t${uid}\t${uid}\t${uid}\nCapEff:\t${capEff}\n`;

describe('counter permission (ERR_NVGPUCTRPERM) from the driver', () => {
  test('the recorded H100 driver lets every user profile (RmProfilingAdminOnly: 0), as nobody did with ncu there', () => {
    assert.equal(restrictedToAdmins(H100_PARAMS), false);
    assert.equal(counterPermission({ params: H100_PARAMS, status: NOBODY }).access, 'open');
    assert.equal(effectiveCapabilities(ROOT), 0x1fffeffffffn);
    assert.equal(effectiveCapabilities(NOBODY), 0n);
  });

  test('restricted: an ordinary user gets ERR_NVGPUCTRPERM and the modprobe fix; root and CAP_SYS_ADMIN may', () => {
    const nobody = counterPermission({ params: RESTRICTED_PARAMS, status: NOBODY });
    assert.equal(nobody.access, 'restricted');
    assert.match(nobody.detail, /ERR_NVGPUCTRPERM/);
    assert.equal(nobody.fix, ENABLE_COUNTERS);
    assert.match(nobody.fix!, /options nvidia NVreg_RestrictProfilingToAdminUsers=0/);
    assert.match(nobody.fix!, /\/etc\/modprobe\.d/);
    assert.match(counterPermission({ params: RESTRICTED_PARAMS, status: ROOT }).detail, /\(root\)/);
    const sysAdmin = counterPermission({ params: RESTRICTED_PARAMS, status: statusWith(1000, (1n << 21n).toString(16)) });
    assert.deepEqual([sysAdmin.access, /CAP_SYS_ADMIN/.test(sysAdmin.detail)], ['admin', true]);
  });

  test('CAP_PERFMON allows the counters from driver R565 on only', () => {
    const perfmon = statusWith(1000, (1n << 38n).toString(16));
    assert.equal(counterPermission({ params: RESTRICTED_PARAMS, status: perfmon, driverVersion: '580.159.04' }).access, 'admin');
    assert.equal(counterPermission({ params: RESTRICTED_PARAMS, status: perfmon, driverVersion: '550.54.15' }).access, 'restricted');
  });

  test('no driver (no /proc/driver/nvidia/params), or no such line: not known, and no fix claimed', () => {
    const none = probeCounterPermission(null, () => null);
    assert.deepEqual([none.access, none.fix], ['unknown', null]);
    assert.equal(counterPermission({ params: 'RmLogonRC: 1\n', status: NOBODY }).access, 'unknown');
    // the probe reads exactly the two files
    const read: string[] = [];
    probeCounterPermission(null, f => (read.push(f), null));
    assert.deepEqual(read, ['/proc/driver/nvidia/params', '/proc/self/status']);
  });
});

const tool = (name: ToolName, version: string, dir = '/usr/local/cuda/bin'): ToolInfo => ({
  name,
  path: `${dir}/${name}`,
  version,
  source: 'PATH',
});
const H100: GpuInfo = {
  index: 0,
  name: 'NVIDIA H100 80GB HBM3',
  computeCapability: '9.0',
  arch: 'sm_90',
  architectureName: 'Hopper',
  driverVersion: '580.159.04',
  cudaVersion: '13.0',
  memoryMiB: 81559,
  clocksMHz: { sm: null, memory: null, maxSm: null, maxMemory: null },
  uuid: null,
};

function survey(over: Partial<ToolSurvey> = {}): ToolSurvey {
  return {
    nvcc: tool('nvcc', '13.0'),
    nvccMissing: null,
    cuobjdump: tool('cuobjdump', '13.0'),
    nvdisasm: tool('nvdisasm', '13.0'),
    ncu: tool('ncu', '2025.3.1.0'),
    nvidiaSmi: tool('nvidia-smi', '580.159.04', '/usr/bin'),
    cxxfilt: null,
    gpus: [H100],
    runner: () => Promise.reject(new Error('a check runs nothing')),
    ...over,
  };
}
const OPEN = counterPermission({ params: H100_PARAMS, status: NOBODY });
const RESTRICTED = counterPermission({ params: RESTRICTED_PARAMS, status: NOBODY });
const NO_DRIVER = counterPermission({ params: null, status: NOBODY });
const withProfile = (p: Partial<Settings['profile']>): Settings => ({
  ...DEFAULT_SETTINGS,
  profile: { ...DEFAULT_SETTINGS.profile, ...p },
});
const check = (info: ReturnType<typeof toolchainInfo>, id: string) => info.checks.find(c => c.id === id)!;

describe('checks and the language status text', () => {
  test('everything there: "nvcc 13.0 · sm_90 · H100 …", versions and the GPU in the detail, every check found', () => {
    const info = toolchainInfo(survey(), OPEN, DEFAULT_SETTINGS, 'sm_90');
    assert.equal(info.text, 'nvcc 13.0 · sm_90 · H100 80GB HBM3');
    assert.equal(info.detail, 'cuobjdump 13.0 · nvdisasm 13.0 · ncu 2025.3.1.0 · GPU: H100 80GB HBM3 (sm_90) · counters allowed');
    assert.equal(info.severity, 'information');
    assert.deepEqual(
      info.checks.map(c => [c.id, c.found, c.severity]),
      TOOL_CHECKS.map(id => [id, true, 'ok']),
    );
    assert.equal(check(info, 'nvcc').message, 'nvcc 13.0 at /usr/local/cuda/bin/nvcc (PATH)');
    assert.deepEqual(check(info, 'nvcc').tools, [{ name: 'nvcc', version: '13.0', path: '/usr/local/cuda/bin/nvcc', source: 'PATH' }]);
    assert.match(
      check(info, 'gpu').message,
      /^GPU 0: NVIDIA H100 80GB HBM3 \(sm_90, driver 580\.159\.04\); the NVIDIA driver lets every user/,
    );
  });

  test('this machine: nvcc, no ncu, no GPU: information, ncu optional with the CUPTI timer (and its install fix)', () => {
    const info = toolchainInfo(survey({ ncu: null, nvidiaSmi: null, gpus: [] }), NO_DRIVER, DEFAULT_SETTINGS, 'sm_90');
    assert.equal(info.text, 'nvcc 13.0 · sm_90 · no GPU');
    assert.equal(info.detail, 'cuobjdump 13.0 · nvdisasm 13.0 · ncu missing · no GPU');
    assert.equal(info.severity, 'information');
    const ncu = check(info, 'ncu');
    assert.deepEqual([ncu.found, ncu.severity, ncu.fix], [false, 'info', installHint('ncu')]);
    assert.match(ncu.message, /optional.*CUPTI timer/);
    const gpu = check(info, 'gpu');
    assert.deepEqual([gpu.found, gpu.severity], [false, 'info']);
    assert.match(gpu.message, /no GPU on this machine/);
    assert.match(gpu.fix!, /unrollLens\.profile\.launcher/);
  });

  test('ncu missing while the settings need it (ncu timer, counters on): a warning', () => {
    for (const p of [{ timer: 'ncu' as const }, { counters: 'on' as const }]) {
      const info = toolchainInfo(survey({ ncu: null }), OPEN, withProfile(p), 'sm_90');
      assert.equal(check(info, 'ncu').severity, 'warning', JSON.stringify(p));
      assert.equal(info.severity, 'warning');
      assert.match(check(info, 'ncu').message, /benchmarks stop/);
    }
  });

  test('no nvcc: an error, the other tools still reported, where nvcc was looked for and how to get it', () => {
    const missing = new MissingToolError('nvcc', ['/usr/local/cuda/bin', '/usr/bin']);
    const info = toolchainInfo(survey({ nvcc: null, nvccMissing: missing }), OPEN, DEFAULT_SETTINGS, 'sm_90');
    assert.equal(info.text, 'no nvcc · sm_90 · H100 80GB HBM3');
    assert.equal(info.severity, 'error');
    const nvcc = check(info, 'nvcc');
    assert.deepEqual([nvcc.found, nvcc.severity, nvcc.fix], [false, 'error', installHint('nvcc')]);
    assert.match(nvcc.message, /looked in: \/usr\/local\/cuda\/bin, \/usr\/bin/);
    assert.equal(check(info, 'disassemblers').found, true);
    assert.throws(
      () => toolchainOf(survey({ nvcc: null, nvccMissing: missing })),
      (e: unknown) => e === missing,
    );
  });

  test('nvdisasm missing: a warning that effective unroll needs it, with its install hint', () => {
    const info = toolchainInfo(survey({ nvdisasm: null }), OPEN, DEFAULT_SETTINGS, 'sm_90');
    const d = check(info, 'disassemblers');
    assert.deepEqual([d.found, d.severity, d.fix], [false, 'warning', installHint('nvdisasm')]);
    assert.match(d.message, /^cuobjdump 13\.0 at .*; nvdisasm not found: effective unroll needs its line info$/);
    assert.match(info.detail, /nvdisasm missing/);
  });

  test('counters restricted on a GPU: a warning (stall reasons are on by default) with the driver fix', () => {
    const info = toolchainInfo(survey(), RESTRICTED, DEFAULT_SETTINGS, 'sm_90');
    const gpu = check(info, 'gpu');
    assert.deepEqual([gpu.found, gpu.severity], [false, 'warning']);
    assert.match(gpu.message, /ERR_NVGPUCTRPERM/);
    assert.ok(gpu.fix!.endsWith(ENABLE_COUNTERS), gpu.fix!);
    assert.match(gpu.fix!, /CUPTI timer \(your unrollLens\.profile\.timer\) times kernels without that permission/);
    assert.match(info.detail, /counters restricted \(ERR_NVGPUCTRPERM\)$/);
    // times only, nothing that reads counters: only a note
    const timesOnly = toolchainInfo(survey(), RESTRICTED, withProfile({ stalls: 'off', sourceStalls: false }), 'sm_90');
    assert.equal(check(timesOnly, 'gpu').severity, 'info');
  });

  test('a launcher: the GPU is on the node it reaches, which this machine cannot check', () => {
    const info = toolchainInfo(survey({ gpus: [] }), NO_DRIVER, withProfile({ launcher: ['srun', '-p', 'gpu'] }), 'sm_90');
    const gpu = check(info, 'gpu');
    assert.deepEqual([gpu.found, gpu.severity], [true, 'info']);
    assert.match(gpu.message, /launcher \(srun …\)/);
  });

  test('Restricted Mode: every check says it was not run and how to trust the workspace', () => {
    const info = unavailableToolchainInfo({ trusted: false, text: 'Restricted Mode', reason: RESTRICTED_MODE, fix: TRUST_FIX });
    assert.equal(info.severity, 'warning');
    assert.deepEqual(
      info.checks.map(c => [c.id, c.found, c.fix]),
      TOOL_CHECKS.map(id => [id, false, TRUST_FIX]),
    );
  });
});

function fakeConnection(sent: unknown[]): Connection {
  return {
    sendNotification: (_t: unknown, p: unknown) => {
      sent.push(p);
    },
    console: { log: () => undefined },
  } as unknown as Connection;
}

describe('the server answers ToolchainInfoRequest', () => {
  test('untrusted: Restricted Mode, and no tool is looked for', async () => {
    const sent: unknown[] = [];
    const settings = { ...DEFAULT_SETTINGS, toolchain: { ...DEFAULT_SETTINGS.toolchain, nvccPath: '/nonexistent/evil-nvcc' } };
    const t = new ServerToolchain(
      fakeConnection(sent),
      () => settings,
      () => [],
    );
    const info = await t.info(true);
    assert.deepEqual([info.trusted, info.text], [false, 'Restricted Mode']);
    assert.deepEqual(sent, [], 'nothing looked for, nothing reported');
  });

  test('trusted: the tools of this machine, cached until a recheck', async () => {
    const sent: unknown[] = [];
    const t = new ServerToolchain(
      fakeConnection(sent),
      () => DEFAULT_SETTINGS,
      () => [],
    );
    t.setTrusted(true);
    const info = await t.info();
    assert.equal(info.trusted, true);
    const nvcc = info.checks.find(c => c.id === 'nvcc')!;
    if (nvcc.found) assert.match(info.text, /^nvcc \d+\.\d+ · sm_\d+ · /);
    else assert.equal(nvcc.severity, 'error');
    const ncu = info.checks.find(c => c.id === 'ncu')!;
    if (!ncu.found) assert.equal(ncu.fix, installHint('ncu'));
    assert.strictEqual(t.survey(), t.survey(), 'cached');
    const before = t.survey();
    await t.info(true);
    assert.notStrictEqual(t.survey(), before, 'a recheck looks again');
    // the status bar heard of it too
    assert.ok(sent.length > 0);
  });
});
