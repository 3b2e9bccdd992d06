// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Verifier headroom: every program of hdrstrip's BPF objects (clang-14's
 * and clang-19's builds) is loaded the way the CLI loads it, with every
 * load-time option (the hook's program alone, the flow table at its
 * smallest, default and a large size), and the verifier's processed
 * instruction count must stay below half of its 1,000,000 limit.
 *
 * The datapath object is then run through BPF_PROG_TEST_RUN with the
 * largest tries the limits allow written into its trie map (1024 names of
 * 128 bytes: all distinct; a full fan-out at the root and below it; a
 * fan-out at the end of a shared 126-byte path), under every combination
 * of the run-time policies (--on-error drop|pass, --untracked
 * scan|pass|drop: map values, which the verifier does not see): a request
 * whose field walks a whole 128-byte name is masked, a near miss kept, an
 * ambiguous request gets the on-error policy's verdict and a segment of a
 * connection without state the untracked policy's, and the checksums stay
 * valid.
 *
 *   verifier_headroom [--quiet] OBJ14 OBJ19 [PROXY14 PROXY19]
 *
 * Prints one line per program load ("verifier: ..."); exits 1 when a count
 * reaches the budget or a check fails, 77 when not root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <hdrstrip/flow.h>
#include <hdrstrip/maps.h>

#include "builder.h"
#include "compile.h"
#include "hlist.h"

#define BUDGET 500000u /* half of BPF_COMPLEXITY_LIMIT_INSNS */
#define LOG_SIZE (1 << 20)

enum {
	XDP_PASS_ = 2,
	XDP_DROP_ = 1,
	TC_OK_ = -1,
	TC_SHOT_ = 2
};

static int failures;
static __u32 worst;
static char worst_what[160];

#define check(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL: " __VA_ARGS__);                                     \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* ---- the largest tries ---- */

static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789"; /* 36 bytes */

/* 1024 names of 128 bytes in one of three shapes. */
static void make_names(int shape, char names[HS_MAX_NAMES][HS_MAX_NAME_LEN + 1])
{
	unsigned long long x = 0x9e3779b97f4a7c15ULL;

	for (int i = 0; i < HS_MAX_NAMES; i++) {
		char *n = names[i];

		for (int k = 0; k < HS_MAX_NAME_LEN; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			n[k] = alphabet[x % (sizeof(alphabet) - 1)];
		}
		n[0] = 'x';
		n[1] = '-';
		if (shape == 1) {
			/* A full fan-out: 32 children at the root's first
			 * branching byte, 32 below each, one long leaf each. */
			n[2] = alphabet[i / 32];
			n[3] = alphabet[i % 32];
		} else if (shape == 2) {
			/* One shared 126-byte path, then the same fan-out at
			 * its end. */
			memset(n + 2, 'q', HS_MAX_NAME_LEN - 4);
			n[HS_MAX_NAME_LEN - 2] = alphabet[i / 32];
			n[HS_MAX_NAME_LEN - 1] = alphabet[i % 32];
		}
		n[HS_MAX_NAME_LEN] = 0;
	}
}

static const char *const shape_name[] = { "1024 distinct 128-byte names",
					  "a 32x32 fan-out under x-, 128-byte names",
					  "a 32x32 fan-out after a shared 126-byte path" };

static struct hs_trie trie;
static char names[HS_MAX_NAMES][HS_MAX_NAME_LEN + 1];

static int build_trie(int shape)
{
	static char text[HS_MAX_NAMES * (HS_MAX_NAME_LEN + 1) + 1];
	struct hs_list_opts o;
	struct hs_trie_stats st;
	struct hs_list l;
	struct hs_err err;
	size_t n = 0;

	make_names(shape, names);
	for (int i = 0; i < HS_MAX_NAMES; i++)
		n += (size_t)sprintf(text + n, "%s\n", names[i]);
	hs_list_opts_default(&o);
	if (hs_list_parse(text, n, "headroom", &o, &l, &err) || hs_compile(&l, &trie, &st, &err)) {
		fprintf(stderr, "FAIL: list of %s: %s\n", shape_name[shape], err.msg);
		return -1;
	}
	hs_list_free(&l);
	printf("trie: %s: %u names, %u nodes, %u label bytes, depth %u\n", shape_name[shape],
	       st.names, st.nodes, st.label_bytes, st.max_depth);
	return 0;
}

/* ---- loading ---- */

static __u32 processed_insns(const char *log)
{
	const char *p = strstr(log, "processed ");

	return p ? (__u32)strtoul(p + 10, NULL, 10) : 0;
}

struct loaded {
	struct bpf_object *obj;
	int prog_fd;
	__u32 processed, verified;
};

/* Open @path, keep only program @prog, size the flow table (when @flows),
 * load, and record the verifier's counts. */
static int load(const char *path, const char *prog, __u32 flows, struct loaded *ld)
{
	static char log[LOG_SIZE];
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	struct bpf_program *p, *keep = NULL;
	int err;

	memset(ld, 0, sizeof(*ld));
	ld->obj = bpf_object__open_file(path, NULL);
	if (!ld->obj) {
		fprintf(stderr, "FAIL: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	bpf_object__for_each_program (p, ld->obj) {
		int mine = !strcmp(bpf_program__name(p), prog);

		bpf_program__set_autoload(p, mine);
		if (mine)
			keep = p;
	}
	if (!keep) {
		fprintf(stderr, "FAIL: %s has no program %s\n", path, prog);
		return -1;
	}
	if (flows)
		bpf_map__set_max_entries(bpf_object__find_map_by_name(ld->obj, HS_MAP_FLOWS),
					 flows);
	log[0] = 0;
	bpf_program__set_log_buf(keep, log, sizeof(log));
	bpf_program__set_log_level(keep, 4); /* the statistics line only */
	err = bpf_object__load(ld->obj);
	if (err) {
		fprintf(stderr, "FAIL: %s %s: load: %s\n%s\n", path, prog, strerror(-err), log);
		return -1;
	}
	ld->prog_fd = bpf_program__fd(keep);
	ld->processed = processed_insns(log);
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(ld->prog_fd, &info, &len))
		ld->verified = info.verified_insns;
	return 0;
}

static void record(const char *label, const char *hook, __u32 flows, const struct loaded *ld)
{
	char what[160];

	if (flows)
		snprintf(what, sizeof(what), "%s %s flows=%u", label, hook, flows);
	else
		snprintf(what, sizeof(what), "%s %s", label, hook);
	printf("verifier: %-36s processed %7u insns (verified_insns %7u), %4.1f%% of the budget\n",
	       what, ld->processed, ld->verified, 100.0 * ld->processed / BUDGET);
	check(ld->processed > 0, "%s: no instruction count in the verifier's log", what);
	check(ld->processed < BUDGET, "%s: %u insns, the budget is %u", what, ld->processed,
	      BUDGET);
	if (ld->processed > worst) {
		worst = ld->processed;
		snprintf(worst_what, sizeof(worst_what), "%s", what);
	}
}

/* ---- running packets ---- */

static int map_fd(struct bpf_object *obj, const char *name)
{
	return bpf_map__fd(bpf_object__find_map_by_name(obj, name));
}

static void forget_flows(int fd)
{
	struct hs_flow_key k;

	while (!bpf_map_get_next_key(fd, NULL, &k))
		if (bpf_map_delete_elem(fd, &k))
			break;
}

static int set_config(struct bpf_object *obj, int on_error, int untracked)
{
	struct hs_config cfg;
	__u32 key = 0;

	memset(&cfg, 0, sizeof(cfg));
	cfg.active_slot = 1;
	cfg.on_error = (__u8)on_error;
	cfg.untracked = (__u8)untracked;
	cfg.n_names = HS_MAX_NAMES;
	cfg.ports[80 / 64] |= 1ULL << (80 % 64);
	return bpf_map_update_elem(map_fd(obj, HS_MAP_CONFIG), &key, &cfg, BPF_ANY);
}

/* Run @payload through the program, on a connection whose SYN it saw
 * (@syn) or one it holds no state for; returns its verdict, with the
 * packet it left in @out (payload at @payload_off). */
static int run(struct bpf_object *obj, int prog_fd, const char *payload, int syn, __u8 *out,
	       size_t *payload_off, const char *what)
{
	static __u8 pkt[PB_MAX_PKT];
	struct pb_spec spec = { .seq = 1, .seq_set = 1 };
	struct pb_layout lay;
	size_t n = pb_build(&spec, payload, strlen(payload), pkt, &lay);
	struct bpf_test_run_opts o = { .sz = sizeof(o),
				       .data_in = pkt,
				       .data_size_in = (__u32)n,
				       .data_out = out,
				       .data_size_out = PB_MAX_PKT,
				       .repeat = 1 };
	char why[200];

	*payload_off = lay.payload_off;
	forget_flows(map_fd(obj, HS_MAP_FLOWS));
	if (syn) {
		static __u8 synpkt[PB_MAX_PKT];
		struct pb_spec ss = { .seq = 0, .seq_set = 1, .tcp_flags = 0x02 };
		struct pb_layout sl;
		struct bpf_test_run_opts so = { .sz = sizeof(so),
						.data_in = synpkt,
						.data_size_in =
							(__u32)pb_build(&ss, "", 0, synpkt, &sl),
						.repeat = 1 };

		if (bpf_prog_test_run_opts(prog_fd, &so)) {
			check(0, "%s: test run (SYN): %s", what, strerror(errno));
			return -100;
		}
	}
	if (bpf_prog_test_run_opts(prog_fd, &o)) {
		check(0, "%s: test run: %s", what, strerror(errno));
		return -100;
	}
	check(o.data_size_out == n, "%s: %u bytes out of %zu in", what, o.data_size_out, n);
	if (pb_check_sums(out, o.data_size_out, why, sizeof(why)) < 0)
		check(0, "%s: %s", what, why);
	return (int)o.retval;
}

static void run_policies(const char *label, const char *hook, int tc, struct bpf_object *obj,
			 int prog_fd)
{
	static __u8 out[PB_MAX_PKT];
	static char req[1024];
	const int pass = tc ? TC_OK_ : XDP_PASS_, drop = tc ? TC_SHOT_ : XDP_DROP_;
	const char *hit = names[HS_MAX_NAMES - 1];
	char miss[HS_MAX_NAME_LEN + 1], what[256], *line;
	size_t off;
	int v;

	/* A byte no listed name has, at the very end. */
	memcpy(miss, hit, sizeof(miss));
	miss[HS_MAX_NAME_LEN - 1] = '~';
	snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: h\r\n%s: secret\r\n%s: kept\r\n\r\n",
		 hit, miss);
	for (int oe = HS_POLICY_DROP; oe <= HS_POLICY_PASS; oe++) {
		for (int ut = HS_POLICY_DROP; ut <= HS_POLICY_SCAN; ut++) {
			static const char *const pol[] = { "drop", "pass", "scan" };

			snprintf(what, sizeof(what), "%s %s --on-error %s --untracked %s", label,
				 hook, pol[oe], pol[ut]);
			check(!set_config(obj, oe, ut), "%s: config: %s", what, strerror(errno));
			/* The whole 128-byte name is walked and masked; the
			 * near miss is kept. */
			v = run(obj, prog_fd, req, 1, out, &off, what);
			check(v == pass, "%s: request: verdict %d", what, v);
			/* The third line, after the request line and Host. */
			line = (char *)out + off + strlen("GET / HTTP/1.1\r\nHost: h\r\n");
			check(!strncmp(line, (const char *)trie.fill, 10) &&
				      !strncmp(line + 10, ": xxxxxx", 8),
			      "%s: the listed field is not masked", what);
			check(!memcmp(line + strlen(hit) + strlen(": secret\r\n"), miss,
				      strlen(miss)),
			      "%s: the near miss was changed", what);
			/* Framing servers read two ways: the on-error policy. */
			v = run(obj, prog_fd,
				"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
				1, out, &off, what);
			check(v == (oe == HS_POLICY_DROP ? drop : pass),
			      "%s: ambiguous framing: verdict %d", what, v);
			/* No connection state: the untracked policy. */
			v = run(obj, prog_fd, "\x16\x03\x01 no request here\r\n", 0, out, &off,
				what);
			check(v == (ut == HS_POLICY_DROP ? drop : pass),
			      "%s: not a request: verdict %d", what, v);
		}
	}
}

/* ---- main ---- */

static const struct {
	const char *hook, *prog;
	int tc;
} hooks[] = {
	{ "xdp", "hdrstrip_xdp", 0 },
	{ "tc-ingress", "hdrstrip_tc", 1 },
	{ "tc-egress", "hdrstrip_tc", 1 },
};

/* Flow-table sizes: the smallest --flows allows, the default, a large one. */
static const __u32 flow_sizes[] = { 16, HS_FLOWS_DEFAULT, 1u << 20 };

static void datapath(const char *path, const char *label)
{
	for (size_t h = 0; h < HS_ARRAY_SIZE(hooks); h++) {
		for (size_t f = 0; f < HS_ARRAY_SIZE(flow_sizes); f++) {
			struct loaded ld;

			if (load(path, hooks[h].prog, flow_sizes[f], &ld)) {
				failures++;
				bpf_object__close(ld.obj);
				continue;
			}
			record(label, hooks[h].hook, flow_sizes[f], &ld);
			for (int shape = 0; shape < 3; shape++) {
				__u32 slot = 1;

				if (build_trie(shape) ||
				    bpf_map_update_elem(map_fd(ld.obj, HS_MAP_TRIE), &slot, &trie,
							BPF_ANY)) {
					check(0, "%s: cannot write the trie", label);
					continue;
				}
				run_policies(label, hooks[h].hook, hooks[h].tc, ld.obj, ld.prog_fd);
			}
			bpf_object__close(ld.obj);
		}
	}
}

static void proxy(const char *path, const char *label)
{
	/* Proxy mode's sockops program, origin mode's, and the sk_msg and
	 * sk_skb programs both modes attach. */
	static const char *const progs[] = { "hdrstrip_sockops", "hdrstrip_origin", "hdrstrip_msg",
					     "hdrstrip_rx" };

	for (size_t i = 0; i < HS_ARRAY_SIZE(progs); i++) {
		struct bpf_object *probe = bpf_object__open_file(path, NULL);
		struct bpf_program *p;
		struct loaded ld;

		/* The program names as the object spells them. */
		if (!probe) {
			check(0, "cannot open %s", path);
			return;
		}
		bpf_object__for_each_program (p, probe) {
			if (!strcmp(bpf_program__name(p), progs[i])) {
				char name[64];

				snprintf(name, sizeof(name), "%s", bpf_program__name(p));
				bpf_object__close(probe);
				probe = NULL;
				if (!load(path, name, 0, &ld))
					record(label, name, 0, &ld);
				else
					failures++;
				bpf_object__close(ld.obj);
				break;
			}
		}
		if (probe) {
			check(0, "%s has no program %s", path, progs[i]);
			bpf_object__close(probe);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s OBJ14 OBJ19 [PROXY14 PROXY19]\n", argv[0]);
		return 2;
	}
	if (geteuid()) {
		printf("SKIP: needs root (loads BPF programs)\n");
		return 77;
	}
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	datapath(argv[1], "clang-14");
	datapath(argv[2], "clang-19");
	if (argc >= 5) {
		proxy(argv[3], "proxy clang-14");
		proxy(argv[4], "proxy clang-19");
	}
	printf("verifier: the most: %u insns (%s), %.1f%% of the %u budget\n", worst, worst_what,
	       100.0 * worst / BUDGET, BUDGET);
	if (failures)
		fprintf(stderr, "verifier headroom: %d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
