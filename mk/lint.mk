# mk/lint.mk -- strictness builds and static analysis (both fail on any finding).
#
# strict: one translation unit with the implementation (dtensor.h's and
# dtensor_layers.h's) and one with the declarations only, and one with the
# layers' implementation alone (decl_layers*: dtensor.h's public API must
# suffice), through every compiler the design promises, warnings as
# errors, at -O0, -O2 and -O3 -march=x86-64-v4 (some warnings, e.g.
# -Warray-bounds, only appear when optimising); BLIS's header included
# (a system include dir, so its own code is not judged); -DDTENSOR_NO_BLIS
# and -DDTENSOR_NO_MPI builds run. Each build is its own target, so
# `make -j2 strict` uses both cores. nvcc: its own warnings are errors and
# the host compiler gets -Wall -Wextra -Werror; -pedantic cannot go through
# -Xcompiler (nvcc's generated code has "# 1" line markers), so nvcc emits
# the preprocessed host code (-cuda) and g++ compiles that with -pedantic.
SB        = build/strict
MPICH_INC = $(filter -I%,$(shell mpicc.mpich -show 2>/dev/null))
SDEPS     = $(HDR) $(LHDR) tests/lint/impl.c tests/lint/decl.c dtensor_cuda.h tests/lint/impl_cuda.cu $(wildcard tests/standin/*.h)
UNINIT    = -Wconditional-uninitialized -Wsometimes-uninitialized
# One build per name: the compiler and flags (strict flags and -I. added) of
# tests/lint/impl.c, the implementation (NAME.o: compiled; NAME.run: linked
# and run), or of tests/lint/decl.c, the declarations only (decl*). clang
# brings its uninitialised-use analyses (gcc 13's -Wmaybe-uninitialized
# class; Debian 12 has no gcc 13).
S_c99          = mpicc.mpich -std=c99
S_c99_O2       = mpicc.mpich -std=c99 -O2
S_c99_O3       = mpicc.mpich -std=c99 -O3 -march=x86-64-v4
S_c99_static   = mpicc.mpich -std=c99 -O2 -DDTENSOR_STATIC
S_c11          = mpicc.mpich -std=c11 -O2
S_cxx17        = mpicxx.mpich -std=c++17 -O2 -x c++
S_cxx17_noblis = mpicxx.mpich -std=c++17 -O2 -DDTENSOR_NO_BLIS -x c++
S_nompi        = gcc -std=c99 -O2 -DDTENSOR_NO_MPI
S_noblis       = gcc -std=c99 -O2 -DDTENSOR_NO_MPI -DDTENSOR_NO_BLIS
S_clang_O2     = clang -std=c99 -O2 $(UNINIT) $(MPICH_INC)
S_clang_O3     = clang -std=c99 -O3 -march=x86-64-v4 $(UNINIT) $(MPICH_INC)
S_clang_nompi  = clang -std=c99 -O2 $(UNINIT) -DDTENSOR_NO_MPI
S_decl99       = mpicc.mpich -std=c99
S_declxx       = mpicxx.mpich -std=c++17 -x c++
S_decl_layers  = mpicc.mpich -std=c99 -O2 -DDTENSOR_LAYERS_IMPLEMENTATION
S_decl_layers_clang = clang -std=c99 -O2 $(UNINIT) $(MPICH_INC) -DDTENSOR_LAYERS_IMPLEMENTATION
S_decl_layers_xx = mpicxx.mpich -std=c++17 -O2 -x c++ -DDTENSOR_LAYERS_IMPLEMENTATION
# dtensor_cuda.h's host code AND its kernels through g++ and clang++ on the
# CUDA stand-in (tests/standin/): nvcc's host pass never shows gcc the
# kernel bodies, and gcc 13 found what gcc 12 did not
S_cuhost_O2    = mpicxx.mpich -std=c++17 -O2 -x c++ -I tests/standin
S_cuhost_O3    = mpicxx.mpich -std=c++17 -O3 -march=x86-64-v4 -x c++ -I tests/standin
S_cuhost_clang = clang++ -std=c++17 -O2 $(UNINIT) -x c++ -I tests/standin $(MPICH_INC)
S_SRC          = $(if $(filter cuhost%,$*),tests/lint/impl_cuda.cu,tests/lint/$(if $(filter decl%,$*),decl,impl).c)
# examples/heat2d.c, bench/halo.c and bench/stencil.c: C99 at -O2 (linked),
# at -O3 -march=x86-64-v4, and as C++17
STRICT_SRCS = examples/heat2d.c bench/halo.c bench/stencil.c
STRICT_NAMES = $(basename $(notdir $(STRICT_SRCS)))
STRICT_OUT  = c99.run nompi.run noblis.run c99_O2.o c99_O3.o c99_static.o c11.o cxx17.o cxx17_noblis.o \
              clang_O2.o clang_O3.o clang_nompi.o decl99.o declxx.o \
              decl_layers.o decl_layers_clang.o decl_layers_xx.o cuhost_O2.o cuhost_O3.o cuhost_clang.o \
              $(foreach n,$(STRICT_NAMES),$n.linked $n.O3.o $n.xx.o) $(if $(NVCC),cu_nompi.o cu_mpi.o)

.PHONY: strict layering
strict: layering $(addprefix $(SB)/,$(STRICT_OUT)) ## the layering rule; C99/C11/C++17/clang/nvcc builds, -Werror -pedantic (make -j2)
	@echo "strict: OK$(if $(NVCC),, (nvcc not found: no CUDA builds))"

# the layering rule (functions, macros, enumerators, types: no name of a later
# section) and ctags_check.sh: the set of functions Universal Ctags sees equals
# layering.py's (a definition ctags swallows is one a code browser misses);
# both run, either fails the target
layering:
	@s=0; python3 tests/lint/layering.py dtensor.h dtensor_cuda.h dtensor_layers.h || s=1; bash tests/lint/ctags_check.sh || s=1; exit $$s

$(SB):
	mkdir -p $@
$(SB)/%.run: $(SDEPS) | $(SB)
	$(S_$*) $(STRICT) -I. -o $(SB)/$* $(S_SRC) $(if $(filter noblis,$*),-lm,$(LDLIBS)) && ./$(SB)/$* && touch $@
$(SB)/%.o: $(SDEPS) | $(SB)
	$(S_$*) $(STRICT) -I. -c -o $@ $(S_SRC)
$(SB)/%.linked: $(SDEPS) | $(SB)
	mpicc.mpich -std=c99 $(STRICT) -O2 -I. -o $(SB)/$* $(filter %/$*.c,$(STRICT_SRCS)) $(LDLIBS) && touch $@
$(SB)/%.O3.o: $(SDEPS) | $(SB)
	mpicc.mpich -std=c99 $(STRICT) -O3 -march=x86-64-v4 -I. -c -o $@ $(filter %/$*.c,$(STRICT_SRCS))
$(SB)/%.xx.o: $(SDEPS) | $(SB)
	mpicxx.mpich -std=c++17 $(STRICT) -O2 -I. -x c++ -c -o $@ $(filter %/$*.c,$(STRICT_SRCS))
$(SB)/cu_%.o: $(SDEPS) | $(SB)
	$(NVCC) $(NVSTRICT) $(if $(filter nompi,$*),-DDTENSOR_NO_MPI,$(MPICH_INC)) -I. -x cu -cuda -o $(SB)/cu_$*.ii $(S_SRC)
	g++ -std=c++17 $(STRICT) -c -o $@ $(SB)/cu_$*.ii

# Static analysis: cppcheck and clang-tidy (its checks and the reason for each
# disabled one: .clang-tidy; cppcheck's suppressions: tests/lint/cppcheck.supp,
# single false positives inline as /* cppcheck-suppress ID ; reason */, and
# clang-tidy's as /* NOLINTNEXTLINE(check): reason */). Both run on dtensor.h
# itself as the main file (-x c -DDTENSOR_IMPLEMENTATION): clang's analyzer
# only follows functions of the main file. Two configurations: MPICH's
# headers + BLIS, and -DDTENSOR_NO_MPI; and both on dtensor_layers.h alone
# (-DDTENSOR_LAYERS_IMPLEMENTATION). tests/lint/run.sh runs the twelve checks (with
# the layering rule, its ctags cross-check, the docs' references, the MAP's
# traced dt_matmul and dtensor.f90's generated regions: tests/lint/gen_f90.py
# --check) two at a time (clang-tidy's analyzer is nearly all of the time)
# and prints "lint: N passed, N failed".
LINT_TIDY = clang-tidy$(if $(shell command -v clang-tidy-14 2>/dev/null),-14)
LINT_CPPCHECK = cppcheck --enable=warning,performance,portability,style --std=c99 --language=c -I. \
                --inline-suppr --suppressions-list=tests/lint/cppcheck.supp --error-exitcode=1 --quiet \
                --template='{file}:{line}:{column}: {severity}: {message} [{id}]'
.PHONY: lint lint-docs
lint: ## layering (and its ctags cross-check), cppcheck and clang-tidy on dtensor.h (with and without MPI) and dtensor_layers.h, the docs' references, the traced dt_matmul, dtensor.f90's generated parts
	@LINT_TIDY='$(LINT_TIDY)' LINT_CPPCHECK="$(LINT_CPPCHECK)" MPICH_INC='$(MPICH_INC)' bash tests/lint/run.sh

lint-docs: ## the docs' references alone (tests/lint/docs.py: make targets, options, paths, links) and README.md at most 300 lines
	python3 tests/lint/docs.py
