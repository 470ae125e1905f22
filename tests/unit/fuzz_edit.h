/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Random edits for the readers' fuzz tests: each call makes one edit of
 * buf[0..*len) (capacity cap) at a random place: replace a byte (by one from
 * alphabet, or by any byte when alphabet is NULL), delete a run, insert one
 * of the tokens (insert_weight chances out of 3 + insert_weight), or
 * truncate.
 */
#ifndef LEVER_TESTS_FUZZ_EDIT_H
#define LEVER_TESTS_FUZZ_EDIT_H

#include <string.h>

#include "base/base.h"

struct fuzz_edits {
	const char *alphabet; /* NULL: any byte */
	size_t alphabet_len;  /* it may hold NUL bytes */
	const char *const *tokens;
	size_t n_tokens;
	unsigned insert_weight;
};

static inline void fuzz_edit(struct rng *r, const struct fuzz_edits *e, char *buf, size_t *len,
			     size_t cap)
{
	size_t pos = rng_below(r, *len + 1);
	uint64_t kind = rng_below(r, 3 + e->insert_weight);

	if (kind == 0) { /* replace a byte */
		if (pos < *len)
			buf[pos] = e->alphabet ? e->alphabet[rng_below(r, e->alphabet_len)]
					       : (char)rng_next(r);
	} else if (kind == 1) { /* delete a run */
		if (pos < *len) {
			size_t n = rng_below(r, *len - pos) + 1;

			memmove(buf + pos, buf + pos + n, *len - pos - n);
			*len -= n;
		}
	} else if (kind < 2 + e->insert_weight) { /* insert a token */
		const char *t = e->tokens[rng_below(r, e->n_tokens)];
		size_t n = strlen(t);

		if (*len + n <= cap) {
			memmove(buf + pos + n, buf + pos, *len - pos);
			memcpy(buf + pos, t, n);
			*len += n;
		}
	} else { /* truncate */
		*len = pos;
	}
}

#endif
