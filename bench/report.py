#!/usr/bin/python3
"""bench/report.py -- turn the harness's raw rows into the results table.

    bench/report.py --raw build/bench/harness/raw/raw.csv --out build/bench/harness [--cmd TEXT]
                    [--np N] [--seconds S] [--missing "a;b"] [--failed "a;b"] [--crashed "a;b"]

Input rows (bench/bench.sh prefixes the number of ranks):
    ranks,family,case,size,side,value,unit
Rows repeated over rounds are combined by their median. A peer measured in
another process (mpi4py, torch) is paired with our time from the same
transition and size of bench_redistribute (family raw-mpi); torch's dispatch
time with bench_dispatch's "add S" (the same op on a tiny Shard(0) tensor).

Output: a table on stdout; OUT/latest.csv with the columns
    benchmark,size,ours,peer,ratio,unit,ranks,target,met
(ratio = ours / peer: below 1 we are faster or smaller; target is the
issue's bound on the ratio, or on ours where the column says "ours";
raw-mpi-v's holds from 1 MiB on, TARGET_FROM); the
same table as Markdown in OUT/latest.md, which names the command, the
machine and the commit; one PNG per family (gnuplot), OUT/<family>.png,
the commit in its title. `make bench-publish` copies them into
bench/results/. Exit status 1 if a target is missed is NOT used: misses
are reported, not hidden, and the run's status is about correctness only.
Standard library only.
"""
import argparse
import collections
import csv
import math
import os
import platform
import statistics
import subprocess
import sys
import time

# family -> (what the peer is, target kind, bound, x axis label)
#   target kind: "ratio" (ours/peer <= bound), "ours" (ours <= bound), None
FAMILIES = collections.OrderedDict([
    ("raw-mpi", ("the raw MPI collective, same bytes", "ratio", 1.10, "tensor bytes")),
    ("raw-mpi-v", ("MPI_Allgatherv / MPI_Alltoallv, same ragged parts", "ratio", 1.10, "tensor bytes")),
    ("hand-mpi", ("hand-written pack + MPI_Alltoall", None, None, "tensor bytes")),
    ("shm-raw", ("the raw MPI collective, same bytes (ours: the shared-memory path)", "ratio", 1.00, "tensor bytes")),
    ("shm-hand", ("hand-written pack + MPI_Alltoall(v) (ours: the shared-memory path)", "ratio", 0.80, "tensor bytes")),
    ("shm-mpi", ("dtensor's MPI path (ours: the shared-memory path)", None, None, "tensor bytes")),
    ("pdgemr2d", ("ScaLAPACK pdgemr2d", "ratio", 0.50, "matrix bytes")),
    ("pdgemr2d-cyclic", ("ScaLAPACK pdgemr2d, block-cyclic layouts", "ratio", 0.50, "matrix bytes")),
    ("pdgemm", ("ScaLAPACK pdgemm (faster of N/T)", None, None, "n (n x n x n)")),
    ("fftw", ("FFTW-MPI fftw_mpi_plan_transpose", "ratio", 1.00, "array bytes")),
    ("mpi4py", ("mpi4py + numpy", None, None, "tensor bytes")),
    ("torch", ("torch DTensor redistribute (gloo)", "ratio", 0.10, "tensor bytes")),
    ("torch-dispatch", ("torch DTensor a + b dispatch", "ratio", 0.01, "global numel")),
    ("memory", ("raw MPI collective's own peak", "ours", 2.00, "tensor bytes")),
    ("planner", ("lower bound on bytes per rank", "ratio", 1.00, "simulated ranks")),
    ("planner-time", ("(time per call; target on planning: [plan], [cached])", "ours", 1000.0, "simulated ranks")),
    ("local", ("(no communication)", None, None, "tensor bytes")),
    ("dispatch", ("(ours only; torch-dispatch pairs add S)", None, None, "global numel")),
])

# the families whose target holds from a size on (below it: no target)
TARGET_FROM = {"raw-mpi-v": 2 ** 20, "shm-raw": 2 ** 20, "shm-hand": 2 ** 20}

# the families whose peer runs in another program: where "ours" comes from
OURS_FROM = {"mpi4py": ("raw-mpi", None), "torch": ("raw-mpi", None),
             "torch-dispatch": ("dispatch", "add S")}


def read_rows(path):
    acc = collections.defaultdict(list)
    units = {}
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if len(row) != 7:
                continue
            ranks, fam, case, size, side, value, unit = row
            try:
                v = float(value)
                key = (int(ranks), fam, case, float(size))
            except ValueError:
                continue
            acc[key + (side,)].append(v)
            units[(fam, side)] = unit
    return {k: statistics.median(v) for k, v in acc.items()}, units


def pair(med):
    """one record per (ranks, family, case, size) that has ours or a peer"""
    keys = sorted({k[:4] for k in med})
    out = []
    for ranks, fam, case, size in keys:
        ours = med.get((ranks, fam, case, size, "ours"))
        peer = med.get((ranks, fam, case, size, "peer"))
        if fam in OURS_FROM and ours is None:
            src, src_case = OURS_FROM[fam]
            if src_case is None:
                ours = med.get((ranks, src, case, size, "ours"))
            else:  # the same op at the same rank count; 1 rank runs "add R"
                c = src_case if ranks > 1 else src_case[:-1] + "R"
                ours = next((v for k, v in med.items() if k[:3] == (ranks, src, c) and k[4] == "ours"), None)
        if ours is None and peer is None:
            continue
        out.append((ranks, fam, case, size, ours, peer))
    order = {f: i for i, f in enumerate(FAMILIES)}
    out.sort(key=lambda r: (order.get(r[1], 99), r[2], -r[0], r[3]))
    return out


def human(size, fam):
    if "bytes" in FAMILIES.get(fam, ("", None, None, ""))[3]:
        for u, d in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
            if size >= d:
                v = size / d
                return ("%.0f %s" if abs(v - round(v)) < 0.05 else "%.1f %s") % (v, u)
        return "%d B" % size
    return "%d" % size


def fmt(v):
    if v is None:
        return "-"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return "%.0f" % v
    if a >= 1:
        return "%.3g" % v if a < 100 else "%.1f" % v
    return "%.3g" % v


def verdict(fam, ours, ratio, case="", size=None):
    kind, bound = FAMILIES.get(fam, (None, None, None, None))[1:3]
    if kind is None:
        return "-", ""
    if size is not None and size < TARGET_FROM.get(fam, 0):
        return "-", ""
    if fam == "planner-time" and not case.endswith(("[plan]", "[cached]")):
        return "-", ""  # a whole call (or mesh creation) is O(ranks involved): see the growth exponents
    val = ratio if kind == "ratio" else ours
    tgt = ("<= %g" % bound) if kind == "ratio" else ("ours <= %g" % bound)
    if val is None:
        return tgt, "n/a"
    return tgt, "yes" if val <= bound else "NO"


def records(paired, units):
    recs = []
    for ranks, fam, case, size, ours, peer in paired:
        ratio = ours / peer if ours is not None and peer not in (None, 0) else None
        unit = units.get((fam, "ours")) or units.get((fam, "peer")) or ""
        tgt, met = verdict(fam, ours, ratio, case, size)
        recs.append(dict(benchmark="%s/%s" % (fam, case), family=fam, case=case, ranks=ranks, size=size,
                         ours=ours, peer=peer, ratio=ratio, unit=unit, target=tgt, met=met))
    return recs


def commit():
    """HEAD's short hash, with "-dirty" when tracked files have uncommitted changes"""
    try:
        git = lambda *a: subprocess.run(["git"] + list(a), capture_output=True, text=True, timeout=20).stdout.strip()
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head + ("-dirty" if dirty else "")) if head else "unknown"


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = ", %.0f GiB" % (kb / 2 ** 20)
    except (OSError, ValueError, IndexError):
        pass
    osname = ""
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    osname = ", " + line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    try:
        mpi = subprocess.run(["mpiexec.openmpi", "--version"], capture_output=True, text=True,
                             timeout=20).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        mpi = "Open MPI (version unknown)"
    return "%s, %d cores%s%s; %s; Linux %s" % (cpu, os.cpu_count() or 0, mem, osname, mpi, platform.release())


def write_csv(path, recs):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["benchmark", "size", "ours", "peer", "ratio", "unit", "ranks", "target", "met"])
        for r in recs:
            w.writerow([r["benchmark"], "%.0f" % r["size"], "" if r["ours"] is None else "%.6g" % r["ours"],
                        "" if r["peer"] is None else "%.6g" % r["peer"],
                        "" if r["ratio"] is None else "%.4f" % r["ratio"], r["unit"], r["ranks"], r["target"],
                        r["met"]])


def table_lines(recs, md):
    head = ["benchmark", "ranks", "size", "ours", "peer", "ratio", "unit", "target", "met"]
    rows = [[r["benchmark"], str(r["ranks"]), human(r["size"], r["family"]), fmt(r["ours"]), fmt(r["peer"]),
             "-" if r["ratio"] is None else "%.3f" % r["ratio"], r["unit"], r["target"], r["met"] or "-"]
            for r in recs]
    if md:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in rows:
            if row[8] == "NO":
                row[5] = "**%s**" % row[5]
            lines.append("| " + " | ".join(row) + " |")
        return lines
    w = [max(len(x[i]) for x in rows + [head]) for i in range(len(head))]
    line = lambda x: "  ".join(c.ljust(w[i]) if i in (0, 6, 7) else c.rjust(w[i]) for i, c in enumerate(x))
    return [line(head)] + [line(x) for x in rows]


def summary(recs, md):
    """per family and rank count: the range of the ratio (or of ours), the
    value at the largest size, and how many rows meet the target"""
    groups = collections.OrderedDict()
    for r in recs:
        groups.setdefault((r["family"], r["ranks"]), []).append(r)
    head = ["family", "peer", "ranks", "rows", "ratio range", "at the largest size", "target", "met"]
    rows = []
    for (fam, ranks), rs in groups.items():
        kind = FAMILIES.get(fam, (None, None))[1]
        key = "ours" if kind == "ours" or all(r["ratio"] is None for r in rs) else "ratio"
        vals = [r[key] for r in rs if r[key] is not None]
        if not vals:
            continue
        big = max(r["size"] for r in rs)
        at_big = sorted("%s %s" % (r["case"], fmt(r[key])) for r in rs if r["size"] == big and r[key] is not None)
        met = [r["met"] for r in rs if r["met"] in ("yes", "NO")]
        label = "ratio" if key == "ratio" else "ours (%s)" % rs[0]["unit"]
        rows.append([fam, FAMILIES.get(fam, ("?",))[0], str(ranks), str(len(rs)),
                     "%s %s .. %s" % (label, fmt(min(vals)), fmt(max(vals))),
                     "%s: %s" % (human(big, fam), "; ".join(at_big)),
                     next((r["target"] for r in rs if r["target"] != "-"), "-"),
                     "%d/%d" % (met.count("yes"), len(met)) if met else "-"])
    if md:
        return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + \
               ["| " + " | ".join(x) + " |" for x in rows]
    return ["  ".join(x) for x in [head] + rows]


def growth_lines(recs):
    """planning time: the exponent of its growth between successive rank counts"""
    out = []
    by_case = collections.defaultdict(list)
    for r in recs:
        if r["family"] == "planner-time" and r["ours"]:
            by_case[r["case"]].append((r["size"], r["ours"]))
    for case, pts in sorted(by_case.items()):
        pts.sort()
        ex = [math.log(b[1] / a[1]) / math.log(b[0] / a[0]) for a, b in zip(pts, pts[1:]) if b[1] > 0 and a[1] > 0]
        if ex:
            out.append("planner-time/%s: %.3g us at %d ranks .. %.3g us at %d; growth exponent max %.2f" %
                       (case, pts[0][1], pts[0][0], pts[-1][1], pts[-1][0], max(ex)))
    return out


def plot(recs, outdir, workdir, rev):
    """one PNG per family: the ratio (or ours) against size, one line per case"""
    if subprocess.run(["sh", "-c", "command -v gnuplot"], capture_output=True).returncode != 0:
        return ["gnuplot not found: no plots (make bench-deps installs gnuplot-nox)"]
    made = []
    fams = collections.OrderedDict()
    for r in recs:
        fams.setdefault(r["family"], []).append(r)
    os.makedirs(workdir, exist_ok=True)
    for fam, rs in fams.items():
        kind, bound, xlabel = FAMILIES.get(fam, ("", None, None, "size"))[1:4]
        use_ratio = any(r["ratio"] is not None for r in rs) and kind != "ours"
        ylabel = ("ours / peer (%s)" % FAMILIES[fam][0]) if use_ratio else ("ours (%s)" % rs[0]["unit"])
        series = collections.OrderedDict()
        for r in rs:
            y = r["ratio"] if use_ratio else r["ours"]
            if y is None or y <= 0:
                continue
            series.setdefault("%s, %d rank%s" % (r["case"], r["ranks"], "s" if r["ranks"] > 1 else ""),
                              []).append((r["size"], y))
        if not series:
            continue
        if len(series) > 10:  # too many lines to read: the worst case per kind ([plan], [call], ...)
            agg = collections.OrderedDict()
            for name, pts in series.items():
                tag = name[name.rfind("[") + 1:name.rfind("]")] if "]" in name else name.split(",")[0].split()[-1]
                tag += name[name.rfind(","):]
                for x, y in pts:
                    d = agg.setdefault("max over cases: " + tag, {})
                    d[x] = max(d.get(x, 0), y)
            series = collections.OrderedDict((k, sorted(v.items())) for k, v in agg.items())
        data = os.path.join(workdir, "%s.dat" % fam)
        with open(data, "w") as f:
            for name, pts in series.items():
                f.write('"%s"\n' % name.replace('"', "'"))
                for x, y in sorted(pts):
                    f.write("%.10g %.10g\n" % (x, y))
                f.write("\n\n")
        png = os.path.join(outdir, "%s.png" % fam)
        logy = "set logscale y" if fam in ("planner-time", "pdgemr2d", "pdgemr2d-cyclic", "torch", "torch-dispatch", "dispatch",
                                          "local") else ""
        tline = ""
        if bound is not None and (use_ratio or kind == "ours"):
            tline = ", %g with lines dt 2 lw 2 lc rgb 'red' title 'target %s'" % (bound, "<= %g" % bound)
        script = "\n".join([
            "set terminal pngcairo size 900,560 font 'sans,10' noenhanced",
            "set output '%s'" % png,
            "set title 'dtensor.h %s: %s vs %s'" % (rev, fam, FAMILIES[fam][0].replace("'", "")),
            "set xlabel '%s'" % xlabel, "set ylabel '%s'" % ylabel.replace("'", ""),
            "set logscale x 2" if fam not in ("torch-dispatch", "dispatch") else "set logscale x",
            "set format x '%.0b %BB'" if "bytes" in xlabel else "set format x '%.0f'",
            logy, "set grid", "set key outside right top",
            "plot for [i=0:%d] '%s' index i using 1:2 with linespoints pt 7 title columnheader(1)%s"
            % (len(series) - 1, data, tline), ""])
        sp = os.path.join(workdir, "%s.gp" % fam)
        with open(sp, "w") as f:
            f.write(script)
        r = subprocess.run(["gnuplot", sp], capture_output=True, text=True)
        made.append(png if r.returncode == 0 else "%s: gnuplot failed: %s" % (png, r.stderr.strip()[:200]))
    return made


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", default="build/bench/harness")
    ap.add_argument("--cmd", default="bench/bench.sh")
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=0)
    ap.add_argument("--missing", default="")
    ap.add_argument("--failed", default="")
    ap.add_argument("--crashed", default="")
    a = ap.parse_args()
    med, units = read_rows(a.raw)
    recs = records(pair(med), units)
    rev = commit()
    os.makedirs(a.out, exist_ok=True)
    write_csv(os.path.join(a.out, "latest.csv"), recs)
    info = ["command: `%s` (%d s), %s" % (a.cmd, a.seconds, time.strftime("%Y-%m-%d %H:%M %Z")),
            "machine: " + machine(),
            "commit: " + rev,
            "ratio = ours / peer (below 1: ours is faster, or smaller); medians of >= 5 repetitions after a "
            "warm-up, medians over rounds"]
    missing = [m for m in a.missing.split(";") if m]
    failed = [m for m in a.failed.split(";") if m]
    crashed = [m for m in a.crashed.split(";") if m]
    if missing:
        info.append("peers not measured: " + "; ".join(missing))
    if failed:
        info.append("FAILED programs: " + "; ".join(failed))
    if crashed:
        info.append("peers that crashed at exit after all their rows (rows kept): " + "; ".join(crashed))
    grow = growth_lines(recs)
    plots = plot(recs, a.out, os.path.join(os.path.dirname(a.raw) or ".", "plot"), rev)
    with open(os.path.join(a.out, "latest.md"), "w") as f:
        f.write("\n".join(["- " + x for x in info + grow]) + "\n\n")
        f.write("\n".join(summary(recs, True)) + "\n\n")
        f.write("\n".join(table_lines(recs, True)) + "\n")
    print("\n".join("# " + x for x in info))
    print("\n".join(table_lines(recs, False)))
    print("# summary")
    print("\n".join(summary(recs, False)))
    for g in grow:
        print("# " + g)
    n_no = sum(1 for r in recs if r["met"] == "NO")
    n_yes = sum(1 for r in recs if r["met"] == "yes")
    print("# targets: %d met, %d missed (marked NO)" % (n_yes, n_no))
    print("# wrote %s, %s and %s" % (os.path.join(a.out, "latest.csv"), os.path.join(a.out, "latest.md"),
                                     ", ".join(plots) if plots else "no plots"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
