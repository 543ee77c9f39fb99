#!/usr/bin/env python3
"""Check dtensor.h's layering rule (stated under the header's MAP, "THE RULE"),
and that the MAP lists every >>section banner in file order:

  a section names only functions defined above it or in itself; code higher
  up reaches code below only through a pointer handed to it (a hook);
  a comm's backend calls, group translation, accounting and muting are
  >>backend's alone, and so are MPI's calls (MPI-IO aside, >>io's), nor
  does another section recognise the MPI backend by its functions.

So nothing is ever forward-declared across sections. The same holds for the
other names a section defines: macros (#define, object- or function-like),
enumerators, typedef names and struct/union/enum tags. A companion header in
PUBLIC_ONLY (dtensor_layers.h) must also name nothing private of dtensor.h:
no dt__ / DT__ identifier outside its comments and strings, so that it
compiles where dtensor.h's implementation is not (DTENSOR_IMPLEMENTATION_LINKED).

Usage: layering.py [FILE ...] [--report]   (default dtensor.h; exit 1 on a violation)
       layering.py [FILE ...] --functions  (the function definitions it finds,
                                            "NAME LINE", sorted; for ctags_check.sh)

The checker blanks comments and string/char literals, splits the text into
preprocessor lines and code, and finds
  - functions: file-scope definitions, NAME '(' ... ')' '{' at brace depth 0
    (the ')' right before the '{'); a function defined twice (#if
    alternatives) is one name, at its first definition;
  - macros: every #define NAME; its home is its earliest #define (a macro
    #undef'd and defined again, or defined in two #if branches, is one name);
  - enumerators: the names of `enum [tag] { A, B = 3, ... }` outside functions;
  - types: typedef names (file scope) and struct/union/enum tags with a body
    (outside functions); a tag is a separate name space (`struct NAME`); an
    opaque declaration (`struct NAME;`, `typedef struct NAME T;`) declares
    the tag where it stands: the type-level hook, a pointer to what a later
    section completes;
and the sections (/* >>name lines). Then it looks at every identifier after
the public part (from the `#if defined(DTENSOR_IMPLEMENTATION) && !defined(
..._DONE)` line on): in function bodies, initialisers, prototypes, #define
bodies (a macro's body belongs to the section where its text is, not where
it is expanded), #if/#ifdef/#undef conditions. If it names something whose
home is a later section, that is a downward reference. Names the file does
not define (dtensor_cuda.h's uses of dtensor.h, the system's) are skipped;
a member after . or -> is not a reference (except to a macro), nor are a
macro's own parameters or a token pasted with ##. PRIVATE lists what only
one section may write or call. ALLOWED lists exceptions, each with its
reason (none today).
"""
import bisect
import re
import sys

# (caller section, name) pairs the rule tolerates, each with its reason.
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
    # MPI itself is the MPI backend's (and MPI-IO's): the other sections reach it through dt__comm_* and
    # the backend's capabilities, so that a backend is known by what it can do, not by its functions
    (('backend', 'io'), r'\bMPI_[A-Z][a-z]\w*\s*\(', 'calls MPI'),
    ('backend', r'\bdt__mpi_(start|sendrecv)\b', 'recognises the MPI backend by its functions'),
]

# companion headers built on dtensor.h's public API alone, with the reason
PUBLIC_ONLY = {
    'dtensor_layers.h': 'its implementation compiles without dtensor.h\'s (DTENSOR_LAYERS_IMPLEMENTATION)',
}

SECTION_RE = re.compile(r'^/\* >>([a-z_-]+) ')
IMPL_RE = re.compile(r'^#if defined\(DTENSOR_\w*IMPLEMENTATION\) && !defined\(DTENSOR_\w*IMPLEMENTATION_DONE\)', re.M)
# comments and literals (a comment's ' or " is the comment's; a literal's /* is the literal's)
LITERAL_RE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
# tokens: numbers (0x7fu, 1e-5f: never identifiers), identifiers, ->, ##, any other character
TOKEN_RE = re.compile(r'\.?\d(?:[eEpP][+-]|[\w.])*|[A-Za-z_]\w*|->|##|\S')
PP_RE = re.compile(r'[ \t]*#')
KEYWORDS = set('''auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef union unsigned
    void volatile while _Bool _Complex _Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn
    _Static_assert _Thread_local __attribute__ __restrict __restrict__ __inline __inline__ __extension__
    __declspec __thread defined'''.split())
KIND_TEXT = {'function': 'function', 'macro': 'macro', 'enumerator': 'enumerator', 'type': 'type', 'tag': 'type'}


def blank(s):
    return re.sub(r'[^\n]', ' ', s)


def split_text(raw):
    """(code, pp): raw with comments and string/char literals blanked, and in
    code the preprocessor lines (with their continuations) blanked too, in pp
    everything but them; newlines and offsets stay where they were. The C++
    guard's `extern "C" {` is blanked (its braces are not scopes)."""
    text = re.sub(r'extern\s+"C"\s*\{', lambda m: blank(m.group(0)), raw)
    text = LITERAL_RE.sub(lambda m: blank(m.group(0)), text)
    code, pp = [], []
    cont = False
    for line in text.split('\n'):
        if cont or PP_RE.match(line):
            pp.append(line)
            code.append(' ' * len(line))
            cont = line.endswith('\\')
        else:
            code.append(line)
            pp.append(' ' * len(line))
    return '\n'.join(code), '\n'.join(pp)


def directives(pp):
    """(directive, offset of the '#', text offset after the directive word, end
    offset) per logical preprocessor line of pp."""
    out = []
    for m in re.finditer(r'^[ \t]*#[ \t]*(\w*)(?:[^\n]*\\\n)*[^\n]*', pp, re.M):
        out.append((m.group(1), m.start(), m.end(1), m.end()))
    return out


class Source:
    def __init__(self, path):
        self.path = path
        self.raw = open(path, encoding='utf-8').read()
        self.lines = self.raw.split('\n')
        self.secs = [(k, m.group(1)) for k, l in enumerate(self.lines)
                     for m in [SECTION_RE.match(l)] if m]
        self.sec_first = [k for k, _ in self.secs]
        self.code, self.pp = split_text(self.raw)
        self.starts = [0] + [m.end() for m in re.finditer(r'\n', self.raw)]
        mi = IMPL_RE.search(self.raw)
        self.impl = mi.start() if mi else 0
        self.tokens = [(m.group(0), m.start()) for m in TOKEN_RE.finditer(self.code)]
        self.find_definitions()

    def lineno(self, off):
        """0-based line of a character offset"""
        return bisect.bisect_right(self.starts, off) - 1

    def section_at(self, off):
        k = bisect.bisect_right(self.sec_first, self.lineno(off)) - 1
        return self.secs[k][1] if k >= 0 else None

    def define(self, table, name, off):
        """keep the earliest definition: (section, 1-based line)"""
        if name not in table:
            table[name] = (self.section_at(off), self.lineno(off) + 1)

    def find_definitions(self):
        self.functions, self.macros, self.enumerators, self.types, self.tags = {}, {}, {}, {}, {}
        self.bodies = []  # (start, end, name) of function bodies
        self.macro_params = {}  # function-like macro -> [(parameters, body start, body end)]
        self.macro_bodies = {}  # '#' offset -> (name, params, body start, body end)
        for d, start, after, end in directives(self.pp):
            if d == 'define':
                m = re.compile(r'[ \t]*([A-Za-z_]\w*)(\([^)]*\))?').match(self.pp, after)
                if not m:
                    continue
                self.define(self.macros, m.group(1), start)
                plist = re.findall(r'[A-Za-z_]\w*|\.\.\.', m.group(2) or '')
                plist = ['__VA_ARGS__' if q == '...' else q for q in plist]
                self.macro_bodies[start] = (m.group(1), set(plist), m.end(), end)
                if m.group(2) is not None:
                    self.macro_params.setdefault(m.group(1), []).append((plist, m.end(), end))
        self.find_pasted()
        toks = self.tokens
        n = len(toks)
        # braces: a stack of 'func' (a function body), 'agg' (struct/union/enum
        # body) or 'other' (an initialiser, a block in a function)
        stack = []
        paren = 0
        group_ident = None  # the identifier before the depth-0 '(' being read
        last_group = None   # (its identifier, the index of its ')') at depth 0
        i = 0
        while i < n:
            t, off = toks[i]
            in_func = 'func' in stack
            if t == '(':
                if not stack and paren == 0:
                    p, poff = toks[i - 1] if i else ('', 0)
                    group_ident = (p, poff) if (p[:1].isalpha() or p[:1] == '_') and p not in KEYWORDS else None
                paren += 1
            elif t == ')':
                paren = max(paren - 1, 0)
                if not stack and paren == 0:
                    last_group = (group_ident, i)
            elif t == ';':
                if not stack:
                    paren = 0
                    # `struct NAME;`: an opaque declaration declares the tag
                    if i >= 2 and toks[i - 2][0] in ('struct', 'union') and toks[i - 1][0] not in KEYWORDS:
                        self.define(self.tags, toks[i - 2][0] + ' ' + toks[i - 1][0], toks[i - 1][1])
            elif t == '{':
                kind = 'other'
                if in_func:
                    pass
                elif (not stack and paren == 0 and last_group and last_group[1] == i - 1
                      and last_group[0] is not None):
                    kind = 'func'
                    self.define(self.functions, last_group[0][0], last_group[0][1])
                    self.bodies.append([off + 1, None, last_group[0][0]])
                elif i >= 1 and toks[i - 1][0] in ('struct', 'union', 'enum'):
                    kind = 'agg'
                elif i >= 2 and toks[i - 2][0] in ('struct', 'union', 'enum'):
                    kind = 'agg'
                    if not in_func:
                        self.define(self.tags, toks[i - 2][0] + ' ' + toks[i - 1][0], toks[i - 1][1])
                if kind == 'agg' and 'enum' in (toks[i - 1][0], toks[i - 2][0] if i >= 2 else '') and not in_func:
                    self.enum_items(i)
                stack.append(kind)
            elif t == '}':
                if stack:
                    k = stack.pop()
                    if k == 'func':
                        self.bodies[-1][1] = off
            elif t == 'typedef' and not stack:
                self.typedef(i)
            i += 1
        self.bodies = [(a, b, nm) for a, b, nm in self.bodies if b is not None]
        self.body_starts = [b[0] for b in self.bodies]

    def find_pasted(self):
        """self.pasted: macro -> the indices of the parameters whose argument
        only ever ends up pasted (##) or stringified (#), directly or through
        another macro's such parameter, or is dropped: `DT__SFXNAME(dt__unary)`
        names no dt__unary; self.pasted_direct: the same, ## or # in its own
        body only (such an argument is not even macro-expanded)"""
        occ = {}  # (macro, index) -> [None (pasted) | 'other' | (callee, index)]
        for name, defs in self.macro_params.items():
            for plist, bstart, bend in defs:
                btoks = [m.group(0) for m in TOKEN_RE.finditer(self.pp, bstart, bend) if m.group(0) != '\\']
                for k, t in enumerate(btoks):
                    if t not in plist:
                        continue
                    what = 'other'
                    prev = btoks[k - 1] if k else ''
                    nxt = btoks[k + 1] if k + 1 < len(btoks) else ''
                    if prev in ('#', '##') or nxt == '##':
                        what = None
                    else:
                        call = whole_arg(btoks, k)
                        if call:
                            what = call
                    occ.setdefault((name, plist.index(t)), []).append(what)
                for q in range(len(plist)):
                    occ.setdefault((name, q), [])
        self.pasted_direct = {key for key, ws in occ.items() if all(w is None for w in ws)}
        self.pasted = set(self.pasted_direct)
        changed = True
        while changed:
            changed = False
            for key, ws in occ.items():
                if key not in self.pasted and all(w is None or w != 'other' and w in self.pasted for w in ws):
                    self.pasted.add(key)
                    changed = True

    def pasted_arg(self, toks, k, kind):
        """is toks[k] a whole argument of a macro call that only pastes it?"""
        call = whole_arg(toks, k)
        if not call:
            return False
        return call in (self.pasted_direct if kind == 'macro' else self.pasted)

    def enum_items(self, i):
        """the enumerators of the enum body opening at token i"""
        toks = self.tokens
        depth = 0
        item = []  # the item's tokens at depth 0, with the '(' and ')' of its groups
        full = []  # all its tokens
        for j in range(i + 1, len(toks)):
            t, off = toks[j]
            if t in ('(', '[', '{'):
                if depth == 0:
                    item.append((t, off))
                depth += 1
            elif t in (')', ']', '}'):
                if depth == 0:
                    break
                depth -= 1
                if depth == 0:
                    item.append((t, off))
            elif depth == 0 and t == ',':
                self.enumerator(item, full)
                item, full = [], []
                continue
            elif depth == 0:
                item.append((t, off))
            full.append((t, off))
        self.enumerator(item, full)

    def enumerator(self, item, full=()):
        """an item's enumerator: the identifier before its '=', or its last
        token (`DT__UNARY_OPS(X) DT__U_NUM`: DT__U_NUM; `DT__UNARY_OPS(X)`: none);
        and the enumerators an X-macro list gives, LIST(M) with M pasting
        (`DT__UNARY_OPS(DT__U_ENUM)`, DT__U_ENUM(NAME, ...) DT__U_##NAME,: DT__U_ABS, ...)"""
        for k in range(len(full) - 3):
            if (full[k + 1][0] == '(' and full[k + 3][0] == ')' and full[k][0] in self.macro_params
                    and full[k + 2][0] in self.macro_params):
                for name in self.expand_list(full[k][0], full[k + 2][0]):
                    self.define(self.enumerators, name, full[k][1])
        if '=' in [t for t, _ in item]:
            item = item[:[t for t, _ in item].index('=')]
        if item and (item[-1][0][:1].isalpha() or item[-1][0][:1] == '_') and item[-1][0] not in KEYWORDS:
            self.define(self.enumerators, item[-1][0], item[-1][1])

    def expand_list(self, lst, m):
        """the enumerators of LIST(M): each X(args) line of LIST's body through
        M's body (parameters substituted, ## applied), its items' names"""
        lplist, lbs, lbe = self.macro_params[lst][0]
        mplist, mbs, mbe = self.macro_params[m][0]
        if len(lplist) != 1:
            return []
        ltoks = [x.group(0) for x in TOKEN_RE.finditer(self.pp, lbs, lbe) if x.group(0) != '\\']
        mtoks = [x.group(0) for x in TOKEN_RE.finditer(self.pp, mbs, mbe) if x.group(0) != '\\']
        names = []
        for k in range(len(ltoks) - 1):
            if ltoks[k] != lplist[0] or ltoks[k + 1] != '(':
                continue
            args, cur, depth = [], [], 0
            for t in ltoks[k + 2:]:
                if t in ('(', '[', '{'):
                    depth += 1
                elif t in (')', ']', '}'):
                    if depth == 0:
                        break
                    depth -= 1
                if t == ',' and depth == 0:
                    args.append(cur)
                    cur = []
                else:
                    cur.append(t)
            args.append(cur)
            if len(args) != len(mplist):
                continue
            out = []
            paste = False
            for t in mtoks:
                if t == '##':
                    paste = True
                    continue
                sub = args[mplist.index(t)] if t in mplist else [t]
                if paste and out and sub:
                    out[-1] += sub[0]
                    sub = sub[1:]
                out.extend(sub)
                paste = False
            item = []
            for t in out + [',']:
                if t == ',':
                    if '=' in item:
                        item = item[:item.index('=')]
                    if item and (item[-1][:1].isalpha() or item[-1][:1] == '_') and item[-1] not in KEYWORDS:
                        names.append(item[-1])
                    item = []
                else:
                    item.append(t)
        return names

    def typedef(self, i):
        """the names a file-scope typedef starting at token i declares"""
        toks = self.tokens
        depth = 0
        decl = []  # the tokens at brace depth 0, up to the ';'
        j = i + 1
        while j < len(toks):
            t = toks[j][0]
            if t == '{':
                depth += 1
            elif t == '}':
                depth -= 1
            elif t == ';' and depth == 0:
                break
            elif depth == 0:
                decl.append(toks[j])
            j += 1
        # `typedef struct NAME T;` without a body declares the tag too (an opaque type)
        if (len(decl) >= 2 and decl[0][0] in ('struct', 'union') and j < len(toks)
                and not any(toks[q][0] == '{' for q in range(i, j))):
            self.define(self.tags, decl[0][0] + ' ' + decl[1][0], decl[1][1])
        # split the declarators at depth-0 commas (a parameter list's are inside parens)
        parts, cur, pd = [], [], 0
        for t, off in decl:
            if t in '([':
                pd += 1
            elif t in ')]':
                pd -= 1
            if t == ',' and pd == 0:
                parts.append(cur)
                cur = []
            else:
                cur.append((t, off))
        parts.append(cur)
        for part in parts:
            name = None
            # (*name)(...) / (*name)[...]: a pointer to a function or an array
            for k in range(len(part) - 1):
                if part[k][0] == '(' and part[k + 1][0] == '*':
                    q = k + 1
                    while q < len(part) and part[q][0] in ('*', 'const', 'volatile', 'restrict'):
                        q += 1
                    if q < len(part) and (part[q][0][:1].isalpha() or part[q][0][:1] == '_'):
                        name = part[q]
                    break
            if name is None:
                # the last identifier outside (...) and [...]: `int a[3]`, `void f(int)`
                pd = 0
                for t, off in part:
                    if t in '([':
                        pd += 1
                    elif t in ')]':
                        pd -= 1
                    elif pd == 0 and (t[:1].isalpha() or t[:1] == '_') and t not in KEYWORDS:
                        name = (t, off)
            if name:
                self.define(self.types, name[0], name[1])

    def enclosing(self, off):
        k = bisect.bisect_right(self.body_starts, off) - 1
        if k >= 0 and self.bodies[k][1] >= off:
            return self.bodies[k][2]
        return '(file scope)'

    def lookup(self, name, tag=None):
        """(kind, (section, line)) of a name, macros first (they win over the
        compiler's names); tag: 'struct', 'union' or 'enum' before it"""
        if name in self.macros:
            return 'macro', self.macros[name]
        if tag:
            key = tag + ' ' + name
            return ('tag', self.tags[key]) if key in self.tags else (None, None)
        for kind, table in (('function', self.functions), ('enumerator', self.enumerators), ('type', self.types)):
            if name in table:
                return kind, table[name]
        return None, None

    def uses(self):
        """(offset, name, kind, home, where) of every identifier after the
        public part that names something this file defines"""
        out = []
        toks = self.tokens
        k0 = bisect.bisect_left([o for _, o in toks], self.impl)
        for k in range(k0, len(toks)):
            t, off = toks[k]
            if not (t[:1].isalpha() or t[:1] == '_') or t in KEYWORDS:
                continue
            prev = toks[k - 1][0] if k else ''
            tag = prev if prev in ('struct', 'union', 'enum') else None
            kind, home = self.lookup(t, tag)
            if kind is None or (prev in ('.', '->') and kind != 'macro') or self.pasted_arg(toks, k, kind):
                continue
            out.append((off, tag + ' ' + t if kind == 'tag' else t, kind, home, self.enclosing(off)))
        # preprocessor lines: #define bodies, #if/#elif/#ifdef/#ifndef/#undef
        for d, start, after, end in directives(self.pp):
            if end < self.impl:
                continue
            if d == 'define' and start in self.macro_bodies:
                name, params, bstart, bend = self.macro_bodies[start]
                where = '#define ' + name
            elif d in ('if', 'elif', 'ifdef', 'ifndef', 'undef'):
                name, params, bstart, bend = None, set(), after, end
                where = '#' + d
            else:
                continue
            btoks = [(m.group(0), m.start()) for m in TOKEN_RE.finditer(self.pp, bstart, bend) if m.group(0) != '\\']
            for k, (t, off) in enumerate(btoks):
                if not (t[:1].isalpha() or t[:1] == '_') or t in KEYWORDS or t in params or t == name:
                    continue
                prev = btoks[k - 1][0] if k else ''
                nxt = btoks[k + 1][0] if k + 1 < len(btoks) else ''
                if prev in ('##', '#') or nxt == '##':
                    continue
                tag = prev if prev in ('struct', 'union', 'enum') else None
                kind, home = self.lookup(t, tag)
                if kind is None or (prev in ('.', '->') and kind != 'macro') or self.pasted_arg(btoks, k, kind):
                    continue
                out.append((off, tag + ' ' + t if kind == 'tag' else t, kind, home, where))
        return out


def whole_arg(toks, k):
    """(macro, argument index) if toks[k] (text or (text, offset) items) is
    a whole argument of a call NAME(..., toks[k], ...), else None"""
    text = (lambda j: toks[j]) if toks and isinstance(toks[0], str) else (lambda j: toks[j][0])
    if k == 0 or k + 1 >= len(toks) or text(k - 1) not in ('(', ',') or text(k + 1) not in (',', ')'):
        return None
    depth, index = 0, 0
    j = k - 1
    while j >= 0 and k - j < 4000:
        t = text(j)
        if t in (')', ']', '}'):
            depth += 1
        elif t in ('(', '[', '{'):
            if depth == 0:
                if t != '(' or j == 0:
                    return None
                name = text(j - 1)
                return (name, index) if name[:1].isalpha() or name[:1] == '_' else None
            depth -= 1
        elif t == ',' and depth == 0:
            index += 1
        elif t == ';' and depth == 0:
            return None
        j -= 1
    return None


def function_list(path):
    src = Source(path)
    return sorted((name, line) for name, (_, line) in src.functions.items())


def main(argv):
    path = 'dtensor.h'
    report = functions = False
    for a in argv[1:]:
        if a == '--report':
            report = True
        elif a == '--functions':
            functions = True
        else:
            path = a
    src = Source(path)
    if functions:
        for name, (_, line) in sorted(src.functions.items()):
            print(f'{name} {line}')
        return 0
    raw, secs = src.raw, src.secs
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
    violations = []
    for off, name, kind, (hsec, hline), where in src.uses():
        sec = src.section_at(off)
        if sec is None or hsec is None or sec_order[hsec] <= sec_order[sec]:
            continue
        if (sec, name) in ALLOWED:
            continue
        violations.append((src.lineno(off) + 1, sec, where, hsec, name, kind))
    text = src.code
    for owner, pat, what in PRIVATE:
        for m in re.finditer(pat, text[src.impl:]):
            off = src.impl + m.start()
            sec = src.section_at(off)
            owners = owner if isinstance(owner, tuple) else (owner,)
            if sec is not None and sec not in owners:
                violations.append((src.lineno(off) + 1, sec, '(code)', ' or >>'.join(owners),
                                   m.group(0).strip() + ' [' + what + ']', None))
    base = path.replace('\\', '/').rsplit('/', 1)[-1]
    if base in PUBLIC_ONLY:  # code and preprocessor lines, comments and literals blanked
        for m in re.finditer(r'\b(?:dt|DT)__\w+', LITERAL_RE.sub(lambda q: blank(q.group(0)), raw)):
            off = m.start()
            violations.append((src.lineno(off) + 1, src.section_at(off) or '(top)', '(private)', None,
                               m.group(0) + ': a private name of dtensor.h (' + PUBLIC_ONLY[base] + ')', None))
    violations = sorted(set(violations))
    per_kind = {'function': 0, 'macro': 0, 'enumerator': 0, 'type': 0, None: 0}
    for ln, sec, where, hsec, name, kind in violations:
        per_kind[KIND_TEXT.get(kind)] += 1
        if kind is None and where == '(private)':
            print(f'{path}:{ln}: >>{sec} {name}')
        elif kind is None:
            print(f'{path}:{ln}: >>{sec} {name}: only >>{hsec} may')
        elif kind == 'function':
            print(f'{path}:{ln}: >>{sec} {where} refers to {name}() of >>{hsec}, a later section')
        else:
            print(f'{path}:{ln}: >>{sec} {where} refers to {name} ({KIND_TEXT[kind]}) of >>{hsec}, a later section')
    if report or violations:
        print(f'layering: {len(src.functions)} functions, {len(src.macros)} macros, '
              f'{len(src.enumerators)} enumerators, {len(src.types) + len(src.tags)} types in {len(secs)} sections, '
              f'{len(violations)} downward references'
              f' ({per_kind["function"]} to functions, {per_kind["macro"]} to macros, '
              f'{per_kind["enumerator"]} to enumerators, {per_kind["type"]} to types'
              + (f', {per_kind[None]} private' if per_kind[None] else '') + ')'
              + (f', {len(ALLOWED)} allowed' if ALLOWED else ''))
    return 1 if violations else 0


if __name__ == '__main__':
    flags = [a for a in sys.argv[1:] if a.startswith('--')]
    files = [a for a in sys.argv[1:] if not a.startswith('--')] or ['dtensor.h']
    sys.exit(max(main([sys.argv[0], f] + flags) for f in files))
