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
# The CLI itself links them statically (libxdp before the libbpf it uses):
# every command is a short process, and finding, mapping and relocating
# four shared libraries cost about 1 ms of each run (issue 7). CLI_STATIC=0
# links it like the rest, against the shared libraries.
CLI_STATIC ?= 1
ifeq ($(CLI_STATIC),1)
CLI_LIBS := -Wl,-Bstatic -lxdp -lbpf -lelf -lz -Wl,-Bdynamic
else
CLI_LIBS := $(LIBS)
endif

SHARED_HDRS := $(wildcard include/hdrstrip/*.h)
PURE_SRCS := user/hlist.c user/compile.c
CLI_SRCS := user/main.c user/cmd_compile.c user/cmd_attach.c user/cmd_status.c \
	user/loader.c user/hooks.c user/proxy.c user/apply.c user/slots.c user/vlog.c $(PURE_SRCS)
CLI_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(CLI_SRCS))

BPF_SRCS := bpf/hdrstrip.bpf.c
BPF_HDRS := $(wildcard bpf/*.h) $(SHARED_HDRS)
BPF_OBJ := $(OUTPUT)/bpf/hdrstrip.bpf.o
PROXY_OBJ := $(OUTPUT)/bpf/proxy.bpf.o
SKEL := $(OUTPUT)/hdrstrip.skel.h
PROXY_SKEL := $(OUTPUT)/proxy.skel.h
# The shared corpus beside the checkout, else the copy vendored in tests/.
CORPUS ?= $(if $(wildcard ../shared/corpus/requests.http),$(abspath ../shared/corpus),$(abspath tests/corpus))
export CORPUS

.DELETE_ON_ERROR:
.PHONY: all deps test test-unit test-pkt test-e2e clean bench demo fuzz lint format install uninstall

all: $(OUTPUT)/hdrstrip $(BPF_OBJ) $(PROXY_OBJ)

$(OUTPUT) $(OUTPUT)/user $(OUTPUT)/tests $(OUTPUT)/bpf $(OUTPUT)/bench:
	$(Q)mkdir -p $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The same object built by a second compiler: it must load too.
$(OUTPUT)/bpf/%.clang19.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(OUTPUT)/bpf
	$(call msg,BPF-19,$@)
	$(Q)clang-19 $(BPF_CFLAGS) -c $< -o $@

$(SKEL): $(BPF_OBJ)
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name hdrstrip > $@

$(PROXY_SKEL): $(PROXY_OBJ)
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name hdrstrip_proxy > $@

$(OUTPUT)/user/%.o: user/%.c $(SHARED_HDRS) $(wildcard user/*.h) $(SKEL) $(PROXY_SKEL) | $(OUTPUT)/user
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -c $< -o $@

$(OUTPUT)/hdrstrip: $(CLI_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(HOST_CFLAGS) $^ $(CLI_LIBS) -o $@

deps:
	$(Q)scripts/install-deps.sh

# Every test layer; each part lives with its tests.
include tests/unit/unit.mk
include tests/pkt/pkt.mk
include tests/e2e/e2e.mk
include tests/faults/faults.mk
include bench/bench.mk
include packaging/packaging.mk
include tests/fuzz/fuzz.mk
include tests/verifier/verifier.mk
include tests/lint/lint.mk

# Every layer, each in its own make so a failure names its layer.
TEST_LAYERS := test-unit test-fuzz test-lib test-vlog test-install test-verifier test-pkt test-e2e test-faults test-ops

test: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)for t in $(TEST_LAYERS); do \
		echo "==== $$t"; \
		$(MAKE) --no-print-directory $$t || exit 1; \
	done

# The main job: see it work on a throwaway namespace pair.
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)
