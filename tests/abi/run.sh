#!/usr/bin/env bash
# tests/abi/run.sh -- proves that files built with different option macros
# cannot be linked together (dtensor.h's OPTIONS, "the ABI check").
#
#   tests/abi/run.sh [mpich|openmpi]      (make test-abi MPI=...)
#
# tests/abi/impl.c (the implementation, default options) is compiled once;
# tests/abi/user.c is compiled and linked against it:
#   - with the same options, as C99 and as C++17: the link succeeds and the
#     program prints PASS at 1 rank (mpiexec -n 1);
#   - with -DDT_MAX_DIMS=12, -DDT_MAX_MESH_DIMS=6, -DDTENSOR_NO_MPI: the link
#     FAILS, and every undefined reference the linker reports names the
#     dtensor_abi_mismatch_check_... symbol spelling that file's values.
# Strict flags (-Wall -Wextra -Werror -pedantic) throughout. Last line:
# "abi: N passed, N failed" (appended to $DT_TEST_LOG if set); exit 1 on a failure.
set -u
cd "$(dirname "$0")/../.." || exit 2
MPI=${1:-mpich}
CC=mpicc.$MPI
CXX=mpicxx.$MPI
RUN=(mpiexec.$MPI)
CXXDEF=()
if [ "$MPI" = openmpi ]; then RUN+=(--allow-run-as-root --oversubscribe); CXXDEF=(-DOMPI_SKIP_MPICXX=1); fi
OUT=build/abi/$MPI
mkdir -p "$OUT"
STRICT=(-Wall -Wextra -Werror -pedantic -I.)
LIBS=(-lblis -lm)
p=0; f=0
ok() { p=$((p + 1)); echo "abi: ok: $*"; }
bad() { f=$((f + 1)); echo "abi: FAILED: $*"; }
ver=$(awk '/^#define DTENSOR_VERSION_(MAJOR|MINOR|PATCH) /{v = v sep $3; sep = "_"} END {print v}' dtensor.h)

if ! "$CC" -std=c99 "${STRICT[@]}" -O2 -c tests/abi/impl.c -o "$OUT/impl.o"; then
    bad "tests/abi/impl.c does not compile"
else
    # same options: links, runs, PASS (C99 and C++17 user files)
    for lang in c99 c++17; do
        if [ "$lang" = c99 ]; then cmd=("$CC" -std=c99); else cmd=("$CXX" -std=c++17 "${CXXDEF[@]}" -x c++); fi
        if "${cmd[@]}" "${STRICT[@]}" -O2 -c tests/abi/user.c -o "$OUT/user_$lang.o" &&
           "${cmd[0]}" -o "$OUT/same_$lang" "$OUT/impl.o" "$OUT/user_$lang.o" "${LIBS[@]}" >"$OUT/same_$lang.log" 2>&1; then
            if "${RUN[@]}" -n 1 "./$OUT/same_$lang" | tee -a "$OUT/same_$lang.log" | grep -q '^PASS'; then
                ok "same options ($lang user file): linked, ran: $(grep '^PASS' "$OUT/same_$lang.log")"
            else
                bad "same options ($lang user file): linked but did not print PASS"; cat "$OUT/same_$lang.log"
            fi
        else
            bad "same options ($lang user file): did not build"; cat "$OUT/same_$lang.log"
        fi
    done
    # different options: the link must fail naming the ABI symbol, and nothing else
    while read -r name flags sym; do
        log=$OUT/$name.log
        # shellcheck disable=SC2086
        if ! "$CC" -std=c99 "${STRICT[@]}" $flags -O2 -c tests/abi/user.c -o "$OUT/user_$name.o" >"$log" 2>&1; then
            bad "$flags: user.c does not compile"; cat "$log"; continue
        fi
        if "$CC" -o "$OUT/$name" "$OUT/impl.o" "$OUT/user_$name.o" "${LIBS[@]}" >>"$log" 2>&1; then
            bad "$flags: linked against the default implementation (it must not)"; continue
        fi
        want="dtensor_abi_mismatch_check_v${ver}_$sym"
        nund=$(grep -c 'undefined reference' "$log")
        nabi=$(grep 'undefined reference' "$log" | grep -c "\`$want'")
        if [ "$nund" -ge 1 ] && [ "$nund" -eq "$nabi" ]; then
            ok "$flags: link failed: $(grep -m1 -o "undefined reference to .*" "$log")"
        else
            bad "$flags: the link failed but not (only) on $want"; cat "$log"
        fi
    done <<LIST
dims12     -DDT_MAX_DIMS=12      DT_MAX_DIMS_12_DT_MAX_MESH_DIMS_4_with_MPI
mesh6      -DDT_MAX_MESH_DIMS=6  DT_MAX_DIMS_8_DT_MAX_MESH_DIMS_6_with_MPI
nompi      -DDTENSOR_NO_MPI      DT_MAX_DIMS_8_DT_MAX_MESH_DIMS_4_without_MPI
LIST
fi
echo "abi: $p passed, $f failed"
if [ -n "${DT_TEST_LOG:-}" ]; then echo "abi: $p passed, $f failed" >>"$DT_TEST_LOG"; fi
[ "$f" -eq 0 ]
