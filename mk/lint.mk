# mk/lint.mk -- strictness builds and static analysis (both fail on any finding).
#
# strict: one translation unit with the implementation and one with the
# declarations only, through every compiler the design promises, warnings as
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
IMPL      = tests/lint/impl.c
IMPLXX    = -x c++ tests/lint/impl.c
SDEPS     = $(HDR) tests/lint/impl.c tests/lint/decl.c
STRICT_SRCS = examples/heat2d.c bench/halo.c bench/stencil.c
STRICT_OUT  = c99.run c99_O2.o c99_O3.o c99_static.o decl99.o c11.o cxx17.o declxx.o nompi.run noblis.run \
              cxx17_noblis.o clang_O2.o clang_O3.o clang_nompi.o $(foreach f,$(STRICT_SRCS),$(basename $(notdir $f)).linked $(basename $(notdir $f))_O3.o \
              $(basename $(notdir $f))_xx.o) $(if $(NVCC),cu_nompi.o cu_mpi.o)

.PHONY: strict layering
strict: layering $(addprefix $(SB)/,$(STRICT_OUT)) ## the layering rule; C99/C11/C++17/nvcc builds, -Werror -pedantic (make -j2)
	@echo "strict: OK$(if $(NVCC),, (nvcc not found: no CUDA builds))"

layering:
	python3 tests/lint/layering.py dtensor.h dtensor_cuda.h

$(SB)/c99.run: $(SDEPS)
	@mkdir -p $(@D)
	mpicc.mpich -std=c99 $(STRICT) -I. -o $(SB)/c99 $(IMPL) $(LDLIBS) && ./$(SB)/c99 && touch $@
$(SB)/c99_O2.o: $(SDEPS)
	@mkdir -p $(@D)
	mpicc.mpich -std=c99 $(STRICT) -O2 -I. -c -o $@ $(IMPL)
$(SB)/c99_O3.o: $(SDEPS)
	@mkdir -p $(@D)
	mpicc.mpich -std=c99 $(STRICT) -O3 -march=x86-64-v4 -I. -c -o $@ $(IMPL)
$(SB)/c99_static.o: $(SDEPS)
	@mkdir -p $(@D)
	mpicc.mpich -std=c99 $(STRICT) -O2 -DDTENSOR_STATIC -I. -c -o $@ $(IMPL)
$(SB)/decl99.o: $(SDEPS)
	@mkdir -p $(@D)
	mpicc.mpich -std=c99 $(STRICT) -I. -c -o $@ tests/lint/decl.c
$(SB)/c11.o: $(SDEPS)
	@mkdir -p $(@D)
	mpicc.mpich -std=c11 $(STRICT) -O2 -I. -c -o $@ $(IMPL)
$(SB)/cxx17.o: $(SDEPS)
	@mkdir -p $(@D)
	mpicxx.mpich -std=c++17 $(STRICT) -O2 -I. -c -o $@ $(IMPLXX)
$(SB)/declxx.o: $(SDEPS)
	@mkdir -p $(@D)
	mpicxx.mpich -std=c++17 $(STRICT) -I. -c -o $@ -x c++ tests/lint/decl.c
$(SB)/nompi.run: $(SDEPS)
	@mkdir -p $(@D)
	gcc -std=c99 $(STRICT) -O2 -DDTENSOR_NO_MPI -I. -o $(SB)/nompi $(IMPL) $(LDLIBS) && ./$(SB)/nompi && touch $@
$(SB)/noblis.run: $(SDEPS)
	@mkdir -p $(@D)
	gcc -std=c99 $(STRICT) -O2 -DDTENSOR_NO_MPI -DDTENSOR_NO_BLIS -I. -o $(SB)/noblis $(IMPL) -lm && ./$(SB)/noblis && touch $@
$(SB)/cxx17_noblis.o: $(SDEPS)
	@mkdir -p $(@D)
	mpicxx.mpich -std=c++17 $(STRICT) -O2 -DDTENSOR_NO_BLIS -I. -c -o $@ $(IMPLXX)
# clang with its uninitialised-use analyses (gcc 13's -Wmaybe-uninitialized
# class; Debian 12 has no gcc 13)
CLANG_STRICT = clang -std=c99 $(STRICT) -Wconditional-uninitialized -Wsometimes-uninitialized -I.
$(SB)/clang_O2.o: $(SDEPS)
	@mkdir -p $(@D)
	$(CLANG_STRICT) -O2 $(MPICH_INC) -c -o $@ $(IMPL)
$(SB)/clang_O3.o: $(SDEPS)
	@mkdir -p $(@D)
	$(CLANG_STRICT) -O3 -march=x86-64-v4 $(MPICH_INC) -c -o $@ $(IMPL)
$(SB)/clang_nompi.o: $(SDEPS)
	@mkdir -p $(@D)
	$(CLANG_STRICT) -O2 -DDTENSOR_NO_MPI -c -o $@ $(IMPL)
# examples/heat2d.c, bench/halo.c and bench/stencil.c: C99 at -O2 (linked) and
# -O3 -march=x86-64-v4, and C++17
$(SB)/%.linked: $(SDEPS)
	@mkdir -p $(@D)
	mpicc.mpich -std=c99 $(STRICT) -O2 -I. -o $(SB)/$* $(filter %/$*.c,$(STRICT_SRCS)) $(LDLIBS) && touch $@
$(SB)/%_O3.o: $(SDEPS)
	@mkdir -p $(@D)
	mpicc.mpich -std=c99 $(STRICT) -O3 -march=x86-64-v4 -I. -c -o $@ $(filter %/$*.c,$(STRICT_SRCS))
$(SB)/%_xx.o: $(SDEPS)
	@mkdir -p $(@D)
	mpicxx.mpich -std=c++17 $(STRICT) -O2 -I. -x c++ -c -o $@ $(filter %/$*.c,$(STRICT_SRCS))
$(SB)/cu_%.o: $(SDEPS)
	@mkdir -p $(@D)
	$(NVCC) $(NVSTRICT) $(if $(filter nompi,$*),-DDTENSOR_NO_MPI,$(MPICH_INC)) -I. -x cu -cuda -o $(SB)/cu_$*.ii $(IMPL)
	g++ -std=c++17 $(STRICT) -c -o $@ $(SB)/cu_$*.ii

# Static analysis: cppcheck and clang-tidy (its checks and the reason for each
# disabled one: .clang-tidy; cppcheck's suppressions: tests/lint/cppcheck.supp,
# single false positives inline as /* cppcheck-suppress ID ; reason */, and
# clang-tidy's as /* NOLINTNEXTLINE(check): reason */). Both run on dtensor.h
# itself as the main file (-x c -DDTENSOR_IMPLEMENTATION): clang's analyzer
# only follows functions of the main file. Two configurations: MPICH's
# headers + BLIS, and -DDTENSOR_NO_MPI. tests/lint/run.sh runs the five
# checks two at a time (clang-tidy's analyzer is nearly all of the time)
# and prints "lint: N passed, N failed".
LINT_TIDY = clang-tidy$(if $(shell command -v clang-tidy-14 2>/dev/null),-14)
LINT_CPPCHECK = cppcheck --enable=warning,performance,portability,style --std=c99 --language=c -I. \
                --inline-suppr --suppressions-list=tests/lint/cppcheck.supp --error-exitcode=1 --quiet \
                --template='{file}:{line}:{column}: {severity}: {message} [{id}]'
.PHONY: lint lint-docs
lint: ## layering, cppcheck and clang-tidy on dtensor.h (with and without MPI), the docs' references
	@LINT_TIDY='$(LINT_TIDY)' LINT_CPPCHECK="$(LINT_CPPCHECK)" MPICH_INC='$(MPICH_INC)' bash tests/lint/run.sh
