// `unroll-lens cache`: where the build cache is, how big, and clearing it.
import * as path from 'path';
import { BuildCache, formatBytes } from '../engine/variants/cache';
import { defaultCacheDir } from '../engine/variants/build';
import { defineCommand } from './args';
import { EXIT, UsageError } from './io';

export const cacheCommand = defineCommand({
  name: 'cache',
  summary: 'Show the build cache (location, entries, size) or clear it.',
  synopsis: 'info|clear [--dir DIR] [--json]',
  description:
    "info: the build cache's location, number of entries and size. clear: deletes every cached build (each entry is\n" +
    'moved aside and then deleted, so an editor or another run reading one at that moment is not disturbed; builds in\n' +
    "progress are left alone). The CLI's cache is $XDG_CACHE_HOME/unroll-lens/builds (default ~/.cache/unroll-lens/builds);\n" +
    "the editor's is under VS Code's global storage (its command 'Unroll Lens: Clear Build Cache' clears that one).",
  options: {
    dir: { type: 'string', value: 'DIR', help: 'the cache folder', default: '$XDG_CACHE_HOME/unroll-lens/builds' },
    json: { type: 'boolean', help: 'machine-readable output: {"location", "entries", "bytes"} (clear: what was deleted)' },
  },
  exitCodes: [
    [EXIT.ok, 'done'],
    [EXIT.usage, 'bad usage (no or unknown action)'],
  ],
  async run({ options, positionals }, io) {
    const [action, ...extra] = positionals;
    if (action !== 'info' && action !== 'clear')
      throw new UsageError(action ? `unknown action '${action}' (info or clear)` : 'cache needs an action: info or clear');
    if (extra.length) throw new UsageError(`cache ${action} takes no file`);
    const cache = new BuildCache(path.resolve(options.dir ?? defaultCacheDir()));
    if (action === 'info') {
      const info = cache.info();
      if (options.json) io.out(JSON.stringify(info, null, 2) + '\n');
      else io.out(`location: ${info.location}\nentries:  ${info.entries}\nsize:     ${formatBytes(info.bytes)}\n`);
      return EXIT.ok;
    }
    const gone = cache.clear();
    const left = cache.info();
    if (options.json) io.out(JSON.stringify({ ...gone, left: left.entries }, null, 2) + '\n');
    else
      io.out(
        `cleared ${gone.location}: ${gone.entries} entries, ${formatBytes(gone.bytes)}${left.entries ? ` (${left.entries} could not be deleted)` : ''}\n`,
      );
    return EXIT.ok;
  },
});
