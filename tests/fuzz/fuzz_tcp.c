// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer entry point of the TCP fuzzer: see tcp_check.h. */
#include <stdio.h>
#include <stdlib.h>

#include "tcp_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[1024];

	if (tc_check(data, size, why, sizeof(why))) {
		fprintf(stderr, "fuzz_tcp: %s\n", why);
		abort();
	}
	return 0;
}
