# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The verifier-log capture (user/vlog.c) on a program the verifier rejects,
# loaded through the CLI's libbpf print callback (user/loader.c).
VLOG_TEST := $(OUTPUT)/tests/test_vlog
VLOG_BAD := $(OUTPUT)/tests/bad.bpf.o

.PHONY: test-vlog

$(VLOG_BAD): tests/vlog/bad.bpf.c | $(OUTPUT)/tests
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The test gives its own pr_*() (main.c's), and links every other object of
# the CLI, as the loader needs them.
VLOG_OBJS := $(filter-out $(OUTPUT)/user/main.o,$(CLI_OBJS))

$(VLOG_TEST): tests/vlog/test_vlog.c $(VLOG_OBJS) $(CORE_LIB) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -Iuser -I$(OUTPUT) -DBAD_OBJ='"$(abspath $(VLOG_BAD))"' \
		-DGOOD_OBJ='"$(abspath $(BPF_OBJ))"' $< $(VLOG_OBJS) $(CORE_LIB) \
		-lcmocka $(CLI_LIBS) -o $@

test-vlog: $(VLOG_TEST) $(VLOG_BAD) $(BPF_OBJ)
	$(Q)$(VLOG_TEST)
