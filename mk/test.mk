# mk/test.mk -- the test suite (tests/README.md): builds, sweeps, make check.
#
# A configuration is MPI x VARIANT (none, or asan: AddressSanitizer +
# UndefinedBehaviorSanitizer) and builds into build/tests/<mpi>[-asan]/.
# Each test says at its top, in a TEST comment block, its rank counts,
# whether it takes --quick, what it needs and whether it links the
# configuration's implementation objects (impl: linked: dtensor.o, and
# dtensor_layers.o, the layers alone) or compiles the
# implementation itself (impl: own: it sets options such as DT_MALLOC before
# the include, or reads private dt__ names; needs: nompi: gcc without MPI).
# tests/run.sh builds through `make tests` and runs what the blocks say.

VARIANT  ?=
TESTARGS ?=
TB        = build/tests/$(MPI)$(if $(VARIANT),-$(VARIANT))
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
TEST_CFLAGS = -std=c99 -O1 -g $(STRICT) -I. $(if $(filter asan,$(VARIANT)),$(SAN_FLAGS))
# Open MPI's C++ bindings do not build with -Werror
CXX_CHECK = $(MPICXX) -x c++ -std=c++17 $(STRICT) -I. $(if $(filter openmpi,$(MPI)),-DOMPI_SKIP_MPICXX=1) -fsyntax-only

TEST_SRCS  := $(wildcard tests/test_*.c)
OWN_SRCS   := $(shell grep -l '^ *impl: *own' $(TEST_SRCS))
NOMPI_SRCS := $(shell grep -l '^ *needs:.*\bnompi\b' $(TEST_SRCS))
# needs: scalapack: also linked with the MPI's ScaLAPACK (Debian libscalapack-<mpi>-dev)
SCALAPACK_SRCS := $(shell grep -l '^ *needs:.*\bscalapack\b' $(TEST_SRCS))
TEST_BINS   = $(patsubst tests/%.c,$(TB)/%,$(TEST_SRCS))
LINKED_BINS = $(patsubst tests/%.c,$(TB)/%,$(filter-out $(OWN_SRCS),$(TEST_SRCS)))
OWN_BINS    = $(patsubst tests/%.c,$(TB)/%,$(filter-out $(NOMPI_SRCS),$(OWN_SRCS)))
NOMPI_BINS  = $(patsubst tests/%.c,$(TB)/%,$(NOMPI_SRCS))
# every test also compiles as C++17 (syntax only; the implementation as C++ once)
CXX_OKS     = $(TB)/cxx/dtensor.ok $(patsubst tests/%.c,$(TB)/cxx/%.ok,$(TEST_SRCS))
TEST_DEPS   = tests/dt_test.h $(HDR) $(LHDR)
# a failed build leaves its log in $(TB)/logs/NAME.build.log and no binary
BUILD_LOG   = >$(TB)/logs/$(@F).build.log 2>&1 || { sed -n 1,20p $(TB)/logs/$(@F).build.log; exit 1; }

.PHONY: tests test test-full test-asan test-valgrind test-readme test-blas test-shm-small test-dispatch-cost check
tests: $(TEST_BINS) $(if $(VARIANT),,$(CXX_OKS)) $(STANDIN_BINS) build/libdt_yield.so ## build the tests of one configuration (MPI=, VARIANT=asan) into build/tests/

$(TB)/logs:
	mkdir -p $@

$(TB)/dtensor.o: $(HDR) | $(TB)/logs
	$(MPICC) $(TEST_CFLAGS) -x c -DDTENSOR_IMPLEMENTATION -c -o $@ $< $(BUILD_LOG)

# the layers alone (they use dtensor.h's public API only, so they compile
# without its implementation)
$(TB)/dtensor_layers.o: $(LHDR) $(HDR) | $(TB)/logs
	$(MPICC) $(TEST_CFLAGS) -x c -DDTENSOR_LAYERS_IMPLEMENTATION -c -o $@ $< $(BUILD_LOG)

$(patsubst tests/%.c,$(TB)/%,$(SCALAPACK_SRCS)): LDLIBS += -lscalapack-$(MPI)

$(LINKED_BINS): $(TB)/%: tests/%.c $(TEST_DEPS) $(TB)/dtensor.o $(TB)/dtensor_layers.o | $(TB)/logs
	$(MPICC) $(TEST_CFLAGS) -DDTENSOR_IMPLEMENTATION_LINKED -o $@ $< $(TB)/dtensor.o $(TB)/dtensor_layers.o $(LDLIBS) $(BUILD_LOG)

$(OWN_BINS): $(TB)/%: tests/%.c $(TEST_DEPS) | $(TB)/logs
	$(MPICC) $(TEST_CFLAGS) -o $@ $< $(LDLIBS) $(BUILD_LOG)

$(NOMPI_BINS): $(TB)/%: tests/%.c $(TEST_DEPS) | $(TB)/logs
	gcc -DDTENSOR_NO_MPI $(TEST_CFLAGS) -o $@ $< $(LDLIBS) $(BUILD_LOG)

$(TB)/cxx/dtensor.ok: $(LHDR) $(HDR)
	@mkdir -p $(@D)
	$(CXX_CHECK) -DDTENSOR_IMPLEMENTATION $< && touch $@

$(TB)/cxx/%.ok: tests/%.c $(TEST_DEPS)
	@mkdir -p $(@D)
	$(CXX_CHECK) $(if $(filter $<,$(NOMPI_SRCS)),-DDTENSOR_NO_MPI) $(if $(filter $<,$(OWN_SRCS)),,-DDTENSOR_IMPLEMENTATION_LINKED) $< && touch $@

# MPICH (ch4:ucx) busy-polls: with more ranks than cores each spinning rank
# holds its core until the scheduler preempts it (3 ranks on 2 cores: 14 s
# for what takes 0.07 s at 2). tests/run.sh preloads this into MPICH's ranks:
# after 64 idle polls of UCX, sched_yield (tests/mpich_yield.c).
build/libdt_yield.so: tests/mpich_yield.c
	@mkdir -p $(@D)
	gcc -std=gnu99 -O2 -Wall -Wextra -Werror -shared -fPIC -o $@ $< -ldl

test: ## every test at 1 2 3 ranks, --quick sizes (tests/run.sh --smoke): the README's test command
	bash tests/run.sh $(MPI) --smoke $(TESTARGS)

test-full: ## every test at every rank count its TEST block lists (1 2 3 4 6 8), full sizes
	bash tests/run.sh $(MPI) $(TESTARGS)

test-asan: ## the suite built with ASan + UBSan (VARIANT=asan), leak checks on; TESTARGS='--np "1 2"'
	bash tests/run.sh $(MPI) --variant asan $(TESTARGS)

VALGRIND = valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
           --num-callers=40 --suppressions=$(CURDIR)/.ci/valgrind.supp
test-valgrind: ## the suite under valgrind memcheck (.ci/valgrind.supp: MPI's own allocations only)
	bash tests/run.sh $(MPI) --wrap "$(VALGRIND)" $(TESTARGS)

test-shm-small: ## the shared path on a 64 MiB /dev/shm (a private tmpfs; root), both MPIs (tests/test_shm_small.sh)
	bash tests/test_shm_small.sh

test-readme: ## the README's first program compiles as pasted and runs at 2 ranks; its links resolve
	bash tests/readme_snippet.sh

test-blas: ## the GEMM tests against every BLAS installed, 1 and 2 ranks (tests/run_blas.sh)
	bash tests/run_blas.sh --mpi openmpi --np "1 2"

test-dispatch-cost: $(BUILD)/bench_dispatch ## a cached op's instructions per call (callgrind, 1 rank) under their limits (tests/dispatch_callgrind.sh)
	bash tests/dispatch_callgrind.sh --mpi $(MPI)

# before every submission (tests/README.md): what CI most often rejects, in
# under 10 minutes on 2 cores
check: ## the pre-submit check: layering, strict builds, lint, docs, smoke suite, ASan at 1-2 ranks, dispatch cost
	bash tests/check.sh

# libFuzzer targets (clang, ASan + UBSan; no MPI, no BLIS: one process plays
# rank r of N through tests/fuzz/fuzz_sim.h), each for FUZZ_SECONDS from its
# committed corpus tests/fuzz/corpus/<target>/, two at a time
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   ?= -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                -DDTENSOR_NO_MPI -DDTENSOR_NO_BLIS
FUZZ_TARGETS  = $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

.PHONY: fuzz fuzz-build
build/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_sim.h $(HDR)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) $< -o $@ -lm

fuzz-build: $(FUZZ_TARGETS) ## build the libFuzzer targets (build/fuzz/fuzz_*)

fuzz: fuzz-build ## each libFuzzer target for FUZZ_SECONDS (60), crashes into build/fuzz/
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

# The Fortran module (dtensor.f90; the rules for it and the Fortran examples
# are in mk/build.mk): its test program, and the same program linked with a C
# implementation built with DT_MAX_DIMS = 16, which must refuse it cleanly
# (dt_init / dt_comm_mpi: DT_ERR_ARG naming the sizes). The test calls the
# tensor-parallel layers, so it links the layers' object too (heat2d_f, which
# does not, links without it). tests/test_fortran.sh builds and runs them and
# examples/heat2d.f90 and examples/swe_cgrid.f90 under both MPIs.
# tests/fortran_offsets.c is the C side of its layout check (C's sizeof and
# offsetof of the structs the module's bind(C) types mirror).
.PHONY: test-fortran
$(FMOD)/fortran_offsets.o: tests/fortran_offsets.c $(HDR) $(LHDR)
	@mkdir -p $(@D)
	$(MPICC) -std=c99 $(STRICT) -O0 -I. -c -o $@ $<

$(BUILD)/test_fortran: tests/test_fortran.f90 $(FMOD)/dtensor.o $(BUILD)/dtensor.o $(BUILD)/dtensor_layers.o \
	    $(FMOD)/fortran_offsets.o
	$(MPIFC) $(FSTRICT) $(FFLAGS) -I$(FMOD) -o $@ $< $(FMOD)/dtensor.o $(BUILD)/dtensor.o $(BUILD)/dtensor_layers.o \
	    $(FMOD)/fortran_offsets.o $(LDLIBS)

$(FMOD)/dtensor_dims16.o: dtensor.h
	@mkdir -p $(@D)
	$(MPICC) -std=c99 $(STRICT) -O0 -DDT_MAX_DIMS=16 -x c -DDTENSOR_IMPLEMENTATION -c -o $@ $<

$(FMOD)/dtensor_layers_dims16.o: $(LHDR) $(HDR)
	@mkdir -p $(@D)
	$(MPICC) -std=c99 $(STRICT) -O0 -DDT_MAX_DIMS=16 -x c -DDTENSOR_LAYERS_IMPLEMENTATION -c -o $@ $<

# (its layout table too: dtensor.h's ABI check links only objects of one DT_MAX_DIMS)
$(FMOD)/fortran_offsets_dims16.o: tests/fortran_offsets.c $(HDR) $(LHDR)
	@mkdir -p $(@D)
	$(MPICC) -std=c99 $(STRICT) -O0 -DDT_MAX_DIMS=16 -I. -c -o $@ $<

$(BUILD)/test_fortran_dims16: tests/test_fortran.f90 $(FMOD)/dtensor.o $(FMOD)/dtensor_dims16.o $(FMOD)/dtensor_layers_dims16.o \
	    $(FMOD)/fortran_offsets_dims16.o
	$(MPIFC) $(FSTRICT) $(FFLAGS) -I$(FMOD) -o $@ $< $(FMOD)/dtensor.o $(FMOD)/dtensor_dims16.o \
	    $(FMOD)/dtensor_layers_dims16.o $(FMOD)/fortran_offsets_dims16.o $(LDLIBS)

# The same test built with ASan + UBSan, C implementation and Fortran alike
# (tests/test_fortran.sh --asan runs it at 1 and 2 ranks, leak checks on).
FASAN = $(BUILD)/fortran-asan
$(FASAN)/dtensor.o: dtensor.h
	@mkdir -p $(@D)
	$(MPICC) -std=c99 $(STRICT) -O1 -g $(SAN_FLAGS) -x c -DDTENSOR_IMPLEMENTATION -c -o $@ $<

$(FASAN)/dtensor_layers.o: $(LHDR) $(HDR)
	@mkdir -p $(@D)
	$(MPICC) -std=c99 $(STRICT) -O1 -g $(SAN_FLAGS) -x c -DDTENSOR_LAYERS_IMPLEMENTATION -c -o $@ $<

$(FASAN)/dtensor_f.o: dtensor.f90
	@mkdir -p $(@D)
	$(MPIFC) $(FSTRICT) -O1 -g $(SAN_FLAGS) -J $(@D) -c -o $@ $<

$(FASAN)/fortran_offsets.o: tests/fortran_offsets.c $(HDR) $(LHDR)
	@mkdir -p $(@D)
	$(MPICC) -std=c99 $(STRICT) -O1 -g $(SAN_FLAGS) -I. -c -o $@ $<

$(BUILD)/test_fortran_asan: tests/test_fortran.f90 $(FASAN)/dtensor_f.o $(FASAN)/dtensor.o $(FASAN)/dtensor_layers.o \
	    $(FASAN)/fortran_offsets.o
	$(MPIFC) $(FSTRICT) -O1 -g $(SAN_FLAGS) -I$(FASAN) -o $@ $< $(FASAN)/dtensor_f.o $(FASAN)/dtensor.o \
	    $(FASAN)/dtensor_layers.o $(FASAN)/fortran_offsets.o $(LDLIBS)

test-fortran: ## the Fortran module under both MPIs: tests/test_fortran.f90, examples/heat2d.f90 and swe_cgrid.f90 (tests/test_fortran.sh)
	bash tests/test_fortran.sh
