// Whether this process may read the GPU performance counters, before any ncu run meets
// ERR_NVGPUCTRPERM: what the NVIDIA driver says (/proc/driver/nvidia/params, RmProfilingAdminOnly:
// 1 restricts them to administrators, the driver option NVreg_RestrictProfilingToAdminUsers) and
// whether this process is one (root, CAP_SYS_ADMIN; CAP_PERFMON from driver R565 on, as NVIDIA's
// page on the error says). Reads two files and runs nothing: the answer holds for the programs
// this process starts (ncu, the CUPTI timer), which run as the same user with the same capabilities.
// The fix is permissionHelp's, the words every stage that meets the refusal uses.
//
// Recorded on an H100 (driver 580.159.04): test/fixtures/gpu/h100/permission/.
import * as fs from 'fs';
import { ENABLE_COUNTERS } from './permissionHelp';

/** open: every user may; admin: restricted, and this process is an administrator; restricted: ERR_NVGPUCTRPERM; unknown: the driver did not say. */
type CounterAccess = 'open' | 'admin' | 'restricted' | 'unknown';

export interface CounterPermission {
  access: CounterAccess;
  /** What was read and what it means, one sentence. */
  detail: string;
  /** How to allow the counters (restricted only). */
  fix: string | null;
}

const NVIDIA_PARAMS = '/proc/driver/nvidia/params';
const CAP_SYS_ADMIN = 21n;
const CAP_PERFMON = 38n;
/** The first driver branch where CAP_PERFMON allows the counters. */
const PERFMON_DRIVER = 565;

/** RmProfilingAdminOnly from /proc/driver/nvidia/params: true (restricted), false (open), null when absent. */
export function restrictedToAdmins(params: string): boolean | null {
  const m = /^RmProfilingAdminOnly:\s*(\d+)\s*$/m.exec(params);
  return m ? m[1] !== '0' : null;
}

/** The effective capabilities (CapEff) from /proc/self/status, or null. */
export function effectiveCapabilities(status: string): bigint | null {
  const m = /^CapEff:\s*([0-9a-f]+)\s*$/im.exec(status);
  return m ? BigInt(`0x${m[1]}`) : null;
}

/** The real user id (the first Uid field) from /proc/self/status, or null. */
function uidOf(status: string): number | null {
  const m = /^Uid:\s*(\d+)/m.exec(status);
  return m ? Number(m[1]) : null;
}

const has = (caps: bigint | null, bit: bigint) => caps !== null && (caps & (1n << bit)) !== 0n;

export interface CounterFacts {
  /** /proc/driver/nvidia/params, or null when it cannot be read (no driver loaded, not Linux). */
  params: string | null;
  /** /proc/self/status, or null. */
  status: string | null;
  /** The driver version nvidia-smi reports ("580.159.04"), for CAP_PERFMON. */
  driverVersion?: string | null;
}

/** The verdict from what was read (pure). */
export function counterPermission(f: CounterFacts): CounterPermission {
  if (f.params === null)
    return {
      access: 'unknown',
      detail: `${NVIDIA_PARAMS} cannot be read: no NVIDIA driver is loaded on this machine (or it is not Linux)`,
      fix: null,
    };
  const restricted = restrictedToAdmins(f.params);
  if (restricted === null)
    return { access: 'unknown', detail: `the NVIDIA driver's ${NVIDIA_PARAMS} has no RmProfilingAdminOnly line`, fix: null };
  if (!restricted)
    return {
      access: 'open',
      detail: 'the NVIDIA driver lets every user read the GPU performance counters (RmProfilingAdminOnly: 0)',
      fix: null,
    };
  const caps = f.status === null ? null : effectiveCapabilities(f.status);
  const uid = f.status === null ? null : uidOf(f.status);
  const driverMajor = Number(/^(\d+)/.exec(f.driverVersion ?? '')?.[1] ?? 0);
  const as =
    uid === 0
      ? 'root'
      : has(caps, CAP_SYS_ADMIN)
        ? 'CAP_SYS_ADMIN'
        : has(caps, CAP_PERFMON) && driverMajor >= PERFMON_DRIVER
          ? 'CAP_PERFMON'
          : null;
  const admins = 'the NVIDIA driver restricts the GPU performance counters to administrators (RmProfilingAdminOnly: 1)';
  if (as) return { access: 'admin', detail: `${admins}, and Unroll Lens runs as one (${as})`, fix: null };
  return {
    access: 'restricted',
    detail: `${admins}, and Unroll Lens does not run as one: ncu stops with ERR_NVGPUCTRPERM`,
    fix: ENABLE_COUNTERS,
  };
}

function readOrNull(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Reads the driver's parameters and this process's status (Linux), and judges them. */
export function probeCounterPermission(
  driverVersion: string | null = null,
  read: (file: string) => string | null = readOrNull,
): CounterPermission {
  return counterPermission({ params: read(NVIDIA_PARAMS), status: read('/proc/self/status'), driverVersion });
}
