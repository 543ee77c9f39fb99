#!/usr/bin/env python3
"""tests/lint/gen_f90.py -- generates dtensor.f90's typed wrappers and the
layout check of its bind(C) types.

dtensor.f90 binds dt_tensor_from_local, dt_tensor_distribute,
dt_tensor_gather and dt_tensor_local for Fortran arrays of six kinds at
ranks 1-4: one module procedure per (family, kind, rank), 96 in all, which
differ only in the array's declaration and its dtype constant. They, and
the lists naming them (the `private ::` statements and the generic
interfaces' `module procedure` lines), are written from the table below
(KINDS x RANKS x FAMILIES) into the regions of dtensor.f90 between

    ! >>generated: NAME (gen_f90.py: do not edit; python3 tests/lint/gen_f90.py)
    ! <<generated: NAME

(as FFTW generates its Fortran interface); everything outside them is
hand-written and left as it is.

It also reads every `type, bind(C) :: NAME` of dtensor.f90 and writes, for
each type and each of its fields, one line of tests/test_fortran.f90's
test_layout (the size this compiler gives the type, the field's offset:
c_loc(v%field) - c_loc(v)) and one row of tests/fortran_offsets.c's table
(C's sizeof / offsetof of the same names in dtensor.h / dtensor_layers.h),
so a field added to a type is checked without anyone listing it. Only the
names come from here: the values are the two compilers'.

    python3 tests/lint/gen_f90.py            # rewrite the regions in place
    python3 tests/lint/gen_f90.py --check    # make lint: exit 1 with a diff if
                                             # a file differs from the output
    python3 tests/lint/gen_f90.py --list     # the generated procedure names

To add a kind, a rank or a family, edit KINDS / RANKS / FAMILIES and run it;
a new family also needs its region markers placed in dtensor.f90 (a region
named in FILES but missing from its file is an error, as is a marker
without its end). Plain python3, no dependencies.
"""
import difflib
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOL = "tests/lint/gen_f90.py"

# kind suffix -> (the Fortran type of the array, the C dtype constant)
KINDS = [
    ("f32", "real(c_float)", "DT_F32"),
    ("f64", "real(c_double)", "DT_F64"),
    ("i32", "integer(c_int32_t)", "DT_I32"),
    ("i64", "integer(c_int64_t)", "DT_I64"),
    ("c64", "complex(c_float_complex)", "DT_C64"),
    ("c128", "complex(c_double_complex)", "DT_C128"),
]
RANKS = [1, 2, 3, 4]

# family -> (the specifics' prefix, the generic name, the procedure's text).
# In the text: {name} the specific's name, {type} the array's type, {dtype}
# its constant, {dims} the assumed shape ("(:,:)"), {rank} the rank.
FAMILIES = [
    ("fl", "dt_tensor_from_local", """\
  integer(c_int) function {name}(m, d, local, flags, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    {type}, target, intent(inout) :: local{dims}
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(inout) :: out
    {name} = dt_f_tensor_from_local_shaped(m, d, c_loc(local), {dtype}, &
         dt_f_contig(is_contiguous(local)), {rank}_c_int, shape(local, kind=c_int64_t), flags, out)
  end function {name}
"""),
    ("dist", "dt_tensor_distribute", """\
  integer(c_int) function {name}(m, d, full, src_rank, out)
    type(c_ptr), intent(in) :: m
    type(dt_tensor_desc), intent(in) :: d
    {type}, target, intent(in) :: full{dims}
    integer(c_int), intent(in) :: src_rank
    type(c_ptr), intent(inout) :: out
    {name} = dt_f_tensor_distribute_typed(m, d, c_loc(full), {dtype}, dt_f_contig(is_contiguous(full)), &
         size(full, kind=c_int64_t), src_rank, out)
  end function {name}
"""),
    ("gath", "dt_tensor_gather", """\
  integer(c_int) function {name}(t, full)
    type(c_ptr), intent(in) :: t
    {type}, target, intent(inout) :: full{dims}
    {name} = dt_f_tensor_gather_typed(t, c_loc(full), {dtype}, &
         dt_f_contig(is_contiguous(full)), size(full, kind=c_int64_t))
  end function {name}
"""),
    ("local", "dt_tensor_local", """\
  subroutine {name}(t, a, st)
    type(c_ptr), intent(in) :: t
    {type}, pointer, intent(out) :: a{dims}
    integer(c_int), intent(out) :: st
    integer(c_int64_t) :: shape(DT_MAX_DIMS)
    nullify(a)
    st = dt_f_tensor_local(t, {dtype}, {rank}_c_int, shape)
    if (st == DT_OK) call c_f_pointer(dt_tensor_data(t), a, shape(1:{rank}))
  end subroutine {name}
"""),
]
FAMILY = {f[0]: f for f in FAMILIES}


def names(family):
    """the specifics of a family, kind-major: [[f32_1 .. f32_4], [f64_1 ..], ...]"""
    prefix = "dt_%s_" % family
    return [["%s%s_%d" % (prefix, k[0], r) for r in RANKS] for k in KINDS]


def name_list(lead, family):
    """`lead` then the family's names, one kind per line, continued with &"""
    rows = [", ".join(row) for row in names(family)]
    return lead + (", &\n       ").join(rows) + "\n"


def bodies():
    """every family's procedures, in FAMILIES x KINDS x RANKS order, a blank line between"""
    out = []
    for fam, _generic, text in FAMILIES:
        for (kind, ftype, dtype) in KINDS:
            for r in RANKS:
                out.append(text.format(name="dt_%s_%s_%d" % (fam, kind, r), type=ftype, dtype=dtype,
                                       dims="(" + ",".join([":"] * r) + ")", rank=r))
    return "\n".join(out)


# ---- the layout check: dtensor.f90's bind(C) types, their fields ----
TYPE_BEGIN = re.compile(r"^\s*type\s*,\s*bind\s*\(\s*c\s*\)\s*::\s*(\w+)\s*(!.*)?$", re.I)
TYPE_END = re.compile(r"^\s*end\s*type\b", re.I)


def split_top(s):
    """s split at the commas outside parentheses and quotes"""
    parts, depth, cur, quote = [], 0, "", None
    for ch in s:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    parts.append(cur)
    return parts


def strip_comment(line):
    quote = None
    for k, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "!":
            return line[:k]
    return line


def bind_c_types(f90_text):
    """[(type name, [field, ...])] of dtensor.f90's bind(C) types, in order"""
    types, cur = [], None
    for n, line in enumerate(f90_text.splitlines(), 1):
        if cur is None:
            m = TYPE_BEGIN.match(line)
            if m:
                cur = (m.group(1), [])
            continue
        if TYPE_END.match(line):
            if not cur[1]:
                raise ValueError("line %d: bind(C) type %s without fields" % (n, cur[0]))
            types.append(cur)
            cur = None
            continue
        code = strip_comment(line).strip()
        if not code:
            continue
        if "::" not in code or code.endswith("&"):
            raise ValueError("line %d: a field declaration of %s this parser does not read "
                             "(one line, `type :: names`): %r" % (n, cur[0], code))
        for ent in split_top(code.split("::", 1)[1]):
            m = re.match(r"\s*([A-Za-z]\w*)", ent)
            if not m:
                raise ValueError("line %d: no field name in %r" % (n, ent))
            cur[1].append(m.group(1))
    if cur is not None:
        raise ValueError("bind(C) type %s has no end type" % cur[0])
    if not types:
        raise ValueError("no bind(C) types found")
    return types


def layout_f90(types):
    """test_fortran.f90's test_layout: every type's size and fields' offsets, as gfortran lays them out"""
    v = lambda t: "v_" + (t[3:] if t.startswith("dt_") else t)
    out = ["  ! every bind(C) type of dtensor.f90 (%d) and each of its fields (%d): the size and\n"
           % (len(types), sum(len(f) for _, f in types)),
           "  ! offsets this compiler gives them against C's sizeof / offsetof (tests/fortran_offsets.c)\n",
           "  subroutine test_layout()\n"]
    out += ["    type(%s), target :: %s\n" % (t, v(t)) for t, _ in types]
    for t, fields in types:
        out.append('    call layout("%s", "sizeof", int(c_sizeof(%s), c_int64_t))\n' % (t, v(t)))
        for fld in fields:
            call = '    call layout("%s", "%s", off(c_loc(%s%%%s), c_loc(%s)))\n' % (t, fld, v(t), fld, v(t))
            if len(call) > 119:   # 118 columns, as the hand-written lines (gfortran: 132)
                call = ('    call layout("%s", "%s", &\n         off(c_loc(%s%%%s), c_loc(%s)))\n'
                        % (t, fld, v(t), fld, v(t)))
            out.append(call)
    out.append("  end subroutine test_layout\n")
    return "".join(out)


def layout_c(types):
    """fortran_offsets.c's table: the same names, C's sizeof / offsetof"""
    out = []
    for t, fields in types:
        out.append("    DT_SIZE(%s),\n" % t)
        out += ["    DT_OFFSET(%s, %s),\n" % (t, fld) for fld in fields]
    return "".join(out)


# file -> {region name -> its text from dtensor.f90's text}. Each region's
# markers sit at the indentation of the text they enclose; in C the markers
# are /* ... */ comments.
FILES = {
    "dtensor.f90": {
        "private": lambda f90: "".join(name_list("  private :: ", f) for f in ("local", "fl", "dist", "gath")),
        "dt_tensor_local": lambda f90: name_list("    module procedure ", "local"),
        "dt_tensor_from_local": lambda f90: name_list("    module procedure ", "fl"),
        "dt_tensor_distribute": lambda f90: name_list("    module procedure ", "dist"),
        "dt_tensor_gather": lambda f90: name_list("    module procedure ", "gath"),
        "procedures": lambda f90: bodies(),
    },
    "tests/test_fortran.f90": {
        "layout": lambda f90: layout_f90(bind_c_types(f90)),
    },
    "tests/fortran_offsets.c": {
        "layout": lambda f90: layout_c(bind_c_types(f90)),
    },
}

MARK = r"gen_f90\.py: do not edit; python3 tests/lint/gen_f90\.py"
BEGIN = re.compile(r"^(?P<ind> *)(!|/\*) >>generated: (?P<name>\S+) \(" + MARK + r"\)( \*/)?\n$")
END = re.compile(r"^ *(!|/\*) <<generated: (?P<name>\S+)( \*/)?\n$")


def regenerate(text, regions, f90):
    """text with every region's body replaced by the generator's; raises ValueError"""
    lines = text.splitlines(keepends=True)
    out, seen, i = [], [], 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if END.match(lines[i]):
            raise ValueError("line %d: an end marker without its >>generated" % (i + 1))
        out.append(lines[i])
        i += 1
        if not m:
            if ">>generated:" in lines[i - 1]:
                raise ValueError("line %d: a malformed >>generated marker" % i)
            continue
        name = m.group("name")
        if name not in regions:
            raise ValueError("line %d: unknown region %r (known: %s)" % (i, name, ", ".join(regions)))
        if name in seen:
            raise ValueError("line %d: region %r appears twice" % (i, name))
        seen.append(name)
        j = i
        while j < len(lines) and not END.match(lines[j]):
            if BEGIN.match(lines[j]):
                raise ValueError("line %d: region %r not closed before line %d" % (i, name, j + 1))
            j += 1
        if j == len(lines) or END.match(lines[j]).group("name") != name:
            raise ValueError("line %d: region %r has no <<generated: %s" % (i, name, name))
        out.append(regions[name](f90))
        out.append(lines[j])
        i = j + 1
    missing = [r for r in regions if r not in seen]
    if missing:
        raise ValueError("regions missing: %s" % ", ".join(missing))
    return "".join(out)


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8", newline="") as f:
        return f.read()


def main(argv):
    mode = argv[1] if len(argv) > 1 else ""
    if mode not in ("", "--check", "--list") or len(argv) > 2:
        sys.stderr.write("usage: python3 %s [--check | --list]\n" % TOOL)
        return 2
    if mode == "--list":
        for fam, _g, _t in FAMILIES:
            for row in names(fam):
                print(" ".join(row))
        return 0
    n = len(FAMILIES) * len(KINDS) * len(RANKS)
    f90 = read("dtensor.f90")
    # the layout regions read the bind(C) types of dtensor.f90 as generated
    # (its regions hold no types, so the file as it stands is as good)
    bad = 0
    for rel, regions in FILES.items():
        text = f90 if rel == "dtensor.f90" else read(rel)
        try:
            new = regenerate(text, regions, f90)
        except ValueError as e:
            sys.stderr.write("%s: %s: %s\n" % (TOOL, rel, e))
            return 1
        if new == text:
            continue
        if mode == "--check":
            bad += 1
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(keepends=True), new.splitlines(keepends=True),
                                                       rel, rel + " (generated)"))
        else:
            with open(os.path.join(ROOT, rel), "w", encoding="utf-8", newline="") as f:
                f.write(new)
            print("%s: %s rewritten" % (TOOL, rel))
    types = bind_c_types(f90)
    what = "%d typed wrappers; %d bind(C) types, %d fields" % (n, len(types), sum(len(f) for _, f in types))
    if bad:
        print("%s: %d file(s) differ from the generator's output: edit %s, then run `python3 %s` "
              "(the regions between the >>generated and <<generated markers are not edited by hand)"
              % (TOOL, bad, TOOL, TOOL))
        return 1
    print("%s: %s: up to date (%s)" % (TOOL, ", ".join(FILES), what))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
