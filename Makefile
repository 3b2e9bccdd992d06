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
# libxdp has no version call: --version says the one built with.
LIBXDP_VERSION := $(shell pkg-config --modversion libxdp 2>/dev/null || echo unknown)
# CPPFLAGS and LDFLAGS: a distribution's (dpkg-buildflags: make deb).
HOST_CFLAGS := $(CPPFLAGS) $(CFLAGS) $(WARN) -std=gnu11 -Iinclude -Icore -Iuser -I$(OUTPUT) \
	-DHDRSTRIP_VERSION='"$(VERSION)"' -DHDRSTRIP_BPF_DIR='"$(PREFIX)/lib/hdrstrip"' \
	-DHDRSTRIP_LIBXDP_VERSION='"$(LIBXDP_VERSION)"'
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -mcpu=v3 $(WARN) \
	-Wno-unused-function -Iinclude -I/usr/include/$(MULTIARCH) $(BPF_DEFS)
# Benchmarks only: BPF_DEFS=-DHS_BENCH_FLOOR_SCAN with its own OUTPUT builds
# a CLI whose datapath scans nothing (BENCHMARKS.md, "the path around the
# scan"); empty for every real build.
BPF_DEFS ?=

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
# The core: the list parser, the trie compiler and the counter slots. Plain
# C, no libbpf: the CLI, libhdrstrip, the tests and the benchmarks link this
# one archive (built -fPIC, its symbols hidden, so libhdrstrip can take it
# in whole). Sanitizer and fuzzer builds compile CORE_SRCS themselves.
CORE_SRCS := core/hlist.c core/compile.c core/slots.c
CORE_HDRS := $(wildcard core/*.h) $(SHARED_HDRS)
CORE_OBJS := $(patsubst core/%.c,$(OUTPUT)/core/%.o,$(CORE_SRCS))
CORE_LIB := $(OUTPUT)/core/libhdrstrip-core.a
# The CLI and the loader (libbpf, libxdp): user/.
CLI_SRCS := $(wildcard user/*.c)
CLI_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(CLI_SRCS))
# The user/ sources that include a skeleton (the others build before it).
SKEL_USERS := $(shell grep -l 'skel\.h' $(CLI_SRCS) user/*.h)

BPF_SRCS := bpf/hdrstrip.bpf.c
BPF_HDRS := $(wildcard bpf/*.h) bench/bpf/floor_loop.h bench/bpf/minscan_loop.h $(SHARED_HDRS)
BPF_OBJ := $(OUTPUT)/bpf/hdrstrip.bpf.o
PROXY_OBJ := $(OUTPUT)/bpf/proxy.bpf.o
SKEL := $(OUTPUT)/hdrstrip.skel.h
PROXY_SKEL := $(OUTPUT)/proxy.skel.h
# The UDP encapsulation sockets' iterator (user/encap.c runs it).
ENCAP_OBJ := $(OUTPUT)/bpf/udp_encap.bpf.o
ENCAP_SKEL := $(OUTPUT)/udp_encap.skel.h
# The shared corpus beside the checkout, else the copy vendored in tests/.
CORPUS ?= $(if $(wildcard ../shared/corpus/requests.http),$(abspath ../shared/corpus),$(abspath tests/corpus))
export CORPUS

.DELETE_ON_ERROR:
.PHONY: all deps test test-unit test-pkt test-e2e test-e2e-faults clean bench demo fuzz lint format install uninstall

all: $(OUTPUT)/hdrstrip $(BPF_OBJ) $(PROXY_OBJ) $(ENCAP_OBJ)

$(OUTPUT) $(OUTPUT)/core $(OUTPUT)/user $(OUTPUT)/tests $(OUTPUT)/bpf $(OUTPUT)/bench:
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

$(ENCAP_SKEL): $(ENCAP_OBJ)
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name hdrstrip_udp_encap > $@

$(OUTPUT)/core/%.o: core/%.c $(CORE_HDRS) | $(OUTPUT)/core
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(CORE_LIB): $(CORE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(OUTPUT)/user/%.o: user/%.c $(CORE_HDRS) $(wildcard user/*.h) | $(OUTPUT)/user
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -c $< -o $@

$(patsubst user/%.c,$(OUTPUT)/user/%.o,$(filter %.c,$(SKEL_USERS))): $(SKEL) $(PROXY_SKEL) $(ENCAP_SKEL)

$(OUTPUT)/hdrstrip: $(CLI_OBJS) $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(HOST_CFLAGS) $(LDFLAGS) $^ $(CLI_LIBS) -o $@

deps:
	$(Q)scripts/install-deps.sh

# Every test layer; each part lives with its tests.
include lib/lib.mk
include tests/unit/unit.mk
include tests/vlog/vlog.mk
include tests/pkt/pkt.mk
include tests/e2e/e2e.mk
include tests/faults/faults.mk
include bench/bench.mk
include bench/stream.mk
include bench/proxy.mk
include packaging/packaging.mk
include tests/fuzz/fuzz.mk
include tests/verifier/verifier.mk
include tests/deploy/deploy.mk

# Static checks and formatting (make lint, make format): tooling, not a test layer.
include scripts/lint/lint.mk

# Every layer, each in its own make so a failure names its layer; each
# layer's time is printed after it (where CI's time goes).
TEST_LAYERS := test-unit test-fuzz test-lib test-vlog test-install test-deploy test-verifier test-pkt \
	test-e2e-faults test-ops

# A layer's prerequisites (sanitizer builds, fuzzers, BPF objects) build on
# every CPU; its tests then run one at a time, as the layer's recipe runs them.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)

test: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) all
	$(Q)for t in $(TEST_LAYERS); do \
		echo "==== $$t"; \
		t0=$$(date +%s); \
		$(MAKE) --no-print-directory -j$(JOBS) $$t || exit 1; \
		echo "==== $$t: $$(( $$(date +%s) - t0 )) s"; \
	done

# The main job: see it work on a throwaway namespace pair.
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)
