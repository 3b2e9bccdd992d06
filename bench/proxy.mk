# Proxy mode (results in BENCHMARKS.md, "Proxy mode"), root:
#   make bench-proxy   wrk in a cgroup (client namespace) against nginx in a
#                      server namespace, without and with hdrstrip on the
#                      cgroup, alternated; the sk_msg program's ns per run
#                      (BPF statistics); ns per send() of a ~700-byte request
#                      on a loopback connection: without, with a pass-only
#                      sk_msg floor, with hdrstrip
#   make bench-proxy-responses   nginx in the cgroup answering wrk outside it,
#                      without and with response rules, alternated; nginx's
#                      worker CPU per request; the sk_msg and sk_skb
#                      programs' ns per response / received request
# Knobs: DURATION (s per wrk run), ROUNDS, CONNS, SENDS (see bench/bench-proxy.sh).
#   make bench-proxy-bound   make bench-proxy with the lower-bound build's CLI
#                      (its sk_msg program reads the bytes with the floor's
#                      loop instead of scanning them: BENCHMARKS.md)
.PHONY: bench-proxy bench-proxy-responses bench-proxy-bound

BENCH_SENDLOOP := $(BENCH_OUT)/proxy_sendloop
BENCH_PROXY_FLOOR := $(BENCH_OUT)/proxy_floor.bpf.o

$(BENCH_SENDLOOP): bench/proxy_sendloop.c | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(HOST_CFLAGS) -pthread $< -o $@

$(BENCH_PROXY_FLOOR): bench/bpf/proxy_floor.bpf.c | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

bench-proxy: $(OUTPUT)/hdrstrip $(PROXY_OBJ) $(BENCH_SENDLOOP) $(BENCH_PROXY_FLOOR)
	$(Q)HDRSTRIP=$(abspath $(OUTPUT)/hdrstrip) SENDLOOP=$(abspath $(BENCH_SENDLOOP)) \
		FLOOR_OBJ=$(abspath $(BENCH_PROXY_FLOOR)) bench/bench-proxy.sh

bench-proxy-bound: $(BOUND_OUT)/hdrstrip $(BENCH_SENDLOOP) $(BENCH_PROXY_FLOOR)
	$(Q)BOUND=1 HDRSTRIP=$(abspath $(BOUND_OUT)/hdrstrip) SENDLOOP=$(abspath $(BENCH_SENDLOOP)) \
		FLOOR_OBJ=$(abspath $(BENCH_PROXY_FLOOR)) bench/bench-proxy.sh

bench-proxy-responses: $(OUTPUT)/hdrstrip $(PROXY_OBJ)
	$(Q)HDRSTRIP=$(abspath $(OUTPUT)/hdrstrip) bench/bench-proxy-responses.sh
