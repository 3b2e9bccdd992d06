# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Verifier headroom (root): every BPF program, clang-14's and clang-19's
# builds, loaded with every load-time option; the verifier's processed
# instruction count must stay under 500,000 (half its limit). The datapath
# then runs packets with the largest tries written into its map, under every
# run-time policy. Results go to BENCHMARKS.md ("Verifier").
#
#   make test-verifier
.PHONY: test-verifier

VERIFIER_BIN := $(OUTPUT)/tests/verifier_headroom
PROXY_OBJ19 := $(OUTPUT)/bpf/proxy.clang19.bpf.o

$(VERIFIER_BIN): tests/verifier/verifier_headroom.c tests/pkt/builder.c tests/pkt/builder.h \
		$(CORE_LIB) $(CORE_HDRS) $(wildcard user/*.h) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -Itests/pkt $< tests/pkt/builder.c $(CORE_LIB) $(LIBS) -o $@

test-verifier: $(VERIFIER_BIN) $(BPF_OBJ) $(BPF_OBJ19) $(PROXY_OBJ) $(PROXY_OBJ19)
	$(call msg,TEST,$(VERIFIER_BIN))
	$(Q)$(VERIFIER_BIN) $(BPF_OBJ) $(BPF_OBJ19) $(PROXY_OBJ) $(PROXY_OBJ19); rc=$$?; \
	if [ $$rc -eq 77 ]; then echo "test-verifier: skipped (needs root)"; exit 0; fi; exit $$rc
