// How the language server ends while it builds or runs something: SIGTERM (the editor or a
// process manager stopping it), SIGINT, SIGHUP, or its client gone (stdin's end, the IPC channel
// closing, the `exit` notification). Every path ends in process exit, where the process guard
// kills the process groups of the running nvcc, disassemblers, ncu and programs (and anything
// still carrying our marker) and removes their temp folders (engine/toolchain/processGuard.ts);
// a SIGKILL, which runs no code of ours, is the watchdog's. The signal handlers only make a signal
// exit through that path: without one, Node dies on SIGTERM without running any exit handler.
// (vscode-languageserver itself exits with process.exit on stdin's end and on `exit`.)
import { processGuard } from '../engine';

/** The signals that stop the server; exit status 128 + the signal's number, as a shell reports it. */
const STOP_SIGNALS: Record<string, number> = { SIGTERM: 15, SIGINT: 2, SIGHUP: 1 };

/** Installs the handlers; `log` tells the output channel what is being stopped. */
export function exitCleanlyOnStop(log: (message: string) => void): void {
  for (const [signal, number] of Object.entries(STOP_SIGNALS)) {
    process.on(signal, () => {
      const running = processGuard.running;
      if (running) log(`${signal}: stopping ${running} running tool${running === 1 ? '' : 's'} and removing their temp folders`);
      processGuard.reapAll();
      process.exit(128 + number);
    });
  }
  // A client over IPC that went away without `shutdown`/`exit`: nobody will read our answers.
  process.on('disconnect', () => {
    processGuard.reapAll();
    process.exit(1);
  });
}
