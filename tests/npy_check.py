#!/usr/bin/env python3
"""tests/npy_check.py PATH DTYPE -- load a file dt_tensor_save_npy wrote with
numpy.load and compare it with the tests' closed form dtt_val (tests/dt_test.h)
of the global row-major index. Exit 0 if equal. Called by test_io on rank 0
only when `python3 -c 'import numpy'` works. c64/c128 (test_complex): the
closed form cval; `--write PATH c64|c128 DIM...` has numpy write it."""
import sys
import numpy as np

def cval(u):
    """tests/test_complex.c's closed form zval: exact in c64 and c128"""
    return complex(((u % 17) - 8) * 0.25, (((u * 7) % 13) - 6) * 0.5)

CX = {"c64": "<c8", "c128": "<c16"}
if sys.argv[1] == "--write":  # --write PATH DTYPE DIM...: numpy writes the complex closed form
    path, dt, shape = sys.argv[2], sys.argv[3], tuple(int(d) for d in sys.argv[4:])
    n = 1
    for d in shape:
        n *= d
    np.save(path, np.array([cval(u) for u in range(n)], dtype=CX[dt]).reshape(shape))
    sys.exit(0)

path, dt = sys.argv[1], sys.argv[2]
a = np.load(path, allow_pickle=False)
if dt in CX:  # complex: numpy's '<c8' / '<c16', the values of cval
    if a.dtype != np.dtype(CX[dt]):
        sys.exit("dtype %s, want %s" % (a.dtype, CX[dt]))
    flat = a.reshape(-1)
    bad = [i for i in range(flat.size) if complex(flat[i]) != cval(i)]
    if bad:
        sys.exit("%s: element %d is %r, want %r (%d bad)" % (path, bad[0], flat[bad[0]], cval(bad[0]), len(bad)))
    print("npy_check: %s %s shape %s OK" % (path, dt, a.shape))
    sys.exit(0)
want_dtype = {"f32": "<f4", "f64": "<f8", "f16": "<f2", "i32": "<i4", "i64": "<i8", "u8": "|u1"}[dt]
if a.dtype != np.dtype(want_dtype):
    sys.exit("dtype %s, want %s" % (a.dtype, want_dtype))
if not a.flags.c_contiguous:
    sys.exit("not C order")
M = 2**64
def val(u):
    u = int(u)
    if dt in ("f16",):
        return ((u * 7 + 3) % 61) - 30
    if dt == "u8":
        return (u * 7 + 3) % 251
    if dt == "f32":
        return (((u * 40503 + 11) % 2097143) - 1048571) / 4.0
    if dt == "i32":
        return ((u * 2654435761 + 17) % 2000000011) - 1000000005
    if dt == "f64":
        return ((((u * 2862933555777941757 + 3037000493) % M) >> 22) - (1 << 41)) / 4.0
    if dt == "i64":
        return (((u * 6364136223846793005 + 1442695040888963407) % M) >> 3) - (1 << 60)
    return None
flat = a.reshape(-1)
bad = [i for i in range(flat.size) if int(flat[i]) != val(i) if dt in ("i32", "i64", "u8")] + \
      [i for i in range(flat.size) if dt not in ("i32", "i64", "u8") and float(flat[i]) != val(i)]
if bad:
    i = bad[0]
    sys.exit("%s: element %d is %r, want %r (%d bad)" % (path, i, flat[i], val(i), len(bad)))
print("npy_check: %s %s shape %s OK" % (path, dt, a.shape))
