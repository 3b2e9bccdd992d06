/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The fuzzers' second opinion, written from the documents alone (the header
 * list format in hdrstrip(8), the behaviour spec at the top of scan.h): a
 * naive list matcher and a liberal HTTP field-line reader. Neither includes
 * trie.h, scan.h or hlist.h, so they share no code with what they check.
 */
#ifndef HDRSTRIP_FUZZ_LIBERAL_H
#define HDRSTRIP_FUZZ_LIBERAL_H

#include <stddef.h>
#include <stdint.h>

#define LIB_MAX_RULES 1024
#define LIB_MAX_NAME 128

struct lib_rule {
	uint8_t name[LIB_MAX_NAME + 1]; /* as written, without the '*' */
	size_t len;
	int prefix; /* the name ended in '*' */
	int action; /* enum hs_action: mask, drop or observe */
	/* For another direction only (a list line's direction word, hdrstrip(8)):
	 * in this list, it matches nothing. */
	int off;
};

struct lib_list {
	struct lib_rule rules[LIB_MAX_RULES];
	size_t n;
	int fold_underscore;
};

/* Add a rule written as @name (a trailing '*' makes it a prefix rule). */
int lib_add(struct lib_list *l, const char *name, size_t len, int action);

/* Rule index + 1 of the rule name @q matches, or 0: an exact rule equal to
 * @q (ASCII case folded, '_' as '-' when the list folds) wins, else the
 * longest prefix rule @q starts with. */
uint32_t lib_match(const struct lib_list *l, const uint8_t *q, size_t n);

/* Rule index + 1 @m (0: none) masks or drops. */
static inline int lib_enforced(const struct lib_list *l, uint32_t m)
{
	return m && l->rules[m - 1].action != 2 /* HS_ACT_OBSERVE */;
}

/* Could the name whose first @n bytes are @q (trailing blanks included)
 * still match, whatever bytes follow? */
int lib_possible(const struct lib_list *l, const uint8_t *q, size_t n);

/* Bytes some parser strips around a field name (scan.h): SP HTAB VT FF
 * 0x1c-0x1f 0x85 0xa0. */
int lib_blank(uint8_t c);

/* One line of a byte stream: [start, end) and its terminator up to next. */
struct lib_line {
	size_t start, end, next;
};

/* Split @buf into lines at CRLF, bare LF and bare CR; a last line without a
 * terminator counts too. Returns the number of lines (at most @max). */
size_t lib_lines(const uint8_t *buf, size_t len, struct lib_line *lines, size_t max);

/* A field line as the most liberal parser reads it: blanks stripped before
 * and after the name, the name ending at the first colon, or at the line
 * end of a line without one (nginx: a field with an empty value). Returns
 * 1 with the name in [*ns, *ne) (not empty), 0 when the line holds no
 * field. */
int lib_field(const uint8_t *buf, const struct lib_line *ln, size_t *ns, size_t *ne);

/* Does the line start with SP or HTAB (obs-fold continuation)? */
int lib_is_cont(const uint8_t *buf, const struct lib_line *ln);

/* Is the name [ns, ne) one of the fields that frame a request
 * (Content-Length, Transfer-Encoding, Upgrade; any case)? */
int lib_is_framing(const uint8_t *buf, size_t ns, size_t ne);

/* Is the name [ns, ne) Content-Length or Transfer-Encoding (any case), the
 * fields that give a body its length? */
int lib_is_length_field(const uint8_t *buf, size_t ns, size_t ne);

/*
 * Does Python's header parser (http.client's, through the email package)
 * stop reading fields at line @ln? It takes a line for a field only if it
 * starts with SP or HTAB (a continuation) or its bytes up to the first
 * colon are all 0x21-0x7e; at any other line it stops, and the rest of the
 * block is no field to it (scan.h, tests/e2e/normalize.py class 15).
 */
int lib_py_stops(const uint8_t *buf, const struct lib_line *ln);

/* The words of a request line in [start, end), split at lib_blank() bytes
 * (leading blanks skipped): up to @max of them in @w (start, end pairs).
 * Returns how many there are (possibly more than @max). */
struct lib_span {
	size_t start, end;
};
size_t lib_words(const uint8_t *buf, size_t start, size_t end, struct lib_span *w, size_t max);

/* Does method @m (@n bytes) define no use for a body (GET, HEAD, DELETE,
 * OPTIONS, TRACE, in any case)? */
int lib_method_bodiless(const uint8_t *m, size_t n);

/* Is the request line in [start, end) HTTP/2's connection preface (the
 * method PRI, a target, a version that starts "HTTP/2")? Then *@two is the
 * offset of that "2". */
int lib_h2c_preface(const uint8_t *buf, size_t start, size_t end, size_t *two);

/* A Content-Length value in [vs, ve): digits with blanks around. Returns 1
 * and the value (saturated at 2^63) or 0 for anything else. */
int lib_length_value(const uint8_t *buf, size_t vs, size_t ve, uint64_t *v);

/*
 * The shapes a masked line may have, after the SP/HTAB run it keeps at its
 * start: the filler name (lib_set_filler()) cut to k bytes (k <= 10), ':',
 * ' ', then 'x' bytes, itself possibly cut short; or the filler name's first
 * byte only (a masked continuation).
 * Blanks before the first shape may have been kept (a line whose name
 * began in a later segment than its leading blanks), and the shape then
 * starts at their column. Returns 1 when [start, end) of @buf has one.
 */
int lib_filler(const uint8_t *buf, size_t start, size_t end);

/* Write the masked shape lib_filler() takes over [start, end) of @buf,
 * after the SP/HTAB run there: the filler name whole, ": ", 'x' bytes. */
void lib_fill(uint8_t *buf, size_t start, size_t end);

/* The filler name lib_filler() looks for (hs_trie.fill's ten bytes; the
 * default is "x-hdrstrip"). */
void lib_set_filler(const char *name);

#endif /* HDRSTRIP_FUZZ_LIBERAL_H */
