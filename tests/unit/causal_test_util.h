/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Helpers shared by the causal report tests (test_causal_profile, _report,
 * _fit, _report_amp): build a synthetic profile in memory (the record
 * syntax of doc/formats/profile.md), read it back, find a line's series and
 * render a report to a string. Each test file writes its own experiments;
 * these are only the plumbing they had in common.
 */
#ifndef LEVER_TESTS_CAUSAL_TEST_UTIL_H
#define LEVER_TESTS_CAUSAL_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "causal/causal.h"

/* Append printf-formatted text to the growing buffer *buf of *len bytes. */
static __attribute__((unused)) void append(char **buf, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static __attribute__((unused)) void append(char **buf, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	*buf = realloc(*buf, *len + (size_t)n + 1);
	assert_non_null(*buf);
	va_start(ap, fmt);
	vsnprintf(*buf + *len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*len += (size_t)n;
}

/* Read a whole in-memory profile, which must have no malformed record. */
static __attribute__((unused)) void load(struct causal_profile *p, const char *buf, size_t len)
{
	causal_profile_init(p);
	assert_int_equal(causal_profile_read_buffer(p, buf, len, "t.coz", NULL), 0);
	assert_int_equal(p->stats.malformed, 0);
}

/* The summary's series for `line`; fails the test when there is none. */
static __attribute__((unused)) const struct causal_series *
series_of(const struct causal_profile *p, const struct causal_summary *s, const char *line)
{
	for (size_t i = 0; i < s->n_series; i++) {
		if (strcmp(causal_profile_string(p, s->series[i].selected), line) == 0)
			return &s->series[i];
	}
	fail_msg("no series for %s", line);
	return NULL;
}

typedef void (*causal_report_fn)(FILE *, const struct causal_profile *,
				 const struct causal_summary *,
				 const struct causal_report_options *);

/*
 * One report (causal_report_text, _json or _html) as a string the caller
 * frees; `file` is the profile name the report cites, or NULL for none.
 * (Not inline: inlined, GCC 12 takes the memstream's buffer for a dangling
 * pointer to `out`.)
 */
static __attribute__((unused)) char *report_to_string(causal_report_fn fn,
						      const struct causal_profile *p,
						      const struct causal_summary *s, char *file)
{
	struct causal_report_options o = {0};
	char *out = NULL;
	size_t n = 0;
	FILE *f;

	if (file) {
		o.files = &file;
		o.n_files = 1;
	}
	f = open_memstream(&out, &n);
	assert_non_null(f);
	fn(f, p, s, &o);
	fclose(f);
	return out;
}

#endif /* LEVER_TESTS_CAUSAL_TEST_UTIL_H */
