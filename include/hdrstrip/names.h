/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Name sets of the contract (actions, policies, --urgent, hooks) are each an
 * X-macro list X(ID, "name") next to its enum: the list makes the enum, in
 * order from 0, and the name table the host prints and parses with, so a
 * new value has a name or does not build. Host side only: the kernel side
 * never sees a name.
 */
#ifndef HDRSTRIP_NAMES_H
#define HDRSTRIP_NAMES_H

#ifndef __bpf__
/*
 * The name table of X-macro list @list, whose values run 0.. @max - 1:
 * static const char *const @table[], a name for each value asserted.
 */
#define HS_NAME_ENTRY(id, name) name,
#define HS_NAME_TABLE(table, list, max)                                                            \
	static const char *const table[] __attribute__((unused)) = { list(HS_NAME_ENTRY) };        \
	_Static_assert(sizeof(table) / sizeof(table[0]) == (max),                                  \
		       "a name for every value of " #list)

/* The name of value @v of a table of @n names, "?" if there is none. */
static inline const char *hs_name_of(const char *const *names, unsigned int n, unsigned int v)
{
	return v < n ? names[v] : "?";
}

/* The value named @s (exactly), -1 if none. */
static inline int hs_name_find(const char *const *names, unsigned int n, const char *s)
{
	for (unsigned int v = 0; v < n; v++) {
		const char *a = names[v], *b = s;

		while (*a && *a == *b)
			a++, b++;
		if (!*a && !*b)
			return (int)v;
	}
	return -1;
}
#endif

#endif /* HDRSTRIP_NAMES_H */
