// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * -p's reformatter (user/jsonfmt.c): compact JSON as the commands print it
 * in, the indented text out, written out here by hand; every case fed
 * whole, cut in two at every offset, and byte by byte (stdio hands the
 * reformatter its buffer in pieces cut anywhere, a string's escape
 * included).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonfmt.h"
#include "testutil.h"

struct sink {
	char buf[4096];
	size_t len;
};

static void sink_emit(void *ctx, const char *s, size_t n)
{
	struct sink *k = ctx;

	assert_true(k->len + n < sizeof(k->buf));
	memcpy(k->buf + k->len, s, n);
	k->len += n;
	k->buf[k->len] = 0;
}

static const struct {
	const char *what, *in, *out;
} cases[] = {
	{ "nothing attached: an empty array", "[\n]\n", "[]\n" },
	{ "an object, nested containers, numbers, literals",
	  "[\n{\"dev\":\"va\",\"hooks\":[{\"hook\":\"xdp\",\"prog_id\":7,\"dispatcher\":false,"
	  "\"flows\":32768}],\"ports\":[80,[8000,8010]],\"flows\":null,\"pinned\":true}\n]\n",
	  "[\n"
	  "  {\n"
	  "    \"dev\": \"va\",\n"
	  "    \"hooks\": [\n"
	  "      {\n"
	  "        \"hook\": \"xdp\",\n"
	  "        \"prog_id\": 7,\n"
	  "        \"dispatcher\": false,\n"
	  "        \"flows\": 32768\n"
	  "      }\n"
	  "    ],\n"
	  "    \"ports\": [\n"
	  "      80,\n"
	  "      [\n"
	  "        8000,\n"
	  "        8010\n"
	  "      ]\n"
	  "    ],\n"
	  "    \"flows\": null,\n"
	  "    \"pinned\": true\n"
	  "  }\n"
	  "]\n" },
	{ "two objects in the array, empty containers inside",
	  "[\n{\"dev\":\"a\",\"hooks\":[]},\n{\"dev\":\"b\",\"per_header\":{}}\n]\n",
	  "[\n"
	  "  {\n"
	  "    \"dev\": \"a\",\n"
	  "    \"hooks\": []\n"
	  "  },\n"
	  "  {\n"
	  "    \"dev\": \"b\",\n"
	  "    \"per_header\": {}\n"
	  "  }\n"
	  "]\n" },
	{ "strings are copied byte for byte: brackets, commas, colons, escapes, spaces",
	  "[{\"list\":\"/a b/[x],{y}:z\\\"q\\\\\",\"n\\u00ff\":\"\\\\\"}]\n",
	  "[\n"
	  "  {\n"
	  "    \"list\": \"/a b/[x],{y}:z\\\"q\\\\\",\n"
	  "    \"n\\u00ff\": \"\\\\\"\n"
	  "  }\n"
	  "]\n" },
	{ "stats --watch: a stream of objects, each ended by a line end",
	  "{\"interval\":0.500000,\"rates\":{\"packets\":1.500}}\n{\"interval\":0.500000}\n",
	  "{\n"
	  "  \"interval\": 0.500000,\n"
	  "  \"rates\": {\n"
	  "    \"packets\": 1.500\n"
	  "  }\n"
	  "}\n"
	  "{\n"
	  "  \"interval\": 0.500000\n"
	  "}\n" },
	{ "text that is no JSON (a command's --help) passes unchanged",
	  "Usage: hdrstrip status [DEV | --cgroup PATH] [--json]\n  {x}, [y]\n",
	  "Usage: hdrstrip status [DEV | --cgroup PATH] [--json]\n  {x}, [y]\n" },
};

/* Feed @in in pieces of which the first is @cut bytes (then the rest),
 * or (cut == 0) byte by byte. */
static void run_case(size_t i, size_t cut)
{
	struct sink k = { .len = 0 };
	struct jsonfmt j;
	size_t n = strlen(cases[i].in);

	jsonfmt_init(&j, sink_emit, &k);
	if (cut) {
		jsonfmt_feed(&j, cases[i].in, cut);
		jsonfmt_feed(&j, cases[i].in + cut, n - cut);
	} else {
		for (size_t b = 0; b < n; b++)
			jsonfmt_feed(&j, cases[i].in + b, 1);
	}
	if (strcmp(k.buf, cases[i].out))
		fail_msg("%s (cut at %zu%s):\n--- got\n%s--- want\n%s", cases[i].what, cut,
			 cut ? "" : ", byte by byte", k.buf, cases[i].out);
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t cut = 0; cut <= strlen(cases[i].in); cut++)
			run_case(i, cut);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
	};

	return cmocka_run_group_tests_name("jsonfmt", tests, NULL, NULL);
}
