#!/usr/bin/env python3
"""tests/lint/public_calls.py -- every exported call that returns dt_status
reports its failures to the error hook (dt_set_error_handler).

The rule (dtensor.h, >>util, "The error hook"): each definition
`DT_API dt_status NAME(...) {` outside the public part is a wrapper whose
body is one DT__PUBLIC("NAME", <body call>) -- or, in a macro that defines
a family of calls, DT__PUBLIC(#NAME, ...) / DT__PUBLIC("dt_" #name, ...).
A Fortran entry point dt_f_X reports as "dt_X" (dt_f_X_typed and
dt_f_X_shaped, the typed wraps' entry points, as "dt_X": the call the
Fortran program made). dt_set_last_error,
dt_call_end, dt_f_call_end and dt_mesh_agree report on their own (under the
name of the call built on the public API). Prints each definition that breaks
the rule; exit 1 if any does. Usage: public_calls.py [header ...]"""
import re
import sys

EXEMPT = {'dt_set_last_error', 'dt_call_end', 'dt_f_call_end', 'dt_mesh_agree'}
DEF = re.compile(r'DT_API dt_status (\w+|dt_##\w+)\(')


def definitions(text):
    """(name, body text) of each function definition"""
    for m in DEF.finditer(text):
        i = m.end()
        depth = 1
        while depth:  # the parameter list
            depth += {'(': 1, ')': -1}.get(text[i], 0)
            i += 1
        rest = text[i:i + 4].lstrip(' \\\n')
        if not rest.startswith('{'):
            continue  # a declaration
        j = text.index('{', i)
        depth, k = 1, j + 1
        while depth:
            depth += {'{': 1, '}': -1}.get(text[k], 0)
            k += 1
        yield m.group(1), text[j + 1:k - 1], text.count('\n', 0, m.start()) + 1


def check(path):
    bad = 0
    text = open(path).read()
    for name, body, line in definitions(text):
        if name in EXEMPT:
            continue
        stmts = [s for s in re.sub(r'\\\n', ' ', body).strip().split(';') if s.strip()]
        # the Fortran entry points (dt_f_X) report under the C call's name (dt_X)
        c_name = name.replace('dt_f_', 'dt_', 1)
        for suffix in ('_typed', '_shaped'):
            if name.startswith('dt_f_') and c_name.endswith(suffix):
                c_name = c_name[:-len(suffix)]
        wanted = ('"%s"' % c_name, '#', '"dt_" #')
        # (and through DT__F_PUBLIC, which is DT__PUBLIC in Fortran order)
        macro = 'DT__F_PUBLIC(' if name.startswith('dt_f_') else 'DT__PUBLIC('
        ok = (len(stmts) == 1 and stmts[0].strip().startswith(macro) and
              any(stmts[0].strip()[len(macro):].startswith(w) for w in wanted))
        if not ok:
            print('%s:%d: %s: the definition is not one DT__PUBLIC("%s", ...) wrapper' % (path, line, name, name))
            bad += 1
    return bad


def main():
    paths = sys.argv[1:] or ['dtensor.h', 'dtensor_cuda.h']
    bad = sum(check(p) for p in paths)
    print('public_calls: %d definition(s) not wrapped' % bad)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
