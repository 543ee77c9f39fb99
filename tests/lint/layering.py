#!/usr/bin/env python3
"""Check dtensor.h's layering rule (stated under the header's MAP, "THE RULE"),
and that the MAP lists every >>section banner in file order:

  a section names only functions defined above it or in itself; code higher
  up reaches code below only through a pointer handed to it (a hook);
  a comm's backend calls, group translation, accounting and muting are
  >>backend's alone.

So nothing is ever forward-declared across sections. A companion header in
PUBLIC_ONLY (dtensor_layers.h) must also name nothing private of dtensor.h:
no dt__ / DT__ identifier outside its comments and strings, so that it
compiles where dtensor.h's implementation is not (DTENSOR_IMPLEMENTATION_LINKED).

Usage: layering.py [FILE ...] [--report]   (default dtensor.h; exit 1 on a violation)

The checker strips comments, strings and preprocessor lines, finds the
file-scope function definitions (name '(' ... ')' '{' at brace depth 0) and
the sections (/* >>name lines), and then looks at every identifier after the
public part (in function bodies, initialisers, prototypes): if it names a
function defined in a later section, that is a downward reference. PRIVATE
lists what only one section may write or call. ALLOWED lists exceptions,
each with its reason (none today).
"""
import re
import sys

# (caller section, callee) pairs the rule tolerates, each with its reason.
ALLOWED = {
}

# What one section alone may do: (owner, pattern, what it is). The backend's
# vtable, its group-rank translation, its traffic accounting and its muting
# of control traffic are >>backend's; other sections use its dt__comm_*
# calls (reading a comm's fields, such as be.device, stays allowed).
PRIVATE = [
    ('backend', r'\bbe\.\w+\s*\(', 'calls the backend vtable'),
    ('backend', r'->(muted|members)\b', 'touches a comm\'s muting or group members'),
    ('backend', r'\bdt__(count|native)\s*\(', 'does the backend\'s accounting or group test'),
]

# companion headers built on dtensor.h's public API alone, with the reason
PUBLIC_ONLY = {
    'dtensor_layers.h': 'its implementation compiles without dtensor.h\'s (DTENSOR_LAYERS_IMPLEMENTATION)',
}

SECTION_RE = re.compile(r'^/\* >>([a-z_-]+) ')


def strip(text):
    """Blank comments, string/char literals and preprocessor lines, keeping
    newlines so that line numbers stay right."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start:
            j = i
            while j < n and text[j] in ' \t':
                j += 1
            if j < n and text[j] == '#':
                # preprocessor line (with continuations)
                while i < n:
                    if text[i] == '\n' and text[i - 1] != '\\':
                        break
                    out.append('\n' if text[i] == '\n' else ' ')
                    i += 1
                continue
        at_line_start = False
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
            continue
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
            continue
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(' ' * (j + 1 - i))
            i = j + 1
            continue
        out.append(c)
        if c == '\n':
            at_line_start = True
        i += 1
    return ''.join(out)


def strip_keep_pp(text):
    """Blank comments and string/char literals only (preprocessor lines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
            continue
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
            continue
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(' ' * (j + 1 - i))
            i = j + 1
            continue
        out.append(c)
        i += 1
    return ''.join(out)


def sections_of(lines):
    """[(first line index, name)] in file order."""
    return [(k, m.group(1)) for k, l in enumerate(lines)
            for m in [SECTION_RE.match(l)] if m]


def main(argv):
    path = 'dtensor.h'
    report = False
    for a in argv[1:]:
        if a == '--report':
            report = True
        else:
            path = a
    raw = open(path, encoding='utf-8').read()
    lines = raw.split('\n')
    secs = sections_of(lines)
    if not secs:
        print(f'layering: {path}: no /* >>section markers')
        return 1
    # the map at the top (dtensor.h's "MAP" block) lists every section, in order
    mapped = [m.group(1) for m in re.finditer(r'^     >>([a-z_-]+) ', raw, re.M)]
    if mapped and mapped != [name for _, name in secs]:
        print(f'layering: {path}: the MAP lists {" ".join(mapped)}')
        print(f'layering: {path}: the banners are {" ".join(name for _, name in secs)}')
        return 1
    sec_order = {name: k for k, (_, name) in enumerate(secs)}
    if len(sec_order) != len(secs):
        print(f'layering: {path}: a section name appears twice')
        return 1

    def section_at(line_no):
        s = None
        for first, name in secs:
            if first <= line_no:
                s = name
            else:
                break
        return s

    # the C++ guard's braces are not scopes
    text = strip(re.sub(r'extern\s+"C"\s*\{', lambda m: ' ' * len(m.group(0)), raw))
    line_of = []  # char offset -> line index, computed lazily by bisect
    starts = [0]
    for k, ch in enumerate(text):
        if ch == '\n':
            starts.append(k + 1)

    import bisect

    def lineno(off):
        return bisect.bisect_right(starts, off) - 1

    # file-scope function definitions and their body spans
    defs = {}      # name -> (section, line)
    bodies = []    # (name, section, start, end)
    depth = 0
    i, n = 0, len(text)
    tok = re.compile(r'[A-Za-z_]\w*|[{}();]|\S')
    last_ident = None
    paren_depth = 0
    cand = None
    for m in tok.finditer(text):
        t = m.group(0)
        if depth == 0:
            if t == '(':
                if paren_depth == 0 and last_ident is not None:
                    cand = (last_ident, m.start())
                paren_depth += 1
            elif t == ')':
                paren_depth -= 1
            elif t == ';':
                cand = None
                paren_depth = 0
            elif t == '{':
                if paren_depth == 0 and cand is not None:
                    name, off = cand
                    bodies.append([name, section_at(lineno(off)), m.end(), None])
                    defs.setdefault(name, (section_at(lineno(off)), lineno(off) + 1))
                cand = None
                depth = 1
                continue
            elif t == '}':
                continue  # the C++ guard's closing brace
            elif t[0].isalpha() or t[0] == '_':
                if paren_depth == 0:
                    last_ident = t
            if t not in '(' and not (t[0].isalpha() or t[0] == '_'):
                if t != ')':
                    last_ident = None
        else:
            if t == '{':
                depth += 1
            elif t == '}':
                depth -= 1
                if depth == 0 and bodies and bodies[-1][3] is None:
                    bodies[-1][3] = m.start()
    # every mention of a function after the public part (a call, a pointer
    # taken, a prototype) must name one defined above or in its own section
    mi = re.search(r'^#if defined\(DTENSOR_\w*IMPLEMENTATION\) && !defined\(DTENSOR_\w*IMPLEMENTATION_DONE\)', raw, re.M)
    impl = mi.start() if mi else 0
    def_at = {(d[1] - 1) for d in defs.values()}
    violations = []
    ident = re.compile(r'[A-Za-z_]\w*')
    enclosing = sorted((a, b, name) for name, _, a, b in bodies if b is not None)
    starts_b = [e[0] for e in enclosing]
    for m in ident.finditer(text, impl):
        callee = m.group(0)
        if callee not in defs:
            continue
        ln = lineno(m.start())
        sec = section_at(ln)
        csec, cline = defs[callee]
        if sec is None or csec is None or sec_order[csec] <= sec_order[sec]:
            continue
        if (sec, callee) in ALLOWED:
            continue
        k = bisect.bisect_right(starts_b, m.start()) - 1
        name = enclosing[k][2] if k >= 0 and enclosing[k][1] >= m.start() else '(file scope)'
        violations.append((ln + 1, sec, name, csec, callee))
    for owner, pat, what in PRIVATE:
        for m in re.finditer(pat, text[impl:]):
            ln = lineno(impl + m.start())
            sec = section_at(ln)
            if sec is not None and sec != owner:
                violations.append((ln + 1, sec, '(code)', owner, m.group(0).strip() + ' [' + what + ']'))
    base = path.replace('\\', '/').rsplit('/', 1)[-1]
    if base in PUBLIC_ONLY:
        # strip() blanks preprocessor lines: look at them too, without comments and strings
        pp = strip_keep_pp(raw)
        for m in re.finditer(r'\b(?:dt|DT)__\w+', pp):
            ln = lineno(m.start())
            violations.append((ln + 1, section_at(ln) or '(top)', '(private)', None,
                               m.group(0) + ': a private name of dtensor.h (' + PUBLIC_ONLY[base] + ')'))
    for ln, sec, name, csec, callee in violations:
        if name == '(private)':
            print(f'{path}:{ln}: >>{sec} {callee}')
        elif name == '(code)':
            print(f'{path}:{ln}: >>{sec} {callee}: only >>{csec} may')
        else:
            print(f'{path}:{ln}: >>{sec} {name} refers to {callee}() of >>{csec}, a later section')
    if report or violations:
        print(f'layering: {len(defs)} functions in {len(secs)} sections, '
              f'{len(violations)} downward references'
              + (f', {len(ALLOWED)} allowed' if ALLOWED else ''))
    return 1 if violations else 0


if __name__ == '__main__':
    flags = [a for a in sys.argv[1:] if a.startswith('--')]
    files = [a for a in sys.argv[1:] if not a.startswith('--')] or ['dtensor.h']
    sys.exit(max(main([sys.argv[0], f] + flags) for f in files))
