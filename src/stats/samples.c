/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reader of sample files (doc/formats/samples.md): one finite number per
 * line, blank lines and '#' comments ignored. Every error names the file and
 * the line; nothing in the input can crash the reader.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stats/internal.h"
#include "stats/stats.h"

int stats_read_error(char *err, size_t size, const char *name, size_t line, const char *fmt, ...)
{
	va_list ap;
	int used;

	if (!err || !size)
		return -EINVAL;
	used =
	    line ? snprintf(err, size, "%s:%zu: ", name, line) : snprintf(err, size, "%s: ", name);
	if (used >= 0 && (size_t)used < size) {
		va_start(ap, fmt);
		vsnprintf(err + used, size - (size_t)used, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int samples_push(struct stats_samples *s, double v)
{
	if (s->n == s->capacity) {
		size_t cap = s->capacity ? s->capacity * 2 : 64;
		double *grown = realloc(s->values, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		s->values = grown;
		s->capacity = cap;
	}
	s->values[s->n++] = v;
	return 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Show a bad token safely: printable ASCII only, at most 24 characters. */
static void quote_token(const char *tok, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < size; i++) {
		unsigned char c = (unsigned char)tok[i];

		if (i == 24) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		o += (size_t)snprintf(out + o, size - o, c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x",
				      c);
	}
	out[o] = '\0';
}

/* Parse one trimmed, non-empty token of length len (not NUL-terminated). */
static int parse_value(const char *tok, size_t len, double *out, const char **why)
{
	char buf[STATS_SAMPLES_MAX_LINE + 1], *end;

	memcpy(buf, tok, len);
	buf[len] = '\0';
	if (memchr(tok, '\0', len)) {
		*why = "contains a NUL byte";
		return -EINVAL;
	}
	if (strpbrk(buf, "xX")) { /* strtod would take hexadecimal */
		*why = "is not a decimal number";
		return -EINVAL;
	}
	errno = 0;
	*out = strtod(buf, &end);
	if (end == buf || *end != '\0') {
		*why = "is not a number";
		return -EINVAL;
	}
	if (isnan(*out)) {
		*why = "is NaN; samples must be finite numbers";
		return -EINVAL;
	}
	if (isinf(*out) || (errno == ERANGE && fabs(*out) > 1.0)) {
		*why = "is out of range; samples must be finite numbers";
		return -EINVAL;
	}
	return 0;
}

static int parse_line(const char *name, size_t lineno, const char *p, size_t len,
		      struct stats_samples *out, char *err, size_t err_size)
{
	const char *why, *hash = memchr(p, '#', len);
	char shown[128];
	double v;

	if (hash)
		len = (size_t)(hash - p);
	while (len && is_space(*p))
		p++, len--;
	while (len && is_space(p[len - 1]))
		len--;
	if (!len)
		return 0;
	if (len > STATS_SAMPLES_MAX_LINE)
		return stats_read_error(err, err_size, name, lineno, "line longer than %d bytes",
					STATS_SAMPLES_MAX_LINE);
	if (parse_value(p, len, &v, &why)) {
		quote_token(p, len, shown, sizeof(shown));
		return stats_read_error(err, err_size, name, lineno, "'%s' %s", shown, why);
	}
	if (out->n >= STATS_SAMPLES_MAX_COUNT)
		return stats_read_error(err, err_size, name, lineno, "more than %u samples",
					STATS_SAMPLES_MAX_COUNT);
	if (samples_push(out, v)) {
		stats_read_error(err, err_size, name, lineno, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int set_name(struct stats_samples *out, const char *name)
{
	memset(out, 0, sizeof(*out));
	out->name = strdup(name);
	return out->name ? 0 : -ENOMEM;
}

int stats_samples_read_buffer(const char *name, const char *buf, size_t len,
			      struct stats_samples *out, char *err, size_t err_size)
{
	size_t lineno = 0, pos = 0;
	int rc;

	if (set_name(out, name))
		return -ENOMEM;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len;

		rc = parse_line(name, ++lineno, buf + pos, end - pos, out, err, err_size);
		if (rc)
			return rc;
		pos = end + 1;
	}
	if (out->n == 0)
		return stats_read_error(err, err_size, name, 0,
					"no samples (the file is empty or only comments)");
	return 0;
}

/* Read a whole stream, refusing more than a limit so that a huge file fails cleanly. */
static int slurp(FILE *f, char **data, size_t *len)
{
	size_t cap = 65536, n = 0, limit = (size_t)STATS_SAMPLES_MAX_COUNT * 64;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		size_t got;

		if (n == cap) {
			char *grown = cap >= limit ? NULL : realloc(buf, cap * 2);

			if (!grown) {
				free(buf);
				return cap >= limit ? -EFBIG : -ENOMEM;
			}
			buf = grown;
			cap *= 2;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		return -EIO;
	}
	*data = buf;
	*len = n;
	return 0;
}

static bool is_directory(FILE *f)
{
	struct stat st;

	return fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode);
}

int stats_samples_read_file(const char *path, struct stats_samples *out, char *err, size_t err_size)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	char *data = NULL;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!f)
		return stats_read_error(err, err_size, path, 0, "%s", strerror(errno));
	if (!is_stdin && is_directory(f)) {
		fclose(f);
		return stats_read_error(err, err_size, path, 0, "%s", strerror(EISDIR));
	}
	rc = slurp(f, &data, &len);
	if (!is_stdin)
		fclose(f);
	if (rc == -EFBIG)
		return stats_read_error(err, err_size, path, 0, "file too large (over %zu bytes)",
					(size_t)STATS_SAMPLES_MAX_COUNT * 64);
	if (rc) {
		stats_read_error(err, err_size, path, 0, "%s", strerror(-rc));
		return rc;
	}
	rc = stats_samples_read_buffer(is_stdin ? "<stdin>" : path, data, len, out, err, err_size);
	free(data);
	return rc;
}

void stats_samples_free(struct stats_samples *s)
{
	free(s->name);
	free(s->values);
	memset(s, 0, sizeof(*s));
}
