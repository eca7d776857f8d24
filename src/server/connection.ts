// The server's connection. Over stdio its input passes the frame guard first (lspFraming.ts): a
// malformed header ends the process with a message on stderr, where a stdio server's log goes,
// instead of leaving it listening to a stream it can no longer split. IPC (what the extension
// uses), sockets and pipes are vscode-languageserver's own.
import { Connection, createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { guardedInput } from './lspFraming';

export function createServerConnection(argv = process.argv): Connection {
  if (!argv.slice(2).includes('--stdio')) return createConnection(ProposedFeatures.all);
  const input = guardedInput(process.stdin);
  input.on('error', e => {
    // exit once the message is out: writes to a pipe are asynchronous and process.exit drops what is
    // pending (under load the message was lost, test/unit/lspFraming.test.ts); at most 1 s later regardless
    const exit = () => process.exit(1);
    process.stderr.write(`Unroll Lens server: the client's message stream is broken (${e.message}); exiting\n`, exit);
    setTimeout(exit, 1000);
  });
  // vscode-languageserver moves console output to the log only when it opens stdio itself:
  // anything printed to stdout would corrupt the protocol stream.
  for (const name of ['log', 'info', 'warn', 'error', 'debug'] as const)
    console[name] = (...args: unknown[]) => void process.stderr.write(args.map(String).join(' ') + '\n');
  return createConnection(ProposedFeatures.all, input, process.stdout);
}
