# bench/callgrind.awk -- read one callgrind dump made by bench/run.sh (valgrind
# --tool=callgrind --compress-strings=no --compress-pos=no; events: Ir) and print
#   total <Ir> kernel <Ir> mallocs <calls>
#   self <Ir> <function>        (the TOP functions by self cost)
# The kernel is the local compute: cost at source lines of the kernel section
# (src/kernels.inc, or dtensor.h lines K0 .. K1-1, the ">>kernels" section,
# and M0 .. M1-1, ">>math", whose element functions the kernel loops inline)
# plus the calls made from there into non-kernel code (BLIS, libm). Give the
# file twice (two passes: the first finds which functions are kernel code):
#   awk -v K0=1234 -v K1=2345 -v M0=100 -v M1=200 -v TOP=15 -f bench/callgrind.awk dump dump
# (callgrind_annotate 3.19 mis-reads self costs in dumps made with
# CALLGRIND_DUMP_STATS while functions are active, hence this reader)
function inkern(f, l) {
    if (f ~ /src\/kernels\.inc$/) return 1
    if (f ~ /dtensor\.h$/ && ((l >= K0 && l < K1) || (l >= M0 && l < M1))) return 1
    return 0
}
BEGIN { mode = "" }
FNR == 1 { pass++; if (pass == 2) for (f in selfc) if (kself[f] * 2 > selfc[f]) kfn[f] = 1 }
/^fl=/ { fl = substr($0, 4); file = fl; next }
/^(fi|fe)=/ { file = substr($0, 4); next }
/^fn=/ { fn = substr($0, 4); file = fl; next }
/^cfn=/ { cfn = substr($0, 5); next }
/^(cfi|cfl)=/ { next }
/^cob=/ { next }
/^ob=/ { next }
/^calls=/ { incall = 1; split(substr($0, 7), cs, " "); ncalls = cs[1]; next }
/^totals:/ { total = $2; next }
/^[0-9]/ {
    l = $1 + 0; c = $2 + 0
    if (pass == 1) {
        if (!incall) { selfc[fn] += c; if (inkern(file, l)) kself[fn] += c }
        incall = 0; next
    }
    if (incall) {
        # a call: count it if made from kernel code into a non-kernel function
        if (inkern(file, l) && !(cfn in kfn)) kern += c
        if (cfn ~ /^(malloc|calloc|realloc|memalign|posix_memalign|aligned_alloc)$/) mallocs += ncalls
        incall = 0
    } else if (inkern(file, l)) kern += c
    next
}
END {
    printf "total %d kernel %d mallocs %d\n", total, kern, mallocs
    n = 0
    for (f in selfc) if (selfc[f] > 0) printf "self %d %s\n", selfc[f], f | "sort -k2,2nr | head -" TOP
}
