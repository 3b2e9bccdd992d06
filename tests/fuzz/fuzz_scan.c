// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* libFuzzer entry point of the scanner fuzzer: see scan_check.h. */
#include "check_util.h"
#include "scan_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return cu_fuzz_one("fuzz_scan", sc_check, data, size);
}
