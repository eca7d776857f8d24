// Preloaded (--import) into every node:test file process that scripts/test-all.mjs starts. The
// runner waits for a file's process to exit, so one that its tests leave alive (a handle nobody
// closed) stalls the whole run: a CI run was stopped at its time limit with nothing printed for an
// hour after a file's tests had all passed. Once a file's tests are done, this gives the process
// 30 s to end by itself, then ends it, saying what was still open so the leak can be found.
// (--test-force-exit would also end the runner itself before its TAP file is written.)
import { after } from 'node:test';

if (process.env.NODE_TEST_CONTEXT) {
  after(() => {
    const t = setTimeout(() => {
      const open = process.getActiveResourcesInfo().join(', ');
      process.stderr.write(`\n[test-exit-guard] ${process.argv[1]}: tests done, still running 30 s later (open: ${open}); ended\n`);
      process.exit(process.exitCode ?? 0);
    }, 30_000);
    t.unref(); // a process that ends by itself is not held up
  });
}
