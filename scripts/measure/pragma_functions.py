#!/usr/bin/env python3
"""Independent truth for `unroll-lens scan`: every unroll pragma before a loop and the function it
sits in, and which of those the scan attaches and lists. Shares no code with Unroll Lens (no
tree-sitter, no masking, no macro tables, no branch selection of ours): plain text, its own
comment/string stripper, and a backward brace walk for the enclosing function in which every
`#elif`/`#else` section is dropped (the first branch of each conditional is what it reads).

  pragma_functions.py DIR SCAN.json      # SCAN.json from `unroll-lens scan DIR --json`

Prints JSON: pragmas, attached, attachment, functions (distinct file:function holding pragmas),
lost (functions holding pragmas that the scan neither lists by name nor names as unparsed),
named (functions the scan names as unparsed) and the missed pragmas.
"""
import json
import os
import re
import sys

EXTS = ('.cu', '.cuh', '.h', '.hpp', '.inl', '.cuinl')
PRAGMA_MACROS = {'CUTLASS_PRAGMA_UNROLL', 'CUTLASS_PRAGMA_NO_UNROLL', 'CUTE_UNROLL', 'CUTE_NO_UNROLL',
                 '_CCCL_PRAGMA_UNROLL', '_CCCL_PRAGMA_UNROLL_FULL', '_CCCL_PRAGMA_NOUNROLL', 'TCNN_PRAGMA_UNROLL'}
CONTROL = {'if', 'for', 'while', 'switch', 'catch', 'return', 'sizeof', 'decltype', 'alignof', 'static_assert', 'constexpr'}


def strip(text):
    """Comments and string/char literals blanked, newlines kept."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '/' and text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j == -1 else j
            for k in range(i, j):
                out[k] = ' '
            i = j
        elif c == '/' and text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j == -1 else j + 2
            for k in range(i, j):
                if out[k] != '\n':
                    out[k] = ' '
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != '\n':
                    out[k] = ' '
            i = j + 1
        else:
            i += 1
    return ''.join(out)


def first_branches_only(lines):
    """Lines with every #elif/#else section blanked (nesting tracked), directives blanked."""
    out = []
    stack = []  # per open conditional: True while in a dropped section
    for line in lines:
        m = re.match(r'\s*#\s*(\w+)', line)
        d = m.group(1) if m else None
        if d in ('if', 'ifdef', 'ifndef'):
            stack.append(False)
            out.append('')
            continue
        if d in ('elif', 'else', 'elifdef', 'elifndef') and stack:
            stack[-1] = True
            out.append('')
            continue
        if d == 'endif' and stack:
            stack.pop()
            out.append('')
            continue
        dropped = any(stack)
        out.append('' if dropped or d else line)
    return out


def pragma_lines(lines, macros):
    """0-based line indexes of unroll pragmas followed by a loop."""
    found = []
    for i, line in enumerate(lines):
        s = line.strip()
        is_pragma = bool(re.match(r'#\s*pragma\s+unroll\b', s)) or '_Pragma("unroll' in s.replace(' ', '') \
            or any(re.match(r'%s\b' % re.escape(m), s) for m in macros)
        if not is_pragma:
            continue
        # the next token past blank lines, directives and other pragmas
        j = i + 1
        rest = ''
        m = re.match(r'(?:#\s*pragma\s+unroll\b[^\n]*|_Pragma\s*\([^)]*\)|\w+(?:\s*\([^)]*\))?)\s*(.*)', s)
        rest = m.group(1) if m else ''
        while not rest.strip() and j < len(lines):
            t = lines[j].strip()
            j += 1
            if not t or t.startswith('#'):
                continue
            rest = t
        if re.match(r'(for|while|do)\b', rest.strip()):
            found.append(i)
    return found


def enclosing_function(code, pos):
    """Name of the function whose body holds `pos` (lambda: 'lambda'), or None."""
    depth = 0
    i = pos
    while i > 0:
        i -= 1
        c = code[i]
        if c == '}':
            depth += 1
        elif c == '{':
            if depth:
                depth -= 1
                continue
            head = code[max(0, i - 600):i].rstrip()
            head = re.sub(r'(\s*(const|noexcept|override|final|mutable|volatile|&|&&))+$', '', head)
            head = re.sub(r'->\s*[\w:<>,\s*&]+$', '', head).rstrip()
            head = re.sub(r'__launch_bounds__\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$', '', head).rstrip()
            if re.search(r'\b(struct|class|union|namespace|enum)\b[^;{}()]*$', head):
                return None
            if head.endswith(')'):
                d, k = 0, len(head) - 1
                while k >= 0:
                    if head[k] == ')':
                        d += 1
                    elif head[k] == '(':
                        d -= 1
                        if d == 0:
                            break
                    k -= 1
                before = head[:k].rstrip()
                if before.endswith(']'):
                    return 'lambda'
                m = re.search(r'(operator\s*\S+?|~?[A-Za-z_]\w*)\s*(<[^;{}()]*>)?$', before)
                name = m.group(1) if m else None
                if name and name not in CONTROL:
                    return re.sub(r'\s+', '', name)
            # a block, initializer, else/do/try body: look further out
    return None


def main():
    root, scan_path = sys.argv[1], sys.argv[2]
    scan = json.load(open(scan_path))
    files = {os.path.realpath(f['path']): f for f in scan['files']}
    macros = set(PRAGMA_MACROS)
    texts = {}
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in ('.git', 'node_modules') and not x.startswith('.')]
        for name in names:
            if name.endswith(EXTS):
                p = os.path.join(d, name)
                try:
                    texts[p] = open(p, encoding='utf-8', errors='replace').read()
                except OSError:
                    pass
    for t in texts.values():
        for m in re.finditer(r'^\s*#\s*define\s+(\w+)\s+(#\s*pragma\s+unroll|_Pragma\s*\(\s*"unroll)', t, re.M):
            macros.add(m.group(1))
    pragmas, attached, missed = 0, 0, []
    functions, lost, named = set(), [], set()
    for p, text in sorted(texts.items()):
        raw_lines = strip(text).split('\n')
        lines = first_branches_only(raw_lines)
        hits = pragma_lines(raw_lines, macros)
        if not hits:
            continue
        code = '\n'.join(lines)
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line) + 1)
        f = files.get(os.path.realpath(p))
        scanned_lines = set()
        kernel_names = set()
        if f:
            for k in f['kernels']:
                kernel_names.add('lambda' if k['name'].startswith('lambda@') else k['name'])
                for lp in k['loops']:
                    if lp.get('pragma'):
                        scanned_lines.add(lp['pragma']['line'])
                    for a in lp.get('alternativePragmas', []):
                        scanned_lines.add(a['line'])
            for u in f.get('unparsedFunctions', []):
                named.add((p, u['name']))
        for i in hits:
            pragmas += 1
            fn = enclosing_function(code, offsets[i])
            if i + 1 in scanned_lines:
                attached += 1
            else:
                missed.append(f'{os.path.relpath(p, root)}:{i + 1} in {fn}')
            if fn:
                functions.add((p, fn))
                if fn not in kernel_names and (p, fn) not in named and (p, fn) not in [(x[0], x[1]) for x in lost]:
                    lost.append((p, fn, i + 1))
    print(json.dumps({
        'pragmas': pragmas, 'attached': attached, 'attachment': attached / pragmas if pragmas else 1.0,
        'functions': len(functions),
        'lost': [f'{os.path.relpath(p, root)}:{line} {fn}' for p, fn, line in lost],
        'named': sorted(f'{os.path.relpath(p, root)} {n}' for p, n in named),
        'missed': missed,
    }, indent=1))


if __name__ == '__main__':
    main()
