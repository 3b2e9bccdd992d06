/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The counters: one list of (name, help) that makes the map value's fields,
 * their indices and the table every printer reads (stats text and JSON,
 * Prometheus' HELP lines). A counter is added here and nowhere else in the
 * contract; hdrstrip(8)'s COUNTERS section explains each in prose.
 */
#ifndef HDRSTRIP_COUNTERS_H
#define HDRSTRIP_COUNTERS_H

#include "portable.h"

/* X(name, help): the help is one sentence, as Prometheus' # HELP shows it. */
#define HS_COUNTERS(X)                                                                             \
	X(packets,                                                                                 \
	  "Packets hdrstrip's programs ran on, all hooks of the device together (a packet two "    \
	  "hooks see counts twice).")                                                              \
	X(inspected,                                                                               \
	  "TCP segments with payload to an inspected destination port (requests) or, with "        \
	  "response rules, from an inspected source port (responses).")                            \
	X(http_requests, "HTTP/1.x request lines recognised.")                                     \
	X(headers_seen, "Request header field lines examined.")                                    \
	X(headers_matched, "Request header field lines whose name a request rule lists.")          \
	X(headers_masked, "Request header field lines rewritten in place.")                        \
	X(headers_observed,                                                                        \
	  "Request header field lines that matched and were kept: observe rules, or every "        \
	  "rule in observe mode.")                                                                 \
	/* Responses (rules for the response direction). */                                        \
	X(http_responses, "HTTP/1.x status lines recognised.")                                     \
	X(response_headers_seen, "Response header field lines examined.")                          \
	X(response_headers_matched,                                                                \
	  "Response header field lines whose name a response rule lists.")                         \
	X(response_headers_masked, "Response header field lines rewritten in place.")              \
	X(response_headers_observed,                                                               \
	  "Response header field lines that matched and were kept (observe).")                     \
	X(responses_dropped, "Packets dropped because a drop rule matched a response field.")      \
	X(responses_unframed,                                                                      \
	  "Responses whose body length depends on a request method not known here (no hook "       \
	  "saw the request, or it came after the answer to a request with a body its method "      \
	  "has no use for), and interim responses other than 100: the rest of the connection "     \
	  "checked line by line.")                                                                 \
	X(packets_modified, "Packets that left with masked bytes.")                                \
	X(packets_dropped,                                                                         \
	  "Packets dropped by a drop or reject rule, a policy (on-error, untracked, urgent) or "   \
	  "the normaliser: a request once, not each copy TCP resends.")                            \
	X(packets_rejected,                                                                        \
	  "TCP resets sent back to the senders of dropped packets (reject rules, --on-error "      \
	  "reject), one a copy TCP sent before it read the reset.")                                \
	X(retransmits_dropped,                                                                     \
	  "Retransmissions of a segment a drop rule dropped: dropped again, not counted in "       \
	  "packets_dropped or the per-header hits, and no event.")                                 \
	X(packets_observed,                                                                        \
	  "Packets observe mode passed that enforce mode would have dropped (by a rule or a "      \
	  "policy).")                                                                              \
	X(non_http,                                                                                \
	  "Inspected segments of connections that start with a TLS record (not HTTP/1.x): "        \
	  "passed, not scanned.")                                                                  \
	X(fragments,                                                                               \
	  "IP fragments of datagrams that may carry TCP: passed when no inspected socket can get " \
	  "them (a port not inspected, a UDP port no tunnel takes), else the on-error policy "     \
	  "decided.")                                                                              \
	X(scan_incomplete,                                                                         \
	  "Payloads that could not be scanned to the end (the on-error policy applied).")          \
	X(truncated,                                                                               \
	  "Packets with malformed or truncated L2-L4 headers, which the stack drops: passed "      \
	  "unchanged.")                                                                            \
	X(split_names, "Header names split over two segments, rewritten ahead in the first.")      \
	X(framing_conflict, "Requests whose body framing servers could read two ways.")            \
	X(framing_invalid, "Content-Length values that are not numbers.")                          \
	X(desync, "Places where a request should start and something else does.")                  \
	X(h2c_preface,                                                                             \
	  "HTTP/2 connection prefaces (h2c with prior knowledge) where a request starts: the "     \
	  "on-error policy decided (pass lets a connection that starts with one through "          \
	  "unscanned).")                                                                           \
	X(bodies_unframed,                                                                         \
	  "Requests with a body their method defines no use for (GET, HEAD, DELETE, OPTIONS, "     \
	  "TRACE), which origins read as their next request or skip: the connection checked "      \
	  "line by line from that body on.")                                                       \
	X(flows_new, "Connections the programs started tracking.")                                 \
	X(flows_closed, "Tracked connections seen to end (FIN or RST).")                           \
	X(untracked, "Segments of connections without state (older than the attach, or evicted).") \
	X(retransmits, "Segments that overlap bytes already passed (retransmissions).")            \
	X(out_of_order, "Segments ahead of a gap outside a body (the on-error policy applied).")   \
	/* Proxy mode (sockops + sk_msg on a cgroup). */                                           \
	X(headers_removed, "Proxy mode: request field lines taken out of sent data.")              \
	X(response_headers_removed, "Proxy mode: response field lines taken out of sent data.")    \
	X(removed_bytes, "Proxy mode: bytes taken out of sent data.")                              \
	X(conns_preexisting,                                                                       \
	  "Proxy and origin mode: connections open before the attach, left alone.")                \
	X(conns_unfiltered,                                                                        \
	  "Proxy mode: connections the sockhash had no room for (65536 at once): their sends "     \
	  "are not filtered.")                                                                     \
	X(fastopen_unfiltered,                                                                     \
	  "Proxy mode: connections whose first bytes left with TCP Fast Open, before the "         \
	  "sk_msg program could see them.")                                                        \
	/* Origin mode (sockops + sk_skb on a cgroup's accepted connections). */                   \
	X(conns_ended,                                                                             \
	  "Origin mode: connections a drop (a drop rule, or the on-error policy) ended: nothing "  \
	  "from the drop on reaches the application, and the agent resets them.")                  \
	X(recv_unscanned,                                                                          \
	  "Origin mode: received bytes the application read before the sk_skb program saw them "   \
	  "(splice or zero-copy receive of bytes that arrived before accept()).")                  \
	/* The normaliser (bpf/normalize.h, include/hdrstrip/flow.h). */                           \
	X(urgent_cleared,                                                                          \
	  "Segments with URG set: URG and the urgent pointer cleared (or the segment "             \
	  "dropped, --urgent drop).")                                                              \
	X(bad_checksum, "Segments with a wrong IPv4 header or TCP checksum: dropped.")             \
	X(csum_unchecked,                                                                          \
	  "Segments whose TCP checksum was left to offload (the pseudo header's sum only): "       \
	  "not checked.")                                                                          \
	X(retransmit_mismatch,                                                                     \
	  "Retransmissions that would be read another way than the bytes first passed: "           \
	  "dropped.")                                                                              \
	X(retransmit_unverified,                                                                   \
	  "Retransmissions that start or end where no scan state is kept: dropped.")               \
	X(rst_ignored,                                                                             \
	  "RSTs not at the next expected byte: the stack keeps the connection, and so does "       \
	  "hdrstrip.")                                                                             \
	X(syn_in_flow,                                                                             \
	  "SYNs inside a connection (tracked, or open at the receiving socket): ignored, as "      \
	  "the stack ignores them.")                                                               \
	X(oversize, "Payloads longer than the scan window and not all body (the on-error policy "  \
		    "applied).")                                                                   \
	X(malformed,                                                                               \
	  "Data without ACK (dropped) and IPv6 header chains longer than hdrstrip follows "        \
	  "(the on-error policy applied).")                                                        \
	/* What the hooks pass without a scan, and why the stack cannot deliver it to an         \
	 * inspected socket; and what they cannot read (README: "What passes unscanned"). */ \
	X(not_ip,                                                                                  \
	  "Frames of an EtherType that carries no IP (ARP, LLDP, 802.3 LLC, ...): passed.")        \
	X(not_tcp,                                                                                 \
	  "IP packets of a protocol that reaches no TCP socket (ICMP, SCTP, UDP to a port no "     \
	  "tunnel takes, ...): passed.")                                                           \
	X(not_inspected,                                                                           \
	  "TCP segments neither to an inspected port (after NAT) nor, with response rules, from "  \
	  "one: passed.")                                                                          \
	X(no_payload, "TCP segments with no payload, SYN, FIN, RST or URG (bare ACKs): passed.")   \
	X(tunneled, "Packets read inside a tunnel (VXLAN, GENEVE, GRE, IPIP, SIT, ip6tnl).")       \
	X(nat_inspected,                                                                           \
	  "Segments to a port not inspected that conntrack's NAT takes to an inspected one: "      \
	  "inspected.")                                                                            \
	X(vlan_too_deep,                                                                           \
	  "Frames with more VLAN tags than hdrstrip reads (8): the on-error policy decided.")      \
	X(encap_unknown,                                                                           \
	  "Packets the stack may deliver to a socket in a form hdrstrip cannot read (an "          \
	  "EtherType or IP protocol that can carry IP, ESP, a tunnel in a tunnel, a UDP tunnel "   \
	  "it cannot parse, headers out of reach): the on-error policy decided.")                  \
	/* Match events (hdrstrip events). */                                                      \
	X(events, "Match events written to the device's ring buffer.")                             \
	X(events_dropped,                                                                          \
	  "Match events not written: over the --event-rate limit, or the ring buffer full "        \
	  "(nobody reading).")

/*
 * A per-CPU array with one element of this struct, so bpftool prints every
 * field by name (BTF): the field names are the counter names.
 */
struct hs_counters {
#define HS_COUNTER_FIELD(name, help) __u64 name;
	HS_COUNTERS(HS_COUNTER_FIELD)
#undef HS_COUNTER_FIELD
};

/* Index of each field among the __u64 of struct hs_counters. */
enum hs_counter {
#define HS_COUNTER_ID(name, help) HS_CTR_##name,
	HS_COUNTERS(HS_COUNTER_ID)
#undef HS_COUNTER_ID
	HS_CTR_MAX
};

#define HS_N_COUNTERS ((unsigned)HS_CTR_MAX)

_Static_assert(sizeof(struct hs_counters) == HS_N_COUNTERS * sizeof(__u64), "hs_counters size");
/* Each field where its index says, and each with a help text. */
#define HS_COUNTER_CHECK(name, help)                                                               \
	_Static_assert(__builtin_offsetof(struct hs_counters, name) ==                             \
			       HS_CTR_##name * sizeof(__u64),                                      \
		       "hs_counters." #name " offset");                                            \
	_Static_assert(sizeof(help) > 1, "a help text for " #name);
HS_COUNTERS(HS_COUNTER_CHECK)
#undef HS_COUNTER_CHECK

#ifndef __bpf__
/* The host's printers iterate this, in field order. */
struct hs_counter_info {
	const char *name;
	const char *help;
};

static const struct hs_counter_info hs_counter_info[] __attribute__((unused)) = {
#define HS_COUNTER_INFO(name, help) { #name, help },
	HS_COUNTERS(HS_COUNTER_INFO)
#undef HS_COUNTER_INFO
};

_Static_assert(sizeof(hs_counter_info) / sizeof(hs_counter_info[0]) == HS_N_COUNTERS,
	       "a name and a help text for every counter");
#endif

#endif /* HDRSTRIP_COUNTERS_H */
