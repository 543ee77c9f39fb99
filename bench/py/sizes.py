"""bench/py/sizes.py -- the tensor sizes and shapes of bench/redistribute.c,
shared by the Python peers so that both compare exactly the same tensors."""
import math


def llround(x):
    """C's llround for x >= 0: round half away from zero (x - floor(x) is exact)."""
    f = math.floor(x)
    return int(f + 1 if x - f >= 0.5 else f)


def shape_for(nominal, n):
    """bench/redistribute.c's shape_for: rows x cols, both multiples of n, close to nominal bytes of f32"""
    numel = nominal // 4
    rows = max(llround(math.sqrt(float(numel)) / float(n)) * n, n)
    cols = max(llround(float(numel) / float(rows) / float(n)) * n, n)
    return rows, cols


def nominal_sizes(min_kib, max_mib):
    """bench/redistribute.c's loop: for (double b = min_kib*1024; b <= max_mib*1048576 + 0.5; b *= 4)."""
    out, b = [], min_kib * 1024.0
    while b <= max_mib * 1048576.0 + 0.5:
        out.append(int(b))
        b *= 4
    return out


def reps_for(nominal, reps=0, quick=False):
    """bench/redistribute.c's repetitions: --reps if given, 5 with --quick, else 30 up to 4 MiB, 10 up to 64 MiB, 5."""
    if reps:
        return reps
    if quick:
        return 5
    return 30 if nominal <= 4 << 20 else 10 if nominal <= 64 << 20 else 5
