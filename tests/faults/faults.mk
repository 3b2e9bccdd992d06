# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fault injection (tests/faults/test_faults.sh; needs root and strace): the
# CLI killed at its syscalls during attach, update, detach and proxy-mode
# attach, and the invariants checked after each kill. About 2.5 minutes;
# FAULT_STRIDE=N samples bpf() calls every Nth (default 12).
.PHONY: test-faults

test-faults: $(OUTPUT)/hdrstrip $(BPF_OBJ)
	$(call msg,FAULTS,tests/faults)
	$(Q)HDRSTRIP=$(abspath $(OUTPUT)/hdrstrip) E2E_BUDGET=300 \
		tests/e2e/run.sh tests/faults/test_faults.sh
