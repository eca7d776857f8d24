// What to say when the NVIDIA driver refuses profiling to this user: ncu's ERR_NVGPUCTRPERM (the GPU
// performance counters are restricted to administrators) and a CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
// from our CUPTI timer. One wording for every stage that meets it (ncu's time and line-stall
// runs, the timer's records), so the user reads the same fix wherever it happens.
//
// Kernel timing alone needs no counters: the CUPTI timer (--timer cupti) records launches with
// CUPTI's Activity API, which the driver's counter restriction does not cover. Stall reasons,
// per-line stalls and every ncu run do need them.
//
// Pure string work: never throws.

/** NVIDIA's page on the error, which says how to allow the counters on each platform. */
export const ERR_NVGPUCTRPERM_URL = 'https://developer.nvidia.com/ERR_NVGPUCTRPERM';

/** How to let a user read the GPU performance counters: the driver option, or root / CAP_SYS_ADMIN. */
export const ENABLE_COUNTERS =
  'To allow profiling (the GPU performance counters), have an administrator set the NVIDIA driver option NVreg_RestrictProfilingToAdminUsers=0 ' +
  '(a line "options nvidia NVreg_RestrictProfilingToAdminUsers=0" in a .conf file under /etc/modprobe.d/; some ' +
  'distributions also need the initramfs rebuilt), then reload the nvidia kernel module or reboot; or profile as root ' +
  '(for example with sudo) or with the CAP_SYS_ADMIN capability (a container needs SYS_ADMIN). On Windows the setting ' +
  'is in the NVIDIA Control Panel (Developer > Manage GPU Performance Counters). ' +
  `NVIDIA's page "ERR_NVGPUCTRPERM": ${ERR_NVGPUCTRPERM_URL}`;

/** What still works without the permission: timing with the CUPTI timer. */
const TIME_WITHOUT_COUNTERS =
  'Timing alone works without that permission: the CUPTI timer (--timer cupti, or the setting unrollLens.profile.timer: cupti) ' +
  "records kernel launches with CUPTI's Activity API, which needs no counter access (no stall reasons then).";

/**
 * The fix for ncu refused the counters (ERR_NVGPUCTRPERM). `timedByCupti`: the CUPTI timer already
 * timed the variants and only ncu's stall sampling was refused, so the timings stand.
 */
export function ncuPermissionFix(timedByCupti = false): string {
  return timedByCupti
    ? `The timings, by the CUPTI timer, need no such permission and are kept; stall reasons need the counters. ${ENABLE_COUNTERS}`
    : `${TIME_WITHOUT_COUNTERS} ${ENABLE_COUNTERS}`;
}

const INSUFFICIENT_PRIVILEGES = /CUPTI_ERROR_INSUFFICIENT_PRIVILEGES/;

/**
 * Why the CUPTI timer's run failed when one of its errors (TimerRecords.errors) is
 * CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, with the fix; null when none is.
 */
export function cuptiPermissionProblem(errors: readonly string[]): string | null {
  const refused = errors.find(e => typeof e === 'string' && INSUFFICIENT_PRIVILEGES.test(e));
  if (refused === undefined) return null;
  return `the CUPTI timer was refused by the NVIDIA driver (${refused}): this user may not profile the GPU. ${ENABLE_COUNTERS}`;
}

/**
 * `message` (a CUPTI timer failure) with the permission fix added when it names
 * CUPTI_ERROR_INSUFFICIENT_PRIVILEGES and does not carry the fix yet; otherwise `message` itself.
 */
export function withCuptiPermissionHelp(message: string): string {
  if (!INSUFFICIENT_PRIVILEGES.test(message) || message.includes('NVreg_RestrictProfilingToAdminUsers')) return message;
  return `${message.replace(/[.\s]+$/, '')}. This user may not profile the GPU. ${ENABLE_COUNTERS}`;
}
