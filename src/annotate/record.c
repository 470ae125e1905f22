/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The annotate record (doc/formats/annotate-record.md; spec §4.2.5): what the
 * recording half writes per call of an instrumented function, and what
 * derive/check read. A line-oriented text format: every line is written with
 * one write(2), so a killed program leaves whole lines plus at most one cut
 * line at the end, which the reader drops and flags.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "annotate/annotate.h"

static const char *const metric_names[ANNOTATE_N_METRICS] = {"time", "cpu",	"mem",	   "wait",
							     "hold", "pfaults", "Pfaults", "cs"};

static const char *const kind_names[ANNOTATE_N_KINDS] = {
    "integer",	   "bool",	     "enum",	     "float", "string-length",
    "array-count", "container-size", "dynamic-type", "branch"};

const char *annotate_metric_name(enum annotate_metric m)
{
	return (unsigned)m < ANNOTATE_N_METRICS ? metric_names[m] : NULL;
}

int annotate_metric_parse(const char *name)
{
	if (strcmp(name, "wait_time") == 0)
		return ANNOTATE_WAIT;
	for (int i = 0; i < ANNOTATE_N_METRICS; i++)
		if (strcmp(name, metric_names[i]) == 0)
			return i;
	return -1;
}

bool annotate_metric_is_time_like(enum annotate_metric m)
{
	return m == ANNOTATE_TIME || m == ANNOTATE_WAIT || m == ANNOTATE_HOLD || m == ANNOTATE_CPU;
}

const char *annotate_feature_kind_name(enum annotate_feature_kind k)
{
	return (unsigned)k < ANNOTATE_N_KINDS ? kind_names[k] : NULL;
}

int annotate_feature_kind_parse(const char *name)
{
	for (int i = 0; i < ANNOTATE_N_KINDS; i++)
		if (strcmp(name, kind_names[i]) == 0)
			return i;
	return -1;
}

/* ------------------------------------------------------------ reader */

struct reader {
	const char *name;
	size_t line;
	char *err;
	size_t err_size;
	struct annotate_record *rec;
};

static int fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, r->err_size, "%s:%zu: ", r->name, r->line);

	if (n >= 0 && (size_t)n < r->err_size) {
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->err_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Next space-separated token of *p (in place); NULL at the end. */
static char *next_token(char **p)
{
	char *s = *p, *t;

	while (*s == ' ')
		s++;
	if (!*s)
		return NULL;
	t = s;
	while (*s && *s != ' ')
		s++;
	if (*s)
		*s++ = 0;
	*p = s;
	return t;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

static bool parse_value(const char *s, double *v)
{
	char *end;

	if (!*s)
		return false;
	if (strcmp(s, "?") == 0) {
		*v = NAN;
		return true;
	}
	/*
	 * glibc's strtod sets ERANGE on underflow too, for the subnormal values
	 * a float feature read from a union member can hold; those are exact
	 * and kept. Overflow gives an infinity, which isfinite() refuses.
	 */
	*v = strtod(s, &end);
	return !*end && isfinite(*v);
}

static int grow_calls(struct annotate_symbol *s)
{
	size_t cap = s->capacity ? s->capacity * 2 : 64;
	uint64_t *id, *parent;

	id = realloc(s->id, cap * sizeof(*id));
	if (!id)
		return -ENOMEM;
	s->id = id;
	parent = realloc(s->parent, cap * sizeof(*parent));
	if (!parent)
		return -ENOMEM;
	s->parent = parent;
	for (int m = 0; m < ANNOTATE_N_METRICS; m++) {
		double *col = realloc(s->metrics[m], cap * sizeof(double));

		if (!col)
			return -ENOMEM;
		s->metrics[m] = col;
	}
	for (size_t f = 0; f < s->n_features; f++) {
		double *col = realloc(s->features[f].values, cap * sizeof(double));

		if (!col)
			return -ENOMEM;
		s->features[f].values = col;
		if (s->features[f].kind == ANNOTATE_BRANCH) {
			char **o = realloc(s->features[f].outcomes, cap * sizeof(char *));

			if (!o)
				return -ENOMEM;
			s->features[f].outcomes = o;
		}
	}
	s->capacity = cap;
	return 0;
}

static int read_symbol(struct reader *r, char *rest)
{
	struct annotate_record *rec = r->rec;
	char *idx = next_token(&rest);
	uint64_t i;
	struct annotate_symbol *syms;

	while (*rest == ' ')
		rest++;
	if (!parse_u64(idx, &i) || i != rec->n_symbols)
		return fail(r, "symbol index must be %zu", rec->n_symbols);
	if (!*rest)
		return fail(r, "symbol %" PRIu64 " has no name", i);
	syms = realloc(rec->symbols, (rec->n_symbols + 1) * sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	rec->symbols = syms;
	memset(&syms[rec->n_symbols], 0, sizeof(*syms));
	syms[rec->n_symbols].name = strdup(rest);
	if (!syms[rec->n_symbols].name)
		return -ENOMEM;
	rec->n_symbols++;
	return 0;
}

static struct annotate_symbol *symbol_at(struct reader *r, const char *tok)
{
	uint64_t i;

	if (!parse_u64(tok, &i) || i >= r->rec->n_symbols) {
		fail(r, "unknown symbol '%s'", tok ? tok : "");
		return NULL;
	}
	return &r->rec->symbols[i];
}

static int read_feature(struct reader *r, char *rest)
{
	struct annotate_symbol *s = symbol_at(r, next_token(&rest));
	char *idx, *kind;
	uint64_t i;
	int k;
	struct annotate_feature *fs, *f;

	if (!s)
		return -EINVAL;
	idx = next_token(&rest);
	kind = next_token(&rest);
	while (*rest == ' ')
		rest++;
	if (!parse_u64(idx, &i) || i != s->n_features)
		return fail(r, "feature index must be %zu", s->n_features);
	if (!kind || (k = annotate_feature_kind_parse(kind)) < 0)
		return fail(r, "unknown feature kind '%s'", kind ? kind : "");
	if (!*rest)
		return fail(r, "feature %" PRIu64 " has no expression", i);
	fs = realloc(s->features, (s->n_features + 1) * sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	s->features = fs;
	f = &fs[s->n_features];
	memset(f, 0, sizeof(*f));
	f->kind = (enum annotate_feature_kind)k;
	f->name = strdup(rest);
	f->values = malloc((s->capacity ? s->capacity : 1) * sizeof(double));
	f->outcomes = NULL;
	if (f->kind == ANNOTATE_BRANCH)
		f->outcomes = calloc(s->capacity ? s->capacity : 1, sizeof(char *));
	s->n_features++;
	if (!f->name || !f->values || (f->kind == ANNOTATE_BRANCH && !f->outcomes))
		return -ENOMEM;
	/* calls before the declaration did not have the feature */
	for (size_t c = 0; c < s->n_calls; c++)
		f->values[c] = NAN;
	return 0;
}

/*
 * A branch's outcomes: T and N in order, then `+N` when the runtime kept only
 * the first ones (N more ran); `?` unknown, `-` did not run.
 */
static int read_branch(struct reader *r, struct annotate_feature *f, size_t call, const char *v)
{
	size_t n = 0;
	double last = NAN;
	const char *c;
	uint64_t more = 0;

	f->values[call] = NAN;
	if (strcmp(v, "?") == 0 || strcmp(v, "-") == 0)
		return 0;
	for (c = v; *c == 'T' || *c == 'N'; c++, n++)
		last = *c == 'T' ? 1.0 : 0.0;
	if ((*c && (*c != '+' || !parse_u64(c + 1, &more) || more == 0)) || n == 0)
		return fail(r, "branch outcomes must be T and N (then +COUNT), not '%s'", v);
	if (n + more > 1)
		f->repeated++;
	f->values[call] = n + more == 1 ? last : NAN;
	free(f->outcomes[call]);
	f->outcomes[call] = strdup(v);
	return f->outcomes[call] ? 0 : -ENOMEM;
}

static int read_pair(struct reader *r, struct annotate_symbol *s, size_t c, char *tok)
{
	char *eq = strchr(tok, '=');
	uint64_t fi;
	int m;
	double v;

	if (!eq)
		return fail(r, "expected NAME=VALUE, not '%s'", tok);
	*eq = 0;
	if (parse_u64(tok, &fi)) {
		struct annotate_feature *f;

		if (fi >= s->n_features)
			return fail(r, "feature %" PRIu64 " not declared", fi);
		f = &s->features[fi];
		if (f->kind == ANNOTATE_BRANCH)
			return read_branch(r, f, c, eq + 1);
		if (!parse_value(eq + 1, &v))
			return fail(r, "bad value '%s' for feature %" PRIu64, eq + 1, fi);
		f->values[c] = v;
		return 0;
	}
	m = annotate_metric_parse(tok);
	if (m < 0 || strcmp(tok, "wait_time") == 0)
		return fail(r, "unknown metric '%s'", tok);
	if (!parse_value(eq + 1, &v) || v < 0)
		return fail(r, "bad value '%s' for metric %s", eq + 1, tok);
	s->metrics[m][c] = v;
	return 0;
}

static int read_call(struct reader *r, char *rest)
{
	struct annotate_symbol *s = symbol_at(r, next_token(&rest));
	uint64_t id, parent;
	size_t c;
	char *tok;
	int err;

	if (!s)
		return -EINVAL;
	if (!parse_u64(next_token(&rest), &id) || id == 0)
		return fail(r, "bad call id");
	if (!parse_u64(next_token(&rest), &parent))
		return fail(r, "bad parent id");
	if (s->n_calls == s->capacity && (err = grow_calls(s)))
		return err;
	c = s->n_calls;
	s->id[c] = id;
	s->parent[c] = parent;
	for (int m = 0; m < ANNOTATE_N_METRICS; m++)
		s->metrics[m][c] = NAN;
	for (size_t f = 0; f < s->n_features; f++) {
		s->features[f].values[c] = NAN;
		if (s->features[f].outcomes)
			s->features[f].outcomes[c] = NULL;
	}
	while ((tok = next_token(&rest)))
		if ((err = read_pair(r, s, c, tok))) {
			for (size_t f = 0; f < s->n_features; f++)
				if (s->features[f].outcomes) {
					free(s->features[f].outcomes[c]);
					s->features[f].outcomes[c] = NULL;
				}
			return err;
		}
	s->n_calls++;
	return 0;
}

static int read_header(struct reader *r, char *line)
{
	char *rest = line, *magic = next_token(&rest), *ver = next_token(&rest);
	uint64_t v;

	if (!magic || strcmp(magic, ANNOTATE_RECORD_MAGIC) != 0)
		return fail(r, "not an annotate record (no '%s' header)", ANNOTATE_RECORD_MAGIC);
	if (!parse_u64(ver, &v) || v != ANNOTATE_RECORD_VERSION)
		return fail(r, "unsupported record version '%s' (this lever reads %d)",
			    ver ? ver : "", ANNOTATE_RECORD_VERSION);
	while (*rest == ' ')
		rest++;
	r->rec->run = strdup(rest);
	return r->rec->run ? 0 : -ENOMEM;
}

static int read_line(struct reader *r, char *line)
{
	if (r->line == 1)
		return read_header(r, line);
	if (!*line || *line == '#')
		return 0;
	if (line[1] != ' ')
		return fail(r, "unknown line type '%.16s'", line);
	switch (line[0]) {
	case 'S':
		return read_symbol(r, line + 2);
	case 'F':
		return read_feature(r, line + 2);
	case 'C':
		return read_call(r, line + 2);
	}
	return fail(r, "unknown line type '%c'", line[0]);
}

int annotate_record_read_buffer(const char *name, const char *buf, size_t len,
				struct annotate_record *out, char *err, size_t err_size)
{
	struct reader r = {.name = name, .err = err, .err_size = err_size, .rec = out};
	char *line = malloc(ANNOTATE_MAX_LINE + 1);
	size_t pos = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->name = strdup(name);
	if (!line || !out->name) {
		free(line);
		return -ENOMEM;
	}
	while (pos < len && !rc) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;

		r.line++;
		if (!nl && r.line > 1) {
			out->truncated = true; /* a cut last line: the writer was killed */
			break;
		}
		if (n > ANNOTATE_MAX_LINE || memchr(buf + pos, 0, n)) {
			rc = fail(&r, n > ANNOTATE_MAX_LINE ? "line too long" : "NUL byte in line");
			break;
		}
		memcpy(line, buf + pos, n);
		line[n] = 0;
		if (n && line[n - 1] == '\r')
			line[n - 1] = 0;
		rc = read_line(&r, line);
		pos += n + 1;
	}
	if (!rc && r.line == 0) {
		r.line = 1;
		rc = fail(&r, "empty file");
	}
	free(line);
	if (rc == -ENOMEM)
		snprintf(err, err_size, "%s: out of memory", name);
	if (rc)
		annotate_record_free(out);
	return rc;
}

int annotate_record_read_file(const char *path, struct annotate_record *out, char *err,
			      size_t err_size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	int rc;

	if (!f) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -errno;
	}
	do {
		if (len + 65536 > cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 1 << 20);

			if (!nb) {
				free(buf);
				fclose(f);
				snprintf(err, err_size, "%s: out of memory", path);
				return -ENOMEM;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got);
	if (ferror(f)) {
		snprintf(err, err_size, "%s: read error", path);
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	rc = annotate_record_read_buffer(path, buf ? buf : "", len, out, err, err_size);
	free(buf);
	return rc;
}

void annotate_record_free(struct annotate_record *r)
{
	for (size_t i = 0; i < r->n_symbols; i++) {
		struct annotate_symbol *s = &r->symbols[i];

		for (size_t f = 0; f < s->n_features; f++) {
			free(s->features[f].name);
			free(s->features[f].values);
			for (size_t c = 0; s->features[f].outcomes && c < s->n_calls; c++)
				free(s->features[f].outcomes[c]);
			free(s->features[f].outcomes);
		}
		free(s->features);
		free(s->id);
		free(s->parent);
		for (int m = 0; m < ANNOTATE_N_METRICS; m++)
			free(s->metrics[m]);
		free(s->name);
	}
	free(r->symbols);
	free(r->name);
	free(r->run);
	memset(r, 0, sizeof(*r));
}

struct annotate_symbol *annotate_record_find(const struct annotate_record *r, const char *name)
{
	size_t len = strcspn(name, "(");

	for (size_t i = 0; i < r->n_symbols; i++)
		if (strcmp(r->symbols[i].name, name) == 0)
			return &r->symbols[i];
	for (size_t i = 0; i < r->n_symbols; i++)
		if (strncmp(r->symbols[i].name, name, len) == 0 &&
		    strcspn(r->symbols[i].name, "(") == len)
			return &r->symbols[i];
	return NULL;
}

long annotate_symbol_feature(const struct annotate_symbol *s, const char *name)
{
	for (size_t f = 0; f < s->n_features; f++)
		if (strcmp(s->features[f].name, name) == 0)
			return (long)f;
	return -1;
}

/* ------------------------------------------------------------ writer */

static int write_all(struct annotate_writer *w, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(w->fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!w->error)
				w->error = n < 0 ? -errno : -EIO;
			return w->error;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Names and expressions go on one line: no newlines in them. */
static bool one_line(const char *s)
{
	return s && *s && !strchr(s, '\n') && !strchr(s, '\r');
}

int annotate_writer_fdopen(struct annotate_writer *w, int fd, const char *run)
{
	char line[1024];
	int n;

	memset(w, 0, sizeof(*w));
	w->fd = fd;
	if (run && (strchr(run, '\n') || strchr(run, '\r')))
		return -EINVAL;
	n = snprintf(line, sizeof(line), "%s %d%s%.900s\n", ANNOTATE_RECORD_MAGIC,
		     ANNOTATE_RECORD_VERSION, run && *run ? " " : "", run ? run : "");
	return write_all(w, line, (size_t)n);
}

int annotate_writer_open(struct annotate_writer *w, const char *path, const char *run)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	int rc;

	if (fd < 0)
		return -errno;
	rc = annotate_writer_fdopen(w, fd, run);
	w->own_fd = true;
	return rc;
}

static int write_line(struct annotate_writer *w, const char *fmt, ...)
{
	va_list ap;
	char small[4096], *buf = small;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(small)) {
		buf = malloc((size_t)n + 1);
		if (!buf)
			return -ENOMEM;
		va_start(ap, fmt);
		vsnprintf(buf, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	n = write_all(w, buf, (size_t)n);
	if (buf != small)
		free(buf);
	return n;
}

int annotate_writer_symbol(struct annotate_writer *w, const char *name)
{
	uint32_t *nf;
	uint8_t **kinds;
	int rc;

	if (!one_line(name))
		return -EINVAL;
	nf = realloc(w->n_features, (w->n_symbols + 1) * sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	w->n_features = nf;
	nf[w->n_symbols] = 0;
	kinds = realloc(w->kinds, (w->n_symbols + 1) * sizeof(*kinds));
	if (!kinds)
		return -ENOMEM;
	w->kinds = kinds;
	kinds[w->n_symbols] = NULL;
	rc = write_line(w, "S %u %s\n", w->n_symbols, name);
	return rc ? rc : (int)w->n_symbols++;
}

int annotate_writer_feature(struct annotate_writer *w, uint32_t symbol,
			    enum annotate_feature_kind kind, const char *expression)
{
	uint8_t *kinds;
	int rc;

	if (symbol >= w->n_symbols || !annotate_feature_kind_name(kind) || !one_line(expression))
		return -EINVAL;
	kinds = realloc(w->kinds[symbol], w->n_features[symbol] + 1);
	if (!kinds)
		return -ENOMEM;
	w->kinds[symbol] = kinds;
	kinds[w->n_features[symbol]] = (uint8_t)kind;
	rc = write_line(w, "F %u %u %s %s\n", symbol, w->n_features[symbol],
			annotate_feature_kind_name(kind), expression);
	return rc ? rc : (int)w->n_features[symbol]++;
}

/* Append to a growing line buffer. */
struct linebuf {
	char *p;
	size_t len, cap;
};

static int lb_printf(struct linebuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if (b->len + (size_t)n < b->cap)
			break;
		char *np = realloc(b->p, b->cap = b->cap * 2 + (size_t)n);

		if (!np)
			return -ENOMEM;
		b->p = np;
	}
	b->len += (size_t)n;
	return 0;
}

/* T and N, then optionally +COUNT (the outcomes past those kept) */
static bool branch_outcomes_ok(const char *s)
{
	size_t n = strspn(s, "TN");
	uint64_t more;

	return !s[n] || (n && s[n] == '+' && parse_u64(s + n + 1, &more) && more);
}

int annotate_writer_call(struct annotate_writer *w, uint32_t symbol, uint64_t id, uint64_t parent,
			 const double *metrics, const double *values, const char *const *branches)
{
	struct linebuf b = {.p = malloc(256), .cap = 256};
	int rc;

	if (!b.p)
		return -ENOMEM;
	if (symbol >= w->n_symbols || id == 0) {
		free(b.p);
		return -EINVAL;
	}
	rc = lb_printf(&b, "C %u %" PRIu64 " %" PRIu64, symbol, id, parent);
	for (int m = 0; m < ANNOTATE_N_METRICS && !rc; m++)
		if (metrics && isfinite(metrics[m]) && metrics[m] >= 0)
			rc = lb_printf(&b, " %s=%.17g", metric_names[m], metrics[m]);
	for (uint32_t f = 0; f < w->n_features[symbol] && !rc; f++) {
		if (branches && branches[f]) {
			if (!branch_outcomes_ok(branches[f]))
				rc = -EINVAL;
			else if (*branches[f])
				rc = lb_printf(&b, " %u=%s", f, branches[f]);
		} else if (values && isfinite(values[f])) {
			if (w->kinds[symbol][f] == ANNOTATE_BRANCH)
				rc = lb_printf(&b, " %u=%c", f, values[f] != 0 ? 'T' : 'N');
			else
				rc = lb_printf(&b, " %u=%.17g", f, values[f]);
		}
	}
	if (!rc)
		rc = lb_printf(&b, "\n");
	if (!rc)
		rc = write_all(w, b.p, b.len);
	free(b.p);
	return rc;
}

int annotate_writer_close(struct annotate_writer *w)
{
	int rc = w->error;

	if (w->own_fd && close(w->fd) && !rc)
		rc = -errno;
	for (uint32_t i = 0; i < w->n_symbols; i++)
		free(w->kinds[i]);
	free(w->kinds);
	free(w->n_features);
	w->kinds = NULL;
	w->n_features = NULL;
	return rc;
}
