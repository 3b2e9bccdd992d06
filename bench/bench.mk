# Benchmarks (results go to BENCHMARKS.md).
#   make bench                   every benchmark
#   make bench-lookup            ns per header-name lookup: trie vs gperf vs hash set
#   make bench-lookup-callgrind  instructions per lookup, counted by callgrind
.PHONY: bench-lookup bench-lookup-callgrind

BENCH_OUT := $(OUTPUT)/bench
BENCH_LOOKUP := $(BENCH_OUT)/bench_lookup
# Extra arguments, e.g. BENCH_ARGS='--reps 31 --passes 10'.
BENCH_ARGS ?=

bench: bench-lookup bench-lookup-callgrind

bench-lookup: $(BENCH_LOOKUP)
	$(Q)$(BENCH_LOOKUP) --corpus $(CORPUS) $(BENCH_ARGS)

bench-lookup-callgrind: $(BENCH_LOOKUP)
	$(Q)bench/callgrind-lookup.sh $(BENCH_LOOKUP) $(CORPUS) $(BENCH_OUT)/callgrind

# gperf tables of the two lists, generated from the list files themselves.
$(BENCH_OUT)/gperf_118.gperf: $(CORPUS)/bench-headers-118.txt bench/gperf-input.sh | $(BENCH_OUT)
	$(call msg,GEN,$@)
	$(Q)bench/gperf-input.sh gp_118 $< >$@

$(BENCH_OUT)/gperf_internal.gperf: $(CORPUS)/internal-headers.txt bench/gperf-input.sh | $(BENCH_OUT)
	$(call msg,GEN,$@)
	$(Q)bench/gperf-input.sh gp_internal $< >$@

$(BENCH_OUT)/%.c: $(BENCH_OUT)/%.gperf
	$(call msg,GPERF,$@)
	$(Q)gperf --output-file=$@ $<

# The pure list parser and compiler are built in, not linked from the CLI's
# objects: the benchmark needs neither libbpf nor the skeleton.
$(BENCH_LOOKUP): bench/bench_lookup.c $(BENCH_OUT)/gperf_118.c $(BENCH_OUT)/gperf_internal.c \
		$(PURE_SRCS) $(SHARED_HDRS) $(wildcard user/*.h) | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -I$(BENCH_OUT) bench/bench_lookup.c $(PURE_SRCS) -o $@
include bench/stream.mk
