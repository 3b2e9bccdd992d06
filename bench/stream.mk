# Stream cost of the datapath (results in BENCHMARKS.md, "Streams"), root:
#   make bench-stream   ns per segment through BPF_PROG_TEST_RUN, both hooks:
#                       a ~700-byte request in one segment and in three, the
#                       continuation segment, and the flow state per connection
# Extra arguments, e.g. BENCH_STREAM_ARGS='--repeat 200000 --runs 9'.
.PHONY: bench-stream

BENCH_STREAM := $(BENCH_OUT)/bench_stream
BENCH_STREAM_SRCS := bench/bench_stream.c tests/pkt/harness.c tests/pkt/builder.c
BENCH_STREAM_ARGS ?=

bench: bench-stream

bench-stream: $(BENCH_STREAM) $(BPF_OBJ)
	$(Q)$(BENCH_STREAM) --corpus $(CORPUS) $(BENCH_STREAM_ARGS)

$(BENCH_STREAM): $(BENCH_STREAM_SRCS) $(wildcard tests/pkt/*.h) $(CORE_LIB) $(CORE_HDRS) \
		$(wildcard user/*.h) $(SKEL) | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -Itests/pkt $(BENCH_STREAM_SRCS) $(CORE_LIB) $(LIBS) -o $@
