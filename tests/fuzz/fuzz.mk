# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fuzzing with libFuzzer (clang-14, ASan + UBSan):
#  - fuzz_scan: the shared scanner and trie (include/hdrstrip/scan.h, trie.h),
#    driven segment by segment as bpf/hdrstrip.bpf.c drives them, and send by
#    send in remove mode as bpf/proxy.bpf.c does, against a liberal field
#    reader and the same stream cut other ways (scan_check.c);
#  - fuzz_hlist: the header-list parser and trie compiler (core/hlist.c,
#    core/compile.c) against a naive reading of the text (hlist_check.c);
#  - fuzz_tcp: flow.h and the scanner driven per TCP segment as the datapath
#    drives them (seg_drive.c), over overlaps, retransmissions, reordering,
#    SYN, RST, FIN and kernel drops, against what Linux's receive path
#    (tcp_model.c) hands the application (tcp_check.c).
#
#   make fuzz [FUZZ_SECONDS=300]   each fuzzer that long; the corpus grows in
#                                  build/fuzz/corpus/, crashes go to tests/fuzz/crashes/
#   make test-fuzz                 replay the seeds and tests/fuzz/regress/, then
#                                  each fuzzer for FUZZ_TEST_SECONDS (10) from the seeds
#   make fuzz-cov                  line coverage of scan*.h/trie.h/hlist.c/compile.c
#                                  reached by the corpus (llvm-cov)
#   tests/fuzz/gen_seeds.py        rewrite the seed corpora
#
# A crash file replays with: build/fuzz/fuzz_scan FILE (SC_DEBUG=1 shows each run;
# for fuzz_tcp, TC_DEBUG=1 traces each segment, TC_STATS=1 prints counters).
# tests/fuzz/regress/tcp/open-*: fuzz_tcp findings not fixed yet. fuzz_tcp
# counts their classes as known so that fuzzing goes on (TC_STRICT=1 fails
# them); test-unit checks that each still fails, strictly judged, until the
# fix renames it.
.PHONY: test-fuzz fuzz-cov

FUZZ_CC ?= clang-14
FUZZ_SECONDS ?= 300
FUZZ_TEST_SECONDS ?= 10
FUZZ_DIR := tests/fuzz
FUZZ_OUT := $(OUTPUT)/fuzz
FUZZERS := fuzz_scan fuzz_hlist fuzz_tcp
FUZZ_BINS := $(addprefix $(FUZZ_OUT)/,$(FUZZERS))
FUZZ_CFLAGS := -g -O1 -std=gnu11 $(WARN) -Iinclude -Icore -I$(FUZZ_DIR)
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_HDRS := $(wildcard $(FUZZ_DIR)/*.h) $(CORE_HDRS)
# Linked into every fuzzer: the liberal reader, and what the oracles and
# their entry points share (check_util.h).
FUZZ_COMMON := $(FUZZ_DIR)/liberal.c $(FUZZ_DIR)/check_util.c
FUZZ_SRCS_fuzz_scan := $(FUZZ_DIR)/fuzz_scan.c $(FUZZ_DIR)/scan_check.c $(FUZZ_COMMON)
FUZZ_SRCS_fuzz_hlist := $(FUZZ_DIR)/fuzz_hlist.c $(FUZZ_DIR)/hlist_check.c $(FUZZ_COMMON)
FUZZ_SRCS_fuzz_tcp := $(FUZZ_DIR)/fuzz_tcp.c $(FUZZ_DIR)/tcp_check.c $(FUZZ_DIR)/tcp_model.c \
	$(FUZZ_DIR)/seg_drive.c $(FUZZ_DIR)/scan_check.c $(FUZZ_COMMON)
# Per fuzzer: the longest input, and its dictionary.
FUZZ_OPTS_fuzz_scan := -max_len=4096 -dict=$(FUZZ_DIR)/scan.dict
FUZZ_OPTS_fuzz_hlist := -max_len=4096 -dict=$(FUZZ_DIR)/hlist.dict
FUZZ_OPTS_fuzz_tcp := -max_len=4096 -dict=$(FUZZ_DIR)/tcp.dict
FUZZ_CRASHES := $(FUZZ_DIR)/crashes

$(FUZZ_OUT) $(FUZZ_OUT)/cov:
	$(Q)mkdir -p $@

.SECONDEXPANSION:
# Each source an object of its own, built once for every fuzzer that links it
# and in parallel (the oracles take 5-17 s each).
FUZZ_OBJ := $(FUZZ_OUT)/obj
fuzz_objs = $(patsubst %.c,$(FUZZ_OBJ)/%.o,$(FUZZ_SRCS_$(1)) $(CORE_SRCS))

$(FUZZ_OBJ)/%.o: %.c $(FUZZ_HDRS)
	$(Q)mkdir -p $(@D)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -c $< -o $@

$(FUZZ_BINS): $(FUZZ_OUT)/%: $$(call fuzz_objs,%) | $(FUZZ_OUT)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) $(call fuzz_objs,$*) -o $@

# fuzz_run NAME SECONDS CORPUS: fuzz NAME from its seeds for SECONDS, new
# inputs in CORPUS; the exit status is the fuzzer's (0: nothing found).
define fuzz_run
	mkdir -p $(3) $(FUZZ_CRASHES) && \
	echo "fuzz: $(1) for $(2)s (corpus $(3))" && \
	$(FUZZ_OUT)/$(1) $(FUZZ_OPTS_$(1)) -max_total_time=$(2) -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_CRASHES)/$(1)- $(3) $(FUZZ_DIR)/seeds/$(subst fuzz_,,$(1)) \
		2>$(FUZZ_OUT)/$(1).log; rc=$$?; \
	grep -a -E '^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|average_exec_per_sec)' \
		$(FUZZ_OUT)/$(1).log | sed 's/^/  /'; \
	if [ $$rc -ne 0 ]; then grep -a -E '^INFO: Seed|^fuzz_|SUMMARY|ERROR|Test unit written' \
		$(FUZZ_OUT)/$(1).log | sed 's/^/  /' >&2; \
		for f in $$(grep -a -o "Test unit written to [^ ]*" $(FUZZ_OUT)/$(1).log | \
			sed 's/^Test unit written to //'); do \
			[ -f "$$f" ] || continue; \
			echo "  $$f as base64 (base64 -d >FILE to replay it where the log is all there is):" >&2; \
			base64 -w 76 "$$f" | sed 's/^/    /' >&2; \
		done; fi; \
	exit $$rc
endef

fuzz: $(FUZZ_BINS)
	$(Q)failed=; for f in $(FUZZERS); do \
		$(MAKE) --no-print-directory fuzz-one-$$f FUZZ_RUN_SECONDS=$(FUZZ_SECONDS) \
			FUZZ_CORPUS=$(FUZZ_OUT)/corpus/$$f || failed="$$failed $$f"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FOUND SOMETHING:$$failed (see $(FUZZ_CRASHES)/)" >&2; exit 1; fi

fuzz-one-%: $(FUZZ_OUT)/%
	$(Q)$(call fuzz_run,$*,$(FUZZ_RUN_SECONDS),$(FUZZ_CORPUS))

# Replay every seed and regression input once, then fuzz a little from the
# seeds (a fresh corpus each time, so the run is bounded and repeatable in
# what it starts from). FUZZ_JOBS fuzzers at a time (one a CPU), each one's
# lines printed together once it is done.
FUZZ_JOBS ?= $(JOBS)
test-fuzz: $(FUZZ_BINS)
	$(Q)n=0; for f in $(FUZZERS); do \
		rm -f $(FUZZ_OUT)/$$f.failed; \
		( d=$${f#fuzz_}; dirs=$(FUZZ_DIR)/seeds/$$d; \
		[ -d $(FUZZ_DIR)/regress/$$d ] && dirs="$$dirs $(FUZZ_DIR)/regress/$$d"; \
		if ! $(FUZZ_OUT)/$$f -runs=0 $$dirs >$(FUZZ_OUT)/$$f.replay.log 2>&1; then \
			echo "$$f(replay)" >$(FUZZ_OUT)/$$f.failed; \
			grep -a -E '^fuzz_|SUMMARY|Running:' $(FUZZ_OUT)/$$f.replay.log | tail -3; exit; fi; \
		echo "test-fuzz: $$f: $$(find $$dirs -type f | wc -l) seed and regression inputs pass"; \
		rm -rf $(FUZZ_OUT)/test-corpus/$$f; \
		$(MAKE) --no-print-directory fuzz-one-$$f FUZZ_RUN_SECONDS=$(FUZZ_TEST_SECONDS) \
			FUZZ_CORPUS=$(FUZZ_OUT)/test-corpus/$$f || echo "$$f" >$(FUZZ_OUT)/$$f.failed; \
		) >$(FUZZ_OUT)/$$f.test.log 2>&1 & \
		n=$$((n + 1)); [ $$((n % $(FUZZ_JOBS))) -ne 0 ] || wait; \
	done; wait; \
	failed=; for f in $(FUZZERS); do \
		cat $(FUZZ_OUT)/$$f.test.log; \
		[ ! -e $(FUZZ_OUT)/$$f.failed ] || failed="$$failed $$(cat $(FUZZ_OUT)/$$f.failed)"; \
	done; \
	if [ -n "$$failed" ]; then echo "test-fuzz: FAILED:$$failed (inputs in $(FUZZ_CRASHES)/)" >&2; exit 1; fi; \
	echo "test-fuzz: all passed"

# Coverage of the code under test by the corpus make fuzz grew (or the
# seeds): the same harnesses built with clang's source-based coverage.
FUZZ_COV_SRCS := $(wildcard include/hdrstrip/scan*.h) include/hdrstrip/trie.h \
	include/hdrstrip/flow.h core/hlist.c core/compile.c
FUZZ_COV_BINS := $(addprefix $(FUZZ_OUT)/cov/,$(FUZZERS))

$(FUZZ_COV_BINS): $(FUZZ_OUT)/cov/%: $(FUZZ_OUT)/% | $(FUZZ_OUT)/cov
	$(call msg,COV-CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping \
		$(FUZZ_SRCS_$*) $(CORE_SRCS) -o $@

fuzz-cov: $(FUZZ_COV_BINS)
	$(Q)for f in $(FUZZERS); do \
		d=$${f#fuzz_}; corpus=$(FUZZ_OUT)/corpus/$$f; [ -d $$corpus ] || corpus=; \
		[ -d $(FUZZ_DIR)/regress/$$d ] && corpus="$$corpus $(FUZZ_DIR)/regress/$$d"; \
		LLVM_PROFILE_FILE=$(FUZZ_OUT)/cov/$$f.profraw $(FUZZ_OUT)/cov/$$f -runs=0 \
			$$corpus $(FUZZ_DIR)/seeds/$$d >/dev/null 2>&1 || exit 1; \
		llvm-profdata-14 merge -sparse $(FUZZ_OUT)/cov/$$f.profraw -o $(FUZZ_OUT)/cov/$$f.profdata; \
		echo "fuzz-cov: $$f, inputs: the seeds $$corpus"; \
		llvm-cov-14 report $(FUZZ_OUT)/cov/$$f -instr-profile=$(FUZZ_OUT)/cov/$$f.profdata \
			$(FUZZ_COV_SRCS) | sed 's/^/  /'; \
	done
