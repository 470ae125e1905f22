/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * src/annotate: the annotation language (every example of the seed parses,
 * prints canonically and round-trips; spec §2.8-2.10), evaluation (log is
 * log2, Norm's second argument a variance: spec §7.2), the record format
 * (doc/formats/annotate-record.md: writer to reader, a cut last line, errors
 * with the line, a fuzz loop), the KDE clustering, and check / predict.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "annotate/annotate.h"
#include "base/base.h"
#include "fuzz_edit.h"

/* (this cmocka has no assert_double_equal) */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* ------------------------------------------------------------ examples */

struct example {
	char name[32];
	char *text;
};

static size_t load_examples(struct example *ex, size_t max)
{
	const char *dir = getenv("LEVER_TEST_SOURCE_DIR");
	char path[1024], *buf, *p;
	FILE *f;
	long n;
	size_t k = 0;

	snprintf(path, sizeof(path), "%s/tests/unit/annotate_examples.txt", dir ? dir : ".");
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	p = strstr(buf, "=== ");
	while (p && k < max) {
		char *nl = strchr(p, '\n'), *next = strstr(nl, "\n=== ");

		snprintf(ex[k].name, sizeof(ex[k].name), "%.*s", (int)(nl - p - 4), p + 4);
		ex[k].text = strndup(nl + 1, next ? (size_t)(next + 1 - (nl + 1)) : strlen(nl + 1));
		k++;
		p = next ? next + 1 : NULL;
	}
	free(buf);
	return k;
}

static void parse_ok(const char *name, const char *text, struct annotate_file *f)
{
	char err[256] = "";
	int rc = annotate_parse(name, text, strlen(text), f, err, sizeof(err));

	if (rc)
		fail_msg("%s does not parse: %s", name, err);
	assert_int_equal(f->n, 1);
}

/* Every example parses; printed, it parses to the same tree and prints the same. */
static void test_examples_round_trip(void **state)
{
	struct example ex[64];
	size_t n = load_examples(ex, 64);

	(void)state;
	assert_int_equal(n, 42);
	for (size_t i = 0; i < n; i++) {
		struct annotate_file a, b;
		char *t1, *t2;

		parse_ok(ex[i].name, ex[i].text, &a);
		t1 = annotate_to_string(&a.annotations[0], 17);
		parse_ok(ex[i].name, t1, &b);
		if (!annotate_equal(&a.annotations[0], &b.annotations[0]))
			fail_msg("%s: the canonical form parses differently:\n%s", ex[i].name, t1);
		t2 = annotate_to_string(&b.annotations[0], 17);
		assert_string_equal(t1, t2);
		assert_true(a.annotations[0].n_items > 0);
		free(t1);
		free(t2);
		annotate_file_free(&a);
		annotate_file_free(&b);
		free(ex[i].text);
	}
}

static const struct annotate_annotation *find_example(struct example *ex, size_t n,
						      const char *name, struct annotate_file *f)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ex[i].name, name) == 0) {
			parse_ok(name, ex[i].text, f);
			return &f->annotations[0];
		}
	fail_msg("no example %s", name);
	return NULL;
}

/* The seed's irregularities (spec §2.10) read as they mean. */
static void test_examples_meaning(void **state)
{
	struct example ex[64];
	size_t n = load_examples(ex, 64);
	struct annotate_file f;
	const struct annotate_annotation *a;

	(void)state;
	a = find_example(ex, n, "fig6.3", &f); /* .wait_time, a scope over a mixture, `...` */
	assert_int_equal(a->metric, ANNOTATE_WAIT);
	assert_int_equal(a->n_items, 2);
	assert_int_equal(a->items[1].n_children, 2);
	assert_true(a->items[1].scope->atoms[0].negated);
	assert_int_equal(a->elided, 1);
	assert_int_equal(a->n_decls, 5);
	assert_string_equal(a->decls[0].type, "bool");
	annotate_file_free(&f);

	a = find_example(ex, n, "A.17", &f); /* [ 0 < c <= 1 ]: a chain */
	assert_int_equal(a->n_items, 3);
	assert_int_equal(a->items[1].scope->atoms[0].n, 3);
	assert_true(a->items[1].scope->atoms[0].op[0].is_num);
	annotate_file_free(&f);

	a = find_example(ex, n, "A.20", &f); /* .time(), a bare mixture */
	assert_int_equal(a->metric, ANNOTATE_TIME);
	assert_int_equal(a->n_items, 3);
	assert_true(a->items[2].has_prob);
	assert_near(a->items[2].prob, 0.34, 0);
	annotate_file_free(&f);

	a = find_example(ex, n, "fig3.6", &f); /* references */
	assert_int_equal(a->items[0].mean->a->b->kind, ANNOTATE_E_REF);
	assert_string_equal(a->items[0].mean->a->b->name, "std::list<int>::sort");
	assert_string_equal(a->items[0].mean->a->b->bind_name[0], "s");
	annotate_file_free(&f);

	a = find_example(ex, n, "fig3.7", &f); /* R marker */
	assert_int_equal(a->items[0].heuristic, 'R');
	annotate_file_free(&f);

	a = find_example(ex, n, "A.9", &f); /* dotted names */
	assert_string_equal(a->decls[0].name, "t.artificial.size");
	assert_string_equal(a->decls[0].definition, "t->_M_impl._M_finish - t->_M_impl._M_start");
	annotate_file_free(&f);
	for (size_t i = 0; i < n; i++)
		free(ex[i].text);
}

static bool lookup_table(void *ctx, const char *name, double *v)
{
	const double *t = ctx;

	if (strcmp(name, "t") == 0 || strcmp(name, "s") == 0)
		*v = t[0];
	else if (strcmp(name, "c") == 0)
		*v = t[1];
	else
		return false;
	return true;
}

static void test_eval(void **state)
{
	static const char text[] = "f(int t).time {\nfeatures:\nint t = t;\nannotations:\n"
				   "[t <= 8] Norm(2 + 0.5*t*log(t) - t^2, 4);\n"
				   "[t > 8 && c == 1] Norm(-3*t, 0);\n}\n";
	struct annotate_file f;
	double vars[2] = {8, 0}, v;

	(void)state;
	parse_ok("t", text, &f);
	/* log is log2: 2 + 0.5*8*3 - 64 */
	assert_int_equal(annotate_eval(f.annotations[0].items[0].mean, lookup_table, vars, &v), 0);
	assert_near(v, 2 + 12 - 64, 1e-12);
	assert_int_equal(annotate_scope_holds(f.annotations[0].items[0].scope, lookup_table, vars),
			 1);
	assert_int_equal(annotate_scope_holds(f.annotations[0].items[1].scope, lookup_table, vars),
			 0);
	vars[0] = 9;
	vars[1] = 1;
	assert_int_equal(annotate_scope_holds(f.annotations[0].items[1].scope, lookup_table, vars),
			 1);
	assert_int_equal(annotate_eval(f.annotations[0].items[1].mean, lookup_table, vars, &v), 0);
	assert_near(v, -27, 0);
	annotate_file_free(&f);
}

static void expect_parse_error(const char *text, const char *msg)
{
	struct annotate_file f;
	char err[256] = "";

	assert_int_not_equal(annotate_parse("x.ann", text, strlen(text), &f, err, sizeof(err)), 0);
	if (!strstr(err, msg))
		fail_msg("'%s' does not contain '%s'", err, msg);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_parse_error("", "x.ann:1: no annotation");
	expect_parse_error("f().speed {\nannotations:\n}\n", "x.ann:1: unknown metric 'speed'");
	expect_parse_error("f().time {\nannotations:\nNorm(1 +, 2);\n}\n", "x.ann:3:");
	expect_parse_error("f().time {\nfeatures:\nint = 3;\nannotations:\n}\n", "x.ann:3:");
	expect_parse_error("f().time {\nannotations:\n[a <] Norm(1, 2);\n}\n", "x.ann:3:");
	expect_parse_error("f().time {\nannotations:\nNorm(t^x, 2);\n}\n", "after '^'");
	expect_parse_error("f().time {\nannotations:\nGauss(1, 2);\n}\n", "expected Norm");
	expect_parse_error("f().time {\nannotations:\nNorm(1, 2);\n", "x.ann:4: expected '}'");
}

/* Mutated examples: an error with the name, or a tree that prints and re-parses. */
static void test_parse_fuzz(void **state)
{
	static const char *const tokens[] = {
	    "[",     "]",      "{", "}", "(", ")",     ";",   "&&",	   "<=",	   "Norm(",
	    "log(",  "@f[s:=", "^", "*", "-", "1e308", "...", "features:", "annotations:", "R ",
	    "{0.5}", "\n"};
	struct fuzz_edits edits = {
	    .tokens = tokens, .n_tokens = sizeof(tokens) / sizeof(tokens[0]), .insert_weight = 3};
	struct example ex[64];
	size_t n = load_examples(ex, 64);
	struct rng r;
	char buf[4096];

	(void)state;
	rng_seed(&r, 0xa770);
	for (int round = 0; round < 6000; round++) {
		const char *src = ex[rng_below(&r, n)].text;
		size_t len = strlen(src) < sizeof(buf) ? strlen(src) : sizeof(buf) - 1;
		struct annotate_file f;
		char err[256] = "";

		memcpy(buf, src, len);
		for (int e = 0; e < 1 + (int)rng_below(&r, 4); e++)
			fuzz_edit(&r, &edits, buf, &len, sizeof(buf) - 1);
		if (annotate_parse("fz", buf, len, &f, err, sizeof(err)) == 0) {
			for (size_t i = 0; i < f.n; i++)
				free(annotate_to_string(&f.annotations[i], 6));
			annotate_file_free(&f);
		} else {
			assert_true(strncmp(err, "fz", 2) == 0);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(ex[i].text);
}

/* ------------------------------------------------------------ records */

static char *write_record(size_t *len, bool cut)
{
	FILE *tmp = tmpfile();
	struct annotate_writer w;
	double m[ANNOTATE_N_METRICS], v[3];
	const char *br[3] = {NULL, NULL, "TNT"};
	char *buf;
	long n;

	assert_non_null(tmp);
	assert_int_equal(annotate_writer_fdopen(&w, fileno(tmp), "unit test"), 0);
	assert_int_equal(annotate_writer_symbol(&w, "f(struct job *j)"), 0);
	assert_int_equal(annotate_writer_feature(&w, 0, ANNOTATE_INTEGER, "j->items->len"), 0);
	assert_int_equal(annotate_writer_feature(&w, 0, ANNOTATE_ENUM, "j->kind"), 1);
	assert_int_equal(annotate_writer_feature(&w, 0, ANNOTATE_BRANCH, "f+0x10"), 2);
	assert_int_equal(annotate_writer_symbol(&w, "g()"), 1);
	assert_int_equal(annotate_writer_feature(&w, 0, ANNOTATE_BRANCH, "bad\nname"), -EINVAL);
	for (int i = 0; i < ANNOTATE_N_METRICS; i++)
		m[i] = NAN;
	m[ANNOTATE_TIME] = 12.25;
	m[ANNOTATE_PFAULTS_MAJOR] = 3;
	v[0] = 7;
	v[1] = NAN; /* missing */
	v[2] = 1;
	assert_int_equal(annotate_writer_call(&w, 0, 10, 0, m, v, NULL), 0);
	m[ANNOTATE_TIME] = 0.1;
	assert_int_equal(annotate_writer_call(&w, 1, 11, 10, m, NULL, NULL), 0);
	v[1] = 2;
	assert_int_equal(annotate_writer_call(&w, 0, 12, 0, m, v, br), 0);
	assert_int_equal(annotate_writer_close(&w), 0);
	fflush(tmp);
	n = ftell(tmp);
	buf = malloc((size_t)n + 1);
	rewind(tmp);
	assert_int_equal(fread(buf, 1, (size_t)n, tmp), (size_t)n);
	fclose(tmp);
	*len = (size_t)n - (cut ? 5 : 0); /* cut inside the last call line */
	return buf;
}

/*
 * Branch outcomes as the runtime writes them (--branches): a `+COUNT` past
 * the kept ones makes a repeated branch; the strings are kept as written.
 */
static void test_record_branch_strings(void **state)
{
	static const char text[] = "lever-annotate-record 1\nS 0 f\nF 0 0 branch f+0x6\n"
				   "C 0 1 0 0=N\nC 0 2 0 0=T+3\nC 0 3 0\nC 0 4 0 0=?\n";
	struct annotate_record rec;
	const struct annotate_feature *b;
	char err[256];

	(void)state;
	assert_int_equal(
	    annotate_record_read_buffer("b.rec", text, sizeof(text) - 1, &rec, err, sizeof(err)),
	    0);
	b = &rec.symbols[0].features[0];
	assert_near(b->values[0], 0, 0);
	assert_true(isnan(b->values[1])); /* ran four times */
	assert_true(isnan(b->values[2]) && isnan(b->values[3]));
	assert_int_equal(b->repeated, 1);
	assert_string_equal(b->outcomes[0], "N");
	assert_string_equal(b->outcomes[1], "T+3");
	assert_null(b->outcomes[2]);
	assert_null(b->outcomes[3]); /* unknown */
	annotate_record_free(&rec);
}

static void test_record_round_trip(void **state)
{
	struct annotate_record rec;
	char err[256], *buf;
	size_t len;
	const struct annotate_symbol *f;

	(void)state;
	buf = write_record(&len, false);
	assert_int_equal(annotate_record_read_buffer("r.rec", buf, len, &rec, err, sizeof(err)), 0);
	assert_false(rec.truncated);
	assert_string_equal(rec.run, "unit test");
	assert_int_equal(rec.n_symbols, 2);
	f = annotate_record_find(&rec, "f");
	assert_non_null(f);
	assert_int_equal(f->n_calls, 2);
	assert_int_equal(f->id[1], 12);
	assert_near(f->metrics[ANNOTATE_TIME][0], 12.25, 0);
	assert_near(f->metrics[ANNOTATE_PFAULTS_MAJOR][0], 3, 0);
	assert_true(isnan(f->metrics[ANNOTATE_MEM][0]));
	assert_near(f->features[0].values[0], 7, 0);
	assert_true(isnan(f->features[1].values[0]));
	assert_near(f->features[1].values[1], 2, 0);
	assert_near(f->features[2].values[0], 1, 0);  /* one outcome: taken */
	assert_true(isnan(f->features[2].values[1])); /* three outcomes */
	assert_int_equal(f->features[2].repeated, 1);
	assert_int_equal(f->features[1].kind, ANNOTATE_ENUM);
	assert_int_equal(rec.symbols[1].parent[0], 10); /* the call tree */
	annotate_record_free(&rec);

	/* a killed writer: the cut last line is dropped and flagged */
	assert_int_equal(annotate_record_read_buffer("r.rec", buf, len - 5, &rec, err, sizeof(err)),
			 0);
	assert_true(rec.truncated);
	assert_int_equal(annotate_record_find(&rec, "f")->n_calls, 1);
	annotate_record_free(&rec);
	free(buf);
}

static void expect_record_error(const char *text, const char *msg)
{
	struct annotate_record rec;
	char err[256] = "";

	assert_int_not_equal(
	    annotate_record_read_buffer("e.rec", text, strlen(text), &rec, err, sizeof(err)), 0);
	if (!strstr(err, msg))
		fail_msg("'%s' does not contain '%s'", err, msg);
}

static void test_record_errors(void **state)
{
	(void)state;
	expect_record_error("", "e.rec:1: empty file");
	expect_record_error("hello 1\n", "e.rec:1: not an annotate record");
	expect_record_error("lever-annotate-record 2\n", "e.rec:1: unsupported record version");
	expect_record_error("lever-annotate-record 1\nS 1 f\n", "e.rec:2: symbol index must be 0");
	expect_record_error("lever-annotate-record 1\nS 0 f\nF 0 0 weird x\n",
			    "e.rec:3: unknown feature kind");
	expect_record_error("lever-annotate-record 1\nS 0 f\nC 0 1 0 time=x\n",
			    "e.rec:3: bad value 'x' for metric time");
	expect_record_error("lever-annotate-record 1\nS 0 f\nC 0 1 0 time=-1\n", "e.rec:3:");
	expect_record_error("lever-annotate-record 1\nS 0 f\nC 0 1 0 0=1\n",
			    "e.rec:3: feature 0 not declared");
	expect_record_error("lever-annotate-record 1\nS 0 f\nF 0 0 branch b\nC 0 1 0 0=TX\n",
			    "e.rec:4: branch outcomes");
	expect_record_error("lever-annotate-record 1\nS 0 f\nF 0 0 branch b\nC 0 1 0 0=T+\n",
			    "e.rec:4: branch outcomes");
	expect_record_error("lever-annotate-record 1\nS 0 f\nF 0 0 branch b\nC 0 1 0 0=+3\n",
			    "e.rec:4: branch outcomes");
	expect_record_error("lever-annotate-record 1\nS 0 f\nF 0 0 branch b\nC 0 1 0 0=T+0\n",
			    "e.rec:4: branch outcomes");
	expect_record_error("lever-annotate-record 1\nC 0 1 0\n", "e.rec:2: unknown symbol");
	expect_record_error("lever-annotate-record 1\nS 0 f\nC 0 0 0\n", "e.rec:3: bad call id");
	expect_record_error("lever-annotate-record 1\nS 0 f\nC 0 1 0 speed=1\n",
			    "e.rec:3: unknown metric 'speed'");
	expect_record_error("lever-annotate-record 1\nX\n", "e.rec:2: unknown line type");
}

/*
 * A float feature read from a union member that holds something else (as
 * sqlite3VdbeExec's p->aMem->u.r does) can be a subnormal double; the runtime
 * prints it with %.17g and glibc's strtod reads it back with ERANGE set.
 * The value is finite and exact: it must be read, not refused.
 */
static void test_record_subnormal_feature(void **state)
{
	static const char text[] = "lever-annotate-record 1\nS 0 f\nF 0 0 float x\n"
				   "C 0 1 0 time=1 0=4.9406564584124654e-324\n"
				   "C 0 2 0 time=2 0=-2.2250738585072009e-308\n";
	struct annotate_record rec;
	char err[256] = "";

	(void)state;
	if (annotate_record_read_buffer("s.rec", text, strlen(text), &rec, err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(annotate_record_find(&rec, "f")->features[0].values[0] > 0);
	assert_true(annotate_record_find(&rec, "f")->features[0].values[1] < 0);
	annotate_record_free(&rec);
	expect_record_error("lever-annotate-record 1\nS 0 f\nF 0 0 float x\nC 0 1 0 0=1e999\n",
			    "e.rec:4: bad value '1e999' for feature 0");
}

static void test_record_fuzz(void **state)
{
	static const char *const tokens[] = {"S 0 f\n",
					     "F 0 0 integer x\n",
					     "F 0 1 branch b\n",
					     "C 0 1 0 time=1 0=2\n",
					     "=",
					     " ",
					     "\n",
					     "T",
					     "N",
					     "1e999",
					     "nan",
					     "?",
					     "-",
					     "18446744073709551616"};
	struct fuzz_edits edits = {.alphabet = "0123456789 =SFCTN?\n\x00-.e",
				   .alphabet_len = 24,
				   .tokens = tokens,
				   .n_tokens = sizeof(tokens) / sizeof(tokens[0]),
				   .insert_weight = 4};
	char *seed, buf[2048];
	size_t seed_len;
	struct rng r;

	(void)state;
	seed = write_record(&seed_len, false);
	rng_seed(&r, 0xf00d);
	for (int round = 0; round < 8000; round++) {
		size_t len = seed_len < sizeof(buf) ? seed_len : sizeof(buf);
		struct annotate_record rec;
		char err[256] = "";

		memcpy(buf, seed, len);
		for (int e = 0; e < 1 + (int)rng_below(&r, 5); e++)
			fuzz_edit(&r, &edits, buf, &len, sizeof(buf));
		if (annotate_record_read_buffer("fz", buf, len, &rec, err, sizeof(err)) == 0) {
			for (size_t s = 0; s < rec.n_symbols; s++)
				for (size_t c = 0; c < rec.symbols[s].n_calls; c++)
					assert_true(rec.symbols[s].id[c] > 0);
			annotate_record_free(&rec);
		} else {
			assert_true(strncmp(err, "fz", 2) == 0);
		}
	}
	free(seed);
}

/* ------------------------------------------------------------ clustering */

static void test_kde_clusters(void **state)
{
	struct rng r;
	double y[600];
	struct annotate_cluster *cl;
	int k;

	(void)state;
	rng_seed(&r, 42);
	/* three levels, 30% / 40% / 30% (A.20) */
	for (int i = 0; i < 600; i++) {
		int u = (int)rng_below(&r, 100);
		double noise = 10 * (rng_double(&r) + rng_double(&r) + rng_double(&r) - 1.5);

		y[i] = (u < 30 ? 900 : u < 70 ? 600 : 300) + noise;
	}
	k = annotate_kde_clusters(y, 600, &cl);
	assert_int_equal(k, 3);
	assert_true(fabs(cl[0].centroid - 300) < 10 && fabs(cl[2].centroid - 900) < 10);
	assert_true(labs((long)cl[1].count - 240) < 45);
	free(cl);
	/* one bell: one cluster */
	for (int i = 0; i < 600; i++)
		y[i] = 1000 +
		       30 * (rng_double(&r) + rng_double(&r) + rng_double(&r) + rng_double(&r) - 2);
	k = annotate_kde_clusters(y, 600, &cl);
	assert_int_equal(k, 1);
	assert_int_equal(cl[0].count, 600);
	free(cl);
	/* a tight mode and a sparse one, 49 and 16 calls (A.19's groups) */
	for (int i = 0; i < 49; i++)
		y[i] = 20 + (double)(i % 16) * 5;
	for (int i = 0; i < 16; i++)
		y[49 + i] = 10000 + i * 90;
	k = annotate_kde_clusters(y, 65, &cl);
	assert_int_equal(k, 2);
	assert_int_equal(cl[0].count, 49);
	free(cl);
}

/* ------------------------------------------------------------ check and predict */

/* A record of f(int n) with time = 10 + 3 n (+ slow * n) + noise. */
static void linear_record(struct annotate_record *rec, double slow, uint64_t seed)
{
	FILE *tmp = tmpfile();
	struct annotate_writer w;
	struct rng r;
	double m[ANNOTATE_N_METRICS], v[1];
	char *buf, err[256];
	long n;

	rng_seed(&r, seed);
	assert_int_equal(annotate_writer_fdopen(&w, fileno(tmp), NULL), 0);
	annotate_writer_symbol(&w, "f(int n)");
	annotate_writer_feature(&w, 0, ANNOTATE_INTEGER, "n");
	for (int i = 0; i < ANNOTATE_N_METRICS; i++)
		m[i] = NAN;
	for (int i = 0; i < 300; i++) {
		v[0] = (double)rng_below(&r, 1000);
		m[ANNOTATE_TIME] = 10 + (3 + slow) * v[0] +
				   20 * (rng_double(&r) + rng_double(&r) + rng_double(&r) - 1.5);
		annotate_writer_call(&w, 0, (uint64_t)i + 1, 0, m, v, NULL);
	}
	annotate_writer_close(&w);
	fflush(tmp);
	n = ftell(tmp);
	buf = malloc((size_t)n);
	rewind(tmp);
	assert_int_equal(fread(buf, 1, (size_t)n, tmp), (size_t)n);
	fclose(tmp);
	assert_int_equal(
	    annotate_record_read_buffer("l.rec", buf, (size_t)n, rec, err, sizeof(err)), 0);
	free(buf);
}

static bool lookup_n(void *ctx, const char *name, double *v)
{
	if (strcmp(name, "n") != 0)
		return false;
	*v = *(const double *)ctx;
	return true;
}

static void test_check_and_predict(void **state)
{
	struct annotate_record base, same, slower;
	struct annotate_params par;
	struct annotate_derivation d;
	struct annotate_annotation a;
	struct annotate_check_params cp = {.alpha = 0.01, .min_points = 3};
	struct annotate_check_result r;
	struct annotate_prediction p;
	double n = 100;

	(void)state;
	linear_record(&base, 0, 1);
	linear_record(&same, 0, 2);
	linear_record(&slower, 0.05, 3); /* 1.7% slower per n */
	annotate_params_default(&par);
	assert_int_equal(annotate_derive(&base.symbols[0], ANNOTATE_TIME, &par, &d), 0);
	assert_int_equal(d.n_leaves, 1);
	assert_int_equal(d.leaves[0].model.cls, ANNOTATE_LINEAR);
	assert_int_equal(annotate_derivation_annotation(&d, &a), 0);

	assert_int_equal(annotate_check(&a, &same.symbols[0], &cp, &r), 0);
	assert_true(r.pass);
	assert_int_equal(r.n, 300);
	assert_int_equal(r.unroutable, 0);
	annotate_check_result_free(&r);
	assert_int_equal(annotate_check(&a, &slower.symbols[0], &cp, &r), 0);
	assert_false(r.pass);
	annotate_check_result_free(&r);

	assert_int_equal(annotate_predict(&a, lookup_n, &n, &p), 0);
	assert_int_equal(p.n_components, 1);
	assert_true(fabs(p.mean_total - 310) < 5);
	/* the interval is mean +- 1.96 sd of the residual variance */
	assert_true(fabs((p.high - p.low) / 2 / sqrt(p.variance[0]) - 1.959964) < 1e-3);

	annotate_annotation_free(&a);
	annotate_derivation_free(&d);
	annotate_record_free(&base);
	annotate_record_free(&same);
	annotate_record_free(&slower);
}

/*
 * --tolerance T: an equivalence margin. A 1.7 % slowdown that the plain
 * test catches passes a 5 % margin; a 20 % slowdown fails it, and so does a
 * 20 % speedup (two-sided); the ratio of the means is reported.
 */
static void test_check_tolerance(void **state)
{
	struct annotate_record base, slightly, slower, faster;
	struct annotate_params par;
	struct annotate_derivation d;
	struct annotate_annotation a;
	struct annotate_check_params cp = {.alpha = 0.01, .min_points = 3, .tolerance = 0.05};
	struct annotate_check_result r;

	(void)state;
	linear_record(&base, 0, 1);
	linear_record(&slightly, 0.05, 3);
	linear_record(&slower, 0.6, 5);
	linear_record(&faster, -0.6, 6);
	annotate_params_default(&par);
	assert_int_equal(annotate_derive(&base.symbols[0], ANNOTATE_TIME, &par, &d), 0);
	assert_int_equal(annotate_derivation_annotation(&d, &a), 0);

	assert_int_equal(annotate_check(&a, &slightly.symbols[0], &cp, &r), 0);
	assert_true(r.pass);
	assert_true(r.scopes[0].tested);
	assert_true(fabs(r.scopes[0].ratio - 1.017) < 0.01);
	annotate_check_result_free(&r);
	assert_int_equal(annotate_check(&a, &slower.symbols[0], &cp, &r), 0);
	assert_false(r.pass);
	assert_true(r.scopes[0].ratio > 1.15);
	annotate_check_result_free(&r);
	assert_int_equal(annotate_check(&a, &faster.symbols[0], &cp, &r), 0);
	assert_false(r.pass);
	annotate_check_result_free(&r);
	/* a lower bound (R) fails only below the margin */
	a.items[0].heuristic = 'R';
	assert_int_equal(annotate_check(&a, &slower.symbols[0], &cp, &r), 0);
	assert_true(r.pass);
	annotate_check_result_free(&r);
	assert_int_equal(annotate_check(&a, &faster.symbols[0], &cp, &r), 0);
	assert_false(r.pass);
	annotate_check_result_free(&r);

	annotate_annotation_free(&a);
	annotate_derivation_free(&d);
	annotate_record_free(&base);
	annotate_record_free(&slightly);
	annotate_record_free(&slower);
	annotate_record_free(&faster);
}

/* Calls outside every scope are counted, not tested (spec §7.2 item 5). */
static void test_check_unroutable(void **state)
{
	static const char text[] = "f(int n).time {\nfeatures:\nint n = n;\nannotations:\n"
				   "[n < 500] Norm(10 + 3*n, 100);\n}\n";
	struct annotate_record rec;
	struct annotate_file f;
	struct annotate_check_params cp = {.alpha = 0.01, .min_points = 3};
	struct annotate_check_result r;

	(void)state;
	linear_record(&rec, 0, 4);
	parse_ok("u", text, &f);
	assert_int_equal(annotate_check(&f.annotations[0], &rec.symbols[0], &cp, &r), 0);
	assert_true(r.unroutable > 100 && r.unroutable < 200);
	assert_int_equal(r.n_scopes, 1);
	assert_int_equal(r.scopes[0].n + r.unroutable, 300);
	assert_true(r.pass);
	annotate_check_result_free(&r);
	annotate_file_free(&f);
	annotate_record_free(&rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_examples_round_trip),
	    cmocka_unit_test(test_examples_meaning),
	    cmocka_unit_test(test_eval),
	    cmocka_unit_test(test_parse_errors),
	    cmocka_unit_test(test_parse_fuzz),
	    cmocka_unit_test(test_record_round_trip),
	    cmocka_unit_test(test_record_branch_strings),
	    cmocka_unit_test(test_record_errors),
	    cmocka_unit_test(test_record_subnormal_feature),
	    cmocka_unit_test(test_record_fuzz),
	    cmocka_unit_test(test_kde_clusters),
	    cmocka_unit_test(test_check_and_predict),
	    cmocka_unit_test(test_check_unroutable),
	    cmocka_unit_test(test_check_tolerance),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
