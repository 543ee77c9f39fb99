# mk/bench.mk -- the benchmarks (bench/README.md). Each compares dtensor.h
# with the raw MPI collective for the same bytes and with named peers, side
# by side in one run; each checks its results and exits non-zero on a wrong
# one. Output goes to build/bench/; `make bench-publish` copies a report,
# dated and stamped with the commit, into bench/results/.

BENCHARGS    ?=
MATMULARGS   ?=
DISPATCHARGS ?=
RNGARGS      ?=
PLANNERARGS  ?=
BLASARGS     ?=
PUBLISH      ?=
BENCH_NP     ?= 4
TORCH        ?= torch==2.15.0
SCALAPACK     = -lscalapack-$(MPI)
# the op benchmarks run at 2 ranks (one per core on the 2-core reference
# machine) unless NP is given on the command line: make bench-ops NP=4
OPS_NP = $(if $(filter command line environment,$(origin NP)),$(NP),2)

# bench/NAME.c -> build/$(MPI)/bench_NAME, -O2, each compiling the
# implementation itself (some read private names). Extra libraries:
# BLIBS_NAME. bench_matmul links -lblis before ScaLAPACK's own libblas.so.3
# dependency, so the dgemm_ that pdgemm calls binds to libblis.so (the bench
# prints where dgemm_ and bli_dgemm come from and fails if they differ).
BLIBS_matmul   = $(SCALAPACK)
BLIBS_pdgemr2d = $(SCALAPACK)
$(BUILD)/bench_%: bench/%.c bench/bench.h bench/ghosted.h bench/scalapack.h $(HDR)
	@mkdir -p $(@D)
	$(MPICC) -std=c99 $(WARN) -O2 -g -I. -o $@ $< $(BLIBS_$*) $(LDLIBS)

# FFTW-MPI's transpose vs S(0) -> S(1): always Open MPI (Debian builds
# libfftw3-mpi-dev against Open MPI only), whatever MPI is
build/openmpi/bench_fftw_transpose: bench/fftw_transpose.c bench/bench.h $(HDR)
	@mkdir -p $(@D)
	mpicc.openmpi -std=c99 $(WARN) -O2 -g -I. -o $@ $< -lfftw3_mpi -lfftw3 $(LDLIBS)

# the planner at scale: one process plays one rank of a simulated mesh
# through a counting dt_comm_custom backend (no MPI, gcc, strict flags)
build/bench_planner: bench/planner.c $(HDR)
	@mkdir -p $(@D)
	gcc -std=c99 $(STRICT) -O2 -g -I. -o $@ $< $(LDLIBS)

# LD_PRELOAD shim forcing BLIS's kernel set (DT_BLIS_ARCH=skx ...); see the file
build/libblis_arch.so: bench/blis_arch.c
	@mkdir -p $(@D)
	gcc -std=c99 $(WARN) -O2 -shared -fPIC -o $@ $< -ldl

.PHONY: bench bench-quick bench-deps bench-redistribute bench-ops bench-blas bench-rng bench-halo bench-stencil \
        bench-strided bench-smoke bench-results bench-planner bench-planner-callgrind bench-publish \
        bench-transpose-copy bench-prk bench-prk-real bench-prk-ports

bench: ## every benchmark against its peer (bench/bench.sh), Open MPI, BENCH_NP ranks (4), into build/bench/harness/
	bash bench/bench.sh --np $(BENCH_NP) $(BENCHARGS)

bench-quick: ## the same at small sizes (< 5 min)
	bash bench/bench.sh --quick --np $(BENCH_NP) $(BENCHARGS)

bench-deps: ## the peers: Debian packages (mk/deps.sh --bench) and torch into build/pyenv
	@bash mk/deps.sh --bench
	@if build/pyenv/bin/python -c "import torch" 2>/dev/null; then \
	  echo "bench-deps: torch $$(build/pyenv/bin/python -c 'import torch; print(torch.__version__)') in build/pyenv"; \
	else \
	  /usr/bin/python3 -m venv --system-site-packages build/pyenv && \
	  build/pyenv/bin/pip install -q "$(TORCH)" || \
	  echo "bench-deps: torch did not install; make bench will run without it"; \
	fi

bench-ops: $(BUILD)/bench_matmul $(BUILD)/bench_dispatch ## dt_matmul vs ScaLAPACK pdgemm and BLIS; op dispatch overhead (2 ranks)
	$(BENCH_ENV) $(MPIEXEC) -n $(OPS_NP) ./$(BUILD)/bench_matmul $(MATMULARGS)
	$(BENCH_ENV) $(MPIEXEC) -n $(OPS_NP) ./$(BUILD)/bench_dispatch $(DISPATCHARGS)

bench-blas: ## dt_matmul vs the same BLAS's dgemm called directly, each BLAS installed: build/bench/blas-openmpi.txt
	@mkdir -p build/bench
	@{ echo '$$ make bench-blas   # = bash tests/run_blas.sh --bench --mpi openmpi --np $(OPS_NP) --args "$(BLASARGS)"'; \
	  echo "# $$(date -u +%Y-%m-%d), $$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $$(getconf _NPROCESSORS_ONLN) cores"; \
	  echo "# dtensor.h: commit $$(git rev-parse --short HEAD)"; echo; } > build/bench/blas-openmpi.txt
	bash tests/run_blas.sh --bench --mpi openmpi --np $(OPS_NP) --out build/bench/blas-openmpi.txt --args "$(BLASARGS)"
	@cat build/bench/blas-openmpi.txt

# bench/run.sh: each benchmark's output also into a file in build/bench/,
# headed by the command, the machine and the commit (bench/run.sh --help:
# rng.txt, halo-$(MPI)-np2.txt, planner.txt, ...)
bench-redistribute: $(BUILD)/bench_redistribute ## redistribution vs the raw MPI collectives only, NP ranks
	bash bench/run.sh --mpi $(MPI) --np $(NP) --only redistribute --bin $(BUILD) --args "$(BENCHARGS)"

bench-rng:     ## random fills vs Random123 on one rank, + callgrind
bench-halo:    ## halo exchange / stencil step vs hand-written MPI, every 2-D mesh of 2 ranks
bench-stencil: ## a 5-point step on a ghosted array, in-place halo vs hand-written MPI faces
bench-strided: ## a padded array redistributed through its strides vs contiguous, staged, MPI_Alltoallw
bench-rng bench-halo bench-stencil bench-strided: bench-%: $(BUILD)/bench_%
	bash bench/run.sh --mpi $(MPI) --np $(OPS_NP) --only $* --bin $(BUILD)

bench-results: $(BUILD)/bench_matmul $(BUILD)/bench_dispatch $(BUILD)/bench_rng build/libblis_arch.so ## matmul, dispatch (+ callgrind) and rng via bench/run.sh (2 ranks)
	bash bench/run.sh --mpi $(MPI) --np $(OPS_NP) --bin $(BUILD)

bench-planner:           ## the planner at scale, simulated in one process (64 to 65,536 ranks)
bench-planner-callgrind: ## the same loops' instructions per call (callgrind)
bench-planner bench-planner-callgrind: bench-%: build/bench_planner
	bash bench/run.sh --only $* --bin build --args "$(PLANNERARGS)"

# the transposing copy on one rank, and the PRK transpose against its port at
# 2 and 3 ranks (PRK_NP), into build/bench/ (MPICH ranks yield: libdt_yield.so)
PRK_NP    ?= 2 3
PRKARGS   ?=
TCOPYARGS ?=
YIELD_ENV  = $(if $(filter mpich,$(MPI)),LD_PRELOAD=$(CURDIR)/build/libdt_yield.so)
bench-transpose-copy: $(BUILD)/bench_transpose_copy ## one-rank column-major -> row-major redistribution vs a 64x64 tiled loop and memcpy
	@mkdir -p build/bench
	$(BENCH_ENV) $(MPIEXEC) -n 1 ./$(BUILD)/bench_transpose_copy $(TCOPYARGS) >build/bench/transpose-copy-$(MPI).txt; \
	  rc=$$?; cat build/bench/transpose-copy-$(MPI).txt; exit $$rc
bench-prk: $(BUILD)/bench_prk_transpose build/libdt_yield.so ## the PRK MPI1 transpose vs its dt_tensor_redistribute_reduce port, 2 and 3 ranks, malloc'd and --shm storage
	@mkdir -p build/bench
	@rm -f build/bench/prk-$(MPI).txt
	for shm in "" --shm; do for np in $(PRK_NP); do \
	  $(BENCH_ENV) $(YIELD_ENV) $(MPIEXEC) -n $$np ./$(BUILD)/bench_prk_transpose $(PRKARGS) $$shm \
	  >build/bench/prk-np$$np.tmp; rc=$$?; cat build/bench/prk-np$$np.tmp >>build/bench/prk-$(MPI).txt; \
	  cat build/bench/prk-np$$np.tmp; rm -f build/bench/prk-np$$np.tmp; [ $$rc = 0 ] || exit 1; done; done

# PRK's own MPI1 Transpose, Stencil and DGEMM (built from a ParRes/Kernels
# checkout with PRK's own make.defs: bench/prk_build.sh, into build/prk/MPI/)
# against the ports of bench/prk_port.c (same command line and output),
# alternated launch by launch, both MPIs, 2 and 3 ranks (bench/prk_vs.sh;
# bench/README.md "PRK's own binaries"). Nothing of PRK is in this repository:
#   git clone https://github.com/ParRes/Kernels /path/to/Kernels
#   make bench-prk-real PRK_DIR=/path/to/Kernels
PRK_DIR      ?=
PRK_MPIS     ?= mpich openmpi
PRK_ROUNDS   ?= 3
PRK_CASES    ?= transpose:10:2000 transpose:10:4000 stencil:20:4000 dgemm:3:1024:32:1
PRK_MAKEDEFS ?= gcc
PRK_REPLICA  ?= 1
PRK_PORTS     = $(foreach m,$(PRK_MPIS),$(foreach k,transpose stencil dgemm,build/$(m)/prk_port_$(k)))

# fail at once, before building anything, without a PRK checkout
ifneq ($(filter bench-prk-real,$(MAKECMDGOALS)),)
ifeq ($(strip $(PRK_DIR)),)
$(error bench-prk-real: PRK_DIR is not set. Get PRK: git clone https://github.com/ParRes/Kernels /path/to/Kernels, then: make bench-prk-real PRK_DIR=/path/to/Kernels (bench/README.md, "PRK's own binaries"))
endif
ifeq ($(wildcard $(PRK_DIR)/MPI1/Transpose/transpose.c),)
$(error bench-prk-real: PRK_DIR=$(PRK_DIR) is not a ParRes/Kernels checkout (no MPI1/Transpose/transpose.c there). Get one: git clone https://github.com/ParRes/Kernels)
endif
endif

# the replica (bench/prk_transpose.c) for each MPI of PRK_MPIS, whatever MPI is
build/%/bench_prk_transpose: bench/prk_transpose.c bench/bench.h $(HDR)
	@mkdir -p $(@D)
	mpicc.$* -std=c99 $(WARN) -O2 -g -I. -o $@ $< $(LDLIBS)

# bench/prk_port.c -> build/MPI/prk_port_KERNEL, strict flags, -O2 as the other benches
build/%/prk_port_transpose: bench/prk_port.c bench/bench.h $(HDR)
	@mkdir -p $(@D)
	mpicc.$* -std=c99 $(STRICT) -O2 -g -I. -DPRK_TRANSPOSE -o $@ $< $(LDLIBS)
build/%/prk_port_stencil: bench/prk_port.c bench/bench.h $(HDR)
	@mkdir -p $(@D)
	mpicc.$* -std=c99 $(STRICT) -O2 -g -I. -DPRK_STENCIL -o $@ $< $(LDLIBS)
build/%/prk_port_dgemm: bench/prk_port.c bench/bench.h $(HDR)
	@mkdir -p $(@D)
	mpicc.$* -std=c99 $(STRICT) -O2 -g -I. -DPRK_DGEMM -o $@ $< $(LDLIBS)

bench-prk-ports: $(PRK_PORTS) ## build the PRK ports of bench/prk_port.c (transpose, stencil, dgemm) for PRK_MPIS
	@echo "bench-prk-ports: $(PRK_PORTS)"

bench-prk-real: $(PRK_PORTS) $(if $(filter 1,$(PRK_REPLICA)),$(foreach m,$(PRK_MPIS),build/$(m)/bench_prk_transpose)) build/libdt_yield.so ## PRK's own MPI1 binaries (PRK_DIR=a ParRes/Kernels checkout) vs the ports, both MPIs, 2 and 3 ranks
	@for m in $(PRK_MPIS); do bash bench/prk_build.sh "$(PRK_DIR)" $$m $(PRK_MAKEDEFS) || exit 2; done
	bash bench/prk_vs.sh --mpi "$(PRK_MPIS)" --np "$(PRK_NP)" --rounds $(PRK_ROUNDS) --cases "$(PRK_CASES)" --replica $(PRK_REPLICA)

bench-publish: ## copy the reports in build/bench/ into bench/results/, dated, with commit, machine, command (bench/publish.sh)
	@bash bench/publish.sh $(PUBLISH)

# CI: the op, RNG, halo, stencil, strided and planner benchmarks at small
# sizes; they exit non-zero on a wrong result (not on a slow one)
bench-smoke: $(BUILD)/bench_matmul $(BUILD)/bench_dispatch $(BUILD)/bench_rng $(BUILD)/bench_halo $(BUILD)/bench_stencil $(BUILD)/bench_strided $(BUILD)/bench_transpose_copy $(BUILD)/bench_prk_transpose $(BUILD)/bench_shm_startup build/bench_planner $(addprefix $(BUILD)/prk_port_,transpose stencil dgemm) ## every benchmark at small sizes, checking results (CI)
	$(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/bench_matmul --quick $(MATMULARGS)
	$(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/bench_dispatch --quick $(DISPATCHARGS)
	$(MPIEXEC) -n 1 ./$(BUILD)/bench_rng --quick $(RNGARGS)
	$(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/bench_halo --quick
	$(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/bench_stencil --quick
	$(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/bench_strided --quick
	$(MPIEXEC) -n 1 ./$(BUILD)/bench_transpose_copy --quick
	$(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/bench_prk_transpose --quick && $(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/bench_prk_transpose --quick --shm
	$(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/bench_shm_startup --reps 1
	$(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/prk_port_transpose 2 200 && $(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/prk_port_stencil 2 200 && $(BENCH_ENV) $(MPIEXEC) -n 2 ./$(BUILD)/prk_port_dgemm 2 200 32 1
	./build/bench_planner --quick
