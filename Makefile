# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# hdrstrip: `make` builds build/hdrstrip and the BPF object; `make test` runs
# every test layer (installing dependencies first); `make demo` shows it work.

VERSION := 0.1.0
OUTPUT ?= build
PREFIX ?= /usr/local
DESTDIR ?=

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)

# Quiet output unless V=1.
ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
HOST_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -Iinclude -Iuser -I$(OUTPUT) \
	-DHDRSTRIP_VERSION='"$(VERSION)"' -DHDRSTRIP_BPF_DIR='"$(PREFIX)/lib/hdrstrip"'
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -mcpu=v3 $(WARN) \
	-Wno-unused-function -Iinclude -I/usr/include/$(MULTIARCH)

LIBS := -lbpf -lxdp -lelf -lz

SHARED_HDRS := $(wildcard include/hdrstrip/*.h)
PURE_SRCS := user/hlist.c user/compile.c
CLI_SRCS := user/main.c user/cmd_compile.c $(PURE_SRCS)
CLI_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(CLI_SRCS))

.DELETE_ON_ERROR:
.PHONY: all deps test test-unit clean

all: $(OUTPUT)/hdrstrip

$(OUTPUT) $(OUTPUT)/user $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/user/%.o: user/%.c $(SHARED_HDRS) $(wildcard user/*.h) | $(OUTPUT)/user
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -c $< -o $@

$(OUTPUT)/hdrstrip: $(CLI_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(HOST_CFLAGS) $^ $(LIBS) -o $@

# ---- tests ------------------------------------------------------------------
UNIT_TESTS := test_hlist test_trie
$(OUTPUT)/tests/%: tests/unit/%.c $(PURE_SRCS) $(SHARED_HDRS) $(wildcard user/*.h) tests/unit/testutil.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -Itests/unit -DCORPUS_DIR='"$(CORPUS)"' $< $(PURE_SRCS) -lcmocka -o $@

CORPUS ?= $(abspath ../shared/corpus)

deps:
	$(Q)scripts/install-deps.sh

test-unit: $(addprefix $(OUTPUT)/tests/,$(UNIT_TESTS)) $(OUTPUT)/hdrstrip
	$(Q)for t in $(UNIT_TESTS); do echo "== $$t"; $(OUTPUT)/tests/$$t || exit 1; done
	$(Q)HDRSTRIP=$(OUTPUT)/hdrstrip CORPUS=$(CORPUS) tests/cli/test_cli.sh

test: deps
	$(Q)$(MAKE) --no-print-directory test-unit

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)
