/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * For make lint's clang-tidy only (forced with -include on the tests):
 * cmocka's _fail() never returns (it jumps out of the test), but cmocka.h
 * does not say so, and the analyser then follows paths past a failed check.
 */
void _fail(const char *const file, const int line) __attribute__((noreturn));
