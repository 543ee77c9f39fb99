#!/usr/bin/env bash
# tests/install/run.sh -- make install into a temporary prefix and build a
# consumer against it every way a user would (make test-install).
#
#   tests/install/run.sh
#
#   1. make install PREFIX=<tmp>; the files are there and dtensor.pc's
#      version is dtensor.h's; make install DESTDIR=<tmp2> PREFIX=/usr/local
#      stages under <tmp2>/usr/local with prefix=/usr/local in the .pc;
#      make uninstall removes what it installed
#   2. pkg-config: mpicc.mpich $(pkg-config --cflags dtensor) ... $(pkg-config
#      --libs dtensor), and gcc with dtensor-mpich.pc (MPICH's flags from its .pc);
#      the compiled library: consumer.c alone with $(pkg-config --libs dtensor-lib)
#      (-ldtensor: libdtensor.so, found through the .pc's -Wl,-rpath; no
#      implementation file of the consumer's), and with the archive
#      $(pkg-config --variable=archive dtensor-lib);
#      Fortran: the installed dtensor.f90 and tests/test_fortran.f90 with
#      mpif90.mpich and $(pkg-config --libs dtensor-lib), at 2 ranks
#   No consumer runs with LD_LIBRARY_PATH naming the prefix: each one built
#   against libdtensor.so must find it through its RUNPATH/RPATH.
#   3. CMake: find_package(dtensor) with CMAKE_PREFIX_PATH=<tmp>
#   4. CMake: add_subdirectory of this repository, and FetchContent of it
# Each consumer (tests/install/consumer.c + dtensor_impl.c, -Wall -Wextra
# -Werror -pedantic) runs under mpiexec.mpich -n 2 and must print PASS.
# MPICH throughout (CMake: MPI_C_COMPILER=mpicc.mpich). Last line:
# "install: N passed, N failed" (appended to $DT_TEST_LOG if set).
set -u
cd "$(dirname "$0")/../.." || exit 2
src=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
p=0; f=0
ok() { p=$((p + 1)); echo "install: ok: $*"; }
bad() { f=$((f + 1)); echo "install: FAILED: $*"; }
# run a built consumer at 2 ranks; $1 = what, $2 = the binary
run2() {
    local out
    out=$(BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1 timeout 120 mpiexec.mpich -n 2 "$2" 2>&1)
    if [ $? -eq 0 ] && grep -q '^PASS.*, 2 ranks,' <<<"$out"; then ok "$1: $(grep '^PASS' <<<"$out")"; else bad "$1: did not pass"; echo "$out"; fi
}
ver=$(awk '/^#define DTENSOR_VERSION_(MAJOR|MINOR|PATCH) /{v = v sep $3; sep = "."} END {print v}' dtensor.h)
WARN=(-std=c99 -Wall -Wextra -Werror -pedantic)

# 1. install
if make --no-print-directory install PREFIX="$prefix" >"$tmp/install.log" 2>&1 &&
   [ -f "$prefix/include/dtensor.h" ] && [ -f "$prefix/include/dtensor_cuda.h" ] &&
   [ -f "$prefix/include/dtensor_layers.h" ] && [ -f "$prefix/lib/libdtensor.a" ] && [ -f "$prefix/lib/libdtensor.so" ] &&
   [ -f "$prefix/lib/cmake/dtensor/dtensor-config.cmake" ] &&
   [ -f "$prefix/lib/cmake/dtensor/dtensor-config-version.cmake" ] &&
   [ "$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion dtensor)" = "$ver" ]; then
    ok "make install PREFIX=$prefix: headers, pkg-config (dtensor $ver), CMake package"
    find "$prefix" -type f | sed "s|^$prefix/|  |" | sort
else
    bad "make install PREFIX=$prefix"; cat "$tmp/install.log"
fi
stage=$tmp/stage
if make --no-print-directory install DESTDIR="$stage" PREFIX=/usr/local >"$tmp/stage.log" 2>&1 &&
   [ -f "$stage/usr/local/include/dtensor.h" ] &&
   grep -qx 'prefix=/usr/local' "$stage/usr/local/lib/pkgconfig/dtensor.pc" &&
   make --no-print-directory uninstall DESTDIR="$stage" PREFIX=/usr/local >>"$tmp/stage.log" 2>&1 &&
   [ -z "$(find "$stage" -type f)" ]; then
    ok "make install DESTDIR=<stage> PREFIX=/usr/local: staged, prefix=/usr/local in dtensor.pc; make uninstall removed every file"
else
    bad "DESTDIR staging / uninstall"; cat "$tmp/stage.log"; find "$stage" -type f
fi

# 2. pkg-config
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cflags=$(pkg-config --cflags dtensor) libs=$(pkg-config --libs dtensor)
echo "install: pkg-config --cflags dtensor: $cflags; --libs: $libs"
# shellcheck disable=SC2086
if mpicc.mpich "${WARN[@]}" -DCONSUMER_HOW='"pkg-config dtensor + mpicc.mpich"' $cflags \
       tests/install/consumer.c tests/install/dtensor_impl.c -o "$tmp/consumer_pc" $libs >"$tmp/pc.log" 2>&1; then
    run2 "pkg-config dtensor + mpicc.mpich" "$tmp/consumer_pc"
else
    bad "pkg-config dtensor + mpicc.mpich: build"; cat "$tmp/pc.log"
fi
cflags=$(pkg-config --cflags dtensor-mpich) libs=$(pkg-config --libs dtensor-mpich)
echo "install: pkg-config --cflags dtensor-mpich: $cflags; --libs: $libs"
# shellcheck disable=SC2086
if gcc "${WARN[@]}" -DCONSUMER_HOW='"pkg-config dtensor-mpich + gcc"' $cflags \
       tests/install/consumer.c tests/install/dtensor_impl.c -o "$tmp/consumer_pcm" $libs >"$tmp/pcm.log" 2>&1; then
    run2 "pkg-config dtensor-mpich + gcc" "$tmp/consumer_pcm"
else
    bad "pkg-config dtensor-mpich + gcc: build"; cat "$tmp/pcm.log"
fi
# the compiled library: consumer.c alone (no file defines DTENSOR_IMPLEMENTATION),
# -ldtensor (the linker takes libdtensor.so; the .pc's -Wl,-rpath,${libdir}
# lets it start without LD_LIBRARY_PATH), and the archive from
# --variable=archive with dtensor.pc's libraries
cflags=$(pkg-config --cflags dtensor-lib) libs=$(pkg-config --libs dtensor-lib)
echo "install: pkg-config --cflags dtensor-lib: $cflags; --libs: $libs"
case " $libs " in
*" -Wl,-rpath,$prefix/lib "*) ok "pkg-config --libs dtensor-lib: -Wl,-rpath,$prefix/lib" ;;
*) bad "pkg-config --libs dtensor-lib: no -Wl,-rpath,$prefix/lib" ;;
esac
# the consumers below find libdtensor.so through their RUNPATH alone
case ":${LD_LIBRARY_PATH:-}:" in
*":$prefix/lib:"*) bad "LD_LIBRARY_PATH names $prefix/lib" ;;
esac
# a binary linked to libdtensor.so, its RUNPATH/RPATH the prefix's lib, and
# ldd finds the library there without LD_LIBRARY_PATH; $1 = what, $2 = binary
rpath_ok() {
    local rp
    rp=$(readelf -d "$2" 2>/dev/null | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\1 \2/p')
    if ldd "$2" | grep -q "libdtensor.so => $prefix/lib/libdtensor.so" && [[ " ${rp#* }" == *"$prefix/lib"* ]]; then
        ok "$1: linked to $prefix/lib/libdtensor.so through ${rp:-?}"
    else
        bad "$1: libdtensor.so not found through the RUNPATH (${rp:-none})"; ldd "$2"
        return 1
    fi
}
# shellcheck disable=SC2086
if [ -f "$prefix/lib/libdtensor.so" ] &&
   mpicc.mpich "${WARN[@]}" -DCONSUMER_HOW='"libdtensor.so: pkg-config dtensor-lib + mpicc.mpich"' $cflags \
       tests/install/consumer.c -o "$tmp/consumer_so" $libs >"$tmp/so.log" 2>&1 &&
   rpath_ok "libdtensor.so: pkg-config dtensor-lib + mpicc.mpich" "$tmp/consumer_so"; then
    run2 "libdtensor.so: pkg-config dtensor-lib + mpicc.mpich, no LD_LIBRARY_PATH" "$tmp/consumer_so"
else
    bad "libdtensor.so: pkg-config dtensor-lib + mpicc.mpich: build (or not linked to the .so)"; cat "$tmp/so.log"
fi
archive=$(pkg-config --variable=archive dtensor-lib) dlibs=$(pkg-config --libs dtensor)
# shellcheck disable=SC2086
if [ "$archive" = "$prefix/lib/libdtensor.a" ] && [ -f "$archive" ] &&
   mpicc.mpich "${WARN[@]}" -DCONSUMER_HOW='"libdtensor.a: pkg-config --variable=archive dtensor-lib + mpicc.mpich"' $cflags \
       tests/install/consumer.c -o "$tmp/consumer_lib" "$archive" $dlibs >"$tmp/lib.log" 2>&1 &&
   ! ldd "$tmp/consumer_lib" | grep -q 'libdtensor.so'; then
    run2 "libdtensor.a: pkg-config --variable=archive dtensor-lib + mpicc.mpich" "$tmp/consumer_lib"
else
    bad "libdtensor.a: pkg-config --variable=archive dtensor-lib ($archive) + mpicc.mpich: build"; cat "$tmp/lib.log"
fi
# Fortran: the installed dtensor.f90 compiled with the consumer's mpif90,
# tests/test_fortran.f90 linked with $libs, pkg-config --libs dtensor-lib
# (-ldtensor takes libdtensor.so, found through the rpath: no LD_LIBRARY_PATH).
# The one C file is the test's own layout table (tests/fortran_offsets.c:
# offsetof/sizeof of the installed headers' structs, no implementation).
mkdir -p "$tmp/fmod"
# shellcheck disable=SC2086
if [ -f "$prefix/include/dtensor.f90" ] &&
   mpicc.mpich "${WARN[@]}" -I"$prefix/include" -c tests/fortran_offsets.c -o "$tmp/fortran_offsets.o" \
       >"$tmp/fortran.log" 2>&1 &&
   mpif90.mpich -std=f2008 -Wall -Werror -J "$tmp/fmod" "$prefix/include/dtensor.f90" tests/test_fortran.f90 \
       "$tmp/fortran_offsets.o" -o "$tmp/consumer_f" $libs >>"$tmp/fortran.log" 2>&1 &&
   rpath_ok "Fortran: pkg-config dtensor-lib + mpif90.mpich" "$tmp/consumer_f"; then
    out=$(BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1 timeout 120 mpiexec.mpich -n 2 "$tmp/consumer_f" 2>&1)
    if [ $? -eq 0 ] && grep -q '^PASS test_fortran np=2' <<<"$out"; then
        ok "Fortran: PREFIX/include/dtensor.f90 + mpif90.mpich + pkg-config --libs dtensor-lib, no LD_LIBRARY_PATH: $(grep '^PASS' <<<"$out")"
    else
        bad "Fortran: PREFIX/include/dtensor.f90 + pkg-config --libs dtensor-lib: did not pass"; echo "$out"
    fi
else
    bad "Fortran: PREFIX/include/dtensor.f90 + mpif90.mpich + pkg-config --libs dtensor-lib: build"; cat "$tmp/fortran.log"
fi
unset PKG_CONFIG_PATH

# 3. and 4. CMake
# (package-noblas: DTENSOR_BLAS=none, the built-in GEMM loops, no libblis linked)
# (-impl: consumer.c alone, linked with dtensor::impl: the installed
# libdtensor.a, or the subproject's own build of the implementation)
for how in package package-noblas package-impl subdir subdir-impl fetch; do
    b=$tmp/cmake-$how
    case $how in
    package*) args=(-DCMAKE_PREFIX_PATH="$prefix") ;;
    *) args=(-DDTENSOR_SOURCE_DIR="$src") ;;
    esac
    case $how in
    *-noblas) args+=(-DDTENSOR_BLAS=none) ;;
    *-impl) args+=(-DDTENSOR_IMPL=ON) ;;
    esac
    consumer=${how%-noblas}
    if cmake -S tests/install -B "$b" -DDTENSOR_CONSUMER="${consumer%-impl}" "${args[@]}" \
             -DMPI_C_COMPILER=mpicc.mpich >"$b.log" 2>&1 &&
       cmake --build "$b" >>"$b.log" 2>&1; then
        if [ "$how" = package-noblas ] && ldd "$b/consumer" | grep -q libblis; then
            bad "cmake $how: links libblis"
        else
            run2 "cmake $how" "$b/consumer"
        fi
    else
        bad "cmake $how: configure/build"; cat "$b.log"
    fi
done
# the package's include dir is the prefix's, not this checkout
if grep -q "$prefix/include" "$tmp/cmake-package/CMakeFiles/consumer.dir/flags.make" 2>/dev/null; then
    ok "cmake package: compiles with -I$prefix/include"
else
    bad "cmake package: not compiled against $prefix/include"
fi

echo "install: $p passed, $f failed"
if [ -n "${DT_TEST_LOG:-}" ]; then echo "install: $p passed, $f failed" >>"$DT_TEST_LOG"; fi
[ "$f" -eq 0 ]
