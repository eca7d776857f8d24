// Says why an ncu (Nsight Compute) run produced no profile, and what to do about it.
//
// What ncu prints (stdout; its lines start with ==PROF==, ==WARNING==, ==ERROR==). Recorded with
// ncu 2025.3.1 on an H100 (test/fixtures/ncu/errors/, regenerate.sh):
//   no kernel launched        ==WARNING== No kernels were profiled.                (exit 0)
//   filter matched nothing    ==WARNING== No kernels were profiled.
//                             Available Kernels:
//                             1. accumulate
//                             2. scale                                              (exit 0)
//   program failed            ==ERROR== The application returned an error code (3). (exit 3)
//   missing program           ==ERROR== './x' does not exist or is not an executable. Please make
//                             sure to specify the absolute path to './x' if …       (exit 1)
//   bad option                ==ERROR== unrecognised option '--x'. Use --help for further details.
//   missing report            ==ERROR== Could not open report file '….ncu-rep'.
// As reported publicly by users of other machines (not reproducible here; the fixtures for them
// are reconstructions, marked synthetic):
//   permission                ==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to
//                             access NVIDIA GPU Performance Counters on the target device 0. For
//                             instructions on enabling permissions and to get more information
//                             see https://developer.nvidia.com/ERR_NVGPUCTRPERM
//   unsupported GPU           ==ERROR== Profiling is not supported on device 0. To find out
//                             supported GPUs refer --list-chips option.
//                             (WSL: "… on device 0 as it uses the Windows Subsystem for Linux (WSL)")
//   driver library            ==ERROR== An error was reported by the counter measurement library:
//                             ==ERROR== Failed to initialize the profiler: LibraryNotLoaded. Check
//                             that a compatible driver library is loaded.
//   child processes           ==WARNING== Profiling kernels launched by child processes requires
//                             the --target-processes all option.
// With no usable GPU the program's own CUDA error ("no CUDA-capable device is detected",
// CUDA_ERROR_NO_DEVICE) appears next to "No kernels were profiled".
//
// Pure string work: never throws.
import { ncuPermissionFix } from './permissionHelp';

type NcuFailureKind = 'permission' | 'no-kernels' | 'no-gpu' | 'not-supported' | 'other';

export interface NcuFailure {
  kind: NcuFailureKind;
  /** One or two plain sentences for the user. */
  message: string;
  /** What to do about it, when there is something to do. */
  fix?: string;
  /** no-kernels: kernels the program launched (ncu's "Available Kernels" list, and the caller's). */
  kernelsSeen?: string[];
  /** ncu's ==ERROR== lines, without the prefix. */
  errors?: string[];
  /** The profiled program's exit status, when ncu reported one. */
  appExitCode?: number;
}

/**
 * Classifies a failed (or empty) ncu run from its output and exit status. `kernelsSeen` adds
 * kernel names the caller knows the program launched (for example from its own output) to the
 * ones ncu listed.
 */
export function classifyNcuFailure(
  stdout: string,
  stderr: string,
  exitCode: number | null | undefined,
  kernelsSeen?: string[],
): NcuFailure {
  const out = typeof stdout === 'string' ? stdout : '';
  const err = typeof stderr === 'string' ? stderr : '';
  const all = `${out}\n${err}`;
  const lines = all.split(/\r?\n/);
  const errors = ncuLines(lines, 'ERROR');
  const warnings = ncuLines(lines, 'WARNING');
  const appExit = applicationExitCode(errors);
  const withErrors = <T extends NcuFailure>(f: T): T => ({
    ...f,
    ...(errors.length ? { errors } : {}),
    ...(appExit !== undefined ? { appExitCode: appExit } : {}),
  });

  const failure =
    permissionFailure(all) ??
    unsupportedGpuFailure(all, errors) ??
    noGpuFailure(all) ??
    noKernelsFailure(out, err, warnings, appExit, kernelsSeen) ??
    otherFailure(out, err, errors, appExit, exitCode);
  return withErrors(failure);
}

/** 1. Counter permissions. */
function permissionFailure(all: string): NcuFailure | null {
  if (
    /ERR_NVGPUCTRPERM|does not have permission to (?:access NVIDIA GPU Performance Counters|profile)|CUPTI_ERROR_INSUFFICIENT_PRIVILEGES/i.test(
      all,
    )
  ) {
    const dev = /on the target device (\d+)/i.exec(all)?.[1];
    return {
      kind: 'permission',
      message: `ncu may not read the GPU performance counters${dev !== undefined ? ` of device ${dev}` : ''}: the NVIDIA driver restricts them to administrators (ERR_NVGPUCTRPERM).`,
      fix: ncuPermissionFix(),
    };
  }
  return null;
}

/** 2. A GPU that this ncu cannot profile. */
function unsupportedGpuFailure(all: string, errors: string[]): NcuFailure | null {
  const unsupported =
    /Profiling is not supported on (?:this )?device(?: (\d+))?([^\n]*)/i.exec(all) ??
    /(?:device|GPU|chip)[^\n]*\bis not supported\b[^\n]*|\bunsupported (?:GPU|device|chip)\b[^\n]*/i.exec(errors.join('\n'));
  if (unsupported) {
    const wsl = /Windows Subsystem for Linux|\bWSL\b/i.test(all);
    const dev = unsupported[1];
    return {
      kind: 'not-supported',
      message: `This version of Nsight Compute cannot profile ${dev !== undefined ? `device ${dev}` : 'this GPU'}${wsl ? ' under the Windows Subsystem for Linux' : ''}.`,
      fix: wsl
        ? 'Profiling under WSL needs WSL 2, Windows 11 and a recent NVIDIA Windows driver (CUPTI documents driver 525 or newer); otherwise profile on native Linux.'
        : 'Use an Nsight Compute release that supports this GPU (`ncu --list-chips` lists the chips this one supports); a newer CUDA Toolkit or a standalone Nsight Compute download brings one.',
    };
  }
  return null;
}

/** 3. No GPU, no driver, or no usable driver library. */
function noGpuFailure(all: string): NcuFailure | null {
  if (/LibraryNotLoaded|Failed to initialize the profiler/i.test(all)) {
    return {
      kind: 'no-gpu',
      message: 'ncu could not load the NVIDIA driver library it measures with ("Failed to initialize the profiler: LibraryNotLoaded").',
      fix: "Check that an NVIDIA driver is installed and loaded (nvidia-smi works) and that it is new enough for this Nsight Compute; containers, virtual machines and WSL must also pass the GPU's profiling interface through.",
    };
  }
  const noDevice =
    /no CUDA-capable device is detected|CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|no CUDA[- ]capable device|No CUDA devices? (?:found|available)|no NVIDIA GPU/i.exec(
      all,
    );
  if (noDevice) {
    return {
      kind: 'no-gpu',
      message: `The program found no usable GPU ("${noDevice[0]}"), so there was nothing to profile.`,
      fix: 'Run on a machine with an NVIDIA GPU and driver (check with nvidia-smi), and check CUDA_VISIBLE_DEVICES.',
    };
  }
  const driver =
    /CUDA driver version is insufficient for CUDA runtime version|CUDA_ERROR_INSUFFICIENT_DRIVER|NVIDIA driver (?:is not|isn't) (?:loaded|installed|running)|Driver\/library version mismatch|couldn't communicate with the NVIDIA driver/i.exec(
      all,
    );
  if (driver) {
    return {
      kind: 'no-gpu',
      message: `The GPU driver is missing or does not match ("${driver[0]}").`,
      fix: 'Install or update the NVIDIA driver so that it supports this CUDA version (nvidia-smi shows the driver and the highest CUDA version it supports), or reboot after a driver update.',
    };
  }
  return null;
}

/** 4. Nothing profiled: whose kernels ncu saw, and why it may have skipped them. */
function noKernelsFailure(
  out: string,
  err: string,
  warnings: string[],
  appExit: number | undefined,
  kernelsSeen: string[] | undefined,
): NcuFailure | null {
  if (/No kernels were profiled/i.test(`${out}\n${err}`)) {
    const seen = unique([
      ...availableKernels(out),
      ...availableKernels(err),
      ...(Array.isArray(kernelsSeen) ? kernelsSeen.filter(k => typeof k === 'string' && k.trim()) : []),
    ]);
    const childHint = warnings.some(w => /child processes requires the --target-processes all/i.test(w));
    const exitNote = appExit !== undefined ? ` The program exited with code ${appExit}.` : '';
    let message = 'ncu profiled no kernels.';
    let fix: string;
    if (childHint) {
      message = 'ncu profiled no kernels: they were launched by a child process.';
      fix = 'Add --target-processes all so that ncu follows child processes (scripts, launchers, mpirun).';
    } else if (seen.length) {
      message = `ncu profiled none of the kernels the program launched (${seen.join(', ')}).`;
      fix =
        'Check the kernel filter (--kernel-name / -k, --kernel-name-base, --launch-skip, --launch-count) against these names: it matched none of them.';
    } else {
      fix =
        'Check that the program launches a kernel with these arguments and does not fail before its first launch; for a program that starts others, add --target-processes all.';
    }
    return { kind: 'no-kernels', message: message + exitNote, fix, kernelsSeen: seen };
  }
  return null;
}

/** 5. Anything else: quote what ncu said. */
function otherFailure(
  out: string,
  err: string,
  errors: string[],
  appExit: number | undefined,
  exitCode: number | null | undefined,
): NcuFailure {
  if (appExit !== undefined) {
    const tail = lastLines(err || programOutput(out), 3);
    return {
      kind: 'other',
      message: `The program failed under ncu with exit code ${appExit}${tail ? `: ${tail}` : '.'}`,
    };
  }
  if (errors.length) {
    const missing = /'([^']+)' does not exist or is not an executable/.exec(errors.join('\n'));
    return {
      kind: 'other',
      message: `ncu failed: ${errors.join(' ')}`,
      ...(missing
        ? { fix: `Check the program path (${missing[1]}); ncu needs an absolute path for a program outside the working directory.` }
        : {}),
    };
  }
  if (exitCode === null) {
    return { kind: 'other', message: 'ncu was stopped before it finished (killed by a signal).' };
  }
  if (exitCode === 0 || exitCode === undefined) {
    return { kind: 'other', message: 'ncu finished without an error but printed nothing that explains the missing profile.' };
  }
  const tail = lastLines(err || programOutput(out), 3);
  return {
    kind: 'other',
    message: `ncu exited with code ${exitCode}${tail ? `: ${tail}` : ' and printed nothing that explains it.'}`,
  };
}

/**
 * The kernel names under ncu's "Available Kernels:" list (printed after "No kernels were
 * profiled." when a --kernel-name filter matched nothing).
 */
export function availableKernels(text: string): string[] {
  const lines = (typeof text === 'string' ? text : '').split(/\r?\n/);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*Available Kernels:\s*$/i.test(lines[i])) continue;
    for (let j = i + 1; j < lines.length; j++) {
      const m = /^\s*\d+\.\s+(.+?)\s*$/.exec(lines[j]);
      if (!m) break;
      out.push(m[1]);
    }
  }
  return unique(out);
}

/** Kernel names from `==PROF== Profiling "name" - 0: …` progress lines. */
export function profiledKernels(text: string): string[] {
  const out: string[] = [];
  const s = typeof text === 'string' ? text : '';
  const re = /^\s*==PROF== Profiling "(.*)" - \d+:/gm;
  for (let m = re.exec(s); m; m = re.exec(s)) out.push(m[1]);
  return unique(out);
}

function ncuLines(lines: string[], level: 'ERROR' | 'WARNING'): string[] {
  const re = new RegExp(`^\\s*==${level}==\\s?(.*)$`);
  return lines.flatMap(l => {
    const m = re.exec(l);
    return m && m[1].trim() ? [m[1].trim()] : [];
  });
}

export function applicationExitCode(errors: string[]): number | undefined {
  for (const e of errors) {
    const m = /The application returned an error code \((-?\d+)\)/i.exec(e);
    if (m) return Number(m[1]);
  }
  return undefined;
}

/** stdout without ncu's message lines, CSV rows and its text tables: what the program printed. */
export function programOutput(stdout: string): string {
  return stdout
    .split(/\r?\n/)
    .filter(l => !/^\s*(?:==[A-Z]+==|"|-{3,}|\[\d+\] )/.test(l))
    .join('\n');
}

function lastLines(text: string, n: number): string {
  return text
    .split(/\r?\n/)
    .map(l => l.trim())
    .filter(Boolean)
    .slice(-n)
    .join(' ')
    .slice(0, 500);
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}
