# dtensor.h -- build, run and check.
#
#   make deps demo            install MPI etc. (Debian/Ubuntu, as root), run the 4-rank demo
#   make deps test            ... and run the test suite
#   make test MPI=openmpi     the same suite under Open MPI (default: MPICH)
#   make bench NP=2           redistribution vs raw MPI collectives
#   make strict               C99 / C11 / C++17 / nvcc builds with -Wall -Wextra -Werror -pedantic
#
# Variables: MPI (mpich|openmpi), NP (ranks), CFLAGS, TESTARGS (passed to
# tests/run.sh), BENCHARGS (passed to the benchmark, e.g. "--max-mib 16 --reps 5").

MPI      ?= mpich
NP       ?= 4
CFLAGS   ?= -O2 -g
LDLIBS   ?= -lm
TESTARGS ?=
BENCHARGS ?=
NVCC     ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc 2>/dev/null))

MPICC   = mpicc.$(MPI)
MPIEXEC = mpiexec.$(MPI)
ifeq ($(MPI),openmpi)
MPIEXEC += --allow-run-as-root --oversubscribe
endif

BUILD   = build/$(MPI)
WARN    = -Wall -Wextra -pedantic
STRICT  = -Wall -Wextra -Werror -pedantic
DEPS_PKGS = mpich libmpich-dev openmpi-bin libopenmpi-dev libblis-dev valgrind

EXAMPLES = $(patsubst examples/%.c,$(BUILD)/%,$(wildcard examples/*.c))

.PHONY: all deps examples demo test bench strict clean
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

$(BUILD)/%: examples/%.c dtensor.h
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(WARN) $(CFLAGS) -I. -o $@ $< $(LDLIBS)

demo: $(BUILD)/quickstart
	$(MPIEXEC) -n $(NP) ./$(BUILD)/quickstart

test:
	bash tests/run.sh $(MPI) $(TESTARGS)

$(BUILD)/bench_redistribute: bench/redistribute.c dtensor.h
	@mkdir -p $(BUILD)
	$(MPICC) -std=c99 $(WARN) -O2 -I. -o $@ $< $(LDLIBS)

bench: $(BUILD)/bench_redistribute
	$(MPIEXEC) -n $(NP) ./$(BUILD)/bench_redistribute $(BENCHARGS)

# One translation unit with the implementation, one with the declarations
# only; every compiler the design promises, warnings as errors, at -O0 and
# -O2 (some warnings, e.g. -Warray-bounds, only appear when optimising).
# nvcc: its own front-end warnings are errors and the host compiler gets
# -Wall -Wextra -Werror; -pedantic cannot go through -Xcompiler (nvcc's
# generated code has "# 1" line markers, which -pedantic rejects), so nvcc
# emits the preprocessed host code (-cuda) and g++ compiles that with
# -pedantic: C++ pedantry is checked, preprocessor line markers are not.
SB = build/strict
NVSTRICT = -std=c++17 -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror
MPICH_INC = $(filter -I%,$(shell mpicc.mpich -show 2>/dev/null))
strict:
	@mkdir -p $(SB)
	@printf '#define DTENSOR_IMPLEMENTATION\n#include "dtensor.h"\nint main(void) { return dt_status_string(DT_OK) == NULL; }\n' > $(SB)/impl.c
	@printf '#include "dtensor.h"\nint dt_strict_decl_only(void);\nint dt_strict_decl_only(void) { return (int)sizeof(dt_tensor_desc); }\n' > $(SB)/decl.c
	@cp $(SB)/impl.c $(SB)/impl.cpp; cp $(SB)/impl.c $(SB)/impl.cu; cp $(SB)/decl.c $(SB)/decl.cpp
	mpicc.mpich  -std=c99   $(STRICT) -I. -o $(SB)/c99   $(SB)/impl.c $(LDLIBS)
	mpicc.mpich  -std=c99   $(STRICT) -O2 -I. -c -o $(SB)/c99_O2.o $(SB)/impl.c
	mpicc.mpich  -std=c99   $(STRICT) -O2 -DDTENSOR_STATIC -I. -c -o $(SB)/c99_static.o $(SB)/impl.c
	mpicc.mpich  -std=c99   $(STRICT) -I. -c -o $(SB)/decl99.o $(SB)/decl.c
	mpicc.mpich  -std=c11   $(STRICT) -O2 -I. -o $(SB)/c11   $(SB)/impl.c $(LDLIBS)
	mpicxx.mpich -std=c++17 $(STRICT) -O2 -I. -o $(SB)/cxx17 $(SB)/impl.cpp $(LDLIBS)
	mpicxx.mpich -std=c++17 $(STRICT) -I. -c -o $(SB)/declxx.o $(SB)/decl.cpp
	gcc -std=c99 $(STRICT) -O2 -DDTENSOR_NO_MPI -I. -o $(SB)/nompi $(SB)/impl.c $(LDLIBS)
	./$(SB)/nompi
	@if [ -z "$(NVCC)" ]; then echo "strict: nvcc not found, skipping the CUDA builds"; else \
	  set -ex; \
	  $(NVCC) $(NVSTRICT) -DDTENSOR_NO_MPI -I. -cuda -o $(SB)/cu_nompi.ii $(SB)/impl.cu; \
	  g++ -std=c++17 $(STRICT) -c -o $(SB)/cu_nompi.o $(SB)/cu_nompi.ii; \
	  $(NVCC) $(NVSTRICT) $(MPICH_INC) -I. -cuda -o $(SB)/cu_mpi.ii $(SB)/impl.cu; \
	  g++ -std=c++17 $(STRICT) -c -o $(SB)/cu_mpi.o $(SB)/cu_mpi.ii; \
	fi
	@echo "strict: OK"

clean:
	rm -rf build
