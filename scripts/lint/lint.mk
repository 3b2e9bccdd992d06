# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Static checks and formatting of hdrstrip's code: the host side (user/,
# lib/, include/, tests/, this folder's headers) and the BPF programs (bpf/,
# tests/*/*.bpf.c); CI runs make lint (.ci/run).
#
#   make lint     clang-format (check only), cppcheck and clang-tidy
#                 (.clang-tidy): every finding is an error
#   make format   rewrite those files in the .clang-format style
.PHONY: lint-format lint-cppcheck lint-tidy

CLANG_FORMAT ?= clang-format-14
CLANG_TIDY ?= clang-tidy-14
CPPCHECK ?= cppcheck
LINT_SRCS := $(filter-out %.bpf.c,$(wildcard core/*.c user/*.c lib/*.c tests/*/*.c))
LINT_HDRS := $(wildcard include/hdrstrip/*.h core/*.h user/*.h lib/*.h tests/*/*.h scripts/lint/*.h)
LINT_INC := -Iinclude -Icore -Iuser -Ilib -I$(OUTPUT)/lint -I$(OUTPUT) -Itests/unit -Itests/pkt \
	-Itests/fuzz
LINT_DEFS := -DHDRSTRIP_VERSION='"lint"' -DHDRSTRIP_BPF_DIR='"lint"' -DHS_CORPUS_DIR='"lint"' \
	-DHS_FUZZ_DIR='"lint"'
# clang-tidy: scripts/lint/tidy.sh (the same flags, in parallel).

# The BPF programs: every tool parses them for what they are, BPF target C.
# clang-tidy takes the build's flags (BPF_CFLAGS, -target bpf); cppcheck,
# which reads no system header, gets libbpf's macros from cppcheck-bpf.h and
# checks the __bpf__ side of the shared headers. Arithmetic on void * is
# GNU C, and the kernel's way with packet pointers: not a finding there.
LINT_BPF_SRCS := $(wildcard bpf/*.c tests/*/*.bpf.c)
LINT_BPF_HDRS := $(wildcard bpf/*.h)
LINT_FORMAT := $(LINT_SRCS) $(LINT_HDRS) $(LINT_BPF_SRCS) $(LINT_BPF_HDRS)

lint: lint-format lint-cppcheck lint-tidy
	@echo "lint: clean"

format:
	$(call msg,FORMAT,$(words $(LINT_FORMAT)) files)
	$(Q)$(CLANG_FORMAT) -i $(LINT_FORMAT)

lint-format:
	$(call msg,FORMAT,check $(words $(LINT_FORMAT)) files)
	$(Q)$(CLANG_FORMAT) --dry-run -Werror $(LINT_FORMAT) 2>&1 | head -40; \
	$(CLANG_FORMAT) --dry-run -Werror $(LINT_FORMAT) >/dev/null 2>&1 || \
		{ echo "lint: not formatted (make format fixes it)" >&2; exit 1; }

# cppcheck reads the skeletons from $(OUTPUT)/lint: the same headers with the
# embedded BPF object (a 2-3 MB string literal) left out. On the literal itself
# cppcheck spends 50-100 s a file that includes one, and there is nothing in it
# to check.
LINT_SKELS := $(patsubst $(OUTPUT)/%,$(OUTPUT)/lint/%,$(SKEL) $(PROXY_SKEL) $(ENCAP_SKEL))

$(OUTPUT)/lint/%.skel.h: $(OUTPUT)/%.skel.h
	$(Q)mkdir -p $(@D)
	$(Q)awk 'skip { if ($$0 ~ /";$$/) skip = 0; next } \
		/return \(const void \*\)"\\$$/ { print "\treturn (const void *)\"\";"; skip = 1; next } \
		{ print }' $< >$@.tmp
	$(Q)grep -q 'return (const void \*)"";' $@.tmp || \
		{ echo "lint: no embedded object found in $< (bpftool's skeleton changed?)" >&2; exit 1; }
	$(Q)mv $@.tmp $@

lint-cppcheck: $(LINT_SKELS)
	$(call msg,CPPCHECK,$(words $(LINT_SRCS)) files)
	$(Q)$(CPPCHECK) -q --std=c11 --enable=warning,performance,portability --inline-suppr \
		--error-exitcode=1 --suppress=missingIncludeSystem -D__x86_64__ -D__linux__ \
		--include=scripts/lint/cppcheck.h \
		$(LINT_INC) $(LINT_DEFS) -j2 $(LINT_SRCS)
	$(call msg,CPPCHECK,$(words $(LINT_BPF_SRCS)) BPF files)
	$(Q)$(CPPCHECK) -q --std=c11 --enable=warning,performance,portability --inline-suppr \
		--error-exitcode=1 --suppress=missingIncludeSystem \
		--suppress=arithOperationsOnVoidPointer -D__bpf__ -D__linux__ \
		--include=scripts/lint/cppcheck-bpf.h -Iinclude $(LINT_BPF_SRCS)

lint-tidy: $(SKEL) $(PROXY_SKEL)
	$(call msg,TIDY,$(words $(LINT_SRCS) $(LINT_BPF_SRCS)) files)
	$(Q)CLANG_TIDY=$(CLANG_TIDY) OUTPUT=$(OUTPUT) BPF_FLAGS="$(BPF_CFLAGS)" \
		scripts/lint/tidy.sh $(LINT_BPF_SRCS) $(LINT_SRCS)
