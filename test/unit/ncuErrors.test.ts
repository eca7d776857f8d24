// Unit tests of the ncu failure classifier (src/engine/profile/ncuErrors.ts). The errors/*
// fixtures without a "synthetic-" prefix are real ncu 2025.3.1 runs on an H100
// (test/fixtures/ncu/regenerate.sh). The synthetic-* ones are hand-written reconstructions of
// failures that could not be produced there (profiling was allowed for every user, the GPU was
// supported, the driver library loaded): their ncu lines use the wording users have quoted
// publicly, the rest is made up (test/fixtures/ncu/README.md).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { availableKernels, classifyNcuFailure, profiledKernels } from '../../src/engine/profile/ncuErrors';
import { ERR_NVGPUCTRPERM_URL } from '../../src/engine/profile/permissionHelp';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'ncu');
const run = (name: string) => {
  const r = (ext: string) => fs.readFileSync(path.join(FIXTURES, 'errors', `${name}.${ext}`), 'utf8');
  return { stdout: r('stdout.txt'), stderr: r('stderr.txt'), exitCode: Number(r('exit').trim()) };
};
const classify = (name: string, kernels?: string[]) => {
  const r = run(name);
  return classifyNcuFailure(r.stdout, r.stderr, r.exitCode, kernels);
};

describe('classifyNcuFailure: recorded runs (H100, ncu 2025.3.1)', () => {
  test('no kernel launched at all (/bin/true): no-kernels, nothing seen', () => {
    const r = run('no-kernels-true');
    assert.equal(r.stdout, '==WARNING== No kernels were profiled.\n');
    assert.equal(r.exitCode, 0);
    const f = classify('no-kernels-true');
    assert.equal(f.kind, 'no-kernels');
    assert.equal(f.message, 'ncu profiled no kernels.');
    assert.deepEqual(f.kernelsSeen, []);
    assert.match(f.fix!, /launches a kernel/);
  });

  test('a kernel filter that matched nothing: ncu lists the available kernels', () => {
    const r = run('no-kernels-filter');
    assert.match(r.stdout, /==WARNING== No kernels were profiled\.\nAvailable Kernels:\n1\. accumulate\n2\. scale\n/);
    const f = classify('no-kernels-filter');
    assert.equal(f.kind, 'no-kernels');
    assert.deepEqual(f.kernelsSeen, ['accumulate', 'scale']);
    assert.equal(f.message, 'ncu profiled none of the kernels the program launched (accumulate, scale).');
    assert.match(f.fix!, /--kernel-name/);
    // The caller's list is merged in (from the program's own output, say).
    assert.deepEqual(classify('no-kernels-filter', ['scale', 'scale<16>']).kernelsSeen, ['accumulate', 'scale', 'scale<16>']);
    assert.deepEqual(classify('no-kernels-true', ['k1']).kernelsSeen, ['k1']);
  });

  test('--devices with a device that does not exist: no-kernels', () => {
    assert.equal(classify('bad-device').kind, 'no-kernels');
  });

  test('the program fails before any launch: other, with its exit code and stderr', () => {
    const r = run('no-kernels-app-fails');
    assert.equal(r.stdout, '==ERROR== The application returned an error code (3).\n');
    assert.equal(r.exitCode, 3);
    const f = classify('no-kernels-app-fails');
    assert.equal(f.kind, 'other');
    assert.equal(f.appExitCode, 3);
    assert.equal(f.message, 'The program failed under ncu with exit code 3: failing on purpose');
    assert.deepEqual(f.errors, ['The application returned an error code (3).']);
  });

  test('missing program, bad option, missing report: other, quoting ncu', () => {
    const m = classify('missing-program');
    assert.equal(m.kind, 'other');
    assert.match(m.message, /^ncu failed: '\.\/does-not-exist' does not exist or is not an executable\./);
    assert.match(m.fix!, /absolute path/);
    const o = classify('bad-option');
    assert.equal(o.kind, 'other');
    assert.equal(o.message, "ncu failed: unrecognised option '--no-such-option'. Use --help for further details.");
    const rep = classify('missing-report');
    assert.match(rep.message, /Could not open report file .*nothere\.ncu-rep.*The file does not exist/);
  });

  test('a successful run (only ==WARNING==/==PROF== lines) is not mistaken for a failure kind', () => {
    const f = classify('mini-export');
    assert.equal(f.kind, 'other');
    assert.equal(f.message, 'ncu finished without an error but printed nothing that explains the missing profile.');
    assert.deepEqual(profiledKernels(run('mini-export').stdout), ['scale', 'accumulate(float *, int, int)']);
  });
});

describe('classifyNcuFailure: synthetic (publicly reported wording)', () => {
  test('ERR_NVGPUCTRPERM: permission, with the documented fix', () => {
    const f = classify('synthetic-permission');
    assert.equal(f.kind, 'permission');
    assert.match(f.message, /device 0/);
    assert.match(f.fix!, /NVreg_RestrictProfilingToAdminUsers=0/);
    assert.match(f.fix!, /\/etc\/modprobe\.d\//);
    assert.match(f.fix!, /reboot/);
    assert.match(f.fix!, /root/);
    assert.ok(f.fix!.includes(ERR_NVGPUCTRPERM_URL));
    assert.equal(ERR_NVGPUCTRPERM_URL, 'https://developer.nvidia.com/ERR_NVGPUCTRPERM');
    // Wins over the "No kernels were profiled." that follows it; also when it is on stderr.
    assert.equal(classifyNcuFailure('', run('synthetic-permission').stdout, 1).kind, 'permission');
  });

  test('unsupported GPU and WSL: not-supported, before no-kernels', () => {
    const f = classify('synthetic-not-supported');
    assert.equal(f.kind, 'not-supported');
    assert.match(f.message, /device 0/);
    assert.match(f.fix!, /--list-chips/);
    const w = classify('synthetic-not-supported-wsl');
    assert.equal(w.kind, 'not-supported');
    assert.match(w.message, /Windows Subsystem for Linux/);
    assert.match(w.fix!, /WSL 2/);
  });

  test('LibraryNotLoaded: no-gpu (driver library), not the application error code', () => {
    const f = classify('synthetic-library-not-loaded');
    assert.equal(f.kind, 'no-gpu');
    assert.match(f.message, /LibraryNotLoaded/);
    assert.equal(f.appExitCode, 9);
    assert.deepEqual(f.errors, [
      'An error was reported by the counter measurement library:',
      'Failed to initialize the profiler: LibraryNotLoaded. Check that a compatible driver library is loaded.',
      'The application returned an error code (9).',
    ]);
  });

  test("no CUDA device (the program's own error on stderr): no-gpu", () => {
    const f = classify('synthetic-no-cuda-device');
    assert.equal(f.kind, 'no-gpu');
    assert.match(f.message, /no CUDA-capable device is detected/);
    assert.match(f.fix!, /nvidia-smi/);
  });

  test('kernels in a child process: no-kernels with the --target-processes all fix', () => {
    const f = classify('synthetic-child-processes');
    assert.equal(f.kind, 'no-kernels');
    assert.match(f.fix!, /--target-processes all/);
  });
});

describe('classifyNcuFailure: hand-written variants', () => {
  test('driver problems and other spellings', () => {
    assert.equal(classifyNcuFailure('', 'CUDA error: CUDA driver version is insufficient for CUDA runtime version\n', 1).kind, 'no-gpu');
    assert.equal(classifyNcuFailure('', 'cuInit failed: CUDA_ERROR_NO_DEVICE\n', 1).kind, 'no-gpu');
    assert.equal(classifyNcuFailure('==ERROR== Profiling is not supported on this device\n', '', 0).kind, 'not-supported');
    assert.equal(classifyNcuFailure('==ERROR== Unsupported GPU architecture\n', '', 1).kind, 'not-supported');
    assert.equal(classifyNcuFailure('==ERROR== Metric foo is not supported on device 0\n', '', 1).kind, 'other');
    assert.equal(classifyNcuFailure('', 'CUPTI_ERROR_INSUFFICIENT_PRIVILEGES', 1).kind, 'permission');
  });

  test('exit codes without messages; killed by a signal', () => {
    assert.equal(classifyNcuFailure('', '', 139).message, 'ncu exited with code 139 and printed nothing that explains it.');
    assert.equal(
      classifyNcuFailure('"ID","x"\n"0","1"\n', 'Segmentation fault\n', 139).message,
      'ncu exited with code 139: Segmentation fault',
    );
    assert.equal(classifyNcuFailure('', '', null).message, 'ncu was stopped before it finished (killed by a signal).');
  });

  test('availableKernels reads only the numbered list after its heading', () => {
    assert.deepEqual(availableKernels('x\nAvailable Kernels:\n1. a\n2. b<2>(int)\nkernel=a done\n3. c\n'), ['a', 'b<2>(int)']);
    assert.deepEqual(availableKernels('1. a\n'), []);
  });

  test('garbage never throws', () => {
    const inputs: unknown[] = [
      '',
      '\0',
      '==ERROR==',
      '==ERROR== The application returned an error code (',
      'Available Kernels:\n1.',
      null,
      undefined,
      5,
      {},
      'x'.repeat(100000),
    ];
    for (const a of inputs) {
      for (const code of [0, 1, null, undefined, NaN]) {
        const f = classifyNcuFailure(a as string, a as string, code as number, a as string[]);
        assert.ok(['permission', 'no-kernels', 'no-gpu', 'not-supported', 'other'].includes(f.kind));
        assert.equal(typeof f.message, 'string');
      }
    }
  });
});
