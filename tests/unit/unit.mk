# Host unit tests (cmocka): list parser, trie compiler, shared inline code;
# then the CLI script against build/hdrstrip. `make test-unit` runs every
# test program and the script even when one fails, and fails if any did.
#
#   HS_SEED=N make test-unit      repeat a run of the randomized tests
#   UNIT_SANITIZE= make test-unit build the tests without ASan/UBSan
UNIT_DIR := tests/unit
UNIT_TESTS := test_hlist test_trie test_prop
UNIT_BINS := $(addprefix $(OUTPUT)/tests/,$(UNIT_TESTS))
UNIT_HELPERS := $(UNIT_DIR)/testutil.c
UNIT_SANITIZE ?= -fsanitize=address,undefined -fno-sanitize-recover=all
# The tests link the pure sources themselves: no skeleton, no libbpf.
UNIT_CFLAGS = $(HOST_CFLAGS) $(UNIT_SANITIZE) -I$(UNIT_DIR) -DHS_CORPUS_DIR='"$(CORPUS)"'

$(UNIT_BINS): $(OUTPUT)/tests/%: $(UNIT_DIR)/%.c $(UNIT_HELPERS) $(UNIT_DIR)/testutil.h \
		$(PURE_SRCS) $(SHARED_HDRS) $(wildcard user/*.h) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(UNIT_CFLAGS) $< $(UNIT_HELPERS) $(PURE_SRCS) -lcmocka -o $@

test-unit: $(UNIT_BINS) $(OUTPUT)/hdrstrip
	$(Q)failed=; \
	for t in $(UNIT_BINS); do \
		CORPUS='$(CORPUS)' $$t || failed="$$failed $${t##*/}"; \
	done; \
	HDRSTRIP='$(abspath $(OUTPUT)/hdrstrip)' CORPUS='$(CORPUS)' CC='$(CC)' \
		tests/cli/test_cli.sh || failed="$$failed test_cli.sh"; \
	if [ -n "$$failed" ]; then echo "test-unit: FAILED:$$failed" >&2; exit 1; fi; \
	echo "test-unit: all passed"
