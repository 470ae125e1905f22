/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Field parsing for the causal profile reader (doc/formats/profile.md, "File"
 * and "Rules for readers"): a line into its record type and key=value fields,
 * typed values (counts, signed values written wrapped by Coz, speedups,
 * strings), and the FILE:LINE diagnostics of bad lines.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causal/profile_reader.h"

int profile_grow(void **array, size_t *cap, size_t need, size_t size)
{
	size_t cap_new;
	void *a;

	if (need <= *cap)
		return 0;
	cap_new = *cap ? *cap * 2 : 16;
	while (cap_new < need)
		cap_new *= 2;
	if (cap_new > SIZE_MAX / size)
		return -1;
	a = realloc(*array, cap_new * size);
	if (!a)
		return -1;
	*array = a;
	*cap = cap_new;
	return 0;
}

void profile_add_diagnostic(struct causal_profile *p, const char *text)
{
	if (p->n_diagnostics >= CAUSAL_MAX_DIAGS) {
		p->stats.diagnostics_lost++;
		return;
	}
	p->diagnostics[p->n_diagnostics] = strdup(text);
	if (p->diagnostics[p->n_diagnostics])
		p->n_diagnostics++;
}

void profile_set_error(struct causal_profile *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void profile_set_error(struct causal_profile *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
	va_end(ap);
}

/* A bad line: a diagnostic, or (strict) the error that ends the read. */
void profile_bad_line(struct reader *rd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void profile_bad_line(struct reader *rd, const char *fmt, ...)
{
	char msg[384];
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(text, sizeof(text), "%s:%llu: %s", rd->name, (unsigned long long)rd->lineno, msg);
	rd->p->stats.malformed++;
	if (rd->strict) {
		profile_set_error(rd->p, "%s", text);
		rd->failed = true;
		return;
	}
	profile_add_diagnostic(rd->p, text);
}

void profile_out_of_memory(struct reader *rd)
{
	profile_set_error(rd->p, "%s:%llu: out of memory", rd->name,
			  (unsigned long long)rd->lineno);
	rd->failed = true;
}

/* ------------------------------------------------------------ fields */

static bool is_record_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/* Split a line into the record type and its key=value fields. */
bool profile_split_record(struct reader *rd, const char *line, size_t len, struct record *rec)
{
	const char *end = line + len;
	const char *s = line;
	const char *tab = memchr(s, '\t', len);

	rec->type = s;
	rec->type_len = tab ? (size_t)(tab - s) : len;
	rec->n_fields = 0;
	if (rec->type_len == 0) {
		profile_bad_line(rd, "missing record type");
		return false;
	}
	for (size_t i = 0; i < rec->type_len; i++) {
		if (!is_record_char(s[i])) {
			if (s[0] == '{')
				profile_bad_line(rd,
						 "a JSON line in a tab-separated profile (a file "
						 "is one format or the other)");
			else
				profile_bad_line(rd, "not a profile record");
			return false;
		}
	}
	while (tab && tab < end) {
		const char *f = tab + 1;
		const char *eq;
		size_t flen;

		tab = memchr(f, '\t', (size_t)(end - f));
		flen = tab ? (size_t)(tab - f) : (size_t)(end - f);
		if (flen == 0)
			continue; /* tolerate doubled or trailing tabs */
		eq = memchr(f, '=', flen);
		if (!eq || eq == f) {
			profile_bad_line(rd, "field '%.*s' is not key=value",
					 (int)(flen > 40 ? 40 : flen), f);
			return false;
		}
		if (rec->n_fields == MAX_FIELDS)
			continue; /* more fields than any record has: ignore the rest */
		rec->fields[rec->n_fields++] = (struct field){
		    .key = f,
		    .key_len = (size_t)(eq - f),
		    .value = eq + 1,
		    .value_len = flen - (size_t)(eq - f) - 1,
		};
	}
	return true;
}

bool profile_type_is(const struct record *rec, const char *name)
{
	return strlen(name) == rec->type_len && memcmp(rec->type, name, rec->type_len) == 0;
}

const struct field *profile_find_field(const struct record *rec, const char *key)
{
	size_t len = strlen(key);

	for (size_t i = 0; i < rec->n_fields; i++) {
		if (rec->fields[i].key_len == len && memcmp(rec->fields[i].key, key, len) == 0)
			return &rec->fields[i];
	}
	return NULL;
}

static bool missing(struct reader *rd, const char *type, const char *key)
{
	profile_bad_line(rd, "%s record without %s=", type, key);
	return false;
}

/* Digits only, no sign, at most UINT64_MAX. */
static bool parse_digits(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9)
			return false;
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/*
 * A signed 64-bit field. Coz computed durations and differences in unsigned
 * arithmetic, so a negative value may appear wrapped around 2^64: an unsigned
 * value above INT64_MAX is read back as the negative number it stands for.
 */
bool profile_get_signed(struct reader *rd, const struct record *rec, const char *type,
			const char *key, int64_t *out)
{
	const struct field *f = profile_find_field(rec, key);
	uint64_t v;

	if (!f)
		return missing(rd, type, key);
	if (f->value_len > 0 && f->value[0] == '-') {
		if (!parse_digits(f->value + 1, f->value_len - 1, &v) ||
		    v > (uint64_t)INT64_MAX + 1)
			goto bad;
		*out = v ? (int64_t)(0 - v) : 0;
		return true;
	}
	if (!parse_digits(f->value, f->value_len, &v))
		goto bad;
	*out = (int64_t)v; /* two's complement wrap, see above */
	return true;
bad:
	profile_bad_line(rd, "%s: %s=%.*s is not an integer", type, key,
			 (int)(f->value_len > 40 ? 40 : f->value_len), f->value);
	return false;
}

bool profile_get_count(struct reader *rd, const struct record *rec, const char *type,
		       const char *key, int64_t *out)
{
	if (!profile_get_signed(rd, rec, type, key, out))
		return false;
	if (*out < 0) {
		profile_bad_line(rd, "%s: %s= is negative", type, key);
		return false;
	}
	return true;
}

bool profile_get_unsigned(struct reader *rd, const struct record *rec, const char *type,
			  const char *key, uint64_t *out)
{
	const struct field *f = profile_find_field(rec, key);

	if (!f)
		return missing(rd, type, key);
	if (parse_digits(f->value, f->value_len, out))
		return true;
	profile_bad_line(rd, "%s: %s=%.*s is not an unsigned integer", type, key,
			 (int)(f->value_len > 40 ? 40 : f->value_len), f->value);
	return false;
}

static const char *value_string(struct reader *rd, const struct field *f)
{
	if (profile_grow((void **)&rd->scratch, &rd->scratch_cap, f->value_len + 1, 1))
		return NULL;
	memcpy(rd->scratch, f->value, f->value_len);
	rd->scratch[f->value_len] = '\0';
	return rd->scratch;
}

bool profile_get_speedup(struct reader *rd, const struct record *rec, double *out, int *pct)
{
	const struct field *f = profile_find_field(rec, PROFILE_KEY_SPEEDUP);
	const char *text;
	char *end;
	double v;

	if (!f)
		return missing(rd, PROFILE_RECORD_EXPERIMENT, PROFILE_KEY_SPEEDUP);
	text = value_string(rd, f);
	if (!text) {
		profile_out_of_memory(rd);
		return false;
	}
	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end != '\0' || errno || !(v >= -1e-9 && v <= 1.0 + 1e-9)) {
		profile_bad_line(rd, "experiment: speedup=%.40s is not a number in 0..1", text);
		return false;
	}
	*out = v < 0 ? 0 : v > 1 ? 1 : v;
	*pct = (int)(*out * 100.0 + 0.5);
	return true;
}

/* Intern a non-empty string field; UINT32_MAX (after a diagnostic) if absent or empty. */
uint32_t profile_get_string(struct reader *rd, const struct record *rec, const char *type,
			    const char *key)
{
	const struct field *f = profile_find_field(rec, key);
	uint32_t id;

	if (!f || f->value_len == 0) {
		profile_bad_line(rd, "%s record without %s=", type, key);
		return UINT32_MAX;
	}
	id = string_table_intern(&rd->p->tables->strings, f->value, f->value_len);
	if (id == UINT32_MAX)
		profile_out_of_memory(rd);
	return id;
}
