#!/usr/bin/env python3
"""Independent check of the applied unroll that `unroll-lens sass --loop L --factors ... --json` reports.

Shares no code with Unroll Lens: it writes each variant's source itself (the pragma line above the
loop replaced in a copy of the file), builds it with nvcc (-cubin -arch=sm_90 -lineinfo), reads
`nvdisasm -c -gi` with its own parser, finds machine-code loops by their back edges (a BRA to an
address at or before its own) and counts *marker* instructions: each fixture loop is written so
that one source iteration runs a known instruction (an FFMA or IMAD with a constant no other loop
uses, every DFMA of a kernel, or the instructions of given source lines).

For one loop L and one build:
  - a machine loop belongs to L when it holds L's markers and none of its enclosing source loop's
    markers (a machine loop that also runs the outer loop's own code is the outer loop's);
  - L's machine loops are the innermost such loops; the main one holds most markers, and the
    applied unroll is its markers over the markers of one source iteration;
  - with no machine loop of its own, L was unrolled completely: its factor is the markers of one
    pass of the enclosing machine loop (per outer iteration) or of the whole function;
  - the remainder is what else holds L's markers: the other loops of L (copies per pass each)
    and the straight-line copies outside them.

  check-applied-unroll.py                    # the table; exit 1 on any mismatch
  check-applied-unroll.py --json OUT.json    # also write the rows (test/fixtures/unroll-shapes/expected.json)
  check-applied-unroll.py --only NAME,...    # some loops
  check-applied-unroll.py --no-product       # the checker's own counts only
"""
import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = 'test/fixtures/unroll-shapes'


def f32(x):
    return struct.unpack('f', struct.pack('f', float(x)))[0]


# Marker kinds: ('ffma', c) an FFMA with immediate c; ('imad', hexstr) an IMAD with that
# immediate (('shf', hex) likewise an SHF); ('op', OPCODE) every instruction of that opcode; ('lines',
# first, last, OPCODE or OPCODE.MODIFIERS or None)
# instructions located (own line or inlined-at) on those lines of the file.
#
# Each loop: name, file, kernel (source name), nth loop keyword in the kernel, function (a
# substring of the mangled name to measure), marker, per (markers of one source iteration; None:
# measured in the factor-1 build), parent marker (None: no enclosing loop), parent_per, factors.
LOOPS = [
    # basic.cu
    dict(name='const_trip', file=f'{FIX}/basic.cu', kernel='const_trip', nth=1, marker=('ffma', 1.0001), per=1,
         factors=['1', '4', '8', 'full', 'default']),
    dict(name='runtime_trip', file=f'{FIX}/basic.cu', kernel='runtime_trip', nth=1, marker=('ffma', 1.0002), per=1,
         factors=['1', '2', '4', '8', 'default']),
    dict(name='trip12', file=f'{FIX}/basic.cu', kernel='trip12', nth=1, marker=('ffma', 1.0003), per=1,
         factors=['1', '5', '7', 'full']),
    dict(name='int_body', file=f'{FIX}/basic.cu', kernel='int_body', nth=1, marker=('shf', '0xd'), per=1,
         factors=['1', '8', 'full']),
    dict(name='reg_array', file=f'{FIX}/basic.cu', kernel='reg_array', nth=3, marker=('ffma', 1.0004), per=1,
         parent=('ffma', 1.0041), factors=['1', '4', 'full']),
    dict(name='trip3', file=f'{FIX}/basic.cu', kernel='trip3', nth=1, marker=('ffma', 1.0005), per=1,
         factors=['1', '2', 'full']),
    dict(name='step2', file=f'{FIX}/basic.cu', kernel='step2', nth=1, marker=('ffma', 1.0006), per=1,
         factors=['1', '4', 'full']),
    dict(name='countdown', file=f'{FIX}/basic.cu', kernel='countdown', nth=1, marker=('ffma', 1.0007), per=1,
         factors=['1', '4']),
    dict(name='grid_stride', file=f'{FIX}/basic.cu', kernel='grid_stride', nth=1, marker=('ffma', 1.0008), per=1,
         factors=['1', '4', 'default']),
    dict(name='while_loop', file=f'{FIX}/basic.cu', kernel='while_loop', nth=1, marker=('ffma', 1.0009), per=1,
         factors=['1', '4']),
    dict(name='inlined_hash', file=f'{FIX}/basic.cu', kernel='inlined_hash', nth=1, marker=('imad', '0x1b873593'),
         per=1, factors=['1', '4', '8', 'default']),
    dict(name='fp64_trip16', file=f'{FIX}/basic.cu', kernel='fp64_trip16', nth=1, marker=('op', 'DFMA'), per=1,
         factors=['1', '4', 'full']),
    # nested.cu
    dict(name='inner_pragma', file=f'{FIX}/nested.cu', kernel='inner_pragma', nth=2, marker=('ffma', 1.0011), per=1,
         parent=('ffma', 1.0012), factors=['1', '4', 'full']),
    dict(name='outer_pragma', file=f'{FIX}/nested.cu', kernel='outer_pragma', nth=1, marker=('ffma', 1.0013), per=1,
         factors=['1', '2', '4']),
    dict(name='outer_pragma.inner', file=f'{FIX}/nested.cu', kernel='outer_pragma', nth=2, marker=('ffma', 1.0014), per=1,
         parent=('ffma', 1.0013), factors=['full', '8']),
    dict(name='both_const.outer', file=f'{FIX}/nested.cu', kernel='both_const', nth=1, marker=('ffma', 1.0015), per=1,
         factors=['1', '2', 'full']),
    dict(name='both_const.inner', file=f'{FIX}/nested.cu', kernel='both_const', nth=2, marker=('ffma', 1.0016), per=1,
         parent=('ffma', 1.0015), factors=['1', '4', 'full']),
    dict(name='outer_const_inner_runtime.outer', file=f'{FIX}/nested.cu', kernel='outer_const_inner_runtime', nth=1,
         marker=('ffma', 1.0017), per=1, factors=['1', '2', 'full']),
    dict(name='outer_const_inner_runtime.inner', file=f'{FIX}/nested.cu', kernel='outer_const_inner_runtime', nth=2,
         marker=('ffma', 1.0018), per=1, parent=('ffma', 1.0017), factors=['1', '4']),
    dict(name='huge_body', file=f'{FIX}/nested.cu', kernel='huge_body', nth=1, marker=('ffma', 1.0019), per=1,
         factors=['1', '2', '4']),
    # templates.cu
    dict(name='tmpl_trip<24>', file=f'{FIX}/templates.cu', kernel='tmpl_trip', nth=1, function='tmpl_tripILi24E',
         product_kernel='tmpl_trip<24>', marker=('ffma', 1.0021), per=1, factors=['1', '5', 'full']),
    dict(name='tmpl_trip<8>', file=f'{FIX}/templates.cu', kernel='tmpl_trip', nth=1, function='tmpl_tripILi8E',
         product_kernel='tmpl_trip<8>', marker=('ffma', 1.0021), per=1, factors=['1', '4', 'full']),
    dict(name='coarsen<2>', file=f'{FIX}/templates.cu', kernel='coarsen', nth=2, function='coarsenILi2E',
         product_kernel='coarsen<2>', marker=('ffma', 1.0022), per=1, parent=('ffma', 1.0023), factors=['full', '1']),
    dict(name='coarsen<4>', file=f'{FIX}/templates.cu', kernel='coarsen', nth=2, function='coarsenILi4E',
         product_kernel='coarsen<4>', marker=('ffma', 1.0022), per=1, parent=('ffma', 1.0023), factors=['full', '1']),
    dict(name='coarsen<8>', file=f'{FIX}/templates.cu', kernel='coarsen', nth=2, function='coarsenILi8E',
         product_kernel='coarsen<8>', marker=('ffma', 1.0022), per=1, parent=('ffma', 1.0023), factors=['full', '2']),
    # ignored.cu
    dict(name='with_call', file=f'{FIX}/ignored.cu', kernel='with_call', nth=1, marker=('op', 'CALL'), per=1,
         factors=['1', '4']),
    dict(name='full_runtime', file=f'{FIX}/ignored.cu', kernel='full_runtime', nth=1, marker=('ffma', 1.0032), per=1,
         factors=['1', 'full']),
    dict(name='early_exit', file=f'{FIX}/ignored.cu', kernel='early_exit', nth=1, marker=('ffma', 1.0033), per=1,
         factors=['1', '4']),
    dict(name='shared_sync', file=f'{FIX}/ignored.cu', kernel='shared_sync', nth=1, marker=('ffma', 1.0034), per=1,
         factors=['1', '4', 'full']),
    # vectorised.cu: shared-memory reads merged into LDS.64/LDS.128 (issue 40, NVIDIA's matrixMul shape)
    dict(name='tile_product<32>', file=f'{FIX}/vectorised.cu', kernel='tile_product', nth=2, function='tile_productILi32E',
         product_kernel='tile_product<32>', marker=('lines', 22, 22, 'FFMA'), per=1, parent=('lines', 17, 18, 'STS'),
         parent_per=2, factors=['1', '2', '4', '8', '16', 'full', 'default']),
    dict(name='tile_product<16>', file=f'{FIX}/vectorised.cu', kernel='tile_product', nth=2, function='tile_productILi16E',
         product_kernel='tile_product<16>', marker=('lines', 22, 22, 'FFMA'), per=1, parent=('lines', 17, 18, 'STS'),
         parent_per=2, factors=['1', '4', '8', 'full']),
    dict(name='row_dot', file=f'{FIX}/vectorised.cu', kernel='row_dot', nth=3, marker=('lines', 44, 44, 'FFMA'), per=1,
         factors=['1', '4', '8', '16', 'default']),
    # The samples.
    dict(name='icache_ilp:64', file='cuda-samples/icache_ilp.cu', kernel='ilp_chains', nth=2, marker=('lines', 66, 69, 'FFMA'),
         per=4, parent=('lines', 62, 62, 'BRA'), factors=['1', '16', '64', 'full'], slow=True),
    dict(name='icache_cliff:70', file='cuda-samples/icache_cliff.cu', kernel='hot_loop', nth=1, function='hot_loopILi2048E',
         marker=('lines', 57, 57, 'IMAD.WIDE.U32'), per=None, factors=['1', '2', '4'], slow=True),
]

# ---------------------------------------------------------------------------------------------
# Sources


def loop_line(text, kernel, nth):
    lines = text.split('\n')
    start = next(i for i, l in enumerate(lines) if re.search(r'__global__\s+void\s+' + re.escape(kernel) + r'\s*\(', l))
    k = 0
    for i in range(start, len(lines)):
        if re.match(r'\s*(for|while|do)\b', lines[i]):
            k += 1
            if k == nth:
                return i + 1
    raise SystemExit(f'no loop {nth} in {kernel}')


def variant_text(text, line, factor):
    lines = text.split('\n')
    above = lines[line - 2]
    if not re.match(r'\s*#\s*pragma\s+unroll\b', above):
        raise SystemExit(f'line {line - 1} is not an unroll pragma: {above!r}')
    indent = re.match(r'\s*', above).group(0)
    lines[line - 2] = '' if factor == 'default' else indent + ('#pragma unroll' if factor == 'full' else f'#pragma unroll {factor}')
    return '\n'.join(lines)


def nvdisasm_path():
    local = os.path.join(ROOT, '.tools', 'cuda-tools', 'bin', 'nvdisasm')
    return local if os.path.exists(local) else shutil.which('nvdisasm')


WORK = None


def build(path, text):
    """Cubin of `text` compiled as if it were `path` (same folder for includes); the listing."""
    key = hashlib.sha256(text.encode()).hexdigest()[:16]
    listing = os.path.join(WORK, key + '.sass')
    if os.path.exists(listing):
        return open(listing).read()
    # Two loops of one file may build the same variant at once: each its own source and cubin.
    tag = f'{key}-{threading.get_ident()}'
    src = os.path.join(os.path.dirname(os.path.join(ROOT, path)), f'.check-{tag}-{os.path.basename(path)}')
    cubin = os.path.join(WORK, tag + '.cubin')
    try:
        with open(src, 'w') as f:
            f.write(text)
        subprocess.run(['nvcc', '-cubin', '-arch=sm_90', '-lineinfo', '-o', cubin, src], check=True,
                       capture_output=True, text=True)
    finally:
        os.unlink(src)
    out = subprocess.run([nvdisasm_path(), '-c', '-gi', cubin], check=True, capture_output=True, text=True).stdout
    with open(listing + '.tmp', 'w') as f:
        f.write(out)
    os.replace(listing + '.tmp', listing)
    return out


# ---------------------------------------------------------------------------------------------
# Listing


INS = re.compile(r'^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[T0-9]\s+)?([A-Z0-9_]+)((?:\.[A-Z0-9_]+)*)\s*(.*?)\s*;')
LOC = re.compile(r'//## File "([^"]*)", line (\d+)(?: inlined at "([^"]*)", line (\d+))?')


def functions(listing):
    """name -> list of dicts(addr, pred, op, operands, lines=set of (basename, line))."""
    fns = {}
    cur = None
    labels = {}
    loc = set()
    chain = False
    pending_labels = []
    for raw in listing.split('\n'):
        m = re.match(r'^\s*\.text\.(\S+):', raw)
        if m:
            cur = fns.setdefault(m.group(1), {'ins': [], 'labels': {}})
            loc = set()
            continue
        if cur is None:
            continue
        m = re.match(r'^(\.L_x_\d+):', raw.strip())
        if m:
            pending_labels.append(m.group(1))
            continue
        m = LOC.search(raw)
        if m:
            # Consecutive comments continue one inline chain (innermost first).
            loc = (loc if chain else set()) | {(os.path.basename(m.group(1)), int(m.group(2)))}
            chain = True
            if m.group(3):
                loc.add((os.path.basename(m.group(3)), int(m.group(4))))
            continue
        m = INS.match(raw)
        chain = False
        if m:
            addr = int(m.group(1), 16)
            for lab in pending_labels:
                cur['labels'][lab] = addr
            pending_labels = []
            cur['ins'].append(dict(addr=addr, pred=(m.group(2) or '').strip(), op=m.group(3),
                                   mods=m.group(4), operands=m.group(5), lines=loc))
    return fns


def is_marker(ins, marker, base):
    kind = marker[0]
    if kind == 'ffma':
        if ins['op'] != 'FFMA':
            return False
        for tok in re.split(r'\s*,\s*', ins['operands']):
            try:
                if f32(float(tok)) == f32(marker[1]):
                    return True
            except ValueError:
                pass
        return False
    if kind in ('imad', 'shf'):
        return ins['op'] == kind.upper() and re.search(r'(^|[ ,])' + marker[1] + r'\b', ins['operands']) is not None
    if kind == 'op':
        return ins['op'] == marker[1]
    if kind == 'lines':
        if marker[3] is not None and marker[3] not in (ins['op'], ins['op'] + ins['mods']):
            return False
        return any((b == base or b.endswith('-' + base)) and marker[1] <= ln <= marker[2] for b, ln in ins['lines'])
    raise ValueError(kind)


def back_edges(fn):
    """Machine loops: (head, last back edge) per head, from BRAs to an earlier address."""
    heads = {}
    for ins in fn['ins']:
        if ins['op'] != 'BRA' or ins['pred'] in ('@!PT', '@!UPT'):
            continue
        m = re.search(r'\(?(\.L_x_\d+)\)?', ins['operands'])
        if not m or m.group(1) not in fn['labels']:
            continue
        t = fn['labels'][m.group(1)]
        if t < ins['addr']:
            heads[t] = max(heads.get(t, 0), ins['addr'])
    return sorted(heads.items())


def path_max(fn, marks):
    """Most markers on one path through the code, back edges left out: the copies one run executes
    (nvcc may emit several versions of the same code, e.g. one per sign of a runtime bound).
    Markers guarded by the predicate of the branch that ends their block count on its taken edge only."""
    ins = fn['ins']
    target = {}
    for i in ins:
        m = re.search(r'(\.L_x_\d+)', i['operands']) if i['op'] == 'BRA' else None
        if m and m.group(1) in fn['labels']:
            target[i['addr']] = fn['labels'][m.group(1)]
    leaders = {ins[0]['addr']} if ins else set()
    for k, i in enumerate(ins):
        if i['addr'] in target:
            leaders.add(target[i['addr']])
        if i['op'] in ('BRA', 'EXIT', 'RET') and k + 1 < len(ins):
            leaders.add(ins[k + 1]['addr'])
    blocks = []
    for i in ins:
        if i['addr'] in leaders or not blocks:
            blocks.append([])
        blocks[-1].append(i)
    incoming = {ins[0]['addr']: [0]} if ins else {}
    best = 0
    for k, blk in enumerate(blocks):
        start = blk[0]['addr']
        if start not in incoming:
            continue  # reached only by a back edge (or not at all)
        here = max(incoming[start])
        plain, guarded = 0, {}
        for i in blk:
            if i['addr'] in marks:
                if i['pred'] in ('', '@PT'):
                    plain += 1
                else:
                    guarded[i['pred']] = guarded.get(i['pred'], 0) + 1
        last = blk[-1]
        cond = last['pred'] if last['pred'] not in ('', '@PT') else None
        taken = here + plain + sum(guarded.values())
        fall = here + plain + sum(n for p, n in guarded.items() if p != cond or last['op'] != 'BRA')
        best = max(best, taken, fall)
        if last['addr'] in target and target[last['addr']] > last['addr']:
            incoming.setdefault(target[last['addr']], []).append(taken)
        ends = last['op'] in ('BRA', 'EXIT', 'RET') and cond is None
        if not ends and k + 1 < len(blocks):
            incoming.setdefault(blocks[k + 1][0]['addr'], []).append(fall)
    return best


def measure(fn, spec, base, per):
    ins = fn['ins']
    mk = [i['addr'] for i in ins if is_marker(i, spec['marker'], base)]
    pmk = [i['addr'] for i in ins if spec.get('parent') and is_marker(i, spec['parent'], base)]
    inside = lambda addrs, lo, hi: sum(1 for a in addrs if lo <= a <= hi)
    loops = back_edges(fn)
    cands = [(h, b) for h, b in loops if inside(mk, h, b) > 0 and inside(pmk, h, b) == 0]
    cands = [c for c in cands if not any(o != c and c[0] <= o[0] and o[1] <= c[1] for o in cands)]
    res = dict(markers=len(mk))
    if cands:
        counts = [(inside(mk, h, b), -h, (h, b)) for h, b in cands]
        counts.sort(reverse=True)
        main = counts[0][2]
        res['fullyUnrolled'] = False
        res['copies'] = inside(mk, *main) / per
        res['mainLoop'] = [main[0], main[1]]
        rest = sorted((inside(mk, h, b) / per for n, _, (h, b) in counts[1:]), reverse=True)
        straight = sum(1 for a in mk if not any(h <= a <= b for h, b in cands)) / per
        # Straight-line copies inside an enclosing loop run per pass of it: per outer iteration.
        res['remainder'] = dict(loops=rest, straight=straight)
    else:
        res['fullyUnrolled'] = True
        # Per pass of the enclosing machine loop holding most markers (per outer iteration), else all.
        around = [(inside(mk, h, b), -(b - h), h, b) for h, b in loops if inside(mk, h, b)]
        if around and pmk:
            _, _, h, b = max(around)
            outer = inside(pmk, h, b) / spec.get('parent_per', 1)
            res['copies'] = inside(mk, h, b) / per / outer if outer else None
        else:
            res['copies'] = path_max(fn, set(mk)) / per
        res['remainder'] = None
    return res


def pick_function(fns, spec, base):
    best = None
    for name, fn in fns.items():
        if spec.get('function', spec['kernel']) not in name:
            continue
        n = sum(1 for i in fn['ins'] if is_marker(i, spec['marker'], base))
        if n and (best is None or n > best[0]):
            best = (n, name)
    return best[1] if best else None


def check_loop(spec, pool, use_product):
    text = open(os.path.join(ROOT, spec['file'])).read()
    line = loop_line(text, spec['kernel'], spec['nth'])
    base = os.path.basename(spec['file'])
    factors = spec['factors']
    need = list(dict.fromkeys(factors + (['1'] if spec['per'] is None else [])))
    futs = {f: pool.submit(build, spec['file'], variant_text(text, line, f)) for f in need}
    product = pool.submit(run_product, spec, line) if use_product else None
    fns = {f: functions(futs[f].result()) for f in need}
    per = spec['per']
    if per is None:
        fn = fns['1'][pick_function(fns['1'], spec, base)]
        m = measure(fn, spec, base, 1)
        per = m['copies'] if not m['fullyUnrolled'] else m['markers']
    rows = []
    prod = product.result() if product else None
    for f in factors:
        name = pick_function(fns[f], spec, base)
        m = measure(fns[f][name], spec, base, per) if name else None
        p = None
        if prod is not None:
            p = next((v for v in prod if str(v['factor']) == f), None)
        rows.append(dict(loop=spec['name'], file=spec['file'], line=line, factor=f, function=name,
                         kernel=spec.get('product_kernel'), checker=m, product=p))
    return rows


def run_product(spec, line):
    args = ['node', os.path.join(ROOT, 'bin', 'unroll-lens.js'), 'sass', spec['file'], '--loop', str(line), '--factors',
            ','.join(spec['factors']), '--json', '--arch', 'sm_90']
    if spec.get('product_kernel'):
        args += ['--kernel', spec['product_kernel']]
    r = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        return [{'factor': f, 'error': r.stderr.strip()[:200]} for f in spec['factors']]
    return json.loads(r.stdout)['loop']['variants']


def fmt_copies(m):
    if m is None:
        return 'no code'
    c = m['copies']
    s = '?' if c is None else (str(int(c)) if c == int(c) else f'{c:.2f}')
    return f'×{s}' + (' (full)' if m['fullyUnrolled'] else '')


def fmt_rem(r):
    if not r:
        return ''
    parts = [f'loop ×{int(x) if x == int(x) else round(x, 2)}' for x in (round(y, 6) for y in r['loops'])]
    if r['straight']:
        s = round(r['straight'], 6)
        parts.append(f'{int(s) if s == int(s) else round(s, 2)} straight')
    return ', '.join(parts) or 'none'


def fmt_product(p):
    if p is None:
        return '-'
    if 'error' in p or p.get('status') != 'ok':
        return f"error: {p.get('error', p.get('status'))}"
    e = p.get('effectiveUnroll')
    return f"×{e}" + (' (full)' if p.get('fullyUnrolled') else '') if e is not None else '?'


def product_remainder(p):
    r = (p or {}).get('remainder')
    return fmt_rem(r) if r else ''


def agree(row):
    c, p = row['checker'], row['product']
    if c is None or p is None or p.get('status') != 'ok':
        return False
    return (c['copies'] == p.get('effectiveUnroll') and c['fullyUnrolled'] == bool(p.get('fullyUnrolled'))
            and fmt_rem(c['remainder']) == product_remainder(p))


def main():
    global WORK
    ap = argparse.ArgumentParser()
    ap.add_argument('--json')
    ap.add_argument('--only')
    ap.add_argument('--no-product', action='store_true')
    ap.add_argument('--no-samples', action='store_true')
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    WORK = os.path.join(tempfile.gettempdir(), 'check-applied-unroll')
    os.makedirs(WORK, exist_ok=True)
    specs = [s for s in LOOPS if (not a.only or s['name'] in a.only.split(',')) and not (a.no_samples and s.get('slow'))]
    rows = []
    with cf.ThreadPoolExecutor(a.jobs) as pool, cf.ThreadPoolExecutor(2) as outer:
        for r in outer.map(lambda s: check_loop(s, pool, not a.no_product), specs):
            rows.extend(r)
    bad = 0
    print(f"{'loop':34} {'line':>4} {'factor':>7}  {'checker':>12} {'remainder':22} {'product':>12} {'remainder':22}")
    for r in rows:
        ok = agree(r) if not a.no_product else True
        bad += 0 if ok else 1
        print(f"{r['loop']:34} {r['line']:>4} {r['factor']:>7}  {fmt_copies(r['checker']):>12} {fmt_rem((r['checker'] or {}).get('remainder')):22} "
              f"{fmt_product(r['product']):>12} {product_remainder(r['product']):22} {'' if ok else 'MISMATCH'}")
    loops = len({r['loop'] for r in rows})
    print(f'\n{loops} loops, {len(rows)} variants' + ('' if a.no_product else f', {bad} mismatches'))
    if a.json:
        out = [dict(loop=r['loop'], file=r['file'], line=r['line'], factor=r['factor'], kernel=r['kernel'],
                    function=r['function'], effectiveUnroll=(r['checker'] or {}).get('copies'),
                    fullyUnrolled=(r['checker'] or {}).get('fullyUnrolled'),
                    remainder=(r['checker'] or {}).get('remainder')) for r in rows]
        with open(a.json, 'w') as f:
            json.dump(out, f, indent=1)
            f.write('\n')
    return 1 if bad and not a.no_product else 0


if __name__ == '__main__':
    sys.exit(main())
