# Benchmarks (results go to BENCHMARKS.md).
#   make bench                   every benchmark that needs no network namespace
#   make bench-lookup            ns per header-name lookup: trie vs gperf vs hash set
#   make bench-lookup-callgrind  instructions per lookup, counted by callgrind
#   make bench-seed              per request: the seed's approach and its successors, in C
#   make bench-dataplane         ns per packet of the BPF programs (BPF_PROG_TEST_RUN; root)
#   make bench-dataplane-ab AB_OLD=REV   that, for REV's object and the working tree's, in turn
#   make bench-dataplane-bound   that, for the datapath with no scanner beside the real one,
#                                and with the least per-line work any scanner adds (min-scan)
#   make bench-responses         a typical response beside the typical request (root)
#   make bench-profile           where the scan callback's time goes, by source line (root, perf)
#   make bench-scaling           cost against header-block and list size, plotted (root)
#   make bench-events            what match events add per packet, by rate and reader (root)
#   make bench-e2e               real traffic through veth in namespaces (root)
#   make bench-e2e-bound         that, with a datapath that scans nothing (a lower bound)
#   make bench-e2e-minscan       that, with the least per-line work any scanner adds
#   make bench-e2e-nolane        that, with the datapath without the head lane (bpf/lane.h)
#   make bench-dataplane-lane    the datapath without the head lane beside it (method A and B)
#   make bench-origin            keep-alive wrk to nginx in a cgroup: origin mode beside xdp and
#                                tc-ingress, alternated with no program (root)
.PHONY: bench-lookup bench-lookup-callgrind bench-seed bench-dataplane bench-dataplane-ab bench-dataplane-bound bench-scaling bench-events bench-responses bench-e2e bench-e2e-bound bench-e2e-minscan bench-e2e-nolane bench-dataplane-lane bench-origin FORCE \
	bench-profile

BENCH_OUT := $(OUTPUT)/bench
BENCH_LOOKUP := $(BENCH_OUT)/bench_lookup
# Extra arguments, e.g. BENCH_ARGS='--reps 31 --passes 10'.
BENCH_ARGS ?=

bench: bench-lookup bench-lookup-callgrind bench-seed bench-dataplane bench-scaling

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
		$(CORE_LIB) $(CORE_HDRS) $(wildcard user/*.h) | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -I$(BENCH_OUT) bench/bench_lookup.c $(CORE_LIB) -o $@

# Header lists of 10, 100 and 1,000 names (list-size scaling, memory, updates).
BENCH_LISTS := $(BENCH_OUT)/lists
BENCH_LIST_FILES := $(BENCH_LISTS)/names-10.txt $(BENCH_LISTS)/names-100.txt \
	$(BENCH_LISTS)/names-1000.txt

$(BENCH_LIST_FILES) &: $(CORPUS)/internal-headers.txt bench/gen-lists.sh | $(BENCH_OUT)
	$(call msg,GEN,$(BENCH_LISTS))
	$(Q)bench/gen-lists.sh $< $(BENCH_LISTS)

# The empty and floor programs the data-plane figures are set against.
BENCH_BPF_OBJS := $(BENCH_OUT)/empty.bpf.o $(BENCH_OUT)/floor.bpf.o

$(BENCH_OUT)/%.bpf.o: bench/bpf/%.bpf.c bench/bpf/floor_loop.h | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The datapath with the floor's loop in place of its scanner (hdrstrip.bpf.c,
# HS_BENCH_FLOOR_SCAN): what the path around the scan costs on its own.
BENCH_FLOORSCAN_OBJ := $(BENCH_OUT)/hdrstrip_floorscan.bpf.o

$(BENCH_FLOORSCAN_OBJ): bpf/hdrstrip.bpf.c $(BPF_HDRS) | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DHS_BENCH_FLOOR_SCAN -c $< -o $@

# The same without the TCP checksum's check (normalize.h, HS_BENCH_NO_TCP_CSUM).
$(BENCH_OUT)/hdrstrip_floorscan_nocsum.bpf.o: bpf/hdrstrip.bpf.c $(BPF_HDRS) | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DHS_BENCH_FLOOR_SCAN -DHS_BENCH_NO_TCP_CSUM -c $< -o $@

# The lower bound's loop with the least per-line work any scanner adds
# (bench/bpf/minscan_loop.h, HS_BENCH_MIN_SCAN): a bound on what a scanner of
# any design can reach on this datapath.
BENCH_MINSCAN_OBJ := $(BENCH_OUT)/hdrstrip_minscan.bpf.o

$(BENCH_MINSCAN_OBJ): bpf/hdrstrip.bpf.c $(BPF_HDRS) | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DHS_BENCH_FLOOR_SCAN -DHS_BENCH_MIN_SCAN -c $< -o $@

# The same with only each line's end and its name's end found (no odd-byte
# check, no lookup): what the classification alone costs.
$(BENCH_OUT)/hdrstrip_minscan_lean.bpf.o: bpf/hdrstrip.bpf.c $(BPF_HDRS) | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DHS_BENCH_FLOOR_SCAN -DHS_BENCH_MIN_SCAN -DHS_BENCH_MIN_SCAN_LEAN \
		-c $< -o $@

# The datapath without the head lane (bpf/lane.h; HS_BENCH_NO_LANE): the
# scanner alone, as before the lane (BENCHMARKS.md, "Speed, fifth pass").
BENCH_NOLANE_OBJ := $(BENCH_OUT)/hdrstrip_nolane.bpf.o

$(BENCH_NOLANE_OBJ): bpf/hdrstrip.bpf.c $(BPF_HDRS) | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DHS_BENCH_NO_LANE -c $< -o $@

BENCH_DATAPLANE := $(BENCH_OUT)/bench_dataplane
BENCH_HARNESS_SRCS := tests/pkt/harness.c tests/pkt/builder.c

$(BENCH_DATAPLANE): bench/bench_dataplane.c bench/bench_util.h $(BENCH_HARNESS_SRCS) \
		$(CORE_LIB) $(CORE_HDRS) $(wildcard user/*.h) $(SKEL) | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -Itests/pkt bench/bench_dataplane.c $(BENCH_HARNESS_SRCS) \
		$(CORE_LIB) $(LIBS) -o $@

BENCH_DP_ARGS = --obj $(BPF_OBJ) --empty $(BENCH_OUT)/empty.bpf.o \
	--floor $(BENCH_OUT)/floor.bpf.o --corpus $(CORPUS) --lists $(BENCH_LISTS)

# Exit code 77 (not root) is a skip, as in the tests.
bench-dataplane: $(BENCH_DATAPLANE) $(BPF_OBJ) $(BENCH_BPF_OBJS) $(BENCH_LIST_FILES)
	$(Q)$(BENCH_DATAPLANE) $(BENCH_DP_ARGS) --what dataplane,memory $(BENCH_ARGS) || \
		[ $$? -eq 77 ]

# A typical response beside the typical request (BENCHMARKS.md, "Responses").
bench-responses: $(BENCH_DATAPLANE) $(BPF_OBJ) $(BENCH_BPF_OBJS) $(BENCH_LIST_FILES)
	$(Q)$(BENCH_DATAPLANE) $(BENCH_DP_ARGS) --what responses $(BENCH_ARGS) || [ $$? -eq 77 ]

# Match events: off, the default rate with the ring buffer full or read,
# and every match an event (BENCHMARKS.md, "Match events").
bench-events: $(BENCH_DATAPLANE) $(BPF_OBJ) $(BENCH_BPF_OBJS) $(BENCH_LIST_FILES)
	$(Q)$(BENCH_DATAPLANE) $(BENCH_DP_ARGS) --what events $(BENCH_ARGS) || [ $$? -eq 77 ]

# The path around the scan on its own, beside the real datapath: the builds
# with the floor's loop in place of the scanner, with and without the TCP
# checksum's check, and the min-scan builds (the least per-line work any
# scanner adds), as NEW against the working tree's object as OLD
# (BENCHMARKS.md, "What no scanner can take away" and "Speed, fourth pass").
bench-dataplane-bound: $(BENCH_DATAPLANE) $(BPF_OBJ) $(BENCH_BPF_OBJS) $(BENCH_FLOORSCAN_OBJ) \
		$(BENCH_OUT)/hdrstrip_floorscan_nocsum.bpf.o $(BENCH_MINSCAN_OBJ) \
		$(BENCH_OUT)/hdrstrip_minscan_lean.bpf.o
	$(Q)for o in $(BENCH_FLOORSCAN_OBJ) $(BENCH_OUT)/hdrstrip_floorscan_nocsum.bpf.o \
			$(BENCH_MINSCAN_OBJ) $(BENCH_OUT)/hdrstrip_minscan_lean.bpf.o; do \
		NEW_ARGS="--bound 1" bench/ab-dataplane.sh $(BENCH_DATAPLANE) $(BPF_OBJ) "$$o" \
			$(BENCH_OUT)/empty.bpf.o $(BENCH_OUT)/floor.bpf.o $(CORPUS) || \
			{ rc=$$?; [ $$rc -eq 77 ] && exit 0; exit $$rc; }; \
	done

# Two builds of the datapath side by side: AB_OLD (a git revision, built in
# a temporary worktree) against the working tree's object.
AB_OLD ?= HEAD
bench-dataplane-ab: $(BENCH_DATAPLANE) $(BPF_OBJ) $(BENCH_BPF_OBJS)
	$(Q)wt=$$(mktemp -d); trap 'git worktree remove --force '"$$wt"' >/dev/null 2>&1; rm -rf '"$$wt" EXIT; \
	git worktree add --detach "$$wt" $(AB_OLD) >/dev/null && \
	$(MAKE) --no-print-directory -C "$$wt" build/bpf/hdrstrip.bpf.o >/dev/null && \
	{ bench/ab-dataplane.sh $(BENCH_DATAPLANE) "$$wt/build/bpf/hdrstrip.bpf.o" $(BPF_OBJ) \
		$(BENCH_OUT)/empty.bpf.o $(BENCH_OUT)/floor.bpf.o $(CORPUS) || [ $$? -eq 77 ]; }

# The figures go to bench/results/ (committed with BENCHMARKS.md).
BENCH_RESULTS := bench/results

bench-scaling: $(BENCH_DATAPLANE) $(BPF_OBJ) $(BENCH_BPF_OBJS) $(BENCH_LIST_FILES)
	$(Q)mkdir -p $(BENCH_RESULTS)
	$(Q)rc=0; $(BENCH_DATAPLANE) $(BENCH_DP_ARGS) --what scaling --out $(BENCH_RESULTS) \
		$(BENCH_ARGS) || rc=$$?; \
	if [ $$rc -eq 0 ]; then \
		gnuplot -e "dir='$(BENCH_RESULTS)'" bench/plot-scaling.gp && \
		echo "  PLOT     $(BENCH_RESULTS)/scaling-fields.png $(BENCH_RESULTS)/scaling-list.png"; \
	else \
		[ $$rc -eq 77 ]; \
	fi

# Real traffic in network namespaces (tests/e2e/lib.sh's topology): root.
bench-e2e: $(OUTPUT)/hdrstrip $(BPF_OBJ) $(BENCH_LIST_FILES)
	$(Q)HDRSTRIP=$(abspath $(OUTPUT)/hdrstrip) BENCH_LISTS=$(abspath $(BENCH_LISTS)) \
		bench/bench-e2e.sh

# Origin mode in the same traffic, beside the interface hooks at the origin's
# end (results in BENCHMARKS.md, "Origin mode").
bench-origin: $(OUTPUT)/hdrstrip $(BPF_OBJ) $(PROXY_OBJ) $(BENCH_LIST_FILES)
	$(Q)ORIGIN=1 HDRSTRIP=$(abspath $(OUTPUT)/hdrstrip) BENCH_LISTS=$(abspath $(BENCH_LISTS)) \
		bench/bench-e2e.sh

# The same with the lower-bound build's CLI (the floor's loop in place of the
# scanner: what the path around the scan costs in real traffic).
BOUND_OUT := $(OUTPUT)/bound
$(BOUND_OUT)/hdrstrip: FORCE
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(BOUND_OUT) BPF_DEFS=-DHS_BENCH_FLOOR_SCAN $@

bench-e2e-bound: $(BOUND_OUT)/hdrstrip $(BENCH_LIST_FILES)
	$(Q)BOUND=1 HDRSTRIP=$(abspath $(BOUND_OUT)/hdrstrip) BENCH_LISTS=$(abspath $(BENCH_LISTS)) \
		bench/bench-e2e.sh

# The same with the min-scan build's CLI (the least per-line work any scanner
# adds, bench/bpf/minscan_loop.h: what a scanner of any design can reach).
MINSCAN_OUT := $(OUTPUT)/minscan
$(MINSCAN_OUT)/hdrstrip: FORCE
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(MINSCAN_OUT) \
		BPF_DEFS="-DHS_BENCH_FLOOR_SCAN -DHS_BENCH_MIN_SCAN" $@

bench-e2e-minscan: $(MINSCAN_OUT)/hdrstrip $(BENCH_LIST_FILES)
	$(Q)BOUND=1 HDRSTRIP=$(abspath $(MINSCAN_OUT)/hdrstrip) BENCH_LISTS=$(abspath $(BENCH_LISTS)) \
		bench/bench-e2e.sh

# The same with the CLI of the datapath without the head lane: the
# scanner alone (HS_BENCH_NO_LANE).
NOLANE_OUT := $(OUTPUT)/nolane
$(NOLANE_OUT)/hdrstrip: FORCE
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(NOLANE_OUT) BPF_DEFS=-DHS_BENCH_NO_LANE $@

bench-e2e-nolane: $(NOLANE_OUT)/hdrstrip $(BENCH_LIST_FILES)
	$(Q)HDRSTRIP=$(abspath $(NOLANE_OUT)/hdrstrip) BENCH_LISTS=$(abspath $(BENCH_LISTS)) \
		bench/bench-e2e.sh

# The datapath with the lane (the working tree's object) against it without
# (OLD), side by side.
bench-dataplane-lane: $(BENCH_DATAPLANE) $(BPF_OBJ) $(BENCH_BPF_OBJS) $(BENCH_NOLANE_OBJ)
	$(Q)bench/ab-dataplane.sh $(BENCH_DATAPLANE) $(BENCH_NOLANE_OBJ) $(BPF_OBJ) \
		$(BENCH_OUT)/empty.bpf.o $(BENCH_OUT)/floor.bpf.o $(CORPUS) || [ $$? -eq 77 ]

BENCH_SEED := $(BENCH_OUT)/bench_seed

$(BENCH_SEED): bench/bench_seed.c bench/bench_util.h bench/hset.h $(BENCH_OUT)/gperf_internal.c \
		$(CORE_LIB) $(CORE_HDRS) $(wildcard user/*.h) | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -I$(BENCH_OUT) bench/bench_seed.c $(CORE_LIB) -o $@

bench-seed: $(BENCH_SEED)
	$(Q)$(BENCH_SEED) --corpus $(CORPUS) $(BENCH_ARGS)

# The scan callback by source line: perf samples mapped through the loaded
# program's JIT line table (BENCHMARKS.md, "Speed"). FUNC=name for another
# BPF function.
BENCH_JIT_LINES := $(BENCH_OUT)/jit_lines
$(BENCH_JIT_LINES): bench/jit_lines.c | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) $< $(LIBS) -o $@

bench-profile: $(BENCH_DATAPLANE) $(BENCH_JIT_LINES) $(BPF_OBJ) $(BENCH_BPF_OBJS) $(BENCH_LIST_FILES)
	$(Q)bench/profile-scan.sh $(BENCH_DATAPLANE) $(BENCH_JIT_LINES) $(BPF_OBJ) \
		$(BENCH_OUT)/empty.bpf.o $(BENCH_OUT)/floor.bpf.o $(CORPUS) $(BENCH_LISTS) $(FUNC) || \
		[ $$? -eq 77 ]
