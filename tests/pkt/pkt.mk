# Packet tests through BPF_PROG_TEST_RUN on the real object, both hooks, and
# the same tables on the object clang-19 builds. Needs root (exit 77 without).
PKT_SRCS := $(addprefix tests/pkt/,test_pkt.c check.c fixtures.c edges.c corpus.c \
	builder.c refstrip.c harness.c random.c stream.c normalize.c response.c reject.c wire.c)
PKT_HDRS := $(wildcard tests/pkt/*.h)
PKT_BIN := $(OUTPUT)/tests/test_pkt
BPF_OBJ19 := $(OUTPUT)/bpf/hdrstrip.clang19.bpf.o

$(PKT_BIN): $(PKT_SRCS) $(PKT_HDRS) $(CORE_LIB) $(CORE_HDRS) $(SKEL) | $(OUTPUT)/tests
	$(call msg,LINK,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -Itests/pkt $(PKT_SRCS) $(CORE_LIB) $(LIBS) -lcmocka -o $@

test-pkt: $(PKT_BIN) $(BPF_OBJ) $(BPF_OBJ19)
	$(call msg,TEST,$(PKT_BIN))
	$(Q)$(PKT_BIN) --corpus $(CORPUS) --obj19 $(BPF_OBJ19)
