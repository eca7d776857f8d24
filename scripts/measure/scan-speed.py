#!/usr/bin/env python3
"""Files per second of `unroll-lens scan --json` on source trees, whole process, with the load
other processes put on the machine during each run (issues 40 and 41: ">= 50 files/s on this
2-core machine"). A run counts only when the rest of the machine used less than --max-other
cores on average while it ran (read from /proc/stat against the scan's own CPU time); busy
moments are waited out, so the numbers are those of an idle machine, or the script says it found
none.

    python3 scripts/measure/scan-speed.py [--runs 3] [--root BUILD] [--rescan | --before-cache] DIR [DIR ...]

Each run analyses every file (`scan --fresh`: the scan cache is neither read nor written), so
the number is the analysis's speed. --rescan times re-scans instead: one scan first fills a
scan cache of the script's own, then each counted run answers from it. --before-cache: for a
BUILD older than the scan cache (no --fresh flag).

Files counted: every .cu/.cuh/.h/.hpp/.inl/.cuinl file under DIR (what the scan walks, skipped
headers included). Prints one Markdown row per tree: files, median and best wall time, files/s
at the median, the scan's CPU time, and the other load. Linux only (/proc/stat).
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

EXTENSIONS = ('.cu', '.cuh', '.h', '.hpp', '.inl', '.cuinl')


def busy_seconds():
    with open('/proc/stat') as f:
        v = list(map(int, f.readline().split()[1:]))
    return (sum(v) - v[3] - v[4]) / os.sysconf('SC_CLK_TCK')


def count_files(d):
    return sum(1 for _, _, fs in os.walk(d) for f in fs if f.endswith(EXTENSIONS))


def wait_idle(max_other, give_up):
    while time.time() < give_up:
        b0 = busy_seconds()
        time.sleep(2)
        if (busy_seconds() - b0) / 2 <= max_other:
            return True
    return False


def one_run(root, d, extra, env):
    b0 = busy_seconds()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = subprocess.run(['node', os.path.join(root, 'bin', 'unroll-lens.js'), 'scan', d, '--json', *extra],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.time() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        sys.exit(f'scan of {d} failed ({p.returncode}): {p.stderr.decode()[-500:]}')
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    other = (busy_seconds() - b0 - cpu) / wall
    return wall, cpu, other


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dirs', nargs='+')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--root', default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument('--max-other', type=float, default=0.1, help='cores other processes may use during a counted run')
    ap.add_argument('--give-up', type=float, default=1800, help='seconds to wait for idle moments, per tree')
    ap.add_argument('--rescan', action='store_true', help='time re-scans answered from a scan cache filled first')
    ap.add_argument('--before-cache', action='store_true', help='BUILD has no scan cache (and no --fresh)')
    a = ap.parse_args()
    env = dict(os.environ)
    extra = [] if a.before_cache or a.rescan else ['--fresh']
    cache_home = None
    if a.rescan:
        cache_home = tempfile.mkdtemp(prefix='ul-scan-speed-cache-')
        env['XDG_CACHE_HOME'] = cache_home
    print('| tree | files | wall, median (best) | files/s | scan CPU | other load | runs kept / tried |')
    print('|---|---|---|---|---|---|---|')
    for d in a.dirs:
        n = count_files(d)
        kept, tried = [], 0
        give_up = time.time() + a.give_up
        if a.rescan:
            one_run(a.root, d, extra, env)
        while len(kept) < a.runs and wait_idle(a.max_other, give_up):
            tried += 1
            wall, cpu, other = one_run(a.root, d, extra, env)
            if other <= a.max_other:
                kept.append((wall, cpu, other))
        if not kept:
            print(f'| {d} | {n} | no idle moment in {a.give_up:.0f} s | | | | 0 / {tried} |')
            continue
        med = statistics.median(k[0] for k in kept)
        print(f'| {d} | {n} | {med:.2f} s ({min(k[0] for k in kept):.2f} s) | {n / med:.1f} | '
              f'{statistics.median(k[1] for k in kept):.2f} s | {max(k[2] for k in kept):.2f} | {len(kept)} / {tried} |',
              flush=True)
    if cache_home:
        shutil.rmtree(cache_home, ignore_errors=True)


if __name__ == '__main__':
    main()
