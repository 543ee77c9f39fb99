#!/usr/bin/env python3
"""walk.py EXE HEADER SEQ [-v] [--check]: the sections one dt_matmul call
enters (tests/lint/walk.c's record SEQ of function entries), from each
function's definition line in HEADER and its >>section banners.

Prints the functions and sections it entered and how often the walk moved
from one section to another; -v the whole walk, indented by depth. --check
compares the section list with the one the header's MAP states (the line
after "Sections entered") and fails on a difference."""
import re
import subprocess
import sys


def main(argv):
    exe, header, seqf = argv[1:4]
    raw = open(header, encoding='utf-8').read()
    lines = raw.split('\n')
    secs = [(k, m.group(1)) for k, l in enumerate(lines) for m in [re.match(r'^/\* >>([a-z_-]+) ', l)] if m]
    impl = next(k for k, l in enumerate(lines) if l.startswith('#if defined(DTENSOR_IMPLEMENTATION) && !defined('))

    def section_of(line):
        s = None
        for k, name in secs:
            if k <= line:
                s = name
        return s

    home = {}
    for k, l in enumerate(lines):
        m = re.match(r'^(?:static|DT_API|DT__HD\w*)[^(=;]*?\b(\w+)\s*\(', l)
        if m and m.group(1) not in home:
            home[m.group(1)] = k
    rec = [l.split() for l in open(seqf) if l.strip()]
    out = subprocess.run(['addr2line', '-f', '-s', '-e', exe] + [r[1] for r in rec],
                         capture_output=True, text=True, check=True).stdout.split('\n')
    walk = []
    for i, r in enumerate(rec):
        name = out[2 * i]
        if name in home:
            k = home[name]
            walk.append((int(r[0]), name, section_of(k) if k > impl else 'public'))
    funcs, sections = [], []
    for _, n, s in walk:
        if n not in funcs:
            funcs.append(n)
        if s != 'public' and s not in sections:
            sections.append(s)
    moves = sum(1 for a, b in zip(walk, walk[1:]) if a[2] != b[2])
    if '-v' in argv:
        for d, n, s in walk:
            print('  ' * d + n, s)
    print(f'{len(walk)} calls, {len(funcs)} functions, {len(sections)} implementation sections, '
          f'{moves} moves between sections')
    print('sections: ' + ' '.join(sections))
    if '--check' in argv:
        m = re.search(r'Sections entered[^:]*:(.*?)\n[ \t]*\n', raw, re.S)
        want = m.group(1).split() if m else None
        if want != sections:
            print(f'walk: the MAP states {want}, the walk entered {sections}')
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
