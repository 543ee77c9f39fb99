# dtensor.h -- build, run and check.
#
#   make deps demo            install MPI etc. (Debian/Ubuntu, as root), run the demo: the
#                             examples at NP ranks (default 4) and a short report
#   make deps test            ... and run the test suite: every test at 1 2 3 ranks, --quick
#                             sizes, Open MPI (minutes; tests/run.sh --smoke; MPI=mpich for MPICH)
#   make test-full            the whole sweep, 1 2 3 4 6 8 ranks (what CI runs under both MPIs)
#   make examples             build every examples/NAME.c into build/$(MPI)/NAME
#   make run-NAME NP=4        build and run one example, e.g. make run-pencil NP=4 MPI=openmpi
#                             ARGS="--n 192" (its arguments; see the top of examples/NAME.c)
#   make test MPI=openmpi     the same under Open MPI (default: MPICH)
#   make bench-deps bench     every benchmark against its peer (raw MPI, ScaLAPACK, FFTW-MPI,
#                             mpi4py, torch DTensor, a 65,536-rank planner simulation), 4 ranks,
#                             Open MPI: table + bench/results/latest.{csv,md} + PNG plots
#   make bench-quick          the same at small sizes (< 5 min)
#   make bench-redistribute NP=2   redistribution vs raw MPI collectives only
#   make bench-ops            dt_matmul vs ScaLAPACK pdgemm and bare BLIS; op dispatch overhead (NP=2)
#   make bench-results        the op benchmarks via bench/run.sh: bench/results/*.txt (NP=2)
#   make bench-halo           halo exchange / stencil step vs hand-written MPI: bench/results/halo-<mpi>-np2.txt
#   make bench-stencil        5-point step on a ghosted array, in-place halo vs hand-written MPI faces:
#                             bench/results/stencil-<mpi>-np2.txt
#   make bench-strided        a padded array redistributed through its strides vs contiguous,
#                             staged and MPI_Alltoallw: bench/results/strided-<mpi>-np2.txt
#   make bench-rng            random fills vs Random123 on one rank, + callgrind: bench/results/rng.txt
#   make build/$(MPI)/bench_pdgemr2d, make build/openmpi/bench_fftw_transpose
#                             the peer benchmarks (ScaLAPACK pdgemr2d, FFTW-MPI transpose): each takes
#                             --quick and --csv FILE (raw rows family,case,size,side,value,unit)
#   make bench-planner        the planner at scale, simulated in one process (no MPI): meshes of 64 to
#                             65,536 ranks, bytes per rank vs the lower bound, planning time per call
#                             (PLANNERARGS="--quick" up to 4096 ranks; "--csv FILE" appends raw rows)
#   make bench-planner-callgrind  the same loops' instructions per call under callgrind
#   make install PREFIX=/usr/local DESTDIR=
#                             dtensor.h, dtensor_cuda.h into PREFIX/include; pkg-config files
#                             (dtensor.pc, dtensor-mpich.pc, dtensor-openmpi.pc) into
#                             PREFIX/lib/pkgconfig; the CMake package (dtensor::dtensor) into
#                             PREFIX/lib/cmake/dtensor (make uninstall removes them)
#   make test-install         install into a temporary prefix, build tests/install/consumer.c
#                             through pkg-config, find_package, add_subdirectory and FetchContent,
#                             run each at 2 ranks (MPICH)
#   make test-abi             files built with another DT_MAX_DIMS / DT_MAX_MESH_DIMS /
#                             DTENSOR_NO_MPI than the implementation must fail to link (tests/abi)
#   make test-threads         dt_comm_mpi's MPI state and thread-level checks (tests/test_threads.c)
#   make strict               C99 / C11 / C++17 / nvcc builds with -Wall -Wextra -Werror -pedantic
#   make lint                 cppcheck and clang-tidy (.clang-tidy, tests/lint/cppcheck.supp) on
#                             dtensor.h's implementation, with and without MPI; fails on any finding
#   make cuda                 dtensor_cuda.h: every CUDA program into build/cuda/ with nvcc, warnings
#                             as errors, and dtensor_cuda.h's own strictness builds (no GPU needed)
#   make test-cuda            on a GPU machine: the CUDA tests (tests/run_cuda.sh) and bench/cuda once
#   make bench-cuda           build/cuda/bench_cuda (GPU)
#   make fuzz                 the libFuzzer targets tests/fuzz/*.c (clang, ASan + UBSan), each for
#                             FUZZ_SECONDS (default 60) from its corpus tests/fuzz/corpus/<target>/;
#                             crash artifacts in build/fuzz/; ends "N passed, N failed"
#   make fuzz-build           build them only (build/fuzz/fuzz_*)
#
# Variables: MPI (mpich|openmpi), NP (ranks), ARGS (run-NAME's), CFLAGS, TESTARGS (passed to
# tests/run.sh), BENCHARGS (passed to the benchmark, e.g. "--max-mib 16 --reps 5"),
# CUDA_HOME (/usr/local/cuda), CUDA_ARCH (sm_90), CUDABENCHARGS (passed to bench_cuda),
# MATMULARGS / DISPATCHARGS / RNGARGS (passed to bench_matmul / bench_dispatch /
# bench_rng in bench-ops and bench-smoke, e.g. "--quick"), PLANNERARGS (bench_planner).
#
# Local GEMM: dtensor.h calls BLIS (bli_sgemm/bli_dgemm from <blis.h>, -lblis)
# unless DTENSOR_BLAS says otherwise: -DDTENSOR_BLAS=cblas (LDLIBS="-lopenblas -lm",
# MKL, libsci, -lblas), f77 (Fortran sgemm_/dgemm_), none (= DTENSOR_NO_BLIS, the
# loops, link nothing). blis.h's inline helpers call round() etc., so -lm must
# follow -lblis (an -O0 link fails without it).
#   make test-blas            tests/test_ops_kernels.c and test_ops_matmul.c against every
#                             BLAS installed (BLIS, OpenBLAS cblas + f77, reference cblas + f77,
#                             none, weak symbols with and without a BLAS), 1 and 2 ranks, Open MPI,
#                             into build/blas/<variant>/ (tests/run_blas.sh)
#   make bench-blas           dt_matmul vs the same BLAS's dgemm called directly, each BLAS,
#                             NP=2 ranks: bench/results/blas-openmpi.txt

MPI      ?= mpich
NP       ?= 4
CFLAGS   ?= -O2 -g
LDLIBS   ?= -lblis -lm
TESTARGS ?=
BENCHARGS ?=
MATMULARGS ?=
DISPATCHARGS ?=
RNGARGS ?=
PLANNERARGS ?=
ARGS     ?=
CUDA_HOME ?= /usr/local/cuda
CUDA_ARCH ?= sm_90
CUDABENCHARGS ?=
NVCC     ?= $(firstword $(wildcard $(CUDA_HOME)/bin/nvcc) $(shell command -v nvcc 2>/dev/null))

MPICC   = mpicc.$(MPI)
MPIEXEC = mpiexec.$(MPI)
ifeq ($(MPI),openmpi)
MPIEXEC += --allow-run-as-root --oversubscribe
endif

BUILD   = build/$(MPI)
WARN    = -Wall -Wextra -pedantic
STRICT  = -Wall -Wextra -Werror -pedantic
DEPS_PKGS = mpich libmpich-dev openmpi-bin libopenmpi-dev libblis-dev valgrind \
            libscalapack-mpich-dev libscalapack-openmpi-dev librandom123-dev python3-numpy \
            libfftw3-dev libfftw3-mpi-dev python3-mpi4py gnuplot-nox \
            clang libclang-rt-14-dev clang-tidy cppcheck cmake pkg-config
# ScaLAPACK for bench/matmul.c, built for the same MPI as the bench
SCALAPACK = -lscalapack-$(MPI)
# one core per rank: BLIS (Debian installs its OpenMP build first) and OpenMP single-threaded
BENCH_ENV = BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1
# what the programs depend on
HDR = dtensor.h
# the op benchmarks run at 2 ranks (one per core on the 2-core reference
# machine) unless NP is given: make bench-ops NP=4
OPS_NP = $(if $(filter command line environment,$(origin NP)),$(NP),2)

EXAMPLES = $(patsubst examples/%.c,$(BUILD)/%,$(wildcard examples/*.c))
# per-example flags: EXFLAGS_NAME, EXLIBS_NAME. pencil compares with FFTW-MPI's
# transpose, which Debian builds against Open MPI only (libfftw3-mpi-dev):
# under MPICH, or without the package, pencil runs its dtensor part alone.
ifeq ($(MPI)$(wildcard /usr/include/fftw3-mpi.h),openmpi/usr/include/fftw3-mpi.h)
EXFLAGS_pencil = -DHAVE_FFTW_MPI
EXLIBS_pencil  = -lfftw3_mpi -lfftw3
endif
# scalapack calls ScaLAPACK (pdgemm, pdgetrf/pdgetrs) on the tensors' own
# buffers: Debian's libscalapack-mpich-dev / libscalapack-openmpi-dev (make deps)
EXLIBS_scalapack = $(SCALAPACK)

.PHONY: fuzz fuzz-build all deps examples demo test test-full bench bench-quick bench-deps bench-redistribute bench-ops bench-rng bench-halo bench-stencil bench-strided bench-smoke bench-results strict lint clean \
        bench-planner bench-planner-callgrind \
        cuda cuda-nvcc cuda-strict test-cuda bench-cuda install uninstall test-install test-abi test-threads
all: examples

# Idempotent: does nothing (quickly) when every package is already installed.
deps:
	@if [ "$$(dpkg -s $(DEPS_PKGS) 2>/dev/null | grep -c '^Status: install ok installed')" = "$(words $(DEPS_PKGS))" ]; then \
	  echo "deps: all installed ($(DEPS_PKGS))"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update && apt-get install -y $(DEPS_PKGS); \
	else \
	  echo "deps: not root; run:"; \
	  echo "  sudo apt-get update && sudo apt-get install -y $(DEPS_PKGS)"; \
	  exit 1; \
	fi

examples: $(EXAMPLES)

$(BUILD)/%: examples/%.c $(HDR)
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(WARN) $(CFLAGS) $(EXFLAGS_$*) -I. -o $@ $< $(EXLIBS_$*) $(LDLIBS)

# one example: make run-montecarlo NP=3 ARGS="--seed 7" (one core per rank)
run-%: $(BUILD)/%
	$(BENCH_ENV) $(MPIEXEC) -n $(NP) ./$(BUILD)/$* $(ARGS)

# the examples at NP ranks and a short report (examples/demo.sh; each
# example's whole output goes to build/$(MPI)/demo/NAME.log). About 10 s at
# 4 ranks on 2 cores, under MPICH too (its oversubscribed busy-polling hurts
# the long test runs, not these short programs).
demo: examples
	@$(BENCH_ENV) bash examples/demo.sh --mpi $(MPI) --np $(NP) --bin $(BUILD)

# the README's test command: every test at 1 2 3 ranks, --quick sizes,
# parallel builds (about 2.5 minutes on 2 cores); test-full: the 1-8-rank
# sweep CI runs. Under Open MPI unless MPI is given on the command line:
# 3 ranks on 2 cores is oversubscribed, where MPICH busy-polls (its 3-rank
# runs alone take ~4 minutes there).
TEST_MPI = $(if $(filter command line environment,$(origin MPI)),$(MPI),openmpi)
test:
	bash tests/run.sh $(TEST_MPI) --smoke $(TESTARGS)

test-full:
	bash tests/run.sh $(MPI) $(TESTARGS)

# the README's first program, extracted, compiled with -Werror -pedantic and
# run at 2 ranks (MPICH); CI runs it in its strict phase
.PHONY: test-readme
test-readme:
	bash tests/readme_snippet.sh

$(BUILD)/bench_redistribute: bench/redistribute.c bench/bench.h $(HDR)
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(WARN) -O2 -I. -o $@ $< $(LDLIBS)

bench-redistribute: $(BUILD)/bench_redistribute
	$(MPIEXEC) -n $(NP) ./$(BUILD)/bench_redistribute $(BENCHARGS)

# the harness (bench/bench.sh -h): every benchmark against its peer under
# Open MPI at BENCH_NP ranks (default 4), whatever MPI= says; it builds what
# it runs. bench-deps installs the peers: Debian packages as root, and torch
# from PyPI into build/pyenv (a venv over Debian's python3, so it sees
# Debian's numpy and mpi4py); if torch does not install, make bench says so
# and carries on without it.
BENCH_NP ?= 4
TORCH ?= torch==2.15.0
BENCH_PKGS = $(sort $(DEPS_PKGS) python3-mpi4py python3-venv gnuplot-nox)
bench:
	bash bench/bench.sh --np $(BENCH_NP) $(BENCHARGS)

bench-quick:
	bash bench/bench.sh --quick --np $(BENCH_NP) $(BENCHARGS)

bench-deps:
	@$(MAKE) --no-print-directory deps DEPS_PKGS="$(BENCH_PKGS)"
	@if build/pyenv/bin/python -c "import torch" 2>/dev/null; then \
	  echo "bench-deps: torch $$(build/pyenv/bin/python -c 'import torch; print(torch.__version__)') in build/pyenv"; \
	else \
	  /usr/bin/python3 -m venv --system-site-packages build/pyenv && \
	  build/pyenv/bin/pip install -q "$(TORCH)" || \
	  echo "bench-deps: torch did not install; make bench will run without it"; \
	fi

# bench_matmul links -lblis before ScaLAPACK's own libblas.so.3 dependency, so
# the dgemm_ that pdgemm calls binds to libblis.so (the bench prints where
# dgemm_ and bli_dgemm come from and fails if they differ).
$(BUILD)/bench_matmul: bench/matmul.c bench/bench.h bench/scalapack.h $(HDR)
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(WARN) -O2 -g -I. -o $@ $< $(SCALAPACK) $(LDLIBS)

# ScaLAPACK pdgemr2d vs dt_tensor_redistribute (rows / cols / 2-D blocks of one
# F64 matrix on one mesh); --csv FILE appends the harness's raw rows
$(BUILD)/bench_pdgemr2d: bench/pdgemr2d.c bench/bench.h bench/scalapack.h $(HDR)
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(WARN) -O2 -g -I. -o $@ $< $(SCALAPACK) $(LDLIBS)

# FFTW-MPI's transpose vs S(0) -> S(1): always Open MPI (Debian builds
# libfftw3-mpi-dev against Open MPI only), whatever MPI is
build/openmpi/bench_fftw_transpose: bench/fftw_transpose.c bench/bench.h $(HDR)
	@mkdir -p build/openmpi
	mpicc.openmpi -std=c99 $(WARN) -O2 -g -I. -o $@ $< -lfftw3_mpi -lfftw3 $(LDLIBS)

$(BUILD)/bench_dispatch: bench/dispatch.c bench/bench.h $(HDR)
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(WARN) -O2 -g -I. -o $@ $< $(LDLIBS)

# Random123 (<Random123/philox.h>, librandom123-dev: header only) is the peer
$(BUILD)/bench_rng: bench/rng.c bench/bench.h $(HDR)
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(WARN) -O2 -g -I. -o $@ $< $(LDLIBS)

# halo exchange / stencil step vs hand-written MPI (MPI_Type_vector + Isend/Irecv)
$(BUILD)/bench_halo: bench/halo.c bench/bench.h bench/ghosted.h $(HDR)
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(WARN) -O2 -g -I. -o $@ $< $(LDLIBS)

# a 5-point step on the user's ghosted array: in-place halo vs hand-written MPI faces
$(BUILD)/bench_stencil: bench/stencil.c bench/bench.h bench/ghosted.h $(HDR)
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(WARN) -O2 -g -I. -o $@ $< $(LDLIBS)

# a padded array redistributed through its strides vs contiguous, staged and MPI_Alltoallw
$(BUILD)/bench_strided: bench/strided.c bench/bench.h $(HDR)
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(WARN) -O2 -g -I. -o $@ $< $(LDLIBS)

# the planner at scale (bench/planner.c): one process plays one rank of a
# simulated mesh through a counting dt_comm_custom backend, so it needs no
# MPI (DTENSOR_NO_MPI, gcc) and is built with the strict flags; it exits
# non-zero when a transition without Partial does not receive exactly its
# lower bound or the simulated ranks choose different op strategies
build/bench_planner: bench/planner.c $(HDR)
	@mkdir -p build
	gcc -std=c99 $(STRICT) -O2 -g -I. -o $@ $< $(LDLIBS)

bench-planner: build/bench_planner
	./build/bench_planner $(PLANNERARGS)

# instructions per call of the same loops (valgrind): machine-independent scaling
bench-planner-callgrind: build/bench_planner
	bash bench/planner_callgrind.sh build/bench_planner $(PLANNERARGS)

# LD_PRELOAD shim forcing BLIS's kernel set (DT_BLIS_ARCH=skx ...); see the file
build/libblis_arch.so: bench/blis_arch.c
	@mkdir -p build
	gcc -std=c99 $(WARN) -O2 -shared -fPIC -o $@ $< -ldl

bench-ops: $(BUILD)/bench_matmul $(BUILD)/bench_dispatch
	$(BENCH_ENV) $(MPIEXEC) -n $(OPS_NP) ./$(BUILD)/bench_matmul $(MATMULARGS)
	$(BENCH_ENV) $(MPIEXEC) -n $(OPS_NP) ./$(BUILD)/bench_dispatch $(DISPATCHARGS)

# the local GEMM on every BLAS installed (tests/run_blas.sh -h; Debian 12:
# libblis-dev, libopenblas-dev, libblas-dev); DT_TEST_LOG gets "test-blas: N passed, N failed"
# The reference BLAS (which carries CBLAS) is small and already a ScaLAPACK
# dependency; OpenBLAS (12 MB download, 100 MB installed, and it becomes the
# system's libblas.so.3 alternative) comes with bench-deps only: without it
# test-blas skips its two variants, by name.
DEPS_PKGS += libblas-dev
BENCH_PKGS += libopenblas-dev
.PHONY: test-blas bench-blas
test-blas:
	bash tests/run_blas.sh --mpi openmpi --np "1 2"

# dt_matmul against the same BLAS called directly, per BLAS, at OPS_NP ranks (default 2)
BLASARGS ?=
bench-blas:
	@mkdir -p bench/results
	@printf '# make bench-blas (bash tests/run_blas.sh --bench --mpi openmpi --np %s), %s, %s\n\n' "$(OPS_NP)" \
	  "$$(date -u +%Y-%m-%d)" "$$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" > build/blas-bench.txt
	bash tests/run_blas.sh --bench --mpi openmpi --np $(OPS_NP) --out build/blas-bench.txt --args "$(BLASARGS)"
	cp build/blas-bench.txt bench/results/blas-openmpi.txt
	@cat bench/results/blas-openmpi.txt

# the random fills on one rank against Random123 (timings, then instructions
# per element under callgrind) into bench/results/rng.txt, which is printed;
# the same as `make bench-results` writes for rng
bench-rng: $(BUILD)/bench_rng
	bash bench/run.sh --mpi $(MPI) --only rng --bin $(BUILD)

# dt_halo_exchange / dt_stencil_apply against hand-written MPI on every 2-D
# mesh of OPS_NP ranks (default 2) into bench/results/halo-<mpi>-np<N>.txt
bench-halo: $(BUILD)/bench_halo
	bash bench/run.sh --mpi $(MPI) --np $(OPS_NP) --only halo --bin $(BUILD)

# the same for the in-place halo on a ghosted array:
# bench/results/stencil-<mpi>-np<N>.txt
bench-stencil: $(BUILD)/bench_stencil
	bash bench/run.sh --mpi $(MPI) --np $(OPS_NP) --only stencil --bin $(BUILD)

# a padded array's redistribution: bench/results/strided-<mpi>-np<N>.txt
bench-strided: $(BUILD)/bench_strided
	bash bench/run.sh --mpi $(MPI) --np $(OPS_NP) --only strided --bin $(BUILD)

# CI: both op benchmarks at small sizes, 2 ranks, and the random fills at
# small sizes on one rank, and the halo bench at small sizes, 2 ranks, and the
# simulated planner up to 4096 ranks (about 2 s); they exit non-zero on a
# wrong result (bench_halo: ghosts or stencil outputs not equal to the
# hand-written MPI code's; bench_rng: values not identical to Random123's;
# bench_matmul also if ScaLAPACK's BLAS is not dt_matmul's BLIS;
# bench_planner: a transition without Partial not receiving exactly its
# lower bound, or simulated ranks choosing different strategies)
bench-smoke: $(BUILD)/bench_rng $(BUILD)/bench_halo $(BUILD)/bench_stencil $(BUILD)/bench_strided build/bench_planner
	$(MAKE) bench-ops NP=2 MATMULARGS=--quick DISPATCHARGS=--quick
	$(MPIEXEC) -n 1 ./$(BUILD)/bench_rng --quick $(RNGARGS)
	$(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/bench_halo --quick
	$(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/bench_stencil --quick
	$(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/bench_strided --quick
	./build/bench_planner --quick

# every benchmark, results files with the command at the top (bench/run.sh -h)
bench-results: $(BUILD)/bench_redistribute $(BUILD)/bench_matmul $(BUILD)/bench_dispatch $(BUILD)/bench_rng $(BUILD)/bench_halo build/libblis_arch.so
	bash bench/run.sh --mpi $(MPI) --np $(OPS_NP)

# One translation unit with the implementation, one with the declarations
# only; every compiler the design promises, warnings as errors, at -O0 and
# -O2 (some warnings, e.g. -Warray-bounds, only appear when optimising).
# nvcc: its own front-end warnings are errors and the host compiler gets
# -Wall -Wextra -Werror; -pedantic cannot go through -Xcompiler (nvcc's
# generated code has "# 1" line markers, which -pedantic rejects), so nvcc
# emits the preprocessed host code (-cuda) and g++ compiles that with
# -pedantic: C++ pedantry is checked, preprocessor line markers are not.
# BLIS: every build includes <blis.h> (Debian: /usr/include/x86_64-linux-gnu,
# a system include dir, so -Wall -Wextra -pedantic say nothing about blis.h
# itself; checked under gcc -std=c99/c11, g++ -std=c++17 and nvcc 13 + g++
# -pedantic); two more builds check -DDTENSOR_NO_BLIS (C99 without MPI, run,
# and C++17), which links without -lblis.
SB = build/strict
NVSTRICT = -std=c++17 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror
MPICH_INC = $(filter -I%,$(shell mpicc.mpich -show 2>/dev/null))
strict:
	python3 tests/lint/layering.py dtensor.h dtensor_cuda.h
	@mkdir -p $(SB)
	@printf '#define DTENSOR_IMPLEMENTATION\n#include "dtensor.h"\nint main(void) { return dt_status_string(DT_OK) == NULL; }\n' > $(SB)/impl.c
	@printf '#include "dtensor.h"\nint dt_strict_decl_only(void);\nint dt_strict_decl_only(void) { return (int)sizeof(dt_tensor_desc); }\n' > $(SB)/decl.c
	@cp $(SB)/impl.c $(SB)/impl.cpp; cp $(SB)/impl.c $(SB)/impl.cu; cp $(SB)/decl.c $(SB)/decl.cpp
	mpicc.mpich  -std=c99   $(STRICT) -I. -o $(SB)/c99   $(SB)/impl.c $(LDLIBS)
	mpicc.mpich  -std=c99   $(STRICT) -O2 -I. -c -o $(SB)/c99_O2.o $(SB)/impl.c
	mpicc.mpich  -std=c99   $(STRICT) -O3 -march=x86-64-v4 -I. -c -o $(SB)/c99_O3.o $(SB)/impl.c
	mpicc.mpich  -std=c99   $(STRICT) -O2 -DDTENSOR_STATIC -I. -c -o $(SB)/c99_static.o $(SB)/impl.c
	mpicc.mpich  -std=c99   $(STRICT) -I. -c -o $(SB)/decl99.o $(SB)/decl.c
	mpicc.mpich  -std=c11   $(STRICT) -O2 -I. -o $(SB)/c11   $(SB)/impl.c $(LDLIBS)
	mpicxx.mpich -std=c++17 $(STRICT) -O2 -I. -o $(SB)/cxx17 $(SB)/impl.cpp $(LDLIBS)
	mpicxx.mpich -std=c++17 $(STRICT) -I. -c -o $(SB)/declxx.o $(SB)/decl.cpp
	gcc -std=c99 $(STRICT) -O2 -DDTENSOR_NO_MPI -I. -o $(SB)/nompi $(SB)/impl.c $(LDLIBS)
	./$(SB)/nompi
	gcc -std=c99 $(STRICT) -O2 -DDTENSOR_NO_MPI -DDTENSOR_NO_BLIS -I. -o $(SB)/noblis $(SB)/impl.c -lm
	./$(SB)/noblis
	mpicxx.mpich -std=c++17 $(STRICT) -O2 -DDTENSOR_NO_BLIS -I. -c -o $(SB)/cxx17_noblis.o $(SB)/impl.cpp
	@# examples/heat2d.c, bench/halo.c and bench/stencil.c as C99 (-O2 and -O3 -march=x86-64-v4) and as C++17
	for f in examples/heat2d.c bench/halo.c bench/stencil.c; do b=$$(basename $$f .c); set -e; \
	  mpicc.mpich  -std=c99   $(STRICT) -O2 -I. -o $(SB)/$$b $$f $(LDLIBS); \
	  mpicc.mpich  -std=c99   $(STRICT) -O3 -march=x86-64-v4 -I. -c -o $(SB)/$${b}_O3.o $$f; \
	  mpicxx.mpich -std=c++17 $(STRICT) -O2 -I. -x c++ -c -o $(SB)/$${b}_xx.o $$f; done
	@if [ -z "$(NVCC)" ]; then echo "strict: nvcc not found, skipping the CUDA builds"; else \
	  set -ex; \
	  $(NVCC) $(NVSTRICT) -DDTENSOR_NO_MPI -I. -cuda -o $(SB)/cu_nompi.ii $(SB)/impl.cu; \
	  g++ -std=c++17 $(STRICT) -c -o $(SB)/cu_nompi.o $(SB)/cu_nompi.ii; \
	  $(NVCC) $(NVSTRICT) $(MPICH_INC) -I. -cuda -o $(SB)/cu_mpi.ii $(SB)/impl.cu; \
	  g++ -std=c++17 $(STRICT) -c -o $(SB)/cu_mpi.o $(SB)/cu_mpi.ii; \
	fi
	@echo "strict: OK"

# Static analysis: cppcheck and clang-tidy (its checks and the reason for each
# disabled one: .clang-tidy; cppcheck's suppressions: tests/lint/cppcheck.supp,
# single false positives inline as /* cppcheck-suppress ID ; reason */, and
# clang-tidy's as /* NOLINTNEXTLINE(check): reason */). Both run on dtensor.h
# itself as the main file (-x c -DDTENSOR_IMPLEMENTATION): clang's analyzer
# only follows functions of the main file, not of included headers. Two
# configurations: MPICH's headers + BLIS, and -DDTENSOR_NO_MPI. Any finding
# fails; with DT_TEST_LOG set, appends "lint: N passed, N failed" (5 checks: the
# first is the layering rule of dtensor.h's map, tests/lint/layering.py).
# About 3-4 minutes on 2 cores (clang-tidy's analyzer is nearly all of it).
LINT_TIDY = clang-tidy$(if $(shell command -v clang-tidy-14 2>/dev/null),-14)
LINT_CPPCHECK = cppcheck --enable=warning,performance,portability,style --std=c99 --language=c -I. \
                --inline-suppr --suppressions-list=tests/lint/cppcheck.supp --error-exitcode=1 --quiet \
                --template='{file}:{line}:{column}: {severity}: {message} [{id}]'
lint:
	@p=0; f=0; \
	run() { echo "lint: $$*"; if "$$@"; then p=$$((p + 1)); else f=$$((f + 1)); fi; }; \
	run python3 tests/lint/layering.py --report dtensor.h dtensor_cuda.h; \
	run $(LINT_CPPCHECK) -DDTENSOR_IMPLEMENTATION dtensor.h; \
	run $(LINT_CPPCHECK) -DDTENSOR_IMPLEMENTATION -DDTENSOR_NO_MPI dtensor.h; \
	run $(LINT_TIDY) --quiet dtensor.h -- -x c -std=c99 -DDTENSOR_IMPLEMENTATION -I. $(MPICH_INC); \
	run $(LINT_TIDY) --quiet dtensor.h -- -x c -std=c99 -DDTENSOR_IMPLEMENTATION -DDTENSOR_NO_MPI -I.; \
	echo "lint: $$p passed, $$f failed"; \
	if [ -n "$$DT_TEST_LOG" ]; then echo "lint: $$p passed, $$f failed" >>"$$DT_TEST_LOG"; fi; \
	[ "$$f" -eq 0 ]

# ---------------------------------------------------------------- install
# make install PREFIX=... DESTDIR=...: the headers, pkg-config files and the
# CMake package (packaging/). The version comes from dtensor.h's
# DTENSOR_VERSION_MAJOR/MINOR/PATCH lines, nowhere else. dtensor.pc gives
# -I and BLIS (-lblis -lm; variable blas_libs) and is used with mpicc, which
# adds MPI's flags; dtensor-mpich.pc / dtensor-openmpi.pc add MPICH's / Open
# MPI's own .pc for a plain compiler. dtensor-config.cmake: options
# DTENSOR_NO_MPI and DTENSOR_BLAS=blis|none (packaging/dtensor-target.cmake).
PREFIX  ?= /usr/local
DESTDIR ?=
DT_VERSION := $(shell awk '/^\#define DTENSOR_VERSION_(MAJOR|MINOR|PATCH) /{v = v sep $$3; sep = "."} END {print v}' dtensor.h)
INST_INC   = $(DESTDIR)$(PREFIX)/include
INST_PC    = $(DESTDIR)$(PREFIX)/lib/pkgconfig
INST_CMAKE = $(DESTDIR)$(PREFIX)/lib/cmake/dtensor
CMAKE_PKG  = dtensor-config.cmake dtensor-config-version.cmake dtensor-target.cmake
PC_SED     = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(DT_VERSION)|g'
install:
	@test -n "$(DT_VERSION)" || { echo "install: no version in dtensor.h"; exit 1; }
	install -d $(INST_INC) $(INST_PC) $(INST_CMAKE)
	install -m 644 dtensor.h dtensor_cuda.h $(INST_INC)/
	$(PC_SED) packaging/dtensor.pc.in > $(INST_PC)/dtensor.pc
	$(PC_SED) -e 's|@MPI@|mpich|g' -e 's|@MPIPC@|mpich|g' packaging/dtensor-mpi.pc.in > $(INST_PC)/dtensor-mpich.pc
	$(PC_SED) -e 's|@MPI@|openmpi|g' -e 's|@MPIPC@|ompi-c|g' packaging/dtensor-mpi.pc.in > $(INST_PC)/dtensor-openmpi.pc
	install -m 644 $(addprefix packaging/,$(CMAKE_PKG)) $(INST_CMAKE)/
	@echo "install: dtensor $(DT_VERSION) into $(DESTDIR)$(PREFIX)"

uninstall:
	rm -f $(INST_INC)/dtensor.h $(INST_INC)/dtensor_cuda.h $(addprefix $(INST_PC)/,dtensor.pc dtensor-mpich.pc dtensor-openmpi.pc) \
	      $(addprefix $(INST_CMAKE)/,$(CMAKE_PKG))
	-rmdir $(INST_CMAKE)

# tests/install/run.sh: make install into a temporary prefix (and a DESTDIR
# staging check), then tests/install/consumer.c built through pkg-config
# (mpicc.mpich + dtensor.pc; gcc + dtensor-mpich.pc), find_package(dtensor),
# add_subdirectory and FetchContent of this directory, each run at 2 ranks
# under MPICH. Last line "install: N passed, N failed".
test-install:
	bash tests/install/run.sh

# tests/abi/run.sh: tests/abi/user.c linked against tests/abi/impl.c: with the
# same options it links and runs; with -DDT_MAX_DIMS=12, -DDT_MAX_MESH_DIMS=6
# or -DDTENSOR_NO_MPI the link must fail on the dtensor_abi_mismatch_check_...
# symbol. Last line "abi: N passed, N failed".
test-abi:
	bash tests/abi/run.sh $(MPI)

# tests/test_threads.c (dt_comm_mpi before MPI_Init, after MPI_Finalize, and
# from a second thread under MPI_THREAD_SINGLE / FUNNELED / SERIALIZED) at 1
# and 2 ranks under $(MPI)
test-threads: $(BUILD)/test_threads
	@set -e; for np in 1 2; do for l in single funneled serialized; do \
	  out=$$($(BENCH_ENV) $(MPIEXEC) -n $$np ./$(BUILD)/test_threads --level $$l 2>&1) || { echo "$$out"; exit 1; }; \
	  echo "$$out" | grep '^PASS' || { echo "$$out"; exit 1; }; done; done

$(BUILD)/test_threads: tests/test_threads.c $(HDR)
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(STRICT) -O1 -g -I. -o $@ $< $(LDLIBS)

# ---------------------------------------------------------------- CUDA
# dtensor_cuda.h (CUDA tensors, the NCCL backend). `make cuda` needs nvcc
# and the libraries, not a GPU: it builds every CUDA program into
# build/cuda/ and runs dtensor_cuda.h's strictness builds. test-cuda and
# bench-cuda run them, on a GPU. Everything is compiled with NVFLAGS:
# nvcc's own warnings and the host compiler's -Wall -Wextra are errors
# (NVSTRICT, as in `strict`), for CUDA_ARCH. The programs are built against
# $(MPI) (the -I, -L and -l flags of `mpicc.$(MPI) -show`; its -Wl flags are
# gcc's, not nvcc's) and link NCCL, cuBLAS, cuRAND and the CUDA runtime,
# with an rpath to $(CUDA_HOME)/lib64 so that they run without
# LD_LIBRARY_PATH. build/cuda/ holds one MPI's builds: `make clean` when
# switching MPI.
# Programs built when their source exists (a checkout without CUDA sources
# still builds the rest):
#   tests/test_nccl.cu                  -> build/cuda/test_nccl
#   tests/test_cuda_host.cu             -> build/cuda/test_cuda_host
#   tests/test_device.c (-x cu -DDT_TEST_CUDA) -> build/cuda/test_device
#   bench/cuda.cu                       -> build/cuda/bench_cuda
#   examples/NAME.cu                    -> build/cuda/NAME
NVFLAGS    = $(NVSTRICT) -arch=$(CUDA_ARCH) -O2 -g
CUDA_LIBS  = -L$(CUDA_HOME)/lib64 -Xlinker -rpath=$(CUDA_HOME)/lib64 -lnccl -lcublas -lcurand -lcudart
MPI_SHOW   = $(shell mpicc.$(MPI) -show 2>/dev/null)
CU_MPI_INC = $(filter -I%,$(MPI_SHOW))
CU_MPI_LIB = $(filter -L% -l%,$(MPI_SHOW))
CB         = build/cuda
CUDA_HDR   = dtensor.h dtensor_cuda.h
CU_BUILD   = $(NVCC) $(NVFLAGS) -I. $(CU_MPI_INC)
CU_LINK    = $(CUDA_LIBS) $(CU_MPI_LIB) $(LDLIBS)
CUDA_PROGS = $(CB)/test_nccl \
             $(if $(wildcard tests/test_cuda_host.cu),$(CB)/test_cuda_host) \
             $(if $(wildcard tests/test_cuda.cu),$(CB)/test_cuda) \
             $(if $(wildcard tests/test_device.c),$(CB)/test_device) \
             $(if $(wildcard bench/cuda.cu),$(CB)/bench_cuda) \
             $(patsubst examples/%.cu,$(CB)/%,$(wildcard examples/*.cu))

cuda: cuda-nvcc cuda-strict $(CUDA_PROGS)
	@echo "cuda: OK ($(notdir $(CUDA_PROGS)))"

# the toolkit is promised wherever this runs: no nvcc is an error, not a skip
cuda-nvcc:
	@if [ -z "$(NVCC)" ]; then echo "cuda: nvcc not found (CUDA_HOME=$(CUDA_HOME), PATH)"; exit 1; fi

$(CB)/%: tests/%.cu tests/dt_test.h $(CUDA_HDR) | cuda-nvcc
	@mkdir -p $(CB)
	$(CU_BUILD) -o $@ $< $(CU_LINK)

# the lead's device test: the C test compiled as CUDA
$(CB)/test_device: tests/test_device.c tests/dt_test.h $(CUDA_HDR) | cuda-nvcc
	@mkdir -p $(CB)
	$(CU_BUILD) -x cu -DDT_TEST_CUDA -o $@ $< $(CU_LINK)

$(CB)/bench_cuda: bench/cuda.cu bench/bench.h $(CUDA_HDR) | cuda-nvcc
	@mkdir -p $(CB)
	$(CU_BUILD) -o $@ $< $(CU_LINK)

$(CB)/%: examples/%.cu $(CUDA_HDR) | cuda-nvcc
	@mkdir -p $(CB)
	$(CU_BUILD) -o $@ $< $(CU_LINK)

# dtensor_cuda.h as `strict` checks dtensor.h: one translation unit with the
# implementation (without MPI: linked and run; with MPICH: compiled), one
# with the declarations only, then nvcc's preprocessed host code (-cuda)
# through g++ -pedantic (see `strict` for why -pedantic cannot go through
# -Xcompiler). Kernels become host-side launch stubs in that output, so the
# pedantic pass sees the host half of the device code too.
cuda-strict: | cuda-nvcc
	@mkdir -p $(CB)/strict
	@printf '#define DTENSOR_IMPLEMENTATION\n#include "dtensor_cuda.h"\nint main(void) { return dt_status_string(DT_OK) == NULL; }\n' > $(CB)/strict/impl.cu
	@printf '#include "dtensor_cuda.h"\nint dt_strict_decl_only(void);\nint dt_strict_decl_only(void) { return dt_comm_nccl(NULL, dt_cuda_stream(), NULL) == DT_OK; }\n' > $(CB)/strict/decl.cu
	$(NVCC) $(NVFLAGS) -DDTENSOR_NO_MPI -I. -o $(CB)/strict/nompi $(CB)/strict/impl.cu $(CUDA_LIBS) $(LDLIBS)
	./$(CB)/strict/nompi
	$(NVCC) $(NVFLAGS) $(MPICH_INC) -I. -c -o $(CB)/strict/mpi.o $(CB)/strict/impl.cu
	$(NVCC) $(NVFLAGS) $(MPICH_INC) -I. -c -o $(CB)/strict/decl.o $(CB)/strict/decl.cu
	$(NVCC) $(NVFLAGS) -DDTENSOR_NO_MPI -I. -cuda -o $(CB)/strict/nompi.ii $(CB)/strict/impl.cu
	g++ -std=c++17 $(STRICT) -c -o $(CB)/strict/nompi_ii.o $(CB)/strict/nompi.ii
	$(NVCC) $(NVFLAGS) $(MPICH_INC) -I. -cuda -o $(CB)/strict/mpi.ii $(CB)/strict/impl.cu
	g++ -std=c++17 $(STRICT) -c -o $(CB)/strict/mpi_ii.o $(CB)/strict/mpi.ii
	$(NVCC) $(NVFLAGS) $(MPICH_INC) -I. -cuda -o $(CB)/strict/decl.ii $(CB)/strict/decl.cu
	g++ -std=c++17 $(STRICT) -c -o $(CB)/strict/decl_ii.o $(CB)/strict/decl.ii
	@echo "cuda-strict: OK"

# on a GPU machine: tests/run_cuda.sh runs what `make cuda` built (test_nccl
# at 1 rank and, with 2+ GPUs, one rank per GPU up to 4; test_cuda_host;
# test_device at 1 rank over NCCL and at 2 3 4 ranks over $(MPI) staging on
# one GPU; bench_cuda once). Exit 77 ("no device, SKIPPED") is a failure
# here. Last line: N passed, N failed.
test-cuda: cuda
	CUDABENCHARGS='$(CUDABENCHARGS)' bash tests/run_cuda.sh $(MPI)

bench-cuda: cuda-nvcc
	@if [ ! -e bench/cuda.cu ]; then echo "bench-cuda: no bench/cuda.cu in this tree"; exit 1; fi
	$(MAKE) $(CB)/bench_cuda
	./$(CB)/bench_cuda $(CUDABENCHARGS)

# libFuzzer targets (no MPI, no BLIS: one process simulates rank r of N)
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   ?= -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                -DDTENSOR_NO_MPI -DDTENSOR_NO_BLIS
FUZZ_TARGETS  = $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

build/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_sim.h $(HDR)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) $< -o $@ -lm

fuzz-build: $(FUZZ_TARGETS)

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

clean:
	rm -rf build
