# End-to-end tests in network namespaces (tests/e2e/run.sh; needs root).
# E2E_TESTS="tests/e2e/test_x.sh ..." runs only those.
E2E_TESTS ?=

# Test-only BPF programs the e2e tests attach beside hdrstrip (loss on cue;
# how much of an skb is linear at a hook).
E2E_BPF_OBJS := $(OUTPUT)/tests/e2e/drop_once.bpf.o $(OUTPUT)/tests/e2e/linear_probe.bpf.o

$(OUTPUT)/tests/e2e:
	$(Q)mkdir -p $@

$(OUTPUT)/tests/e2e/%.bpf.o: tests/e2e/bpf/%.bpf.c | $(OUTPUT)/tests/e2e
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Origin mode's io_uring origin (tests/e2e/servers/uring_origin.c).
E2E_URING := $(OUTPUT)/tests/e2e/uring_origin

$(E2E_URING): tests/e2e/servers/uring_origin.c | $(OUTPUT)/tests/e2e
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $< -luring -o $@

test-e2e: $(OUTPUT)/hdrstrip $(BPF_OBJ) $(E2E_BPF_OBJS) $(E2E_URING)
	$(call msg,E2E,tests/e2e)
	$(Q)HDRSTRIP=$(abspath $(OUTPUT)/hdrstrip) E2E_BPF_DIR=$(abspath $(OUTPUT)/tests/e2e) \
		tests/e2e/run.sh $(E2E_TESTS)

# make test's layer: the e2e suites and the fault injection (tests/faults/) in
# one pool, two at a time: the fault suite keeps a core busy, and runs beside
# the light suites rather than after all of them.
test-e2e-faults: E2E_TESTS = $(sort $(wildcard tests/e2e/test_*.sh)) tests/faults/test_faults.sh
test-e2e-faults: test-e2e
