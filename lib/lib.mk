# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# libhdrstrip: the list parser, trie compiler, trie lookup and HTTP scanner
# of the CLI and the BPF programs, as a static and a shared library for
# user-space proxies (lib/hdrstrip.h), with a pkg-config file and an
# example program. The parser and compiler are the core's archive
# (core/, built -fPIC with hidden symbols), linked in.
#
#   make lib        build/lib/libhdrstrip.{a,so*} and the example, hdrstrip-mask
#   make test-lib   the cmocka tests in tests/lib/
LIB_DIR := $(OUTPUT)/lib
LIB_SONAME_MAJOR := 0
LIB_SONAME := libhdrstrip.so.$(LIB_SONAME_MAJOR)
LIB_SO := $(LIB_DIR)/libhdrstrip.so.$(VERSION)
LIB_A := $(LIB_DIR)/libhdrstrip.a
LIB_EXAMPLE := $(LIB_DIR)/hdrstrip-mask
LIB_SRCS := lib/hdrstrip.c
LIB_OBJS := $(addprefix $(LIB_DIR)/,$(notdir $(LIB_SRCS:.c=.o)))
LIB_HDRS := lib/hdrstrip.h $(CORE_HDRS)
# Only the functions marked HS_API are exported; everything else is hidden
# in the shared object and made local in the archive.
LIB_CFLAGS = $(CPPFLAGS) $(CFLAGS) $(WARN) -std=gnu11 -Iinclude -Icore -Ilib -fPIC -fvisibility=hidden

.PHONY: lib test-lib

lib: $(LIB_A) $(LIB_SO) $(LIB_EXAMPLE)
all: lib

$(LIB_DIR):
	$(Q)mkdir -p $@

$(LIB_DIR)/%.o: lib/%.c $(LIB_HDRS) | $(LIB_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(LIB_CFLAGS) -c $< -o $@

# One relocatable object with the hidden symbols made local, so a program
# linking the archive sees the public names only.
$(LIB_A): $(LIB_OBJS) $(CORE_LIB)
	$(call msg,AR,$@)
	$(Q)$(CC) -r -nostdlib $^ -o $(LIB_DIR)/libhdrstrip-all.o
	$(Q)objcopy --localize-hidden $(LIB_DIR)/libhdrstrip-all.o
	$(Q)rm -f $@
	$(Q)ar rcs $@ $(LIB_DIR)/libhdrstrip-all.o

$(LIB_SO): $(LIB_OBJS) $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LIB_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--no-undefined \
		$^ -o $@
	$(Q)ln -sf $(notdir $@) $(LIB_DIR)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $(LIB_DIR)/libhdrstrip.so

# The example links the archive, so it runs from the build tree.
$(LIB_EXAMPLE): lib/example.c lib/hdrstrip.h $(LIB_A)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -Ilib $< $(LIB_A) -o $@

# The tests compile the library's sources with the sanitizers (the archive
# is built without them) and allocate every buffer to its exact length, so
# a read past a request's last byte is caught.
LIB_TEST := $(OUTPUT)/tests/test_lib
LIB_TEST_SANITIZE ?= -fsanitize=address,undefined -fno-sanitize-recover=all

$(LIB_TEST): tests/lib/test_lib.c $(LIB_SRCS) $(CORE_SRCS) $(LIB_HDRS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -Iinclude -Icore -Ilib $(LIB_TEST_SANITIZE) \
		-DHS_CORPUS_DIR='"$(CORPUS)"' $< $(LIB_SRCS) $(CORE_SRCS) -lcmocka -o $@

test-lib: $(LIB_TEST) $(LIB_EXAMPLE)
	$(Q)CORPUS='$(CORPUS)' $(LIB_TEST)
	$(Q)LIB_EXAMPLE='$(abspath $(LIB_EXAMPLE))' CORPUS='$(CORPUS)' tests/lib/test_example.sh
