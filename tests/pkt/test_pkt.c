// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packet tests through BPF_PROG_TEST_RUN on the real object, both hooks.
 *
 *   test_pkt --corpus DIR [--obj19 PATH]
 *
 * Environment: HS_SEED (random tests), HS_SPLIT_ALL=1 or HS_SPLIT_SAMPLE=N
 * (how many corpus requests are cut at every offset), HS_TEST_FILTER (a
 * cmocka test-name pattern).
 *
 * Needs root (BPF). Exits 77 when it is not run as root, so a run without
 * privileges is told apart from a failure.
 *
 * Files: builder.c (packets, RFC 1071 checksums of its own), refstrip.c
 * (the independent reference stripper), harness.c (loading, maps,
 * test_run), check.c (run one case, check everything), fixtures.c (the
 * tables), edges.c (cases built by code), corpus.c (the corpus against the
 * reference), random.c (random requests against the reference), wire.c
 * (tunnels in the flow key; the object loaded for a device without a link
 * header; UDP tunnel sockets made after the attach, in a namespace of its
 * own).
 *
 * test_run limits measured on Linux 6.18 x86-64 (test_limits prints them):
 * xdp takes frames up to 73152 bytes, but only 3520 (4096 - 256 headroom -
 * 320 skb_shared_info) are linear; the rest come as 17 page fragments,
 * which this non-frags program does not see (it passes such a frame as
 * truncated). tc (skb) takes up to 3712 bytes (4096 - 64 NET_SKB_PAD - 320)
 * and refuses an IPv4/IPv6 EtherType frame shorter than the bare IP header;
 * both refuse frames shorter than 14 bytes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/libbpf.h>

#include "edges.h"
#include "stream.h"
#include "wire.h"

struct pt_state pt;

static const __u16 port80 = 80;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !getenv("HS_VERBOSE"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Inspect port 80 with the fixture list in slot 0. */
static int prepare(struct th *h)
{
	int r = th_config(h, 0, HS_POLICY_DROP, &port80, 1);

	return r ? r : th_set_trie(h, 0, pt.fix_trie);
}

static void print_insns(const struct th *h)
{
	int i;

	for (i = 0; i < TH_HOOKS; i++)
		printf("verifier: %s %-4s processed %u insns (bpf_prog_info.verified_insns %u)\n",
		       h->label, th_hook_name[i], h->processed[i], h->verified[i]);
}

static int group_setup(void **state)
{
	(void)state;
	pt.fix_trie = calloc(1, sizeof(*pt.fix_trie));
	pt.fix_ref = calloc(1, sizeof(*pt.fix_ref));
	if (!pt.fix_trie || !pt.fix_ref || pt_compile(pt_fixture_list, pt.fix_trie) ||
	    ref_list_parse(pt_fixture_list, strlen(pt_fixture_list), 0, pt.fix_ref))
		return -1;
	if (th_open(&pt.obj14, NULL, "clang-14"))
		return -1;
	return prepare(&pt.obj14);
}

static int group_teardown(void **state)
{
	(void)state;
	th_close(&pt.obj14);
	free(pt.fix_trie);
	free(pt.fix_ref);
	return 0;
}

static void test_verifier(void **state)
{
	(void)state;
	print_insns(&pt.obj14);
	assert_true(pt.obj14.processed[TH_XDP] > 0);
	assert_true(pt.obj14.processed[TH_TC] > 0);
}

static void test_limits(void **state)
{
	struct pt_limits lim;
	int bad;

	(void)state;
	bad = pt_limits(&pt.obj14, &lim);
	printf("test_run limits on this kernel: xdp accepts up to %u bytes (the program sees "
	       "%u linearly), tc (skb) accepts up to %u bytes\n",
	       lim.accepted[TH_XDP], lim.xdp_linear, lim.accepted[TH_TC]);
	pt.xdp_max = lim.xdp_linear;
	pt.skb_max = lim.accepted[TH_TC];
	assert_int_equal(bad, 0);
}

static void test_http(void **state)
{
	(void)state;
	assert_int_equal(pt_check_table(&pt.obj14, pt_http_cases, pt_n_http_cases, PT_ALL_HOOKS),
			 0);
}

static void test_layers(void **state)
{
	(void)state;
	assert_int_equal(pt_check_table(&pt.obj14, pt_layer_cases, pt_n_layer_cases, PT_ALL_HOOKS),
			 0);
}

static void test_malformed(void **state)
{
	(void)state;
	assert_int_equal(
		pt_check_table(&pt.obj14, pt_malformed_cases, pt_n_malformed_cases, PT_ALL_HOOKS),
		0);
}

/* The checker every table trusts, on its own (no BPF). */
static void test_builder(void **state)
{
	int frames = 0, bad;

	(void)state;
	bad = pt_builder_sums(&frames);
	printf("builder: %d frames, each checksum checked and each damage refused\n", frames);
	assert_int_equal(bad, 0);
	assert_true(frames > 0);
}

/* Tunnels, and what the parser passes or sends to on-error. */
static void test_wire(void **state)
{
	(void)state;
	assert_int_equal(pt_check_table(&pt.obj14, pt_wire_cases, pt_n_wire_cases, PT_ALL_HOOKS),
			 0);
}

/* The wire tables that need a config of their own (pt_wire_config). */
static int check_wire_config(struct th *h)
{
	int bad = th_config_wire(h, 0, HS_POLICY_DROP, &port80, 1, &pt_wire_config) != 0;

	bad += pt_check_table(h, pt_wire_config_cases, pt_n_wire_config_cases, PT_ALL_HOOKS);
	return bad + (prepare(h) != 0);
}

static void test_wire_config(void **state)
{
	(void)state;
	assert_int_equal(check_wire_config(&pt.obj14), 0);
}

static void test_wire_zones(void **state)
{
	(void)state;
	assert_int_equal(pt_wire_zones(&pt.obj14), 0);
}

/* UDP tunnel sockets the table does not name (wire.c). */
static void test_wire_late(void **state)
{
	(void)state;
	assert_int_equal(pt_wire_late(&pt.obj14), 0);
	assert_int_equal(prepare(&pt.obj14), 0);
}

/* The object loaded for a device without a link header (link_type
 * HS_L2_NONE), both compilers' builds. */
static void test_l3(void **state)
{
	int cases = 0, cases19 = 0, bad;

	(void)state;
	if (!pt.obj19_path)
		fail_msg("no --obj19 given");
	bad = pt_l3(NULL, "clang-14, no link header", &cases);
	bad += pt_l3(pt.obj19_path, "clang-19, no link header", &cases19);
	printf("no link header: %d cases x 2 hooks, on the clang-14 and the clang-19 object\n",
	       cases);
	assert_int_equal(bad, 0);
	assert_int_equal(cases, cases19);
}

static void test_truncation(void **state)
{
	int runs = 0, refused = 0, bad;

	(void)state;
	bad = pt_truncation_sweep(&pt.obj14, &runs, &refused);
	printf("truncation sweep: %d runs, %d of them refused by test_run as expected\n", runs,
	       refused);
	assert_int_equal(bad, 0);
}

static void test_reject(void **state)
{
	int bad;

	(void)state;
	bad = pt_reject_cases(&pt.obj14);
	/* The fixture list and config back for the tests after this one. */
	assert_int_equal(prepare(&pt.obj14), 0);
	assert_int_equal(bad, 0);
}

static void test_junk(void **state)
{
	(void)state;
	assert_int_equal(pt_junk_bytes(&pt.obj14), 0);
}

static void test_many_headers(void **state)
{
	(void)state;
	assert_int_equal(pt_many_headers(&pt.obj14, 500), 0);
}

static void test_swap(void **state)
{
	(void)state;
	assert_int_equal(pt_trie_swap(&pt.obj14), 0);
}

/*
 * The corpus' Content-Length values are mostly random text: "8qaa2v6..."
 * (digits, then other bytes) is ambiguous framing, which the default policy
 * drops. Output bytes are compared under on_error pass (every request goes
 * through, the rest of a conflicting one read line by line); the drop
 * policy's run checks that exactly the conflicting requests are dropped.
 */
static void test_corpus_mask(void **state)
{
	struct pt_corpus_stats st;
	int bad;

	(void)state;
	bad = pt_corpus(&pt.obj14, pt.corpus, 0, 0, 1, &st);
	printf("corpus, mask-only list, on_error pass: %u requests x 2 hooks, %u modified, %u "
	       "fields masked, %u conflicts, %u invalid lengths, %u desyncs\n",
	       st.requests, st.modified, st.masked, st.conflicts, st.invalid, st.desync);
	assert_int_equal(bad, 0);
	assert_int_equal(st.requests, 2000);
	assert_true(st.conflicts > 0 && st.invalid > 0);
	bad = pt_corpus(&pt.obj14, pt.corpus, 0, 0, 0, &st);
	printf("corpus, mask-only list, on_error drop: %u requests, %u dropped, %u with a "
	       "conflicting Content-Length\n",
	       st.requests, st.dropped, st.cl_conflicts);
	assert_int_equal(bad, 0);
	assert_int_equal(st.dropped, st.cl_conflicts);
	assert_true(st.dropped > 0);
}

/* The stream as it is: pipelined requests, packed into segments of up to
 * 3000 bytes (under both test_run limits) at request boundaries, each
 * packet a connection of its own. A segment per request would hide a
 * scanner that stops after the first block. */
static void test_corpus_pipelined(void **state)
{
	struct pt_corpus_stats st;
	int bad;

	(void)state;
	bad = pt_corpus(&pt.obj14, pt.corpus, 0, 3000, 1, &st);
	printf("corpus pipelined, mask-only list, on_error pass: %u requests in %u packets x 2 "
	       "hooks, %u packets modified, %u fields masked, %u desyncs\n",
	       st.requests, st.packets, st.modified, st.masked, st.desync);
	assert_int_equal(bad, 0);
	assert_int_equal(st.requests, 2000);
	assert_true(st.packets < st.requests);
	bad = pt_corpus(&pt.obj14, pt.corpus, 1, 3000, 1, &st);
	printf("corpus pipelined, list as written, on_error pass: %u packets, %u dropped\n",
	       st.packets, st.dropped);
	assert_int_equal(bad, 0);
	bad = pt_corpus(&pt.obj14, pt.corpus, 0, 3000, 0, &st);
	printf("corpus pipelined, mask-only list, on_error drop: %u packets, %u dropped\n",
	       st.packets, st.dropped);
	assert_int_equal(bad, 0);
}

static void test_corpus_drop(void **state)
{
	struct pt_corpus_stats st;
	int bad;

	(void)state;
	bad = pt_corpus(&pt.obj14, pt.corpus, 1, 0, 1, &st);
	printf("corpus, list as written, on_error pass: %u requests x 2 hooks, %u dropped, %u "
	       "modified\n",
	       st.requests, st.dropped, st.modified);
	assert_int_equal(bad, 0);
	assert_int_equal(st.requests, 2000);
	assert_true(st.dropped > 0);
}

static void test_random(void **state)
{
	const char *env = getenv("HS_SEED");
	__u64 seed = env ? strtoull(env, NULL, 0) : ((__u64)time(NULL) << 20) ^ (__u64)getpid();
	unsigned int modified = 0, modified_pass = 0;
	int bad;

	(void)state;
	printf("random requests: seed %llu (HS_SEED=%llu repeats this run)\n",
	       (unsigned long long)seed, (unsigned long long)seed);
	bad = pt_random(&pt.obj14, seed, 3000, 0, &modified);
	bad += pt_random(&pt.obj14, seed + 1, 3000, 1, &modified_pass);
	printf("random requests: 3000 x 2 hooks under on_error drop, %u masked something; 3000 "
	       "x 2 under pass, %u\n",
	       modified, modified_pass);
	assert_int_equal(bad, 0);
}

static __u64 seed_from_env(const char *what)
{
	const char *env = getenv("HS_SEED");
	__u64 seed = env ? strtoull(env, NULL, 0) : ((__u64)time(NULL) << 20) ^ (__u64)getpid();

	printf("%s: seed %llu (HS_SEED=%llu repeats this run)\n", what, (unsigned long long)seed,
	       (unsigned long long)seed);
	return seed;
}

/*
 * Every corpus request cut in two at every byte. All 2000 requests make
 * about 1.8M connections of four test_runs each per hook, hours here: by
 * default every cut of the first 20 requests and of a sample of 20 more
 * drawn from the seed; HS_SPLIT_ALL=1 runs them all, HS_SPLIT_SAMPLE=N
 * draws N.
 */
static void test_stream_split2(void **state)
{
	const char *all = getenv("HS_SPLIT_ALL"), *n = getenv("HS_SPLIT_SAMPLE");
	int sample = all && *all == '1' ? -1 : n ? atoi(n) : 20;
	__u64 seed = seed_from_env("stream, every cut in two");
	struct st_stats st;
	int bad;

	(void)state;
	bad = st_split2(&pt.obj14, pt.corpus, 20, sample, seed, &st);
	printf("stream, every cut in two: %lu requests (the first 20, %s), %lu connections, %lu "
	       "test_runs, %lu names rewritten ahead, %lu segments dropped\n",
	       st.requests, sample < 0 ? "all the others" : "a seeded sample of the others",
	       st.streams, st.runs, st.split_names, st.dropped);
	assert_int_equal(bad, 0);
	assert_true(st.requests >= 20);
}

static void test_stream_pieces(void **state)
{
	__u64 seed = seed_from_env("stream, 3-8 random pieces");
	struct st_stats st;
	int bad;

	(void)state;
	bad = st_random_pieces(&pt.obj14, pt.corpus, seed, &st);
	printf("stream, 3-8 random pieces: %lu requests x 2 hooks, %lu test_runs, %lu names "
	       "rewritten ahead, %lu segments dropped\n",
	       st.requests, st.runs, st.split_names, st.dropped);
	assert_int_equal(bad, 0);
	assert_int_equal(st.requests, 2000);
}

static void test_stream_pipelined(void **state)
{
	struct st_stats st;
	int bad;

	(void)state;
	bad = st_pipelined(&pt.obj14, pt.corpus, 1460, 1, &st);
	printf("stream, the corpus as one connection in 1460-byte segments, on_error pass: %lu "
	       "test_runs, %lu segments modified, %lu names rewritten ahead\n",
	       st.runs, st.modified, st.split_names);
	assert_int_equal(bad, 0);
	bad = st_pipelined(&pt.obj14, pt.corpus, 1460, 0, &st);
	printf("stream, the same under on_error drop: stops at the first conflict (%lu dropped)\n",
	       st.dropped);
	assert_int_equal(bad, 0);
	assert_int_equal(st.dropped, 2);
}

static void test_stream_framing(void **state)
{
	struct st_stats st;
	int bad;

	(void)state;
	bad = st_framing(&pt.obj14, &st);
	printf("stream, framing cases at every cut: %lu connections, %lu test_runs\n", st.streams,
	       st.runs);
	assert_int_equal(bad, 0);
}

static void test_stream_tcp(void **state)
{
	(void)state;
	assert_int_equal(st_tcp(&pt.obj14), 0);
}

static void test_normalize(void **state)
{
	(void)state;
	assert_int_equal(st_normalize(&pt.obj14), 0);
}

static void test_responses(void **state)
{
	unsigned long plays;
	int bad;

	(void)state;
	bad = st_responses(&pt.obj14, &plays);
	printf("responses, every pair of hooks, IPv4 and IPv6, every cut: %lu connections\n",
	       plays);
	assert_int_equal(bad, 0);
}

static void test_stream_split_names(void **state)
{
	struct st_stats st;
	int bad;

	(void)state;
	bad = st_split_names(&pt.obj14, &st);
	printf("stream, names split at every offset: %lu connections, %lu names rewritten ahead\n",
	       st.streams, st.split_names);
	assert_int_equal(bad, 0);
}

static void test_stream_eviction(void **state)
{
	(void)state;
	assert_int_equal(st_eviction(NULL, 16), 0);
}

/* The object clang-19 builds: it loads, and runs the same tables. */
static void test_clang19(void **state)
{
	int bad = 0;

	(void)state;
	if (!pt.obj19_path)
		fail_msg("no --obj19 given");
	assert_int_equal(th_open(&pt.obj19, pt.obj19_path, "clang-19"), 0);
	print_insns(&pt.obj19);
	assert_int_equal(prepare(&pt.obj19), 0);
	bad += pt_check_table(&pt.obj19, pt_http_cases, pt_n_http_cases, PT_ALL_HOOKS);
	bad += pt_check_table(&pt.obj19, pt_layer_cases, pt_n_layer_cases, PT_ALL_HOOKS);
	bad += pt_check_table(&pt.obj19, pt_malformed_cases, pt_n_malformed_cases, PT_ALL_HOOKS);
	bad += pt_reject_cases(&pt.obj19);
	/* The fixture config and list again, whatever ran before. */
	bad += prepare(&pt.obj19) != 0;
	bad += pt_check_table(&pt.obj19, pt_wire_cases, pt_n_wire_cases, PT_ALL_HOOKS);
	bad += check_wire_config(&pt.obj19);
	bad += pt_wire_zones(&pt.obj19);
	bad += pt_wire_late(&pt.obj19);
	th_close(&pt.obj19);
	assert_int_equal(bad, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verifier),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_layers),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_builder),
		cmocka_unit_test(test_wire),
		cmocka_unit_test(test_wire_config),
		cmocka_unit_test(test_wire_zones),
		cmocka_unit_test(test_wire_late),
		cmocka_unit_test(test_l3),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_reject),
		cmocka_unit_test(test_junk),
		cmocka_unit_test(test_many_headers),
		cmocka_unit_test(test_swap),
		cmocka_unit_test(test_corpus_mask),
		cmocka_unit_test(test_corpus_drop),
		cmocka_unit_test(test_corpus_pipelined),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_stream_framing),
		cmocka_unit_test(test_stream_tcp),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_responses),
		cmocka_unit_test(test_stream_split_names),
		cmocka_unit_test(test_stream_eviction),
		cmocka_unit_test(test_stream_pipelined),
		cmocka_unit_test(test_stream_pieces),
		cmocka_unit_test(test_stream_split2),
		cmocka_unit_test(test_clang19),
	};
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--corpus") && i + 1 < argc)
			pt.corpus = argv[++i];
		else if (!strcmp(argv[i], "--obj19") && i + 1 < argc)
			pt.obj19_path = argv[++i];
		else {
			fprintf(stderr, "usage: %s --corpus DIR [--obj19 PATH]\n", argv[0]);
			return 2;
		}
	}
	if (!pt.corpus) {
		fprintf(stderr, "usage: %s --corpus DIR [--obj19 PATH]\n", argv[0]);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "test_pkt: skipped: BPF_PROG_TEST_RUN needs root\n");
		return 77;
	}
	/* HS_TEST_FILTER=test_stream_* runs the tests whose names match. */
	if (getenv("HS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("HS_TEST_FILTER"));
	libbpf_set_print(libbpf_print);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("hdrstrip packet tests", tests, group_setup,
					   group_teardown);
}
