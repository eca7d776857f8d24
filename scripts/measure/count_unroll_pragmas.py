#!/usr/bin/env python3
"""Independent count of unroll pragmas in a CUDA source tree, and the scanner's recall/precision.

Shares no code with Unroll Lens (no tree-sitter, no macro tables of ours): it reads the files as
text, with its own comment stripper and its own macro-name discovery, so that a bug in the
scanner cannot hide itself in the count.

  count_unroll_pragmas.py DIR                      # the pragmas, as JSON
  count_unroll_pragmas.py DIR --scan SCAN.json     # recall/precision of `unroll-lens scan DIR --json`

A pragma occurrence is one of
  - a `#pragma unroll ...` directive line (not a #define body),
  - `_Pragma("unroll ...")` written in code,
  - a use of a *pragma macro*: a name #defined anywhere in the tree (or the toolkit-style names
    below) whose body is one of the above or another pragma macro (fixpoint over the tree),
and counts when the next token after it (past comments, blank lines, preprocessor lines and other
pragmas) is `for`, `while` or `do`: an unroll pragma in front of a loop. Inactive #if branches are
counted too (a reader of the file sees them).

Recall: occurrences whose (file, line of the pragma) the scanner reports as an attached pragma.
Precision: the scanner's attached pragmas whose (file, pragma line) is an occurrence here.
"""
import json
import os
import re
import sys

EXTS = ('.cu', '.cuh', '.h', '.hpp', '.inl', '.cuinl')
SKIP_DIRS = {'node_modules', '.git'}

# Spellings that library headers outside a scanned tree define (CCCL in the toolkit): seeded so a
# tree that uses them without defining them is still counted. Function-like ones take "(…)".
SEED_PRAGMA_MACROS = {
    '_CCCL_PRAGMA_UNROLL', '_CCCL_PRAGMA_UNROLL_FULL', '_CCCL_PRAGMA_NOUNROLL',
    'CUTLASS_PRAGMA_UNROLL', 'CUTLASS_PRAGMA_NO_UNROLL', 'CUTE_UNROLL', 'CUTE_NO_UNROLL',
    'TCNN_PRAGMA_UNROLL',
}


def strip_comments(text):
    """Blanks comments and raw string literals (code held as text), keeping every newline."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '/' and i + 1 < n and text[i + 1] == '/':
            j = text.find('\n', i)
            j = n if j == -1 else j
            out.append(' ' * (j - i))
            i = j
        elif c == '/' and i + 1 < n and text[i + 1] == '*':
            j = text.find('*/', i + 2)
            j = n if j == -1 else j + 2
            out.append(''.join('\n' if ch == '\n' else ' ' for ch in text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_') or text[i - 1] in 'uUL8'):
            # A raw string literal (run-time compiled code held as text): not code of this file.
            open_paren = text.find('(', i + 2)
            delim = text[i + 2:open_paren] if open_paren != -1 else None
            end = text.find(')' + delim + '"', open_paren) if delim is not None and len(delim) <= 16 else -1
            if end == -1:
                out.append(c)
                i += 1
                continue
            end += len(delim) + 2
            out.append(''.join('\n' if ch == '\n' else ' ' for ch in text[i:end]))
            i = end
        elif c == '"' or c == "'":
            # Keep string contents: _Pragma("unroll 4") must stay readable.
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def logical_lines(text):
    """(first physical line number, joined text) for each logical line (backslash continuations)."""
    phys = text.split('\n')
    res = []
    i = 0
    while i < len(phys):
        start = i
        buf = phys[i]
        while buf.endswith('\\') and i + 1 < len(phys):
            i += 1
            buf = buf[:-1] + ' ' + phys[i]
        res.append((start + 1, buf, i + 1))
        i += 1
    return res


DEFINE_RE = re.compile(r'^\s*#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)$')
PRAGMA_DIRECTIVE_RE = re.compile(r'^\s*#\s*pragma\s+unroll\b')
OPERATOR_RE = re.compile(r'_Pragma\s*\(\s*"\s*unroll\b')


def body_is_pragma(body, names):
    b = body.strip()
    if re.match(r'#\s*pragma\s+unroll\b', b) or re.match(r'_Pragma\s*\(\s*"\s*unroll\b', b):
        return True
    # _Pragma(#x) stringising with an unroll argument is decided at the use; count names whose body
    # calls another pragma macro.
    m = re.match(r'([A-Za-z_]\w*)', b)
    return bool(m and m.group(1) in names)


def files_of(root):
    if os.path.isfile(root):
        return [root]
    out = []
    for d, dirs, fs in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith('.'))
        for f in sorted(fs):
            if f.endswith(EXTS):
                out.append(os.path.join(d, f))
    return out


def read(path):
    with open(path, 'rb') as fh:
        return strip_comments(fh.read().decode('utf-8', 'replace'))


def pragma_macro_names(texts):
    defines = []
    for text in texts.values():
        for _line, lt, _end in logical_lines(text):
            m = DEFINE_RE.match(lt)
            if m:
                defines.append((m.group(1), m.group(3)))
    names = set(SEED_PRAGMA_MACROS)
    changed = True
    while changed:
        changed = False
        for name, body in defines:
            if name not in names and body_is_pragma(body, names):
                names.add(name)
                changed = True
    return names


TOKEN_RE = re.compile(r'[A-Za-z_]\w*|\S')


def next_token_after(lines, idx, col):
    """The first token after (logical line idx, column col) that is not preprocessor or a pragma."""
    first = True
    while idx < len(lines):
        _start, lt, _end = lines[idx]
        rest = lt[col:] if first else lt
        first = False
        if not rest.strip():
            idx += 1
            continue
        if rest.lstrip().startswith('#'):
            idx += 1  # #if/#else/#endif/other pragmas between the pragma and its loop
            continue
        m = TOKEN_RE.search(rest)
        if m:
            tok = m.group(0)
            # Skip another pragma spelled as an operator or a macro on the same path.
            if tok == '_Pragma':
                close = rest.find(')', m.end())
                if close != -1:
                    col = (len(lt) - len(rest)) + close + 1
                    first = True
                    continue
            return tok, lines[idx][0]
        idx += 1
    return None, None


def occurrences(path, text, names):
    lines = logical_lines(text)
    out = []
    name_re = re.compile(r'\b(' + '|'.join(sorted(map(re.escape, names), key=len, reverse=True)) + r')\b') if names else None
    for idx, (start, lt, _end) in enumerate(lines):
        if DEFINE_RE.match(lt):
            continue
        hits = []
        if PRAGMA_DIRECTIVE_RE.match(lt):
            hits.append(len(lt))
        elif not lt.lstrip().startswith('#'):
            for m in OPERATOR_RE.finditer(lt):
                close = lt.find(')', m.end())
                hits.append(len(lt) if close == -1 else close + 1)
            if name_re:
                for m in name_re.finditer(lt):
                    end = m.end()
                    after = lt[end:]
                    am = re.match(r'\s*\(', after)
                    if am:  # function-like use: skip its balanced argument list
                        depth, j = 0, end
                        while j < len(lt):
                            if lt[j] == '(':
                                depth += 1
                            elif lt[j] == ')':
                                depth -= 1
                                if depth == 0:
                                    break
                            j += 1
                        end = j + 1
                    hits.append(end)
        for col in hits:
            tok, loop_line = next_token_after(lines, idx, col)
            if tok in ('for', 'while', 'do'):
                out.append({'line': start, 'loopLine': loop_line})
    # One occurrence per pragma line (two macros on one line are one pragma for matching).
    seen = set()
    uniq = []
    for o in out:
        if o['line'] not in seen:
            seen.add(o['line'])
            uniq.append(o)
    return uniq


def count(root):
    paths = files_of(root)
    texts = {}
    for p in paths:
        try:
            texts[p] = read(p)
        except OSError:
            pass
    names = pragma_macro_names(texts)
    per_file = {}
    for p, t in texts.items():
        occ = occurrences(p, t, names)
        if occ:
            per_file[os.path.relpath(p, root) if os.path.isdir(root) else os.path.basename(p)] = occ
    return {'root': root, 'files': len(texts), 'pragmaMacros': sorted(names), 'occurrences': per_file}


def compare(counted, scan_path, root):
    with open(scan_path) as fh:
        scan = json.load(fh)
    attached = set()
    for f in scan['files']:
        rel = os.path.relpath(f['path'], root) if os.path.isdir(root) else os.path.basename(f['path'])
        for k in f['kernels']:
            for l in k['loops']:
                if l.get('pragma'):
                    attached.add((rel, l['pragma']['line']))
    truth = {(f, o['line']) for f, occ in counted['occurrences'].items() for o in occ}
    hit = truth & attached
    missed = sorted(truth - attached)
    extra = sorted(attached - truth)
    return {
        'pragmas': len(truth),
        'attached': len(hit),
        'recall': len(hit) / len(truth) if truth else 1.0,
        'scannerAttached': len(attached),
        'precision': len(hit) / len(attached) if attached else 1.0,
        'missed': [f'{f}:{l}' for f, l in missed],
        'notInCount': [f'{f}:{l}' for f, l in extra],
    }


def main(argv):
    if not argv or argv[0] in ('-h', '--help'):
        print(__doc__)
        return 0 if argv else 2
    root = argv[0]
    counted = count(root)
    if '--scan' in argv:
        res = compare(counted, argv[argv.index('--scan') + 1], root)
        res['files'] = counted['files']
        print(json.dumps(res, indent=1))
    else:
        print(json.dumps(counted, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
