/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The annotation language (spec §2): a tolerant recursive-descent parser for
 * the superset grammar of spec §2.10, which accepts every example of the
 * seed (Figs. 1.2-1.4, 3.1-3.7, 5.5, 6.1-6.10, Appendix A), and the
 * canonical printer (doc/annotate.md). Evaluation of expressions and scopes
 * for prediction and checking. `log` is log2 and Norm's second argument the
 * variance (spec §7.2).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/annotate.h"

struct parser {
	const char *name, *s;
	size_t len, pos;
	char *err;
	size_t err_size;
	int rc;
};

static size_t line_of(const struct parser *p)
{
	size_t line = 1;

	for (size_t i = 0; i < p->pos && i < p->len; i++)
		line += p->s[i] == '\n';
	return line;
}

static int perr(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->rc)
		return p->rc;
	n = snprintf(p->err, p->err_size, "%s:%zu: ", p->name, line_of(p));
	if (n >= 0 && (size_t)n < p->err_size) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->err_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	p->rc = -EINVAL;
	return p->rc;
}

static int peekc(const struct parser *p)
{
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];

		if (isspace((unsigned char)c)) {
			p->pos++;
		} else if (c == '/' && p->pos + 1 < p->len && p->s[p->pos + 1] == '/') {
			while (p->pos < p->len && p->s[p->pos] != '\n')
				p->pos++;
		} else {
			break;
		}
	}
}

static bool accept(struct parser *p, const char *tok)
{
	size_t n = strlen(tok);

	skip_ws(p);
	if (p->len - p->pos >= n && memcmp(p->s + p->pos, tok, n) == 0) {
		p->pos += n;
		return true;
	}
	return false;
}

static bool expect(struct parser *p, const char *tok)
{
	if (accept(p, tok))
		return true;
	perr(p, "expected '%s'", tok);
	return false;
}

static bool ident_start(int c)
{
	return c >= 0 && (isalpha(c) || c == '_' || c == '$');
}

static bool ident_char(int c)
{
	return c >= 0 && (isalnum(c) || c == '_' || c == '.' || c == '$');
}

/* An identifier (letters, digits, '_', '.', '$'), malloc'ed; NULL if none. */
static char *ident(struct parser *p)
{
	size_t start;

	skip_ws(p);
	if (!ident_start(peekc(p)))
		return NULL;
	start = p->pos;
	while (ident_char(peekc(p)))
		p->pos++;
	/* a trailing '.' belongs to what follows (e.g. `sig.time`) */
	while (p->pos > start + 1 && p->s[p->pos - 1] == '.')
		p->pos--;
	return strndup(p->s + start, p->pos - start);
}

static bool peek_word(struct parser *p, const char *w)
{
	size_t n = strlen(w);

	skip_ws(p);
	return p->len - p->pos >= n && memcmp(p->s + p->pos, w, n) == 0 &&
	       !ident_char(p->pos + n < p->len ? (unsigned char)p->s[p->pos + n] : -1);
}

static bool number(struct parser *p, double *v)
{
	char buf[64];
	size_t start, n;
	char *end;

	skip_ws(p);
	start = p->pos;
	if (peekc(p) == '-')
		p->pos++;
	if (!isdigit(peekc(p)) &&
	    !(peekc(p) == '.' && p->pos + 1 < p->len && isdigit((unsigned char)p->s[p->pos + 1]))) {
		p->pos = start;
		return false;
	}
	while (isdigit(peekc(p)) || peekc(p) == '.')
		p->pos++;
	if (peekc(p) == 'e' || peekc(p) == 'E') {
		size_t save = p->pos++;

		if (peekc(p) == '+' || peekc(p) == '-')
			p->pos++;
		if (!isdigit(peekc(p)))
			p->pos = save;
		while (isdigit(peekc(p)))
			p->pos++;
	}
	n = p->pos - start;
	if (n >= sizeof(buf)) {
		perr(p, "number too long");
		return false;
	}
	memcpy(buf, p->s + start, n);
	buf[n] = 0;
	*v = strtod(buf, &end);
	if (*end || !isfinite(*v)) {
		p->pos = start;
		perr(p, "bad number '%s'", buf);
		return false;
	}
	return true;
}

/* A copy without leading and trailing space, inner runs of space as one. */
static char *trimmed(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (isspace((unsigned char)s[i])) {
			if (o > out && o[-1] != ' ')
				*o++ = ' ';
		} else {
			*o++ = s[i];
		}
	}
	while (o > out && o[-1] == ' ')
		o--;
	*o = 0;
	return out;
}

/* Raw text up to one of `stops` at bracket depth 0 (not consumed). */
static char *raw_until(struct parser *p, const char *stops)
{
	size_t start = p->pos;
	int depth = 0;

	while (p->pos < p->len) {
		char c = p->s[p->pos];

		if (depth == 0 && strchr(stops, c))
			return trimmed(p->s + start, p->pos - start);
		if (c == '(' || c == '[')
			depth++;
		else if ((c == ')' || c == ']') && depth > 0)
			depth--;
		p->pos++;
	}
	perr(p, "unexpected end of text");
	return NULL;
}

/* ------------------------------------------------------------ expressions */

static struct annotate_expr *new_expr(enum annotate_expr_kind k)
{
	struct annotate_expr *e = calloc(1, sizeof(*e));

	if (e)
		e->kind = k;
	return e;
}

void annotate_expr_free(struct annotate_expr *e)
{
	if (!e)
		return;
	annotate_expr_free(e->a);
	annotate_expr_free(e->b);
	for (size_t i = 0; i < e->n_bind; i++) {
		free(e->bind_name[i]);
		annotate_expr_free(e->bind[i]);
	}
	free(e->bind_name);
	free(e->bind);
	free(e->name);
	free(e);
}

static struct annotate_expr *binary(enum annotate_expr_kind k, struct annotate_expr *a,
				    struct annotate_expr *b)
{
	struct annotate_expr *e;

	if (!a || !b || !(e = new_expr(k))) {
		annotate_expr_free(a);
		annotate_expr_free(b);
		return NULL;
	}
	e->a = a;
	e->b = b;
	return e;
}

static struct annotate_expr *parse_sum(struct parser *p);

static struct annotate_expr *parse_ref(struct parser *p)
{
	struct annotate_expr *e = new_expr(ANNOTATE_E_REF);

	if (!e)
		return NULL;
	skip_ws(p);
	e->name = raw_until(p, "[");
	if (!e->name || !*e->name || !expect(p, "["))
		goto bad;
	do {
		char *n = ident(p);
		struct annotate_expr *v;
		char **names;
		struct annotate_expr **binds;

		if (!n || !expect(p, ":=")) {
			free(n);
			perr(p, "expected NAME := EXPR in a reference");
			goto bad;
		}
		v = parse_sum(p);
		names = realloc(e->bind_name, (e->n_bind + 1) * sizeof(*names));
		if (names)
			e->bind_name = names;
		binds = realloc(e->bind, (e->n_bind + 1) * sizeof(*binds));
		if (binds)
			e->bind = binds;
		if (!v || !names || !binds) {
			free(n);
			annotate_expr_free(v);
			goto bad;
		}
		e->bind_name[e->n_bind] = n;
		e->bind[e->n_bind++] = v;
	} while (accept(p, ","));
	if (!expect(p, "]"))
		goto bad;
	return e;
bad:
	annotate_expr_free(e);
	return NULL;
}

static struct annotate_expr *parse_primary(struct parser *p)
{
	struct annotate_expr *e;
	double v;
	char *id;

	skip_ws(p);
	if (number(p, &v)) {
		if ((e = new_expr(ANNOTATE_E_NUM)))
			e->num = v;
		return e;
	}
	if (p->rc)
		return NULL;
	if (accept(p, "(")) {
		e = parse_sum(p);
		if (e && !expect(p, ")")) {
			annotate_expr_free(e);
			return NULL;
		}
		return e;
	}
	if (accept(p, "-")) {
		struct annotate_expr *a = parse_primary(p);

		if (!a || !(e = new_expr(ANNOTATE_E_NEG))) {
			annotate_expr_free(a);
			return NULL;
		}
		e->a = a;
		return e;
	}
	if (accept(p, "@"))
		return parse_ref(p);
	id = ident(p);
	if (!id) {
		perr(p, "expected a number, a feature, log(...) or a reference");
		return NULL;
	}
	if (strcmp(id, "log") == 0 && accept(p, "(")) {
		free(id);
		struct annotate_expr *a = parse_sum(p);

		if (!a || !expect(p, ")") || !(e = new_expr(ANNOTATE_E_LOG))) {
			annotate_expr_free(a);
			return NULL;
		}
		e->a = a;
		return e;
	}
	if (!(e = new_expr(ANNOTATE_E_FEATURE))) {
		free(id);
		return NULL;
	}
	e->name = id;
	return e;
}

static struct annotate_expr *parse_pow(struct parser *p)
{
	struct annotate_expr *e = parse_primary(p), *pw;
	double v;

	if (!e || !accept(p, "^"))
		return e;
	if (!number(p, &v) || !(pw = new_expr(ANNOTATE_E_POW))) {
		perr(p, "expected a number after '^'");
		annotate_expr_free(e);
		return NULL;
	}
	pw->a = e;
	pw->num = v;
	return pw;
}

static struct annotate_expr *parse_prod(struct parser *p)
{
	struct annotate_expr *e = parse_pow(p);

	while (e && accept(p, "*"))
		e = binary(ANNOTATE_E_MUL, e, parse_pow(p));
	return e;
}

static struct annotate_expr *parse_sum(struct parser *p)
{
	struct annotate_expr *e = parse_prod(p);

	while (e) {
		if (accept(p, "+"))
			e = binary(ANNOTATE_E_ADD, e, parse_prod(p));
		else if (accept(p, "-"))
			e = binary(ANNOTATE_E_SUB, e, parse_prod(p));
		else
			break;
	}
	return e;
}

/* ------------------------------------------------------------ scopes */

static bool parse_cmp(struct parser *p, enum annotate_cmp *c)
{
	static const struct {
		const char *text;
		enum annotate_cmp cmp;
	} ops[] = {{"<=", ANNOTATE_LE}, {">=", ANNOTATE_GE}, {"==", ANNOTATE_EQ},
		   {"!=", ANNOTATE_NE}, {"<", ANNOTATE_LT},  {">", ANNOTATE_GT}};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (accept(p, ops[i].text)) {
			*c = ops[i].cmp;
			return true;
		}
	return false;
}

static bool parse_operand(struct parser *p, struct annotate_operand *o)
{
	memset(o, 0, sizeof(*o));
	if (number(p, &o->num)) {
		o->is_num = true;
		return true;
	}
	if (p->rc)
		return false;
	o->name = ident(p);
	if (!o->name)
		perr(p, "expected a feature or a number in a scope");
	return o->name != NULL;
}

static void atom_free(struct annotate_atom *a)
{
	for (int i = 0; i < 3; i++)
		free(a->op[i].name);
}

static bool parse_atom(struct parser *p, struct annotate_atom *a)
{
	memset(a, 0, sizeof(*a));
	if (accept(p, "!")) {
		a->negated = true;
		a->n = 1;
		a->op[0].name = ident(p);
		if (!a->op[0].name)
			perr(p, "expected a feature after '!'");
		return a->op[0].name != NULL;
	}
	if (!parse_operand(p, &a->op[0]))
		return false;
	a->n = 1;
	while (a->n < 3 && parse_cmp(p, &a->cmp[a->n - 1])) {
		if (!parse_operand(p, &a->op[a->n]))
			return false;
		a->n++;
	}
	if (a->n == 1 && a->op[0].is_num)
		return perr(p, "a scope atom cannot be a bare number"), false;
	return true;
}

static void scope_free(struct annotate_scope *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_atoms; i++)
		atom_free(&s->atoms[i]);
	free(s->atoms);
	free(s);
}

static struct annotate_scope *parse_scope(struct parser *p)
{
	struct annotate_scope *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	do {
		struct annotate_atom *atoms = realloc(s->atoms, (s->n_atoms + 1) * sizeof(*atoms));

		if (!atoms)
			goto bad;
		s->atoms = atoms;
		if (!parse_atom(p, &s->atoms[s->n_atoms])) {
			atom_free(&s->atoms[s->n_atoms]);
			goto bad;
		}
		s->n_atoms++;
	} while (accept(p, "&&"));
	if (!expect(p, "]"))
		goto bad;
	return s;
bad:
	scope_free(s);
	return NULL;
}

/* ------------------------------------------------------------ items */

void annotate_item_free(struct annotate_item *it)
{
	scope_free(it->scope);
	annotate_expr_free(it->mean);
	annotate_expr_free(it->variance);
	for (size_t i = 0; i < it->n_children; i++)
		annotate_item_free(&it->children[i]);
	free(it->children);
	memset(it, 0, sizeof(*it));
}

static int push_item(struct annotate_item **items, size_t *n, struct annotate_item *it)
{
	struct annotate_item *ni = realloc(*items, (*n + 1) * sizeof(*ni));

	if (!ni)
		return -ENOMEM;
	*items = ni;
	ni[(*n)++] = *it;
	memset(it, 0, sizeof(*it));
	return 0;
}

static int parse_items(struct parser *p, struct annotate_item **items, size_t *n, size_t *elided);

/* `{NUM}` ahead (a probability), as opposed to `{` opening a nested list. */
static bool prob_ahead(struct parser *p)
{
	size_t save = p->pos;
	double v;
	bool yes;

	skip_ws(p);
	if (peekc(p) != '{')
		return false;
	p->pos++;
	yes = number(p, &v) && accept(p, "}");
	p->pos = save;
	p->rc = 0;
	return yes;
}

static int parse_distribution(struct parser *p, struct annotate_item *it)
{
	if (peek_word(p, "R") || peek_word(p, "M")) {
		skip_ws(p);
		it->heuristic = p->s[p->pos++];
	}
	if (!peek_word(p, "Norm"))
		return perr(p, "expected Norm(mean, variance)");
	accept(p, "Norm");
	if (!expect(p, "("))
		return p->rc;
	it->mean = parse_sum(p);
	if (!it->mean || !expect(p, ","))
		return p->rc ? p->rc : -ENOMEM;
	it->variance = parse_sum(p);
	if (!it->variance || !expect(p, ")"))
		return p->rc ? p->rc : -ENOMEM;
	accept(p, ";");
	return 0;
}

static int parse_item(struct parser *p, struct annotate_item *it)
{
	memset(it, 0, sizeof(*it));
	if (accept(p, "[")) {
		it->scope = parse_scope(p);
		if (!it->scope)
			return p->rc ? p->rc : -ENOMEM;
	}
	if (prob_ahead(p)) {
		expect(p, "{");
		number(p, &it->prob);
		expect(p, "}");
		it->has_prob = true;
	} else if (accept(p, "{")) {
		int rc = parse_items(p, &it->children, &it->n_children, NULL);

		if (rc)
			return rc;
		if (!expect(p, "}"))
			return p->rc;
		accept(p, ";");
		return 0;
	}
	return parse_distribution(p, it);
}

/*
 * Items up to a closing '}' (not consumed). A scoped mixture component
 * followed by unscoped ones (Fig. 6.3: `[!sliced] {0.55}Norm(..); {0.30}..`)
 * becomes one scope over a nested mixture, its canonical form.
 */
static int parse_items(struct parser *p, struct annotate_item **items, size_t *n, size_t *elided)
{
	struct annotate_item *group = NULL;

	for (;;) {
		struct annotate_item it;
		int rc;

		skip_ws(p);
		if (peekc(p) == '}' || peekc(p) < 0)
			return 0;
		if (accept(p, "...")) {
			if (elided)
				(*elided)++;
			continue;
		}
		if (accept(p, ";"))
			continue;
		rc = parse_item(p, &it);
		if (rc) {
			annotate_item_free(&it);
			return rc;
		}
		if (it.has_prob && !it.scope && group) {
			rc = push_item(&group->children, &group->n_children, &it);
		} else if (it.has_prob && it.scope) {
			struct annotate_item g = {.scope = it.scope};

			it.scope = NULL;
			rc = push_item(&g.children, &g.n_children, &it);
			if (!rc)
				rc = push_item(items, n, &g);
			else
				annotate_item_free(&g);
			group = rc ? NULL : &(*items)[*n - 1];
		} else {
			group = NULL;
			rc = push_item(items, n, &it);
		}
		if (rc) {
			annotate_item_free(&it);
			return rc;
		}
	}
}

/* ------------------------------------------------------------ annotations */

void annotate_annotation_free(struct annotate_annotation *a)
{
	free(a->signature);
	for (size_t i = 0; i < a->n_decls; i++) {
		free(a->decls[i].type);
		free(a->decls[i].name);
		free(a->decls[i].definition);
	}
	free(a->decls);
	for (size_t i = 0; i < a->n_items; i++)
		annotate_item_free(&a->items[i]);
	free(a->items);
	memset(a, 0, sizeof(*a));
}

void annotate_file_free(struct annotate_file *f)
{
	for (size_t i = 0; i < f->n; i++)
		annotate_annotation_free(&f->annotations[i]);
	free(f->annotations);
	memset(f, 0, sizeof(*f));
}

static int parse_header(struct parser *p, struct annotate_annotation *a)
{
	char *head, *dot, *metric;
	int m;

	skip_ws(p);
	head = raw_until(p, "{");
	if (!head)
		return p->rc;
	dot = strrchr(head, '.');
	if (!dot || dot == head) {
		free(head);
		return perr(p, "expected SIGNATURE.METRIC before '{'");
	}
	*dot = 0;
	metric = trimmed(dot + 1, strlen(dot + 1));
	if (metric && strlen(metric) > 2 && strcmp(metric + strlen(metric) - 2, "()") == 0)
		metric[strlen(metric) - 2] = 0; /* `.time()` of A.11, A.20 */
	m = metric ? annotate_metric_parse(metric) : -1;
	if (m < 0) {
		perr(p, "unknown metric '%s'", metric ? metric : "");
		free(metric);
		free(head);
		return p->rc;
	}
	free(metric);
	a->metric = m;
	a->signature = trimmed(head, strlen(head));
	free(head);
	accept(p, "{");
	return a->signature ? 0 : -ENOMEM;
}

static int parse_decl(struct parser *p, struct annotate_annotation *a)
{
	char *words[8], *def;
	int nw = 0;
	struct annotate_decl *d;
	size_t typelen = 0;

	while (nw < 8 && (words[nw] = ident(p)))
		nw++;
	if (nw < 2 || !accept(p, "=")) {
		while (nw)
			free(words[--nw]);
		return perr(p, "expected TYPE NAME = EXPRESSION;");
	}
	skip_ws(p);
	def = raw_until(p, ";}");
	if (!def || !accept(p, ";")) {
		free(def);
		while (nw)
			free(words[--nw]);
		return perr(p, "expected ';' after a feature definition");
	}
	d = realloc(a->decls, (a->n_decls + 1) * sizeof(*d));
	if (!d) {
		free(def);
		while (nw)
			free(words[--nw]);
		return -ENOMEM;
	}
	a->decls = d;
	d = &d[a->n_decls++];
	for (int i = 0; i < nw - 1; i++)
		typelen += strlen(words[i]) + 1;
	d->type = calloc(1, typelen + 1);
	for (int i = 0; i < nw - 1 && d->type; i++) {
		if (i)
			strcat(d->type, " ");
		strcat(d->type, words[i]);
	}
	for (int i = 0; i < nw - 1; i++)
		free(words[i]);
	d->name = words[nw - 1];
	d->definition = def;
	return d->type ? 0 : -ENOMEM;
}

static int parse_annotation(struct parser *p, struct annotate_annotation *a)
{
	int rc;

	memset(a, 0, sizeof(*a));
	if ((rc = parse_header(p, a)))
		return rc;
	if (accept(p, "features:")) {
		while (!peek_word(p, "annotations") && peekc(p) != '}' && peekc(p) >= 0)
			if ((rc = parse_decl(p, a)))
				return rc;
	}
	if (!expect(p, "annotations:"))
		return p->rc;
	if ((rc = parse_items(p, &a->items, &a->n_items, &a->elided)))
		return rc;
	if (!expect(p, "}"))
		return p->rc;
	return 0;
}

int annotate_parse(const char *name, const char *text, size_t len, struct annotate_file *out,
		   char *err, size_t err_size)
{
	struct parser p = {.name = name, .s = text, .len = len, .err = err, .err_size = err_size};

	memset(out, 0, sizeof(*out));
	if (memchr(text, 0, len)) {
		p.pos = (size_t)((const char *)memchr(text, 0, len) - text);
		return perr(&p, "NUL byte in annotation text");
	}
	for (;;) {
		struct annotate_annotation *as;
		int rc;

		skip_ws(&p);
		if (p.pos >= p.len)
			break;
		as = realloc(out->annotations, (out->n + 1) * sizeof(*as));
		if (!as) {
			annotate_file_free(out);
			return -ENOMEM;
		}
		out->annotations = as;
		rc = parse_annotation(&p, &as[out->n]);
		out->n++;
		if (rc) {
			if (rc == -ENOMEM)
				snprintf(err, err_size, "%s: out of memory", name);
			annotate_file_free(out);
			return rc;
		}
	}
	if (out->n == 0) {
		p.pos = 0;
		return perr(&p, "no annotation");
	}
	return 0;
}

int annotate_parse_file(const char *path, struct annotate_file *out, char *err, size_t err_size)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;
	int rc;

	if (!f) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		snprintf(err, err_size, "%s: cannot read (not a regular file?)", path);
		return -EIO;
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		snprintf(err, err_size, "%s: read error", path);
		return -EIO;
	}
	fclose(f);
	rc = annotate_parse(path, buf, (size_t)n, out, err, err_size);
	free(buf);
	return rc;
}

/* ------------------------------------------------------------ printer */

static void print_num(FILE *f, double v, int digits)
{
	fprintf(f, "%.*g", digits, v);
}

static int prec(const struct annotate_expr *e)
{
	switch (e->kind) {
	case ANNOTATE_E_ADD:
	case ANNOTATE_E_SUB:
		return 1;
	case ANNOTATE_E_MUL:
		return 2;
	case ANNOTATE_E_NEG:
		return 3;
	case ANNOTATE_E_POW:
		return 4;
	case ANNOTATE_E_NUM:
		return e->num < 0 ? 3 : 5;
	default:
		return 5;
	}
}

static void print_sub(FILE *f, const struct annotate_expr *e, int min_prec, int digits)
{
	bool paren = prec(e) < min_prec;

	if (paren)
		fputc('(', f);
	annotate_print_expr(f, e, digits);
	if (paren)
		fputc(')', f);
}

void annotate_print_expr(FILE *f, const struct annotate_expr *e, int digits)
{
	switch (e->kind) {
	case ANNOTATE_E_NUM:
		print_num(f, e->num, digits);
		break;
	case ANNOTATE_E_FEATURE:
		fputs(e->name, f);
		break;
	case ANNOTATE_E_LOG:
		fputs("log(", f);
		annotate_print_expr(f, e->a, digits);
		fputc(')', f);
		break;
	case ANNOTATE_E_POW:
		print_sub(f, e->a, 5, digits);
		fputc('^', f);
		print_num(f, e->num, digits);
		break;
	case ANNOTATE_E_ADD:
	case ANNOTATE_E_SUB:
		print_sub(f, e->a, 1, digits);
		fputs(e->kind == ANNOTATE_E_ADD ? " + " : " - ", f);
		print_sub(f, e->b, 2, digits);
		break;
	case ANNOTATE_E_MUL:
		print_sub(f, e->a, 2, digits);
		fputc('*', f);
		print_sub(f, e->b, 3, digits);
		break;
	case ANNOTATE_E_NEG:
		fputc('-', f);
		print_sub(f, e->a, 4, digits);
		break;
	case ANNOTATE_E_REF:
		fprintf(f, "@%s[", e->name);
		for (size_t i = 0; i < e->n_bind; i++) {
			fprintf(f, "%s%s := ", i ? ", " : "", e->bind_name[i]);
			annotate_print_expr(f, e->bind[i], digits);
		}
		fputc(']', f);
		break;
	}
}

static const char *cmp_text(enum annotate_cmp c)
{
	static const char *const t[] = {"<", "<=", ">", ">=", "==", "!="};

	return t[c];
}

/* Scope bounds decide routing: printed exactly (the shortest round trip). */
static void print_exact(FILE *f, double v)
{
	char buf[40];

	for (int d = 6; d <= 17; d++) {
		snprintf(buf, sizeof(buf), "%.*g", d, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

static void print_operand(FILE *f, const struct annotate_operand *o, int digits)
{
	(void)digits;
	if (o->is_num)
		print_exact(f, o->num);
	else
		fputs(o->name, f);
}

static void print_scope(FILE *f, const struct annotate_scope *s, int digits)
{
	fputc('[', f);
	for (size_t i = 0; i < s->n_atoms; i++) {
		const struct annotate_atom *a = &s->atoms[i];

		if (i)
			fputs(" && ", f);
		if (a->negated)
			fputc('!', f);
		print_operand(f, &a->op[0], digits);
		for (int j = 1; j < a->n; j++) {
			fprintf(f, " %s ", cmp_text(a->cmp[j - 1]));
			print_operand(f, &a->op[j], digits);
		}
	}
	fputc(']', f);
}

static void print_item(FILE *f, const struct annotate_item *it, int indent, int digits)
{
	fprintf(f, "%*s", indent, "");
	if (it->scope) {
		print_scope(f, it->scope, digits);
		fputc(' ', f);
	}
	if (it->children || (!it->mean && it->scope)) {
		fputs("{\n", f);
		for (size_t i = 0; i < it->n_children; i++)
			print_item(f, &it->children[i], indent + 2, digits);
		fprintf(f, "%*s}\n", indent, "");
		return;
	}
	if (it->has_prob) {
		fputc('{', f);
		print_num(f, it->prob, digits);
		fputs("} ", f);
	}
	if (it->heuristic)
		fprintf(f, "%c ", it->heuristic);
	fputs("Norm(", f);
	annotate_print_expr(f, it->mean, digits);
	fputs(", ", f);
	annotate_print_expr(f, it->variance, digits);
	fputs(");\n", f);
}

void annotate_print_item(FILE *f, const struct annotate_item *it, int digits)
{
	print_item(f, it, 0, digits);
}

void annotate_print(FILE *f, const struct annotate_annotation *a, int digits)
{
	fprintf(f, "%s.%s {\nfeatures:\n", a->signature, annotate_metric_name(a->metric));
	for (size_t i = 0; i < a->n_decls; i++)
		fprintf(f, "  %s %s = %s;\n", a->decls[i].type, a->decls[i].name,
			a->decls[i].definition);
	fputs("annotations:\n", f);
	for (size_t i = 0; i < a->n_items; i++)
		print_item(f, &a->items[i], 2, digits);
	fputs("}\n", f);
}

char *annotate_to_string(const struct annotate_annotation *a, int digits)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	annotate_print(f, a, digits);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ------------------------------------------------------------ equality */

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool expr_equal(const struct annotate_expr *a, const struct annotate_expr *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || a->num != b->num || !str_eq(a->name, b->name) ||
	    a->n_bind != b->n_bind)
		return false;
	for (size_t i = 0; i < a->n_bind; i++)
		if (!str_eq(a->bind_name[i], b->bind_name[i]) ||
		    !expr_equal(a->bind[i], b->bind[i]))
			return false;
	return expr_equal(a->a, b->a) && expr_equal(a->b, b->b);
}

static bool scope_equal(const struct annotate_scope *a, const struct annotate_scope *b)
{
	if (!a || !b)
		return a == b;
	if (a->n_atoms != b->n_atoms)
		return false;
	for (size_t i = 0; i < a->n_atoms; i++) {
		const struct annotate_atom *x = &a->atoms[i], *y = &b->atoms[i];

		if (x->n != y->n || x->negated != y->negated)
			return false;
		for (int j = 0; j < x->n; j++)
			if (x->op[j].is_num != y->op[j].is_num || x->op[j].num != y->op[j].num ||
			    !str_eq(x->op[j].name, y->op[j].name) ||
			    (j && x->cmp[j - 1] != y->cmp[j - 1]))
				return false;
	}
	return true;
}

static bool item_equal(const struct annotate_item *a, const struct annotate_item *b)
{
	if (!scope_equal(a->scope, b->scope) || a->has_prob != b->has_prob ||
	    (a->has_prob && a->prob != b->prob) || a->heuristic != b->heuristic ||
	    !expr_equal(a->mean, b->mean) || !expr_equal(a->variance, b->variance) ||
	    a->n_children != b->n_children)
		return false;
	for (size_t i = 0; i < a->n_children; i++)
		if (!item_equal(&a->children[i], &b->children[i]))
			return false;
	return true;
}

bool annotate_equal(const struct annotate_annotation *a, const struct annotate_annotation *b)
{
	if (!str_eq(a->signature, b->signature) || a->metric != b->metric ||
	    a->n_decls != b->n_decls || a->n_items != b->n_items)
		return false;
	for (size_t i = 0; i < a->n_decls; i++)
		if (!str_eq(a->decls[i].type, b->decls[i].type) ||
		    !str_eq(a->decls[i].name, b->decls[i].name) ||
		    !str_eq(a->decls[i].definition, b->decls[i].definition))
			return false;
	for (size_t i = 0; i < a->n_items; i++)
		if (!item_equal(&a->items[i], &b->items[i]))
			return false;
	return true;
}

/* ------------------------------------------------------------ evaluation */

/*
 * log is log2; at x <= 0 it is 0, so that x*log(x) takes its limit 0 at 0 (the
 * fitting uses the same convention, see derive.c).
 */
static double log2_or_zero(double x)
{
	return x > 0 ? log2(x) : 0.0;
}

int annotate_eval(const struct annotate_expr *e, annotate_lookup_fn lookup, void *ctx, double *out)
{
	double a = 0, b = 0;
	int rc;

	switch (e->kind) {
	case ANNOTATE_E_NUM:
		*out = e->num;
		return 0;
	case ANNOTATE_E_FEATURE:
		return lookup(ctx, e->name, out) ? 0 : -ENOENT;
	case ANNOTATE_E_REF:
		return -ENOTSUP;
	default:
		break;
	}
	if ((rc = annotate_eval(e->a, lookup, ctx, &a)))
		return rc;
	if (e->b && (rc = annotate_eval(e->b, lookup, ctx, &b)))
		return rc;
	switch (e->kind) {
	case ANNOTATE_E_LOG:
		*out = log2_or_zero(a);
		break;
	case ANNOTATE_E_POW:
		*out = pow(a, e->num);
		break;
	case ANNOTATE_E_ADD:
		*out = a + b;
		break;
	case ANNOTATE_E_SUB:
		*out = a - b;
		break;
	case ANNOTATE_E_MUL:
		*out = a * b;
		break;
	case ANNOTATE_E_NEG:
		*out = -a;
		break;
	default:
		return -EINVAL;
	}
	return isfinite(*out) ? 0 : -EDOM;
}

static bool compare(double x, enum annotate_cmp c, double y)
{
	switch (c) {
	case ANNOTATE_LT:
		return x < y;
	case ANNOTATE_LE:
		return x <= y;
	case ANNOTATE_GT:
		return x > y;
	case ANNOTATE_GE:
		return x >= y;
	case ANNOTATE_EQ:
		return x == y;
	case ANNOTATE_NE:
		return x != y;
	}
	return false;
}

static bool operand_value(const struct annotate_operand *o, annotate_lookup_fn lookup, void *ctx,
			  double *v)
{
	if (o->is_num) {
		*v = o->num;
		return true;
	}
	return lookup(ctx, o->name, v) && !isnan(*v);
}

int annotate_scope_holds(const struct annotate_scope *s, annotate_lookup_fn lookup, void *ctx)
{
	for (size_t i = 0; s && i < s->n_atoms; i++) {
		const struct annotate_atom *a = &s->atoms[i];
		double v[3];

		for (int j = 0; j < a->n; j++)
			if (!operand_value(&a->op[j], lookup, ctx, &v[j]))
				return -ENOENT;
		if (a->n == 1 && ((v[0] != 0) == a->negated))
			return 0;
		for (int j = 1; j < a->n; j++)
			if (!compare(v[j - 1], a->cmp[j - 1], v[j]))
				return 0;
	}
	return 1;
}

const struct annotate_annotation *annotate_file_find(const struct annotate_file *f,
						     const char *signature, int metric)
{
	size_t len = strcspn(signature, "(");

	for (size_t i = 0; i < f->n; i++)
		if (f->annotations[i].metric == metric &&
		    strcmp(f->annotations[i].signature, signature) == 0)
			return &f->annotations[i];
	for (size_t i = 0; i < f->n; i++) {
		const char *s = f->annotations[i].signature;

		if (f->annotations[i].metric == metric && strncmp(s, signature, len) == 0 &&
		    strcspn(s, "(") == len)
			return &f->annotations[i];
	}
	return NULL;
}
