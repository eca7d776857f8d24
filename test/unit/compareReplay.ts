// Replaying a recorded `compare` run (scripts/device/run-compare.sh on an H100): nvcc and the
// disassemblers run for real; a program run gets the recorded timer records of that run, and an ncu
// run the kept raw page of the kernel it was asked to profile. Shared by the ladders' replay tests.
import * as fs from 'fs';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';
import type { ToolInfo } from '../../src/engine/toolchain/discover';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';

export const FAKE_NCU: ToolInfo = { name: 'ncu', path: '/fake/ncu', version: '2025.3.1', source: 'setting' };

export interface CompareReplay {
  runner: ProcessRunner;
  /** program runs made with the timer injected */
  timerRuns: () => number;
  /** the argument lists of the ncu runs */
  ncuRuns: string[][];
  /** every other command run (none expected) */
  others: string[];
}

/** `timerRecords[i]` = the records of the i-th program run; `pages` = the kept ncu raw pages. */
export function replayCompare(real: Toolchain, stdout: string, timerRecords: string[], pages: string[] = []): CompareReplay {
  let run = 0;
  const replay: CompareReplay = { runner: async () => result({}), timerRuns: () => run, ncuRuns: [], others: [] };
  replay.runner = async (cmd, args, o) => {
    if ([real.nvcc.path, real.nvdisasm?.path, real.cuobjdump?.path, real.cxxfilt?.path].includes(cmd)) return real.runner(cmd, args, o);
    if (cmd === FAKE_NCU.path) {
      replay.ncuRuns.push(args);
      // the program runs inside ncu; the raw page follows its output (no report exported)
      const name = /regex:\^(\w+)\$/.exec(args.join(' '))?.[1];
      const page = pages.find(p => name && p.includes(`"${name}"`));
      return result({ stdout: `${stdout}==PROF== Disconnected from process\n${page ?? ''}` });
    }
    const out = o?.env?.UNROLL_LENS_TIMER_OUT;
    if (!out || !o?.env?.CUDA_INJECTION64_PATH) {
      replay.others.push(cmd);
      return result({ exitCode: 1, stderr: 'not run with the timer' });
    }
    // recorded before stalls were sampled in a run of their own: the stall run and the timed run after
    // it both get the one recorded run (its records carry no gpu__time_duration: timed by the records)
    const sampling = !!o.env.UNROLL_LENS_PCSAMPLING;
    fs.appendFileSync(out, fs.readFileSync(timerRecords[sampling ? run : run++], 'utf8'));
    return result({ stdout });
  };
  return replay;
}

/** The program's own cudaEvent medians (time_ms=) by kernel name, template arguments dropped. */
export function ownTimes(stdout: string): Map<string, number> {
  return new Map([...stdout.matchAll(/kernel=([A-Za-z0-9_]+)\S* .*time_ms=([0-9.]+)/g)].map(m => [m[1], Number(m[2])]));
}

export function result(over: Partial<ProcessResult>): ProcessResult {
  return {
    command: '',
    args: [],
    exitCode: 0,
    signal: null,
    stdout: '',
    stderr: '',
    timedOut: false,
    cancelled: false,
    durationMs: 1,
    ...over,
  };
}
