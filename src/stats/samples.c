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
#include <stdint.h>
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

/*
 * Plain decimals ("-12.345", "6e-3") with at most 19 significant digits whose
 * digits fit 2^53 and whose power of ten is within 10^22: m * 10^e or
 * m / 10^-e is then one correctly rounded operation on exact operands, so
 * the result is exactly strtod's (Clinger's fast path), without the copy,
 * the scan for hexadecimal and strtod's general machinery. Anything else
 * returns false and goes the general way.
 */
static bool parse_plain_decimal(const char *p, size_t len, double *out)
{
	static const double pow10[] = {1e0,  1e1,  1e2,	 1e3,  1e4,  1e5,  1e6,	 1e7,
				       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	const char *end = p + len;
	bool negative = false, any = false;
	uint64_t m = 0;
	int digits = 0, exp10 = 0;
	double v;

	if (p < end && (*p == '-' || *p == '+'))
		negative = *p++ == '-';
	for (; p < end && *p >= '0' && *p <= '9'; p++, any = true) {
		if (!m && *p == '0')
			continue;
		m = m * 10 + (uint64_t)(*p - '0');
		if (++digits > 19)
			return false;
	}
	if (p < end && *p == '.') {
		for (p++; p < end && *p >= '0' && *p <= '9'; p++, any = true) {
			exp10--;
			if (!m && *p == '0')
				continue;
			m = m * 10 + (uint64_t)(*p - '0');
			if (++digits > 19)
				return false;
		}
	}
	if (!any)
		return false;
	if (p < end && (*p == 'e' || *p == 'E')) {
		bool eneg = false;
		int e = 0;

		if (++p < end && (*p == '-' || *p == '+'))
			eneg = *p++ == '-';
		if (p == end)
			return false;
		for (; p < end && *p >= '0' && *p <= '9'; p++)
			if ((e = e * 10 + (*p - '0')) > 1000)
				return false;
		exp10 += eneg ? -e : e;
	}
	if (p != end || m > ((uint64_t)1 << 53) || exp10 < -22 || exp10 > 22)
		return false;
	v = exp10 < 0 ? (double)m / pow10[-exp10] : (double)m * pow10[exp10];
	*out = negative ? -v : v;
	return true;
}

/* Parse one trimmed, non-empty token of length len (not NUL-terminated). */
static int parse_value(const char *tok, size_t len, double *out, const char **why)
{
	char buf[STATS_SAMPLES_MAX_LINE + 1], *end;

	if (parse_plain_decimal(tok, len, out))
		return 0;
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

/* Parse the whole lines of buf[0..len) (all of it when last); *used: the bytes parsed. */
static int parse_lines(const char *name, const char *buf, size_t len, bool last, size_t *lineno,
		       struct stats_samples *out, char *err, size_t err_size, size_t *used)
{
	size_t pos = 0;
	int rc;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len;

		if (!nl && !last)
			break;
		rc = parse_line(name, ++*lineno, buf + pos, end - pos, out, err, err_size);
		if (rc)
			return rc;
		pos = end + 1;
	}
	*used = pos < len ? pos : len;
	return 0;
}

static int check_not_empty(const char *name, struct stats_samples *out, char *err, size_t err_size)
{
	double *fit;

	if (out->n == 0)
		return stats_read_error(err, err_size, name, 0,
					"no samples (the file is empty or only comments)");
	/* give the doubling's slack back */
	fit = realloc(out->values, out->n * sizeof(*fit));
	if (fit) {
		out->values = fit;
		out->capacity = out->n;
	}
	return 0;
}

int stats_samples_read_buffer(const char *name, const char *buf, size_t len,
			      struct stats_samples *out, char *err, size_t err_size)
{
	size_t lineno = 0, used;
	int rc;

	if (set_name(out, name))
		return -ENOMEM;
	rc = parse_lines(name, buf, len, true, &lineno, out, err, err_size, &used);
	return rc ? rc : check_not_empty(name, out, err, err_size);
}

#define CHUNK ((size_t)1 << 20)

/*
 * Read a stream a chunk at a time, parsing whole lines as they come, so that
 * memory holds the values and one chunk, not the whole file; a line longer
 * than the buffer grows it. More than a limit of bytes fails cleanly.
 */
static int read_stream(FILE *f, const char *name, struct stats_samples *out, char *err,
		       size_t err_size)
{
	size_t cap = CHUNK, have = 0, total = 0, lineno = 0, used;
	size_t limit = (size_t)STATS_SAMPLES_MAX_COUNT * 64;
	char *buf = malloc(cap);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		size_t got;

		if (have == cap) {
			char *grown = realloc(buf, cap * 2);

			if (!grown) {
				rc = -ENOMEM;
				break;
			}
			buf = grown;
			cap *= 2;
		}
		got = fread(buf + have, 1, cap - have, f);
		total += got;
		if (total > limit) {
			rc = -EFBIG;
			break;
		}
		have += got;
		rc = parse_lines(name, buf, have, got == 0, &lineno, out, err, err_size, &used);
		if (rc || got == 0)
			break;
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	free(buf);
	if (!rc && ferror(f))
		rc = -EIO;
	return rc;
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
	const char *name;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!f)
		return stats_read_error(err, err_size, path, 0, "%s", strerror(errno));
	if (!is_stdin && is_directory(f)) {
		fclose(f);
		return stats_read_error(err, err_size, path, 0, "%s", strerror(EISDIR));
	}
	name = is_stdin ? "<stdin>" : path;
	rc = set_name(out, name);
	if (!rc)
		rc = read_stream(f, name, out, err, err_size);
	if (!is_stdin)
		fclose(f);
	if (rc == -EFBIG)
		return stats_read_error(err, err_size, path, 0, "file too large (over %zu bytes)",
					(size_t)STATS_SAMPLES_MAX_COUNT * 64);
	if (rc == -ENOMEM || rc == -EIO) {
		stats_read_error(err, err_size, path, 0, "%s", strerror(-rc));
		return rc;
	}
	return rc ? rc : check_not_empty(name, out, err, err_size);
}

void stats_samples_free(struct stats_samples *s)
{
	free(s->name);
	free(s->values);
	memset(s, 0, sizeof(*s));
}
