# End-to-end tests in network namespaces (tests/e2e/run.sh; needs root).
# E2E_TESTS="tests/e2e/test_x.sh ..." runs only those.
E2E_TESTS ?=

test-e2e: $(OUTPUT)/hdrstrip $(BPF_OBJ)
	$(call msg,E2E,tests/e2e)
	$(Q)HDRSTRIP=$(abspath $(OUTPUT)/hdrstrip) tests/e2e/run.sh $(E2E_TESTS)
