# ragsweep: plain GNU make.  `make test` works on a fresh Debian machine as
# root: scripts/install-deps.sh installs what is missing.
PREFIX ?= /usr/local
BUILD  ?= build
OPT    ?= -O2 -g
OMP    ?= -fopenmp
CC     ?= cc
WARN    = -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
          -Wpointer-arith -Wvla -Wformat=2 -Wundef -Wwrite-strings -Wno-unused-parameter -Wno-format-truncation
CPPFLAGS += -Iinclude -Isrc -MMD -MP
# -ffp-contract=off: no fused multiply-add, so the bits do not depend on
# the compiler's contraction choices (never -ffast-math).
CFLAGS   += -std=c11 $(WARN) $(OPT) $(OMP) -ffp-contract=off -fPIC
# Deferred (=) so pkg-config runs after `deps` has installed libhdf5-dev.
# The serial HDF5 by name: Debian's hdf5.pc is an alternative that an
# installed libhdf5-openmpi-dev may point at its OpenMPI flavour.
# MPI=1 (make mpi): the OpenMPI build of HDF5, compiled by mpicc, with
# RS_WITH_MPI (src/util/mpi.c, the parallel file access of corpus_h5.c).
MPI ?=
HDF5_PKG    = $(if $(MPI),hdf5-openmpi,hdf5-serial)
HDF5_FALLBACK = $(if $(MPI),openmpi,serial)
HDF5_CFLAGS = $(shell pkg-config --cflags $(HDF5_PKG) 2>/dev/null || $(if $(MPI),,pkg-config --cflags hdf5 2>/dev/null ||) \
                echo -I/usr/include/hdf5/$(HDF5_FALLBACK))
HDF5_LIBS   = $(shell pkg-config --libs $(HDF5_PKG) 2>/dev/null || $(if $(MPI),,pkg-config --libs hdf5 2>/dev/null ||) \
                echo -L/usr/lib/x86_64-linux-gnu/hdf5/$(HDF5_FALLBACK) -lhdf5)
ifneq ($(MPI),)
CPPFLAGS += -DRS_WITH_MPI
endif
# libcurl is not linked: src/llm/http.c loads it with the first request.
LDLIBS   += $(HDF5_LIBS) -lcsv -ljson-c -lsqlite3 -lz -lm
# The ragsweep program takes HDF5 from its static archive where the -dev
# package ships one: Debian's libhdf5.so needs libcurl and libcrypto (for
# an S3 driver ragsweep never opens), some 30 shared objects whose loading
# was most of a small eval's start-up (18 ms of it; from the archive, the
# linker takes none of that code).  Its own link flags are libhdf5.settings'.
HDF5_LIBDIR  = $(or $(shell pkg-config --variable=libdir $(HDF5_PKG) 2>/dev/null),/usr/lib/x86_64-linux-gnu/hdf5/$(HDF5_FALLBACK))
HDF5_ARCHIVE = $(if $(MPI),,$(wildcard $(HDF5_LIBDIR)/libhdf5.a))
# HDF5's own symbols stay visible to the filter plugins libhdf5 may load
# (HDF5_PLUGIN_PATH): plugins resolve them in the program that loads them.
HDF5_EXPORTS = '-Wl,--export-dynamic-symbol=H5*'
EXE_LDLIBS   = $(if $(HDF5_ARCHIVE),$(HDF5_EXPORTS) $(HDF5_ARCHIVE) -lsz -lz -ldl -lm,$(HDF5_LIBS)) -lcsv -ljson-c -lsqlite3 -lz -lm

# The library: every stage folder of src/ but the command line.
LIB_SRC  := $(filter-out src/cli/%,$(wildcard src/*.c src/*/*.c))
# trec_eval_main.c is the trec_eval program's own main (see $(BUILD)/trec_eval).
CLI_SRC  := $(filter-out src/cli/trec_eval_main.c,$(wildcard src/cli/*.c))
TEST_SRC := $(wildcard tests/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: mpi test-mpi bench-mpi
.PHONY: all deps build demo judge-demo rag-demo test check asan serial bench clean install fuzz fuzz-build fuzz-regress
all: deps
	@$(MAKE) --no-print-directory build

deps:
	@scripts/install-deps.sh

build: $(BUILD)/ragsweep $(BUILD)/libragsweep.a $(BUILD)/libragsweep.so $(BUILD)/trec_eval $(BUILD)/gen_sweep \
  $(BUILD)/ragsweep-uninstalled.pc

# Only what include/ragsweep/*.h marks RS_API leaves libragsweep.so; the
# rs__ internals stay inside (the static library keeps them all for the
# CLI and the tests, which link it).
$(LIB_OBJ): CFLAGS += -fvisibility=hidden

$(BUILD)/libragsweep.a: $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/libragsweep.so: $(LIB_OBJ)
	$(CC) -shared $(CFLAGS) -o $@ $^ $(LDLIBS)

# pkg-config: the build tree's ragsweep-uninstalled.pc (the headers here,
# the library in $(BUILD)), which pkg-config takes for "ragsweep" when
# PKG_CONFIG_PATH holds $(BUILD); `make install` writes ragsweep.pc for
# $(PREFIX) itself, so a PREFIX given there is the one it names.
RS_VERSION = $(shell sed -n 's/^\#define RAGSWEEP_VERSION "\(.*\)"/\1/p' src/internal.h)
PC_SUBST = sed -e 's|@VERSION@|$(RS_VERSION)|' -e 's|@DEPLIBS@|$(strip $(LDLIBS) $(filter -fopenmp,$(OMP)))|'
$(BUILD)/ragsweep-uninstalled.pc: ragsweep.pc.in src/internal.h Makefile
	@mkdir -p $(@D)
	$(PC_SUBST) -e 's|@PREFIX@|$(CURDIR)|' -e 's|@LIBDIR@|$(CURDIR)/$(BUILD)|' -e 's|@INCLUDEDIR@|$(CURDIR)/include|' $< >$@.tmp && mv $@.tmp $@

$(BUILD)/ragsweep: $(CLI_OBJ) $(BUILD)/libragsweep.a
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libragsweep.a $(EXE_LDLIBS)

# The drop-in trec_eval: the text engine only, so it starts without
# loading libhdf5, libcurl and theirs (src/cli/trec_eval_main.c).
TREC_EVAL_OBJ = $(BUILD)/src/cli/trec_eval_main.o $(BUILD)/src/cli/cmd_trec_eval.o $(BUILD)/src/cli/omp_env.o
$(BUILD)/trec_eval: $(TREC_EVAL_OBJ) $(BUILD)/libragsweep.a
	@rm -f $@ # it was once a symlink to ragsweep: do not write through it
	$(CC) $(CFLAGS) -o $@ $(TREC_EVAL_OBJ) $(BUILD)/libragsweep.a -lz -lm

$(BUILD)/gen_sweep: $(BUILD)/datasets/gen_sweep.o $(BUILD)/libragsweep.a
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libragsweep.a $(LDLIBS)

$(BUILD)/bench_core: $(BUILD)/bench/core.o $(BUILD)/libragsweep.a
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libragsweep.a $(LDLIBS)

$(BUILD)/bench_floor: $(BUILD)/bench/floor.o
	$(CC) $(CFLAGS) -o $@ $<

$(BUILD)/bench_llm: $(BUILD)/bench/llm.o $(BUILD)/libragsweep.a
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libragsweep.a $(LDLIBS)

$(BUILD)/llm_server: $(BUILD)/bench/llm_server.o
	$(CC) $(CFLAGS) -o $@ $<

$(BUILD)/test_all: $(TEST_OBJ) $(BUILD)/libragsweep.a
	$(CC) $(CFLAGS) -o $@ $(TEST_OBJ) $(BUILD)/libragsweep.a -lcriterion $(LDLIBS)

# Objects depend on the Makefile too: a changed flag (-fvisibility, -D...)
# rebuilds them instead of leaving objects of the old flags behind.
$(BUILD)/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The README's first command: a 20k-query x 24-configuration sweep, generated
# (seeded) on first use, then scored; prints the leaderboard and the CSVs,
# and ends with the path of the HTML report (--report: out/demo/report.html).
DEMO_CORPUS = $(BUILD)/demo/corpus.h5
demo: deps
	@$(MAKE) --no-print-directory build
	@if [ ! -f $(DEMO_CORPUS) ]; then \
	  mkdir -p $(BUILD)/demo && \
	  echo "generating $(DEMO_CORPUS): 20000 queries x 24 configurations (model x chunk x reranker)" && \
	  $(BUILD)/gen_sweep -o $(DEMO_CORPUS) --queries 20000 --k 100 --seed 42; fi
	$(BUILD)/ragsweep eval $(DEMO_CORPUS) -o out/demo --per-query --report

# `judge` end to end without an LLM: a seeded 200-query sweep with texts,
# scripts/judge_server.py (a deterministic assessor on 127.0.0.1) as the
# model, then eval on the LLM's qrels.  The server stops when this ends; it
# takes the last run's port again when it is free, so a re-run finds its
# replies in the cache (the base URL is part of every cache key).
JUDGE_DEMO = out/judge-demo
judge-demo: deps
	@$(MAKE) --no-print-directory build
	@mkdir -p $(JUDGE_DEMO)
	/usr/bin/python3 scripts/judge_demo_data.py $(JUDGE_DEMO)/data
	@prev=$$(cat $(JUDGE_DEMO)/port 2>/dev/null || echo 0); rm -f $(JUDGE_DEMO)/port; \
	/usr/bin/python3 scripts/judge_server.py --answers $(JUDGE_DEMO)/data/answers.tsv --port $$prev --or-any-port \
	  --port-file $(JUDGE_DEMO)/port --max-seconds 300 & server=$$!; \
	trap 'kill $$server 2>/dev/null' EXIT; \
	for i in $$(seq 100); do [ -f $(JUDGE_DEMO)/port ] && break; sleep 0.1; done; \
	url=http://127.0.0.1:$$(cat $(JUDGE_DEMO)/port)/v1; \
	$(BUILD)/ragsweep judge $(JUDGE_DEMO)/data/corpus.h5 -o $(JUDGE_DEMO) --model judge-demo --base-url $$url && \
	$(BUILD)/ragsweep eval $(JUDGE_DEMO)/data/corpus.h5 --qrels $(JUDGE_DEMO)/qrels.txt -o $(JUDGE_DEMO)/eval \
	  -m AnswerPresence@1 -m AnswerPresence@5 -m nDCG@10

# `rag` end to end without an LLM: a seeded 3-configuration x 300-sample
# sweep in ragas's JSONL fields, scripts/rag_server.py (a deterministic
# word-overlap assessor and bag-of-words embedder on 127.0.0.1) as the judge
# and the embedder, every metric and a criterion, then the paired tests
# between the configurations.  The server stops when this ends.  It listens
# on the last run's port when it is free: the base URL is part of every
# cache key, so a re-run then sends nothing.
RAG_DEMO = out/rag-demo
RAG_DEMO_DELAY ?= 0
rag-demo: deps
	@$(MAKE) --no-print-directory build
	@mkdir -p $(RAG_DEMO)
	/usr/bin/python3 scripts/rag_demo_data.py $(RAG_DEMO)/data
	@prev=$$(cat $(RAG_DEMO)/port 2>/dev/null || echo 0); rm -f $(RAG_DEMO)/port; \
	/usr/bin/python3 scripts/rag_server.py --port $$prev --or-any-port --port-file $(RAG_DEMO)/port \
	  --delay $(RAG_DEMO_DELAY) --max-seconds 600 & server=$$!; \
	trap 'kill $$server 2>/dev/null' EXIT; \
	for i in $$(seq 100); do [ -f $(RAG_DEMO)/port ] && break; sleep 0.1; done; \
	url=http://127.0.0.1:$$(cat $(RAG_DEMO)/port)/v1; \
	$(BUILD)/ragsweep rag $(RAG_DEMO)/data/sweep.jsonl -o $(RAG_DEMO) --model rag-demo --embed-model rag-demo-embed \
	  --base-url $$url -m faithfulness -m answer_relevancy -m context_precision -m context_recall \
	  -m factual_correctness -m id_based_context_precision -m id_based_context_recall \
	  --criterion tone=$(RAG_DEMO)/data/tone.txt && \
	$(BUILD)/ragsweep compare --per-query $(RAG_DEMO)/per_sample.csv -o $(RAG_DEMO)/compare

# The tests run the OpenMP build and compare it with the serial reference
# build (RAGSWEEP_SERIAL_BIN); the conformance data is read in ../shared.
# asan gets a serial build of its own: sanitizer objects in build-serial/
# would break a later plain `make test` at link time.  --verbose: a line per
# suite and per test as they finish, so a long run shows its progress.
SERIAL_BUILD ?= build-serial
test: deps
	@RAGSWEEP_WITH_TESTS=1 scripts/install-deps.sh
	@$(MAKE) --no-print-directory BUILD=$(SERIAL_BUILD) OMP=-Wno-unknown-pragmas build
	@$(MAKE) --no-print-directory build $(BUILD)/test_all
	RAGSWEEP_BIN=$(CURDIR)/$(BUILD)/ragsweep RAGSWEEP_SERIAL_BIN=$(CURDIR)/$(SERIAL_BUILD)/ragsweep \
	  $(BUILD)/test_all --jobs 2 --verbose

check: test

# MPI (README, "MPI"): build-mpi/ragsweep, compiled by mpicc against
# Debian's OpenMPI and parallel HDF5, installed here only
# (RAGSWEEP_WITH_MPI=1).  `make test-mpi` runs eval under mpirun at 1..4
# ranks on a generated sweep and compares every output file byte for byte
# with the one-process build/ragsweep.
MPI_BUILD = build-mpi
mpi: deps
	@RAGSWEEP_WITH_MPI=1 scripts/install-deps.sh
	@$(MAKE) --no-print-directory BUILD=$(MPI_BUILD) CC=mpicc MPI=1 build

test-mpi: mpi
	@$(MAKE) --no-print-directory build
	tests/mpi/run.sh $(CURDIR)/$(BUILD) $(CURDIR)/$(MPI_BUILD)

# The 100-configuration x 100k-query sweep at 1 and 2 ranks (one thread
# each): bench/results/mpi.csv.
bench-mpi: mpi
	@$(MAKE) --no-print-directory build
	bench/mpi.sh $(CURDIR)/$(BUILD) $(CURDIR)/$(MPI_BUILD)

serial: deps
	@$(MAKE) --no-print-directory BUILD=build-serial OMP=-Wno-unknown-pragmas build

asan: deps
	@LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  $(MAKE) --no-print-directory test BUILD=build-asan SERIAL_BUILD=build-asan-serial \
	  OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"

# Benchmarks (README, "Performance"): the metric core against a naive
# reference and across threads, then whole-process `eval` from HDF5 and
# `trec_eval` from TREC text, each as a ratio to its floor measured in the
# same run at the same thread count (bench_floor: a page-cached pass over
# the same bytes) and, for text, to the peer (trec_eval 10.0 at -O0, built
# by bench/peer.sh from BENCH_TREC_EVAL_SRC or a git clone).  Every figure
# is checked (reference values, identical bytes at every thread count and
# to the peer) and appended to bench/results/*.csv (ratios.csv: the ratios
# and the targets of issue 18) with machine, date and load.  Last, `eval`
# of the same text files beside the trec_eval drop-in (bench/direct.sh).
# BENCH_WORK: where generated inputs are kept (default bench/work).
# BENCH_QUICK=1: small workloads only (a minute, for a smoke test).
BENCH_QUICK ?=
bench: deps
	@$(MAKE) --no-print-directory BUILD=build-bench OPT="-O3 -g -DNDEBUG" build build-bench/bench_core build-bench/bench_floor
	build-bench/bench_core $(if $(BENCH_QUICK),--quick)
	BENCH_SWEEPS="$(if $(BENCH_QUICK),nq,1M 100x100k 10kx1000 nq)" bench/sweep.sh build-bench
	bench/run.sh build-bench "$(if $(BENCH_QUICK),10000,10000 100000 1000000)"
	bench/direct.sh build-bench "$(if $(BENCH_QUICK),10000,10000 100000 1000000)"
	@$(MAKE) --no-print-directory BUILD=build-bench OPT="-O3 -g -DNDEBUG" build-bench/bench_llm build-bench/llm_server && build-bench/bench_llm $(if $(BENCH_QUICK),--quick)

# Fuzzing: one libFuzzer target per parser (tests/fuzz/fuzz_*.c), built by
# clang with ASan and UBSan into build-fuzz/, the library included (gcc
# objects are never linked into them).  `make fuzz` first replays every
# reproducer of tests/fuzz/regress/<target>/ (a crash found once stays
# fixed), then runs each target FUZZ_SECONDS from a copy of its seeds
# (tests/fuzz/seeds/<target>/) in build-fuzz/work/, so the tree is never
# written; a crash, a leak, a hang (FUZZ_TIMEOUT s; 25 s for the HDF5 target) or an allocation past
# FUZZ_RSS_MB fails the run and leaves its input in build-fuzz/work/<target>/.
# FUZZ_SKIP drops targets (CI skips none unless it says so).  clang and its
# runtime are installed only here (RAGSWEEP_WITH_FUZZ=1).
FUZZ_BUILD   = build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TIMEOUT ?= 10
FUZZ_RSS_MB  ?= 2048
FUZZ_SKIP    ?=
# libFuzzer's seed: 0 draws one; CI fixes it so its brief run is the same run every time.
FUZZ_SEED    ?= 0
FUZZ_ALL     := $(basename $(notdir $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_TARGETS ?= $(filter-out $(FUZZ_SKIP),$(FUZZ_ALL))
FUZZ_OPT      = -Wno-unknown-warning-option -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
                -DRS_IO_BLOCK=256

fuzz-build:
	@RAGSWEEP_WITH_FUZZ=1 scripts/install-deps.sh
	@$(MAKE) -s --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang OMP=-Wno-unknown-pragmas OPT="$(FUZZ_OPT)" \
	  $(addprefix $(FUZZ_BUILD)/,$(FUZZ_ALL))

# libhdf5's own free-list blocks look leaked (tests/fuzz/lsan.supp); naming
# their frame takes the slow unwinder, so only the HDF5 target pays for it.
FUZZ_ENV = LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan.supp \
  ASAN_OPTIONS=$$(case $$t in fuzz_corpus_h5) echo fast_unwind_on_malloc=0;; esac)
# A file that hangs libhdf5 ends as an error once its probe child has made no
# progress for 10 s (PROBE_STALL_SECONDS in corpus_h5.c), and the HDF5 target
# opens each input twice: its inputs get 25 s before they count as hangs.
FUZZ_TIMEOUT_OF = $$(case $$t in fuzz_corpus_h5) [ $(FUZZ_TIMEOUT) -gt 25 ] && echo $(FUZZ_TIMEOUT) || echo 25;; \
  *) echo $(FUZZ_TIMEOUT);; esac)

fuzz-regress: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
	  files=$$(find tests/fuzz/regress/$$t -type f 2>/dev/null | sort); \
	  [ -n "$$files" ] || continue; \
	  echo "fuzz-regress: $$t: $$(echo "$$files" | wc -l) reproducer(s)"; \
	  $(FUZZ_ENV) $(FUZZ_BUILD)/$$t -rss_limit_mb=$(FUZZ_RSS_MB) -timeout=$(FUZZ_TIMEOUT_OF) $$files >$(FUZZ_BUILD)/regress-$$t.log 2>&1 || \
	    { tail -n 40 $(FUZZ_BUILD)/regress-$$t.log; echo "fuzz-regress: $$t FAILED"; exit 1; }; \
	done

fuzz: fuzz-regress
	@set -e; for t in $(FUZZ_TARGETS); do \
	  w=$(FUZZ_BUILD)/work/$$t; rm -rf $$w; mkdir -p $$w/corpus $$w/crash; \
	  if [ -d tests/fuzz/seeds/$$t ]; then cp tests/fuzz/seeds/$$t/* $$w/corpus/; fi; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  if TMPDIR=$$w $(FUZZ_ENV) $(FUZZ_BUILD)/$$t -seed=$(FUZZ_SEED) -max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT_OF) -rss_limit_mb=$(FUZZ_RSS_MB) \
	       -print_final_stats=1 -artifact_prefix=$$w/crash/ $$w/corpus >$$w/log 2>&1; then \
	    echo "  $$(grep -E '^#[0-9]+' $$w/log | tail -n 1)"; \
	  else tail -n 40 $$w/log; echo "fuzz: $$t FAILED: reproducer in $$w/crash/ (add it to tests/fuzz/regress/$$t/)"; exit 1; fi; \
	done

# A fuzz target: its own object, the library, and (gate) the CLI file it tests.
$(BUILD)/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/libragsweep.a
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $(filter %.o,$^) $(BUILD)/libragsweep.a $(LDLIBS)
$(BUILD)/fuzz_gate: $(BUILD)/src/cli/gate.o $(BUILD)/src/cli/sweep_io.o $(BUILD)/src/cli/direct_input.o
$(BUILD)/tests/fuzz/fuzz_corpus_h5.o: CPPFLAGS += -DFUZZ_H5BASE='"$(CURDIR)/tests/fuzz/h5base"'

clean:
	rm -rf build build-*

install: all
	install -D -m 755 $(BUILD)/ragsweep $(DESTDIR)$(PREFIX)/bin/ragsweep
	rm -f $(DESTDIR)$(PREFIX)/bin/trec_eval
	install -D -m 755 $(BUILD)/trec_eval $(DESTDIR)$(PREFIX)/bin/trec_eval
	install -D -m 644 $(BUILD)/libragsweep.a $(DESTDIR)$(PREFIX)/lib/libragsweep.a
	install -D -m 755 $(BUILD)/libragsweep.so $(DESTDIR)$(PREFIX)/lib/libragsweep.so
	install -d $(DESTDIR)$(PREFIX)/include/ragsweep
	install -m 644 include/ragsweep/*.h $(DESTDIR)$(PREFIX)/include/ragsweep/
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	$(PC_SUBST) -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$${prefix}/lib|' -e 's|@INCLUDEDIR@|$${prefix}/include|' \
	  ragsweep.pc.in >$(DESTDIR)$(PREFIX)/lib/pkgconfig/ragsweep.pc

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(BUILD)/src/cli/trec_eval_main.d $(TEST_OBJ:.o=.d) $(wildcard $(BUILD)/tests/fuzz/*.d) $(BUILD)/datasets/gen_sweep.d $(BUILD)/bench/core.d \
  $(BUILD)/bench/llm.d $(BUILD)/bench/llm_server.d $(BUILD)/bench/floor.d

# One file owns each dependency; only it sees the dependency's headers.
# (test_corpus_ids.c builds string layouts our writer never writes;
# test_sweep.c puts errors into cells of generated runs.)
$(BUILD)/src/formats/corpus_h5.o $(BUILD)/tests/test_corpus_ids.o $(BUILD)/tests/test_sweep.o: CPPFLAGS += $(HDF5_CFLAGS)

# Tests write argv arrays from string literals.
$(BUILD)/tests/%.o: CFLAGS += -Wno-write-strings
