// `unroll-lens cache`: where the build cache is, how big, and clearing it.
import * as path from 'path';
import {
  BuildCache,
  MeasurementCache,
  NotOurCacheError,
  clearProjectCopies,
  defaultCacheDir,
  scanCacheBeside,
  formatBytes,
  ownership,
  projectCopiesInfo,
  projectsDirFor,
} from '../engine';
import { defineCommand } from './args';
import { EXIT, UsageError } from './io';

export const cacheCommand = defineCommand({
  name: 'cache',
  summary: 'Show the build, measurement and scan caches (location, entries, size) or clear them.',
  synopsis: 'info|clear [--dir DIR] [--json]',
  description:
    "info: the build cache's location, number of entries and size, and the measurement and scan caches' beside it.\n" +
    'clear: deletes every cached build (an editor or another run using one at that moment keeps it: it holds its own link\n' +
    'to the files; builds in progress are left alone), every cached GPU measurement, every cached scan analysis and the\n' +
    "project copies bench --build builds in (those a running bench holds stay). The CLI's caches are\n" +
    "$XDG_CACHE_HOME/unroll-lens/builds, .../measurements and .../scans (default ~/.cache/unroll-lens/); the editor's are under VS\n" +
    "Code's global storage (its command 'Unroll Lens: Clear Build Cache' clears those). Only a folder Unroll Lens created\n" +
    '(it holds a .unroll-lens-cache marker file) is cleared, and in it only our own entries: any other folder is refused\n' +
    'and left untouched.',
  options: {
    dir: { type: 'string', value: 'DIR', help: 'the cache folder', default: '$XDG_CACHE_HOME/unroll-lens/builds' },
    json: {
      type: 'boolean',
      help: 'machine-readable output: {"location", "entries", "bytes", "measurements": {…}, "scans": {…}, "projects": {…}} (clear: what was deleted)',
    },
  },
  exitCodes: [
    [EXIT.ok, 'done'],
    [EXIT.usage, 'bad usage (no or unknown action, an empty --dir, or a folder that is not an Unroll Lens cache)'],
  ],
  async run({ options, positionals }, io) {
    const [action, ...extra] = positionals;
    if (action !== 'info' && action !== 'clear')
      throw new UsageError(action ? `unknown action '${action}' (info or clear)` : 'cache needs an action: info or clear');
    if (extra.length) throw new UsageError(`cache ${action} takes no file`);
    // An empty --dir would resolve to the current folder: never a cache by accident.
    if (options.dir !== undefined && options.dir.trim() === '') throw new UsageError('--dir is empty: name the build cache folder');
    const dir = path.resolve(options.dir ?? defaultCacheDir());
    const cache = new BuildCache(dir);
    // Measurements live beside the builds (runLocations), as the bench and sweep commands put them.
    const measurements = new MeasurementCache(path.join(path.dirname(dir), 'measurements'));
    // the copies of projects that bench --build builds in, beside them too
    const projects = projectsDirFor(dir);
    // and the scan's analyses (scan.ts), beside them as well
    const scans = scanCacheBeside(dir);
    if (action === 'info') {
      const info = cache.info();
      const m = measurements.info();
      const s = scans.info();
      const p = projectCopiesInfo(projects);
      if (options.json) io.out(JSON.stringify({ ...info, measurements: m, scans: s, projects: p }, null, 2) + '\n');
      else
        io.out(
          `location: ${info.location}\nentries:  ${info.entries}\nsize:     ${formatBytes(info.bytes)}\n` +
            `measurements: ${m.entries} in ${m.location} (${formatBytes(m.bytes)})\n` +
            `scan analyses: ${s.entries} in ${s.location} (${formatBytes(s.bytes)})\n` +
            `project copies: ${p.copies} in ${p.location} (${formatBytes(p.bytes)})\n`,
        );
      return EXIT.ok;
    }
    let gone;
    try {
      gone = cache.clear();
    } catch (e) {
      if (e instanceof NotOurCacheError) throw new UsageError(e.message);
      throw e;
    }
    const left = cache.info();
    // The measurements beside it are cleared only when they are ours too; otherwise they are left as they are.
    const mine = ownership(measurements.dir, 'measurement') === 'ours';
    const m = mine ? measurements.info() : { location: measurements.dir, entries: 0, bytes: 0 };
    if (mine) measurements.clear();
    const scansOurs = ownership(scans.dir, 'scan') === 'ours';
    const s = scansOurs ? scans.clear() : { location: scans.dir, entries: 0, bytes: 0 };
    // only when the build cache was ours (clear() refused anything else above)
    const p = clearProjectCopies(projects);
    if (options.json) io.out(JSON.stringify({ ...gone, left: left.entries, measurements: m, scans: s, projects: p }, null, 2) + '\n');
    else
      io.out(
        `cleared ${gone.location}: ${gone.entries} entries, ${formatBytes(gone.bytes)}${left.entries ? ` (${left.entries} could not be deleted)` : ''}\n` +
          (mine || ownership(measurements.dir, 'measurement') === 'absent'
            ? `cleared ${m.location}: ${m.entries} measurements\n`
            : `left ${m.location} alone: not an Unroll Lens measurement cache\n`) +
          (scansOurs || ownership(scans.dir, 'scan') === 'absent'
            ? `cleared ${s.location}: ${s.entries} analyses\n`
            : `left ${s.location} alone: not an Unroll Lens scan cache\n`) +
          (p.copies || p.kept
            ? `cleared ${p.location}: ${p.copies} project cop${p.copies === 1 ? 'y' : 'ies'}, ${formatBytes(p.bytes)}${p.kept ? ` (${p.kept} in use, kept)` : ''}\n`
            : ''),
      );
    return EXIT.ok;
  },
});
