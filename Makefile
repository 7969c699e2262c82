# llm-torch-profiler-analysis: one Makefile, no recursion.
#
# Tools are the directories under cmd/; each builds build/bin/<tool> from its
# own *.c files plus build/libcommon.a, and build/bin/triage is the driver
# (scripts/triage), so that build/bin on PATH gives every command.  O=
# selects the build directory, so a sanitizer build can live beside the
# normal one:
#   make O=build-san SANITIZE=1
# The build prints one line per program (none under make -s); V=1 prints
# every command instead.

PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
MANPREFIX ?= $(PREFIX)/share/man
DATADIR   ?= $(PREFIX)/share/llm-torch-profiler-analysis
DESTDIR   ?=

CC       ?= cc
CPPFLAGS += -D_GNU_SOURCE -iquote common
CFLAGS   ?= -O3 -g
CFLAGS   += -std=c11 -Wall -Wextra -Wno-unused-parameter
# libiberty's demangler (common/kname.c) reads kernel symbols as c++filt does
LDLIBS   += -liberty -lz -lm -lpthread
O        ?= build
# ISA-L inflates gzip input (common/zio.c); ISAL=0 builds with zlib's inflate alone.
ISAL     ?= 1
ifeq ($(ISAL),1)
LDLIBS   := -lisal $(LDLIBS)
else
CPPFLAGS += -DNO_ISAL
endif

# Q hides a command unless V=1; say prints its one line (none with make -s).
ifeq ($(V),1)
Q   :=
say  = :
else
Q   := @
say  = $(if $(findstring s,$(firstword -$(MAKEFLAGS))),:,printf '  %-5s %s\n')
endif

ifeq ($(SANITIZE),1)
CFLAGS  += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

TOOLS      := $(sort $(notdir $(patsubst %/,%,$(wildcard cmd/*/))))
COMMON_SRC := $(wildcard common/*.c)
COMMON_OBJ := $(COMMON_SRC:%.c=$(O)/%.o) $(O)/gen/kernel_categories.o $(O)/gen/gpu_specs.o
COMMON_HDR := $(wildcard common/*.h) $(wildcard common/*.inc)
TOOL_HDR   := $(wildcard cmd/*/*.h)
BINS       := $(TOOLS:%=$(O)/bin/%)
MAN1       := $(wildcard man/man1/*.1)
MAN5       := $(wildcard man/man5/*.5)

# Per-tool extra libraries.
LDLIBS_trace-capture = -lcurl

all: $(BINS) $(O)/bin/triage $(O)/ldlibs

# The driver beside the tools: it finds them in its own directory.
$(O)/bin/triage: scripts/triage
	@mkdir -p $(@D)
	@$(say) CP $@
	$(Q)cp -f scripts/triage $@.tmp && chmod 755 $@.tmp && mv -f $@.tmp $@

# The libraries a program linked with libcommon.a needs (tests build some).
$(O)/ldlibs: FORCE
	@mkdir -p $(@D)
	@echo '$(LDLIBS)' >$@.tmp && if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(O)/libcommon.a: $(COMMON_OBJ)
	@mkdir -p $(@D)
	@$(say) AR $@
	$(Q)$(AR) rcs $@ $^

# A tool's private headers count too: a struct changed in one of them must
# rebuild every file of the tool that uses it.
$(O)/%.o: %.c $(COMMON_HDR) $(TOOL_HDR)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

define tool_rule
$(O)/bin/$(1): $(patsubst %.c,$(O)/%.o,$(wildcard cmd/$(1)/*.c)) $(O)/libcommon.a
	@mkdir -p $$(@D)
	@$$(say) LD $$@
	$$(Q)$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o,$$^) $(O)/libcommon.a $$(LDLIBS_$(1)) $$(LDLIBS)
endef
$(foreach t,$(TOOLS),$(eval $(call tool_rule,$(t))))

# fuse-detect carries the fusion-pattern catalog inside the binary so it
# works when installed alone (--patterns FILE replaces it at run time).
# Each line of data/fuse-patterns.jsonl becomes one C string: backslash and
# double quote are escaped for C, and '?' too so that no trigraph can form.
$(O)/gen/fuse_catalog.c: data/fuse-patterns.jsonl
	@mkdir -p $(@D)
	$(Q){ echo '/* Generated from data/fuse-patterns.jsonl by the Makefile; do not edit. */'; \
	  echo 'const char *const fuse_catalog_lines[] = {'; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' \
	      -e 's/^/	"/' -e 's/$$/",/' data/fuse-patterns.jsonl; \
	  echo '	0'; echo '};'; } > $@.tmp && mv $@.tmp $@

$(O)/gen/fuse_catalog.o: $(O)/gen/fuse_catalog.c
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The kernel-category rules (common/kcat.h) go into the library the same way.
$(O)/gen/kernel_categories.c: data/kernel-categories.jsonl
	@mkdir -p $(@D)
	$(Q){ echo '/* Generated from data/kernel-categories.jsonl by the Makefile; do not edit. */'; \
	  echo 'const char *const kernel_category_lines[] = {'; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' \
	      -e 's/^/	"/' -e 's/$$/",/' data/kernel-categories.jsonl; \
	  echo '	0'; echo '};'; } > $@.tmp && mv $@.tmp $@

$(O)/gen/kernel_categories.o: $(O)/gen/kernel_categories.c
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(O)/bin/fuse-detect: $(O)/gen/fuse_catalog.o

# The GPU table (common/gpuspec.h) too: kernel-roofline's peaks (--gpu-specs
# FILE replaces it), triage-render's GPU names and gfx targets.
$(O)/gen/gpu_specs.c: data/gpu-specs.jsonl
	@mkdir -p $(@D)
	$(Q){ echo '/* Generated from data/gpu-specs.jsonl by the Makefile; do not edit. */'; \
	  echo 'const char *const gpu_spec_lines[] = {'; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' \
	      -e 's/^/	"/' -e 's/$$/",/' data/gpu-specs.jsonl; \
	  echo '	0'; echo '};'; } > $@.tmp && mv $@.tmp $@

$(O)/gen/gpu_specs.o: $(O)/gen/gpu_specs.c
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The suite runs against $(O)/bin, a line per script as it ends and a
# summary (tests/run.sh); test-sanitize rebuilds under ASan+UBSan in
# build-san/ and runs the scripts that exercise C code again (a script that
# tests only the sh driver or documents says "# sanitize: no").
# test-quick is the normal build's pass alone.
# The builds the tests start use every processor unless -j says otherwise.
NPROC    := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
SUBJOBS   = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(NPROC))

test:
	@$(MAKE) $(SUBJOBS) all
	TRIAGE_BINDIR=$(CURDIR)/$(O)/bin sh tests/run.sh
	@if command -v mandoc >/dev/null; then $(MAKE) -s lint-man && echo "man pages: mandoc -Tlint clean"; fi
	$(MAKE) test-sanitize

check: test

test-quick:
	@$(MAKE) $(SUBJOBS) all
	TRIAGE_BINDIR=$(CURDIR)/$(O)/bin sh tests/run.sh

test-fast: test-quick

test-sanitize:
	@$(MAKE) $(SUBJOBS) O=build-san SANITIZE=1 all
	TRIAGE_BINDIR=$(CURDIR)/build-san/bin TEST_SANITIZE=1 ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 sh tests/run.sh

lint-man:
	@command -v mandoc >/dev/null || { echo "mandoc not installed"; exit 1; }
	mandoc -Tlint -W warning $(MAN1) $(MAN5)

# make bench: three real shapes (frame-heavy prefill, kernel-dense decode, vLLM), each
# grown until gzip -dc takes 0.5 s; BENCH_LARGE=1 adds 4 x (tests/bench.sh)
bench: all
	sh tests/bench.sh

# The pathological shapes of issue 21 at SCALE_N and 10 x SCALE_N items:
# fails when 10 x costs over 12 times the CPU, or when a process of the
# report on SCALE_SAME (a million) kernels of one name peaks over 256 MB
# (tests/scale.sh).
scale: all
	sh tests/scale.sh

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANPREFIX)/man1 $(DESTDIR)$(MANPREFIX)/man5 $(DESTDIR)$(DATADIR)
	cp -f $(BINS) $(DESTDIR)$(BINDIR)/
	cp -f scripts/triage $(DESTDIR)$(BINDIR)/triage
	chmod 755 $(DESTDIR)$(BINDIR)/triage
	cp -f $(MAN1) $(DESTDIR)$(MANPREFIX)/man1/
	cp -f $(MAN5) $(DESTDIR)$(MANPREFIX)/man5/
	if [ -d data ]; then cp -f data/* $(DESTDIR)$(DATADIR)/; fi

uninstall:
	for t in $(TOOLS) triage; do rm -f $(DESTDIR)$(BINDIR)/$$t; done
	for m in $(notdir $(MAN1)); do rm -f $(DESTDIR)$(MANPREFIX)/man1/$$m; done
	for m in $(notdir $(MAN5)); do rm -f $(DESTDIR)$(MANPREFIX)/man5/$$m; done
	rm -rf $(DESTDIR)$(DATADIR)

# ---- Fuzzing (make fuzz) --------------------------------------------------
# libFuzzer harnesses under tests/fuzz/, built with clang into build-fuzz/:
#   fuzz-scan        the event scanner: scan_run over zio (plain or gzip bytes),
#                    and scan_run_tap: every byte in order, the array's end
#   fuzz-extract     trace-extract's per-event extraction (on_event)
#   fuzz-records     the record reader: rec_reader, rec_read and JSON members
#   fuzz-discover    trace discovery over a directory tree the input describes
#   fuzz-serverargs  server_args.json: reading, framework hints, writing back
#   fuzz-sidefiles   --patterns catalogs and --mapping site records, with
#                    the relaxed lookups over the payloads they make
#   fuzz-capture     trace-capture's handling of servers' replies and URLs
#   fuzz-kname       kernel names: demangling, identity, short names, categories
#   fuzz-roofline    kernel-roofline's GPU table (--gpu-specs) and its models
#                    of recorded op shapes
# Each starts from seeds written by tests/gen-trace (build-fuzz/seeds-*) and
# keeps what it learns in build-fuzz/corpus-*.  FUZZ_TIME is the run length of
# each harness in seconds; FUZZ_ARGS passes more libFuzzer options;
# FUZZ_HARNESSES picks which run.  A crash leaves its input as
# build-fuzz/crash-* and stops the target.
FUZZ_CC    ?= clang-14
FUZZ_TIME  ?= 180
FUZZ_ARGS  ?=
FUZZ_O     := build-fuzz
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = -std=c11 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter \
	-Wno-unused-function $(FUZZ_SAN)
FUZZ_LIBOBJ := $(COMMON_SRC:%.c=$(FUZZ_O)/%.o) $(FUZZ_O)/gen/kernel_categories.o \
	$(FUZZ_O)/gen/gpu_specs.o
FUZZ_HARNESSES ?= scan extract records discover serverargs sidefiles capture kname roofline
FUZZ_BINS   := $(FUZZ_HARNESSES:%=$(FUZZ_O)/fuzz-%)

# What each harness links besides the library, and the headers it sees.
FUZZ_EXTRA_extract    = cmd/trace-extract/discover.o cmd/trace-extract/framework.o cmd/trace-extract/model.o \
	cmd/trace-extract/pyctx.o cmd/trace-extract/shapes.o cmd/trace-extract/links.o
FUZZ_EXTRA_discover   = cmd/trace-extract/discover.o cmd/trace-extract/framework.o
FUZZ_EXTRA_serverargs = cmd/trace-extract/discover.o cmd/trace-extract/framework.o
FUZZ_EXTRA_sidefiles  = cmd/fuse-detect/catalog.o cmd/fuse-detect/match.o gen/fuse_catalog.o
FUZZ_EXTRA_capture    = cmd/trace-capture/probe.o cmd/trace-capture/records.o cmd/trace-capture/sys.o
FUZZ_EXTRA_roofline   = cmd/kernel-roofline/model.o
FUZZ_INC_discover     = -iquote cmd/trace-extract
FUZZ_INC_serverargs   = -iquote cmd/trace-extract
FUZZ_INC_sidefiles    = -iquote cmd/fuse-detect
FUZZ_INC_roofline     = -iquote cmd/kernel-roofline
FUZZ_LIBS_capture     = -lcurl
# The capture's failures end in die(), which the tool does by exiting; in
# the harness they return through longjmp and leave what the call held,
# a few hundred bytes a time, so its run needs more room than the others.
FUZZ_RSS_capture      = 6144
FUZZ_ALLEXTRA := $(sort $(foreach h,$(FUZZ_HARNESSES),$(addprefix $(FUZZ_O)/,$(FUZZ_EXTRA_$(h)))))

$(FUZZ_O)/%.o: %.c $(COMMON_HDR) $(TOOL_HDR) tests/fuzz/fuzz.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -iquote tests/fuzz $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_O)/tests/fuzz/fuzz-%.o: tests/fuzz/fuzz-%.c $(COMMON_HDR) $(TOOL_HDR) tests/fuzz/fuzz.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -iquote tests/fuzz $(FUZZ_INC_$*) $(FUZZ_CFLAGS) \
	  -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_O)/gen/%.o: $(O)/gen/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_O)/libcommon.a: $(FUZZ_LIBOBJ)
	$(AR) rcs $@ $^

$(FUZZ_O)/fuzz-%: $(FUZZ_O)/tests/fuzz/fuzz-%.o $(FUZZ_O)/tests/fuzz/fuzz-err.o $(FUZZ_ALLEXTRA) \
    $(FUZZ_O)/libcommon.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $(FUZZ_O)/tests/fuzz/fuzz-$*.o \
	  $(FUZZ_O)/tests/fuzz/fuzz-err.o $(addprefix $(FUZZ_O)/,$(FUZZ_EXTRA_$*)) \
	  $(FUZZ_O)/libcommon.a $(FUZZ_LIBS_$*) $(LDLIBS)

fuzz-build: $(FUZZ_BINS)

fuzz-seeds: all
	sh tests/fuzz/seeds.sh $(FUZZ_O) $(O)/bin

fuzz: fuzz-build fuzz-seeds
	for h in $(FUZZ_HARNESSES); do \
	  mkdir -p $(FUZZ_O)/corpus-$$h && \
	  rss=2048; [ $$h = capture ] && rss=$(FUZZ_RSS_capture); \
	  $(FUZZ_O)/fuzz-$$h -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=$$rss \
	    -artifact_prefix=$(FUZZ_O)/crash-$$h- -print_final_stats=1 $(FUZZ_ARGS) \
	    $(FUZZ_O)/corpus-$$h $(FUZZ_O)/seeds-$$h || exit 1; \
	done

clean:
	rm -rf build build-san build-fuzz

FORCE:

.PHONY: FORCE all test check test-quick test-fast test-sanitize lint-man bench scale install uninstall clean \
	fuzz fuzz-build fuzz-seeds
