/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The scan driver of both BPF programs: how the shared scanner
 * (include/hdrstrip/scan.h) runs under bpf_loop(), and what a scan adds to
 * the counters. The datapath (hdrstrip.bpf.c) masks; proxy mode
 * (proxy.bpf.c) removes lines, and collects their ranges here.
 */
#ifndef HDRSTRIP_BPF_SCAN_LOOP_H
#define HDRSTRIP_BPF_SCAN_LOOP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/maps.h>
#include <hdrstrip/scan.h>

#include "events.h"
#include "maps.bpf.h"

/*
 * The scan runs under bpf_loop(): the verifier checks the callback once, not
 * once per byte. Each call makes up to HS_STEPS_PER_CALL steps, which keeps
 * the per-call overhead small next to the work; enough calls are allowed for
 * a 64 KiB buffer even when every byte takes a step of its own,
 * HS_STEPS_PER_BYTE times (scan.h). The call count is a run-time bound: it
 * costs the verifier nothing. The steps per call do: the verifier walks
 * each step again with every state the steps before it left, so the count
 * grows faster than the steps. On the kernel CI runs on (6.18.44-fc), four
 * took clang-19's XDP program to 638,892 instructions and its sk_skb
 * program past the 1,000,000 limit; three leave 72 % of the test's budget
 * used, two 49 % (BENCHMARKS.md, "The verifier on CI's kernel": a global
 * function per step takes it to 29 %, at 40 % more run time in real
 * traffic).
 */
#define HS_STEPS_PER_CALL 2
#define HS_MAX_CALLS (HS_STEPS_PER_BYTE * (HS_MAX_BUF + 16) / HS_STEPS_PER_CALL)

/* Why a scan stopped (the caller's done field; 0 while it runs). */
#define SCAN_DONE 1 /* a verdict, or the end of the buffer */
#define SCAN_RM_FULL 2 /* the removal list is full: stopped at a consistent point */

/* Removal ranges (HS_OPT_REMOVE) a buffer may collect before it is cut in
 * two. */
#define HS_MAX_RM 32
_Static_assert((HS_MAX_RM & (HS_MAX_RM - 1)) == 0, "HS_MAX_RM is masked as a power of two");

struct scan_rm {
	__u32 off[HS_MAX_RM];
	__u32 len[HS_MAX_RM];
	__u32 n;
};

/* The range HS_STEP_REMOVE reported, into @rm: 0 to go on, 1 when the list
 * is full. */
static __always_inline int scan_rm_add(struct scan_rm *rm, const struct hs_scan *s)
{
	__u32 n = rm->n, last = (n - 1) & (HS_MAX_RM - 1);

	if (n && rm->off[last] + rm->len[last] == s->rm_start) {
		/*
		 * Right after the last range (the LF after a removed line's
		 * CR, the next internal line): one range. So a full list
		 * always has kept bytes between its ranges, and a run that
		 * stops early has something to pass.
		 */
		rm->len[last] += s->rm_end - s->rm_start;
		return 0;
	}
	if (n >= HS_MAX_RM)
		return 1; /* cannot happen: a full list stops the scan */
	rm->off[n & (HS_MAX_RM - 1)] = s->rm_start;
	rm->len[n & (HS_MAX_RM - 1)] = s->rm_end - s->rm_start;
	rm->n = n + 1;
	return n + 1 == HS_MAX_RM;
}

/*
 * A segment's matches (the datapath's; proxy mode has none): a digest of
 * their rules, in order, for every segment; and, for a segment that may be
 * the retransmission of one a drop rule dropped (hold), its first
 * SCAN_HELD matches' hits and events held back until its fate says whether
 * it is (flow.h: drop_sig).
 */
#define SCAN_HELD 4
_Static_assert((SCAN_HELD & (SCAN_HELD - 1)) == 0, "SCAN_HELD is masked as a power of two");

struct scan_matches {
	__u32 sig; /* scan_sig() of every match's rule so far */
	__u32 hold; /* hold the hits and events back */
	__u32 n; /* matches so far (the first SCAN_HELD held) */
	/* Observe mode: 1 once a drop rule matched (enforce mode drops the
	 * packet); its caller clears it, and may mark it counted (2). */
	__u32 obs_drop;
	__u16 rule[SCAN_HELD];
	struct hs_event ev[SCAN_HELD]; /* on == 0: no event (events off) */
};

static __always_inline __u32 scan_sig(__u32 sig, __u32 rule)
{
	return (sig ^ rule) * 0x01000193u + 1;
}

/*
 * bpf_loop()'s argument, the same in both programs: on the stack, as the
 * helper requires; pointers may not be stored in map values.
 */
struct scan_arg {
	void *sc; /* the program's per-CPU scratch */
	const struct hs_trie *t;
	void *ctx; /* the program's context: where the buffer is */
	struct hs_event *ev; /* the event template, in the scratch */
	const struct hs_flow_key *key; /* the connection, for events */
	struct scan_matches *m; /* NULL: hits and events go out at once */
};

/* The match @s just made, as an event: its rule, its action and the name's
 * first bytes as received; sent, or with @keep copied there. */
static __always_inline void scan_event(const struct scan_arg *c, const struct hs_scan *s,
				       void *data, void *data_end, struct hs_event *keep)
{
	struct hs_event *ev = c->ev;
	const struct hs_trie *t = c->t;
	__u32 off = s->name_off, len = s->name_len & 0xff;
	__u8 act;

	/* Events off: no name copy, no call. (A flag read from the map, not
	 * a NULL template: the verifier's states stay one.) */
	if (!ev || !t || !ev->on)
		return;
	act = t->rules[(s->rule - 1) & (HS_MAX_NAMES - 1)].action;
	/* A drop rule's line says so in observe mode too: the reason enforce
	 * mode would drop its packet for. */
	ev->reason = hs_action_drops(act) ? HS_EVR_RULE : HS_EVR_NONE;
	if (s->opts & HS_OPT_OBSERVE)
		act = HS_ACT_OBSERVE;
	ev->rule = s->rule;
	ev->generation = t->generation;
	ev->action = act;
	if (len > HS_EVENT_NAME_MAX)
		len = HS_EVENT_NAME_MAX;
	if ((__u8 *)data + off + len > (__u8 *)data_end)
		len = 0;
	ev->name_len = (__u8)len;
	if (len)
		bpf_probe_read_kernel(ev->name, len, (__u8 *)data + off);
	if (keep)
		__builtin_memcpy(keep, ev, sizeof(*keep));
	else
		event_emit(ev, c->key);
}

/* A match: its hit and its event, now or held (struct scan_matches). */
static __always_inline void scan_match(const struct scan_arg *c, const struct hs_scan *s,
				       void *data, void *data_end)
{
	struct scan_matches *m = c->m;
	__u32 k;

	/* A scan for framing only (proxy mode's received requests) has no
	 * event template: what it matches is not the list's hits. */
	if (!c->ev)
		return;
	if (m) {
		if ((s->opts & HS_OPT_OBSERVE) &&
		    hs_action_drops(c->t->rules[(s->rule - 1) & (HS_MAX_NAMES - 1)].action))
			m->obs_drop |= 1;
		m->sig = scan_sig(m->sig, s->rule);
		k = m->n++;
		if (m->hold && k < SCAN_HELD) {
			k &= SCAN_HELD - 1;
			m->rule[k] = s->rule;
			m->ev[k].on = 0;
			scan_event(c, s, data, data_end, &m->ev[k]);
			return;
		}
	}
	count_hit(c->t, s->rule);
	scan_event(c, s, data, data_end, NULL);
}

/*
 * One bpf_loop() call's work: up to HS_STEPS_PER_CALL steps of @s over the
 * buffer [@data, @data_end), with the trie @c->t. Returns 0 to be called
 * again, or 1 when the scan stopped, with *@done saying why. @rm takes
 * HS_OPT_REMOVE's ranges; NULL (a constant) for a scan that masks, which
 * never reports any.
 */
static __always_inline long scan_steps(const struct scan_arg *c, struct hs_scan *s, __u32 *done,
				       struct scan_rm *rm, void *data, void *data_end)
{
	int i, r;

	for (i = 0; i < HS_STEPS_PER_CALL; i++) {
		/* Every step reads the state from the map again: clang would
		 * otherwise carry known values from one step to the next in
		 * registers, and the verifier would walk each combination.
		 * (The trie's pointer too is read from @c at every step: kept
		 * in a register, it costs the verifier 2-5 % more.) */
		asm volatile("" ::: "memory");
		/* Keep the counter a plain register the verifier can count. */
		asm volatile("" : "+r"(i));
		r = hs_scan_step(s, c->t, data, data_end);
		if (r == HS_STEP_MORE)
			continue;
		if (r == HS_STEP_MATCH) {
			scan_match(c, s, data, data_end);
			if (s->st.phase != HS_PH_DROPPED)
				continue;
		} else if (r == HS_STEP_REMOVE && rm) {
			if (!scan_rm_add(rm, s))
				continue;
			*done = SCAN_RM_FULL;
			return 1;
		}
		*done = SCAN_DONE;
		return 1;
	}
	return 0;
}

/*
 * What a scan found, into the counters: the same at every hook and in proxy
 * mode. @held: 1 when the scan ends in a field name it will see again (the
 * proxy holds that line back for more bytes), so it is counted once. What
 * became of the matched lines (masked, removed) is the caller's to count.
 */
static __always_inline void count_scan(struct hs_counters *cnt, const struct hs_scan *s, int held,
				       int masked)
{
	if (s->st.conn & HS_CN_RESPONSE) {
		cnt->http_responses += s->requests;
		cnt->response_headers_seen += s->seen - held;
		cnt->response_headers_matched += s->matched;
		cnt->response_headers_masked += masked ? s->masked : 0;
		cnt->response_headers_observed += s->observed;
		cnt->responses_unframed += s->unframed;
	} else {
		cnt->http_requests += s->requests;
		cnt->headers_seen += s->seen - held;
		cnt->headers_matched += s->matched;
		cnt->headers_masked += masked ? s->masked : 0;
		cnt->headers_observed += s->observed;
	}
	cnt->framing_invalid += s->framing_invalid;
	cnt->desync += s->desync;
	cnt->framing_conflict += s->conflicts;
	cnt->h2c_preface += s->h2c;
	cnt->bodies_unframed += s->bodies_unframed;
	cnt->non_http += s->st.phase == HS_PH_NOT_HTTP;
}

#endif /* HDRSTRIP_BPF_SCAN_LOOP_H */
