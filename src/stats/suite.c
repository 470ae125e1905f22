/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reader of suite files: CSV runs of several benchmarks under several
 * configurations (doc/formats/samples.md). Fields may be double-quoted;
 * blank lines and '#' comment lines are ignored; errors name file and line.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "stats/internal.h"
#include "stats/stats.h"

#define MAX_FIELDS 16
#define MAX_FIELD  256

struct columns {
	int benchmark, time, config;
};

static void trim(char *s)
{
	size_t len = strlen(s), start = 0;

	while (len && strchr(" \t\r", s[len - 1]))
		s[--len] = '\0';
	while (s[start] && strchr(" \t", s[start]))
		start++;
	memmove(s, s + start, len - start + 1);
}

/* Split one line into at most MAX_FIELDS fields; returns the count or -1. */
static int split_csv(const char *p, size_t len, char fields[][MAX_FIELD])
{
	int nf = 0;
	size_t i = 0;

	for (;;) {
		size_t o = 0;
		bool quoted = false;

		if (nf == MAX_FIELDS)
			return -1;
		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		if (i < len && p[i] == '"') {
			quoted = true;
			i++;
		}
		for (; i < len; i++) {
			if (quoted && p[i] == '"') {
				if (i + 1 < len && p[i + 1] == '"') {
					i++;
				} else {
					quoted = false;
					continue;
				}
			} else if (!quoted && p[i] == ',') {
				break;
			}
			if (p[i] == '\0' || o + 1 >= MAX_FIELD)
				return -1;
			fields[nf][o++] = p[i];
		}
		if (quoted)
			return -1;
		fields[nf][o] = '\0';
		trim(fields[nf]);
		nf++;
		if (i >= len)
			return nf;
		i++; /* the comma */
	}
}

static bool is_config_name(const char *s)
{
	static const char *const names[] = {"config", "configuration", "tune", "ext"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(s, names[i]) == 0)
			return true;
	return false;
}

static int header_columns(char fields[][MAX_FIELD], int nf, struct columns *c)
{
	int other = -1, others = 0;

	*c = (struct columns){-1, -1, -1};
	for (int i = 0; i < nf; i++) {
		if (strcasecmp(fields[i], "benchmark") == 0)
			c->benchmark = i;
		else if (strcasecmp(fields[i], "time") == 0)
			c->time = i;
		else if (is_config_name(fields[i]))
			c->config = i;
		else if (fields[i][0]) /* R's row-name column has an empty header */
			other = i, others++;
	}
	if (c->config < 0 && others == 1)
		c->config = other;
	return c->benchmark >= 0 && c->time >= 0 && c->config >= 0 ? 0 : -1;
}

/* Index of name in the list, adding it if new; -1 when out of memory. */
static long intern(char ***list, size_t *n, const char *name)
{
	char **grown;

	for (size_t i = 0; i < *n; i++)
		if (strcmp((*list)[i], name) == 0)
			return (long)i;
	grown = realloc(*list, (*n + 1) * sizeof(**list));
	if (!grown)
		return -1;
	*list = grown;
	grown[*n] = strdup(name);
	if (!grown[*n])
		return -1;
	return (long)(*n)++;
}

static int suite_push(struct stats_suite *s, double t, long b, long c)
{
	if (s->n == s->capacity) {
		size_t cap = s->capacity ? s->capacity * 2 : 256;
		double *tm = realloc(s->time, cap * sizeof(*tm));
		size_t *bm, *cf;

		if (tm)
			s->time = tm;
		bm = realloc(s->benchmark, cap * sizeof(*bm));
		if (bm)
			s->benchmark = bm;
		cf = realloc(s->config, cap * sizeof(*cf));
		if (cf)
			s->config = cf;
		if (!tm || !bm || !cf)
			return -ENOMEM;
		s->capacity = cap;
	}
	s->time[s->n] = t;
	s->benchmark[s->n] = (size_t)b;
	s->config[s->n] = (size_t)c;
	s->n++;
	return 0;
}

static int parse_time(const char *text, double *out)
{
	char *end;

	if (!*text || strpbrk(text, "xX"))
		return -1;
	errno = 0;
	*out = strtod(text, &end);
	return *end || !isfinite(*out) ? -1 : 0;
}

static int data_line(struct stats_suite *s, const struct columns *c, char fields[][MAX_FIELD],
		     int nf, size_t lineno, char *err, size_t err_size)
{
	int need = c->benchmark > c->time ? c->benchmark : c->time;
	long b, cf;
	double t;

	need = need > c->config ? need : c->config;
	if (nf <= need)
		return stats_read_error(err, err_size, s->name, lineno,
					"expected %d fields, found %d", need + 1, nf);
	if (!fields[c->benchmark][0] || !fields[c->config][0])
		return stats_read_error(err, err_size, s->name, lineno,
					"empty benchmark or configuration");
	if (parse_time(fields[c->time], &t))
		return stats_read_error(err, err_size, s->name, lineno,
					"time '%.40s' is not a finite number", fields[c->time]);
	b = intern(&s->benchmarks, &s->n_benchmarks, fields[c->benchmark]);
	cf = intern(&s->configs, &s->n_configs, fields[c->config]);
	if (b < 0 || cf < 0 || suite_push(s, t, b, cf))
		return stats_read_error(err, err_size, s->name, lineno, "out of memory");
	return 0;
}

int stats_suite_read_buffer(const char *name, const char *buf, size_t len, struct stats_suite *out,
			    char *err, size_t err_size)
{
	char fields[MAX_FIELDS][MAX_FIELD];
	struct columns cols = {-1, -1, -1};
	bool have_header = false;
	size_t pos = 0, lineno = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	out->name = strdup(name);
	if (!out->name)
		return -ENOMEM;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos), *p = buf + pos;
		size_t end = nl ? (size_t)(nl - buf) : len, l = end - pos, k = 0;
		int nf;

		lineno++;
		pos = end + 1;
		while (k < l && strchr(" \t\r", p[k]))
			k++;
		if (k == l || p[k] == '#')
			continue;
		nf = split_csv(p, l, fields);
		if (nf < 0)
			return stats_read_error(
			    err, err_size, name, lineno,
			    "malformed CSV line (quotes, NUL bytes, or over %d fields of "
			    "%d bytes)",
			    MAX_FIELDS, MAX_FIELD - 1);
		if (!have_header) {
			if (header_columns(fields, nf, &cols))
				return stats_read_error(
				    err, err_size, name, lineno,
				    "header must name the columns benchmark, time and "
				    "config (or tune/ext)");
			have_header = true;
			continue;
		}
		rc = data_line(out, &cols, fields, nf, lineno, err, err_size);
		if (rc)
			return rc;
	}
	if (out->n == 0)
		return stats_read_error(err, err_size, name, 0, "no runs");
	return 0;
}

int stats_suite_read_file(const char *path, struct stats_suite *out, char *err, size_t err_size)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t cap = 0, len = 0, got;
	struct stat st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!f)
		return stats_read_error(err, err_size, path, 0, "%s", strerror(errno));
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		return stats_read_error(err, err_size, path, 0, "%s", strerror(EISDIR));
	}
	do {
		if (len == cap) {
			char *grown =
			    cap < ((size_t)1 << 32) ? realloc(data, cap ? cap * 2 : 65536) : NULL;

			if (!grown) {
				free(data);
				fclose(f);
				return stats_read_error(err, err_size, path, 0, "file too large");
			}
			data = grown;
			cap = cap ? cap * 2 : 65536;
		}
		got = fread(data + len, 1, cap - len, f);
		len += got;
	} while (got);
	fclose(f);
	rc = stats_suite_read_buffer(path, data, len, out, err, err_size);
	free(data);
	return rc;
}

long stats_suite_find_config(const struct stats_suite *s, const char *name)
{
	for (size_t i = 0; i < s->n_configs; i++)
		if (strcmp(s->configs[i], name) == 0)
			return (long)i;
	return -1;
}

double *stats_suite_cell(const struct stats_suite *s, size_t b, size_t c, size_t *n_out)
{
	double *v = malloc((s->n ? s->n : 1) * sizeof(*v));
	size_t n = 0;

	*n_out = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		if (s->benchmark[i] == b && s->config[i] == c)
			v[n++] = s->time[i];
	*n_out = n;
	return v;
}

/* Index of the first largest run of cell (b, c), or s->n if the cell is empty. */
static size_t cell_max(const struct stats_suite *s, size_t b, size_t c)
{
	size_t at = s->n;

	for (size_t i = 0; i < s->n; i++)
		if (s->benchmark[i] == b && s->config[i] == c &&
		    (at == s->n || s->time[i] > s->time[at]))
			at = i;
	return at;
}

static void remove_run(struct stats_suite *s, size_t i)
{
	size_t tail = s->n - i - 1;

	memmove(s->time + i, s->time + i + 1, tail * sizeof(*s->time));
	memmove(s->benchmark + i, s->benchmark + i + 1, tail * sizeof(*s->benchmark));
	memmove(s->config + i, s->config + i + 1, tail * sizeof(*s->config));
	s->n--;
}

size_t stats_suite_drop_max(struct stats_suite *s)
{
	size_t removed = 0;

	for (size_t b = 0; b < s->n_benchmarks; b++) {
		for (size_t c = 0; c < s->n_configs; c++) {
			size_t at = cell_max(s, b, c);

			if (at < s->n) {
				remove_run(s, at);
				removed++;
			}
		}
	}
	return removed;
}

void stats_suite_free(struct stats_suite *s)
{
	for (size_t i = 0; i < s->n_benchmarks; i++)
		free(s->benchmarks[i]);
	for (size_t i = 0; i < s->n_configs; i++)
		free(s->configs[i]);
	free(s->benchmarks);
	free(s->configs);
	free(s->time);
	free(s->benchmark);
	free(s->config);
	free(s->name);
	memset(s, 0, sizeof(*s));
}
