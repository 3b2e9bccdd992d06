# Host unit tests (cmocka): list parser, trie compiler, shared inline code,
# the fuzzers' findings; then the CLI script against build/san/hdrstrip (the
# CLI built with ASan/UBSan). `make test-unit` runs every test program and
# the script even when one fails, and fails if any did.
#
#   HS_SEED=N make test-unit      repeat a run of the randomized tests
#   UNIT_SANITIZE= make test-unit build the tests without ASan/UBSan
UNIT_DIR := tests/unit
UNIT_TESTS := test_hlist test_trie test_prop test_slots test_jsonfmt test_response test_framing \
	test_lane
UNIT_BINS := $(addprefix $(OUTPUT)/tests/,$(UNIT_TESTS))
UNIT_HELPERS := $(UNIT_DIR)/testutil.c
UNIT_SANITIZE ?= -fsanitize=address,undefined -fno-sanitize-recover=all
# The tests compile the core's sources with the sanitizers: no skeleton, no libbpf.
UNIT_CFLAGS = $(HOST_CFLAGS) $(UNIT_SANITIZE) -I$(UNIT_DIR) -DHS_CORPUS_DIR='"$(CORPUS)"'
UNIT_SRCS := $(CORE_SRCS)

# A test of a CLI source of its own (pure, no libbpf) names it here.
UNIT_USER_SRCS = $(UNIT_USER_SRCS_$(notdir $@))
UNIT_USER_SRCS_test_jsonfmt := user/jsonfmt.c

# The helpers and the core's sources are compiled once, for every test (the
# helpers alone take 7 s with the sanitizers); the core's objects are the
# sanitizer build's (below), which the CLI script's CLI links too.
UNIT_OBJ := $(OUTPUT)/tests/obj
UNIT_HELPER_OBJ := $(UNIT_OBJ)/testutil.o
UNIT_COMMON_OBJS := $(UNIT_HELPER_OBJ) $(patsubst %.c,$(OUTPUT)/san/%.o,$(UNIT_SRCS))

$(UNIT_HELPER_OBJ): $(UNIT_HELPERS) $(UNIT_DIR)/testutil.h $(CORE_HDRS)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(UNIT_CFLAGS) -c $< -o $@

$(UNIT_BINS): $(OUTPUT)/tests/%: $(UNIT_DIR)/%.c $(UNIT_COMMON_OBJS) $(UNIT_DIR)/testutil.h \
		$(CORE_HDRS) $(wildcard user/*.h) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(UNIT_CFLAGS) $< $(UNIT_COMMON_OBJS) $(UNIT_USER_SRCS) -lcmocka -o $@

$(OUTPUT)/tests/test_jsonfmt: $(UNIT_USER_SRCS_test_jsonfmt)

# What the fuzzers found (tests/fuzz), replayed through their oracles and
# written out against the scanner.
FUZZ_REGRESS_BIN := $(OUTPUT)/tests/test_fuzz_regress
FUZZ_ORACLE_SRCS := tests/fuzz/scan_check.c tests/fuzz/hlist_check.c tests/fuzz/liberal.c \
	tests/fuzz/tcp_check.c tests/fuzz/tcp_model.c tests/fuzz/seg_drive.c tests/fuzz/check_util.c

# Each oracle an object of its own, so that they build in parallel
# (scan_check.c alone takes 17 s).
FUZZ_REGRESS_CFLAGS = $(UNIT_CFLAGS) -Itests/fuzz -DHS_FUZZ_DIR='"$(abspath tests/fuzz)"'
FUZZ_ORACLE_OBJS := $(patsubst %.c,$(UNIT_OBJ)/%.o,$(FUZZ_ORACLE_SRCS))

$(FUZZ_ORACLE_OBJS): $(UNIT_OBJ)/%.o: %.c $(wildcard tests/fuzz/*.h) $(CORE_HDRS)
	$(Q)mkdir -p $(@D)
	$(call msg,CC,$@)
	$(Q)$(CC) $(FUZZ_REGRESS_CFLAGS) -c $< -o $@

$(FUZZ_REGRESS_BIN): $(UNIT_DIR)/test_fuzz_regress.c $(UNIT_COMMON_OBJS) $(UNIT_DIR)/testutil.h \
		$(FUZZ_ORACLE_OBJS) $(wildcard tests/fuzz/*.h) $(CORE_HDRS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(FUZZ_REGRESS_CFLAGS) $< $(UNIT_COMMON_OBJS) $(FUZZ_ORACLE_OBJS) -lcmocka -o $@

# The CLI built with the same sanitizers: the CLI script runs it (a leak,
# an overflow or undefined behaviour fails the case that hit it).
CLI_SAN := $(OUTPUT)/san/hdrstrip
CLI_SAN_OBJS := $(patsubst %.c,$(OUTPUT)/san/%.o,$(CLI_SRCS) $(CORE_SRCS))

$(OUTPUT)/san/%.o: %.c $(CORE_HDRS) $(wildcard user/*.h)
	$(Q)mkdir -p $(@D)
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(HOST_CFLAGS) $(UNIT_SANITIZE) -c $< -o $@

# Only the CLI's sources that include a skeleton wait for the BPF build.
$(patsubst %.c,$(OUTPUT)/san/%.o,$(filter %.c,$(SKEL_USERS))): $(SKEL) $(PROXY_SKEL) $(ENCAP_SKEL)

$(CLI_SAN): $(CLI_SAN_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(HOST_CFLAGS) $(UNIT_SANITIZE) $^ $(CLI_LIBS) -o $@

test-unit: $(UNIT_BINS) $(FUZZ_REGRESS_BIN) $(CLI_SAN)
	$(Q)failed=; \
	for t in $(UNIT_BINS) $(FUZZ_REGRESS_BIN); do \
		CORPUS='$(CORPUS)' $$t || failed="$$failed $${t##*/}"; \
	done; \
	HDRSTRIP='$(abspath $(CLI_SAN))' CORPUS='$(CORPUS)' CC='$(CC)' \
		tests/cli/test_cli.sh || failed="$$failed test_cli.sh"; \
	if [ -n "$$failed" ]; then echo "test-unit: FAILED:$$failed" >&2; exit 1; fi; \
	echo "test-unit: all passed"
