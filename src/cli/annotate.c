/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever annotate derive / check / predict / synth: Freud's analysis half
 * (spec/freud.md §3, §4.3; doc/annotate.md). Parses options, calls
 * src/annotate, prints. The recording half (`record`) is annotate_record.c.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "annotate/annotate.h"
#include "base/base.h"
#include "cli/commands.h"
#include "cli/options.h"

/* CLI_UINT writes uint64_t; the analysis's counts are size_t, the same type here. */
_Static_assert(_Generic((size_t)0, uint64_t : 1, default : 0), "size_t is not uint64_t");

/* annotate_record.c */
int cmd_annotate_record(int argc, char **argv);

#define RECORD_USAGE "lever annotate record -f SYMBOL... [OPTIONS] -- PROGRAM [ARGS...]"
#define DERIVE_USAGE                                                                               \
	"lever annotate derive RECORD [-f SYMBOL]... [--metric M] [--json]\n"                      \
	"                             [--html FILE] [OPTIONS]"
#define CHECK_USAGE                                                                                \
	"lever annotate check ANNOTATIONS RECORD [--alpha A] [--min-points N] [--tolerance T]"
#define PREDICT_USAGE "lever annotate predict ANNOTATIONS SYMBOL [--metric M] FEATURE=VALUE..."
#define SYNTH_USAGE                                                                                \
	"lever annotate synth --shape appendix-a|wide [--calls N] [--features K]\n"                \
	"                            [--seed S] -o RECORD"
#define DUMP_USAGE "lever annotate dump RECORD [--format=csv|json] [-f SYMBOL]... [-o FILE]"

#define METRIC_NAMES "time, cpu, mem, wait, hold, pfaults, Pfaults, cs"

static const char annotate_description[] =
    "Probabilistic performance annotations (Freud): how a function's cost depends on\n"
    "its inputs. RECORD is an annotate record (doc/formats/annotate-record.md).\n";

static const char annotate_overview[] = "usage: " RECORD_USAGE "\n"
					"       " DERIVE_USAGE "\n"
					"       " CHECK_USAGE "\n"
					"       " PREDICT_USAGE "\n"
					"       " SYNTH_USAGE "\n"
					"       " DUMP_USAGE "\n";

static const char annotate_subcommands[] =
    "record:  run a program, recording calls of chosen functions (metrics, features)\n"
    "derive:  one annotation per symbol, in the annotation language (doc/annotate.md)\n"
    "check:   the record's calls against the annotations, a test per scope\n"
    "predict: the distribution of the metric for the given feature values\n"
    "synth:   a synthetic record with a known answer\n"
    "dump:    a record as CSV or JSON, one row per call (for R, pandas)\n"
    "\n"
    "Run 'lever annotate SUBCOMMAND --help' for its options.\n";

static bool parse_double(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return *s && !*end && isfinite(*v);
}

/* --metric: a metric keyword (annotate_metric_parse also knows wait_time). */
static int metric_option(const struct cli_option *opt, const char *arg, void *ctx)
{
	int metric = annotate_metric_parse(arg);

	(void)ctx;
	if (metric < 0)
		return -1;
	*(int *)opt->value = metric;
	return 0;
}

/*
 * A double that may be written with an exponent (p-values such as 2e-11),
 * within the option's fmin..fmax (and its open bounds). No sign, hex, inf
 * or nan.
 */
static int scientific_option(const struct cli_option *opt, const char *arg, void *ctx)
{
	char *end;
	double v;

	(void)ctx;
	if ((!isdigit((unsigned char)arg[0]) && arg[0] != '.') || strpbrk(arg, "xXpP"))
		return -1;
	errno = 0;
	v = strtod(arg, &end);
	if (*end || errno || !(opt->fmin_open ? v > opt->fmin : v >= opt->fmin) ||
	    !(opt->fmax_open ? v < opt->fmax : v <= opt->fmax))
		return -1;
	*(double *)opt->value = v;
	return 0;
}

static int read_record(const char *path, struct annotate_record *rec)
{
	char err[512];

	if (annotate_record_read_file(path, rec, err, sizeof(err))) {
		fprintf(stderr, "lever annotate: %s\n", err);
		return 2;
	}
	if (rec->truncated)
		fprintf(stderr,
			"lever annotate: %s: the last line was cut short (the program "
			"was killed?); it is ignored\n",
			path);
	return 0;
}

/* ------------------------------------------------------------ derive */

struct derive_opts {
	struct annotate_params par;
	int metric;
	uint64_t digits;
	size_t cv;
	bool json, verbose, no_heuristics, no_clustering, heuristics_any_metric;
	const char *html;
	FILE *html_file;
	const char **functions;
	size_t n_functions;
};

/*
 * One comment line per regression that fell back to the constant (derive
 * step 6 of doc/annotate.md): the reader must not take the constant for a
 * metric that does not depend on the inputs, nor miss that a fit was found.
 */
static void print_rejected(const struct annotate_derivation *d)
{
	for (size_t i = 0; i < d->n_leaves; i++) {
		const struct annotate_leaf *l = &d->leaves[i];

		if (!l->rejected)
			continue;
		printf("// %zu calls: the %s regression found was no better than their mean in "
		       "10-fold cross-validation (R2 ",
		       l->n_rows, annotate_class_name(l->rejected_cls));
		if (isnan(l->rejected_cv_r_squared))
			printf("n/a: not refittable without the held-out calls");
		else
			printf("%.4g", l->rejected_cv_r_squared);
		printf("): the constant instead\n");
	}
}

static int derive_one(const struct annotate_symbol *s, const struct derive_opts *o, bool *first)
{
	struct annotate_derivation d;
	struct annotate_annotation a;
	int rc = annotate_derive(s, (enum annotate_metric)o->metric, &o->par, &d);

	if (rc == -ENODATA) {
		fprintf(stderr, "lever annotate: %s: no call has the metric %s\n", s->name,
			annotate_metric_name((enum annotate_metric)o->metric));
		annotate_derivation_free(&d);
		return 0;
	}
	if (rc) {
		fprintf(stderr, "lever annotate: %s: analysis failed: %s\n", s->name,
			strerror(-rc));
		annotate_derivation_free(&d);
		return 2;
	}
	if (o->html_file)
		annotate_derivation_html(o->html_file, &d);
	if (o->verbose && d.log)
		fprintf(stderr, "== %s.%s\n%s", s->name, annotate_metric_name(d.metric), d.log);
	if (o->json) {
		fputs(*first ? "" : ",\n", stdout);
		if (o->cv) {
			d.cv_folds = o->cv;
			d.cv_r_squared = annotate_cross_validate(&d, o->cv);
		}
		annotate_derivation_json(stdout, &d);
	} else if (annotate_derivation_annotation(&d, &a) == 0) {
		double cv = o->cv ? annotate_cross_validate(&d, o->cv) : NAN;

		if (*first)
			printf("// lever annotate derive: Norm(mean, variance); log is log2 "
			       "(doc/annotate.md)\n");
		printf("%s// %zu calls, %zu candidate features, %zu regressors, %zu partition "
		       "candidates; %.2f s",
		       *first ? "" : "\n", d.n_observations, d.n_candidates, d.n_regressors,
		       d.n_partitions, d.seconds);
		if (!isnan(cv))
			printf("; %zu-fold cross-validated R2 %.4f", o->cv, cv);
		printf("\n");
		print_rejected(&d);
		if (d.n_leaves == 0)
			printf("// no model found\n");
		annotate_print(stdout, &a, (int)o->digits);
		annotate_annotation_free(&a);
	}
	*first = false;
	annotate_derivation_free(&d);
	return 0;
}

/* -f SYMBOL, repeatable. */
static int function_option(const struct cli_option *opt, const char *arg, void *ctx)
{
	struct derive_opts *o = ctx;

	(void)opt;
	return cli_append_string(&o->functions, &o->n_functions, arg, "lever annotate derive");
}

/* --cv K: 0 (off) or a number of folds, at least 2. */
static int folds_option(const struct cli_option *opt, const char *arg, void *ctx)
{
	uint64_t k;

	(void)ctx;
	if (!parse_u64_range(arg, 0, UINT64_MAX, &k) || k == 1)
		return -1;
	*(size_t *)opt->value = k;
	return 0;
}

/* 0 with *first the RECORD, CLI_HELP after --help, or an exit status. */
static int parse_derive_options(struct derive_opts *o, int argc, char **argv, int *first)
{
	struct annotate_params *p = &o->par;
	const struct cli_option table[] = {
	    CLI_CALLBACK('f', "function", "SYMBOL", function_option,
			 "only this symbol (repeatable; default: all)"),
	    CLI_CALLBACK('m', "metric", "M", metric_option,
			 "the metric (default time):\n" METRIC_NAMES, .value = &o->metric,
			 .what = "a metric: " METRIC_NAMES),
	    CLI_FLAG(0, "json", &o->json,
		     "JSON with full-precision coefficients\n(doc/annotate.md)"),
	    CLI_STRING(0, "html", &o->html, "FILE",
		       "also a self-contained HTML page: per scope and\n"
		       "feature, the calls against the feature and the\n"
		       "fitted cost"),
	    CLI_UINT(0, "digits", &o->digits, "N", 1, 17,
		     "significant digits in the text (default 6)"),
	    CLI_CALLBACK(0, "cv", "K", folds_option,
			 "print the K-fold cross-validated R^2\n(default 10; 0: off)",
			 .value = &o->cv, .what = "0 (off) or a number of folds, 2 or more"),
	    CLI_FLAG('v', "verbose", &o->verbose, "what the analysis tried, on stderr"),
	    CLI_GROUP("Parameters (the seed's Table 5.3 and internal constants)"),
	    CLI_DOUBLE(0, "correlation-threshold", &p->correlation_threshold, "R", 0, 1,
		       "(default 0.9)", .fmin_open = true),
	    CLI_DOUBLE(0, "min-det", &p->min_det, "R2", 0, 1, "(default 0.75)"),
	    CLI_CALLBACK(0, "good-pvalue", "P", scientific_option,
			 "(default 2e-11; an exponent is allowed)", .value = &p->good_pvalue,
			 .fmin = 0, .fmax = 1, .fmin_open = true,
			 .what = "a probability above 0, up to 1 (such as 2e-11)"),
	    CLI_DOUBLE(0, "bic-diff", &p->bic_diff, "D", 0, INFINITY, "(default 10)"),
	    CLI_UINT(0, "drop-k", &p->drop_k, "K", 1, UINT64_MAX, "(default 5)"),
	    CLI_UINT(0, "min-part-points", &p->min_part_points, "N", 2, UINT64_MAX, "(default 5)"),
	    CLI_DOUBLE(0, "constant-tolerance", &p->constant_tolerance, "T", 0, INFINITY,
		       "(max - min) / mean below T is constant\n(default 0.01)"),
	    CLI_DOUBLE(0, "cluster-overlap", &p->cluster_overlap, "F", 0, INFINITY,
		       "tolerated overlap of cluster ranges (default 0.25)"),
	    CLI_UINT(0, "screen-terms", &p->screen_terms, "N", 1, UINT64_MAX,
		     "main terms kept by marginal screening (default 64)"),
	    CLI_UINT(0, "max-interaction-features", &p->max_interaction_features, "N", 1, 32,
		     "features whose pairwise interactions are tried\n(default 8)"),
	    CLI_UINT(0, "max-depth", &p->max_depth, "N", 0, 60, "depth of the tree (default 8)"),
	    CLI_FLAG(0, "no-heuristics", &o->no_heuristics,
		     "no R and M heuristics for time-like metrics"),
	    CLI_FLAG(0, "heuristics-any-metric", &o->heuristics_any_metric,
		     "try R and M on every metric, not only time-like\nones (bytes or faults with "
		     "outlying calls)"),
	    CLI_FLAG(0, "no-clustering", &o->no_clustering,
		     "no clustering into mixtures (Algorithm 3)"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever annotate derive",
	    .usage = "usage: " DERIVE_USAGE,
	    .description = "One annotation per symbol of RECORD, in the annotation language\n"
			   "(doc/annotate.md). RECORD is an annotate record\n"
			   "(doc/formats/annotate-record.md).\n",
	    .options = table,
	};
	int ret = cli_parse_operands(&cmd, argc, argv, o, first, 1, 1, "expected one RECORD",
				     "expected one RECORD");

	if (ret)
		return ret;
	if (o->no_heuristics)
		p->heuristics = false;
	p->heuristics_any_metric = o->heuristics_any_metric;
	if (o->no_clustering)
		p->clustering = false;
	return 0;
}

static int cmd_derive(int argc, char **argv)
{
	struct derive_opts o = {.metric = ANNOTATE_TIME, .digits = 6, .cv = 10};
	struct annotate_record rec;
	bool first = true;
	int operand = 0, rc;

	annotate_params_default(&o.par);
	rc = parse_derive_options(&o, argc, argv, &operand);
	if (rc) {
		free(o.functions);
		return rc == CLI_HELP ? 0 : rc;
	}
	if ((rc = read_record(argv[operand], &rec))) {
		free(o.functions);
		return rc;
	}
	if (o.html && !(o.html_file = fopen(o.html, "w"))) {
		fprintf(stderr, "lever annotate: %s: %s\n", o.html, strerror(errno));
		annotate_record_free(&rec);
		free(o.functions);
		return 2;
	}
	if (o.html_file)
		annotate_html_begin(o.html_file, argv[operand]);
	if (o.json)
		fputs("[\n", stdout);
	for (size_t i = 0; i < o.n_functions && !rc; i++) {
		const struct annotate_symbol *s = annotate_record_find(&rec, o.functions[i]);

		if (!s) {
			fprintf(stderr, "lever annotate: %s: no symbol '%s' in the record\n",
				argv[operand], o.functions[i]);
			rc = 2;
		} else {
			rc = derive_one(s, &o, &first);
		}
	}
	for (size_t i = 0; !o.n_functions && i < rec.n_symbols && !rc; i++)
		rc = derive_one(&rec.symbols[i], &o, &first);
	if (o.json)
		fputs("]\n", stdout);
	if (o.html_file) {
		annotate_html_end(o.html_file);
		if (fclose(o.html_file) && !rc) {
			fprintf(stderr, "lever annotate: %s: write error\n", o.html);
			rc = 2;
		}
	}
	annotate_record_free(&rec);
	free(o.functions);
	return rc;
}

/* ------------------------------------------------------------ check */

static void print_check(const struct annotate_check_result *r)
{
	printf("%s %s.%s: %zu calls, %zu in no scope\n", r->pass ? "PASS" : "FAIL", r->signature,
	       annotate_metric_name((enum annotate_metric)r->metric), r->n, r->unroutable);
	if (!r->found)
		printf("  not in the record\n");
	for (size_t i = 0; i < r->n_scopes; i++) {
		const struct annotate_check_scope *s = &r->scopes[i];

		if (s->tested && !isnan(s->ratio))
			printf("  %-4s %-28s n=%-6zu stat=%-10.4g p=%-10.4g mean/model=%-7.4g %s\n",
			       s->pass ? "ok" : "FAIL", s->test, s->n, s->statistic, s->p, s->ratio,
			       s->text);
		else if (s->tested)
			printf("  %-4s %-28s n=%-6zu stat=%-10.4g p=%-10.4g %s\n",
			       s->pass ? "ok" : "FAIL", s->test, s->n, s->statistic, s->p, s->text);
		else
			printf("  %-4s %-28s n=%-6zu %-26s %s\n", "-", "not tested", s->n,
			       "(too few calls)", s->text);
	}
}

/* 0 with *first ANNOTATIONS, CLI_HELP after --help, or an exit status. */
static int parse_check_options(struct annotate_check_params *p, int argc, char **argv, int *first)
{
	const struct cli_option table[] = {
	    CLI_CALLBACK(0, "alpha", "A", scientific_option,
			 "the chance that any test of the file fails by accident\n"
			 "(Bonferroni over every scope; default 0.01)",
			 .value = &p->alpha, .fmin = 0, .fmax = 1, .fmin_open = true,
			 .fmax_open = true, .what = "a probability above 0, below 1"),
	    CLI_UINT(0, "min-points", &p->min_points, "N", 2, UINT64_MAX,
		     "scopes with fewer calls are not tested (default 3)"),
	    CLI_DOUBLE(0, "tolerance", &p->tolerance, "T", 0, INFINITY,
		       "an equivalence margin: a scope fails only when its\n"
		       "calls' mean relative deviation from the annotation\n"
		       "is significantly beyond +-T (0.1: 10 %; default 0:\n"
		       "any significant shift fails; mixtures: not used)"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever annotate check",
	    .usage = "usage: " CHECK_USAGE,
	    .description =
		"The record's calls against the annotations, a test per scope (t-test of\n"
		"standardised residuals; chi^2 for mixtures), Bonferroni at --alpha (0.01).\n",
	    .options = table,
	    .epilogue =
		"Exit status 0: every function conforms; 1: some does not (or is missing);\n"
		"2: an error.\n",
	};
	return cli_parse_operands(&cmd, argc, argv, p, first, 2, 2, "expected ANNOTATIONS RECORD",
				  "expected ANNOTATIONS RECORD");
}

static int cmd_check(int argc, char **argv)
{
	struct annotate_check_params p = {.alpha = 0.01, .min_points = 3};
	struct annotate_file file;
	struct annotate_record rec;
	char err[512];
	bool all = true;
	int operand = 0, rc;

	rc = parse_check_options(&p, argc, argv, &operand);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	if (annotate_parse_file(argv[operand], &file, err, sizeof(err))) {
		fprintf(stderr, "lever annotate: %s\n", err);
		return 2;
	}
	if ((rc = read_record(argv[operand + 1], &rec))) {
		annotate_file_free(&file);
		return rc;
	}
	/* one family for the whole file: alpha is the chance that any test fails */
	for (size_t i = 0; i < file.n; i++)
		p.family += annotate_check_units(&file.annotations[i]);
	for (size_t i = 0; i < file.n && !rc; i++) {
		const struct annotate_annotation *a = &file.annotations[i];
		struct annotate_check_result r;

		if (annotate_check(a, annotate_record_find(&rec, a->signature), &p, &r)) {
			fprintf(stderr, "lever annotate: out of memory\n");
			rc = 2;
		} else {
			print_check(&r);
			all &= r.pass && r.found;
		}
		annotate_check_result_free(&r);
	}
	annotate_record_free(&rec);
	annotate_file_free(&file);
	return rc ? rc : all ? 0 : 1;
}

/* ------------------------------------------------------------ predict */

struct bindings {
	char **argv;
	int argc;
	const struct annotate_annotation *a;
};

static bool lookup_binding(void *ctx, const char *name, double *v)
{
	struct bindings *b = ctx;
	const char *definition = NULL;

	for (size_t i = 0; i < b->a->n_decls; i++)
		if (strcmp(b->a->decls[i].name, name) == 0)
			definition = b->a->decls[i].definition;
	for (int i = 0; i < b->argc; i++) {
		const char *eq = strrchr(b->argv[i], '=');
		size_t len = eq ? (size_t)(eq - b->argv[i]) : 0;

		if (!eq)
			continue;
		if ((strlen(name) == len && strncmp(b->argv[i], name, len) == 0) ||
		    (definition && strlen(definition) == len &&
		     strncmp(b->argv[i], definition, len) == 0))
			return parse_double(eq + 1, v);
	}
	return false;
}

/* 0 with *first ANNOTATIONS, CLI_HELP after --help, or an exit status. */
static int parse_predict_options(int *metric, int argc, char **argv, int *first)
{
	const struct cli_option table[] = {
	    CLI_CALLBACK('m', "metric", "M", metric_option,
			 "the metric (default time):\n" METRIC_NAMES, .value = metric,
			 .what = "a metric: " METRIC_NAMES),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever annotate predict",
	    .usage = "usage: " PREDICT_USAGE,
	    .description = "The distribution of the metric for the given feature values (names as\n"
			   "in the annotation): mean, variance, and the 95% interval.\n",
	    .options = table,
	};
	return cli_parse_operands(&cmd, argc, argv, metric, first, 2, -1,
				  "expected ANNOTATIONS SYMBOL FEATURE=VALUE...", NULL);
}

static int cmd_predict(int argc, char **argv)
{
	struct annotate_file file;
	struct annotate_prediction p;
	const struct annotate_annotation *a;
	struct bindings b;
	int metric = ANNOTATE_TIME, operand = 0, rc;
	char err[512];

	rc = parse_predict_options(&metric, argc, argv, &operand);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	if (annotate_parse_file(argv[operand], &file, err, sizeof(err))) {
		fprintf(stderr, "lever annotate: %s\n", err);
		return 2;
	}
	a = annotate_file_find(&file, argv[operand + 1], metric);
	if (!a) {
		fprintf(stderr, "lever annotate: %s: no annotation for %s.%s\n", argv[operand],
			argv[operand + 1], annotate_metric_name((enum annotate_metric)metric));
		annotate_file_free(&file);
		return 2;
	}
	b = (struct bindings){.argv = argv + operand + 2, .argc = argc - operand - 2, .a = a};
	rc = annotate_predict(a, lookup_binding, &b, &p);
	if (rc) {
		fprintf(stderr, "lever annotate: %s: %s\n", a->signature,
			rc == -ENOENT ? "no scope holds, or a feature it needs has no value"
				      : "cannot evaluate the annotation");
		annotate_file_free(&file);
		return 1;
	}
	printf("%s.%s%s\n", a->signature, annotate_metric_name((enum annotate_metric)metric),
	       p.heuristic == 'R'   ? " (R: a lower bound, additive noise removed)"
	       : p.heuristic == 'M' ? " (M: the main trend only)"
				    : "");
	for (size_t k = 0; k < p.n_components; k++)
		printf("  %s mean %.6g  variance %.6g  sd %.6g\n",
		       p.n_components > 1 ? "component" : "", p.mean[k], p.variance[k],
		       sqrt(fmax(p.variance[k], 0)));
	if (p.n_components > 1)
		for (size_t k = 0; k < p.n_components; k++)
			printf("  p[%zu] = %.4g\n", k, p.prob[k]);
	printf("  mean %.6g, 95%% interval [%.6g, %.6g]\n", p.mean_total, p.low, p.high);
	annotate_file_free(&file);
	return 0;
}

/* ------------------------------------------------------------ synth */

static const char *const synth_shapes[] = {"appendix-a", "wide", NULL};

struct synth_opts {
	int shape; /* index in synth_shapes */
	uint64_t calls, features, seed;
	const char *out;
};

/* 0, CLI_HELP after --help, or an exit status. */
static int parse_synth_options(struct synth_opts *o, int argc, char **argv)
{
	const struct cli_option table[] = {
	    CLI_ENUM(0, "shape", &o->shape, "appendix-a|wide", synth_shapes,
		     "the seed's Appendix A functions (default), or a wide\n"
		     "function for timing"),
	    CLI_UINT(0, "calls", &o->calls, "N", 1, UINT64_MAX, "calls per function (default 151)"),
	    CLI_UINT(0, "features", &o->features, "K", 3, UINT64_MAX,
		     "features of the wide function (default 650)"),
	    CLI_UINT(0, "seed", &o->seed, "S", 0, UINT64_MAX, "random seed (default 1)"),
	    CLI_STRING('o', "output", &o->out, "RECORD", "the record to write (required)"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever annotate synth",
	    .usage = "usage: " SYNTH_USAGE,
	    .description = "A synthetic record with a known answer (the seed's Appendix A "
			   "functions,\nor a wide function for timing).\n",
	    .options = table,
	};
	int first = 0, ret = cli_parse(&cmd, argc, argv, o, &first);

	if (!ret && (!o->out || first != argc))
		ret = cli_usage_error(&cmd, "expected -o RECORD and no other argument");
	return ret;
}

static int cmd_synth(int argc, char **argv)
{
	struct synth_opts o = {.calls = 151, .features = 650, .seed = 1};
	struct annotate_writer w;
	const char *out;
	int rc;

	rc = parse_synth_options(&o, argc, argv);
	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	out = o.out;
	if ((rc = annotate_writer_open(&w, out, "synthetic")) == 0)
		rc = annotate_synth(&w, synth_shapes[o.shape], o.calls, o.features, o.seed);
	if (annotate_writer_close(&w) && !rc)
		rc = -EIO;
	if (rc) {
		fprintf(stderr, "lever annotate synth: %s: %s\n", out, strerror(-rc));
		return 2;
	}
	return 0;
}

/* ------------------------------------------------------------ dump */

static const char *const dump_formats[] = {"csv", "json", NULL};

struct dump_opts {
	int format; /* index in dump_formats = enum annotate_dump_format */
	const char *out;
	const char **functions;
	size_t n_functions;
};

/* -f SYMBOL, repeatable. */
static int dump_function_option(const struct cli_option *opt, const char *arg, void *ctx)
{
	struct dump_opts *o = ctx;

	(void)opt;
	return cli_append_string(&o->functions, &o->n_functions, arg, "lever annotate dump");
}

/* 0 with *first the RECORD, CLI_HELP after --help, or an exit status. */
static int parse_dump_options(struct dump_opts *o, int argc, char **argv, int *first)
{
	const struct cli_option table[] = {
	    CLI_ENUM(0, "format", &o->format, "csv|json", dump_formats,
		     "CSV (default, RFC 4180) or JSON: an array of one\n"
		     "object per call"),
	    CLI_CALLBACK('f', "function", "SYMBOL", dump_function_option,
			 "only this symbol (repeatable; default: all)"),
	    CLI_STRING('o', "output", &o->out, "FILE", "write to FILE instead of stdout"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever annotate dump",
	    .usage = "usage: " DUMP_USAGE,
	    .description =
		"RECORD as one table for other tools (R, pandas): a row per call with\n"
		"symbol, id, parent, the metrics the record has (time, cpu, wait and hold\n"
		"in microseconds) and the features by name; a missing value is empty in\n"
		"CSV and null in JSON.\n",
	    .options = table,
	    .epilogue = "pandas: pd.read_csv(FILE) or pd.read_json(FILE); R: read.csv(FILE) or\n"
			"jsonlite::fromJSON(FILE). Ids may exceed 2^53.\n",
	};
	return cli_parse_operands(&cmd, argc, argv, o, first, 1, 1, "expected one RECORD",
				  "expected one RECORD");
}

static int cmd_dump(int argc, char **argv)
{
	struct dump_opts o = {.format = ANNOTATE_DUMP_CSV};
	struct annotate_record rec;
	const char *missing = NULL;
	int operand = 0, rc;
	bool regular = false;
	FILE *out = stdout;

	rc = parse_dump_options(&o, argc, argv, &operand);
	if (rc) {
		free(o.functions);
		return rc == CLI_HELP ? 0 : rc;
	}
	if ((rc = read_record(argv[operand], &rec))) {
		free(o.functions);
		return rc;
	}
	if (o.out && !(out = fopen(o.out, "w"))) {
		fprintf(stderr, "lever annotate dump: %s: %s\n", o.out, strerror(errno));
		rc = 2;
	} else if (o.out) {
		struct stat st;

		/* only a regular file is removed after a failure, never a device or a pipe */
		regular = fstat(fileno(out), &st) == 0 && S_ISREG(st.st_mode);
	}
	if (!rc) {
		rc = annotate_dump(out, &rec, o.functions, o.n_functions,
				   (enum annotate_dump_format)o.format, &missing);
		errno = 0;
		if ((out == stdout ? fflush(out) : fclose(out)) && !rc)
			rc = errno ? -errno : -EIO;
		if (rc == -ENOENT)
			fprintf(stderr, "lever annotate dump: %s: no symbol '%s' in the record\n",
				argv[operand], missing);
		else if (rc)
			fprintf(stderr, "lever annotate dump: %s: %s\n", o.out ? o.out : "stdout",
				strerror(-rc));
		if (rc && regular)
			unlink(o.out); /* no half table left behind */
		rc = rc ? 2 : 0;
	}
	annotate_record_free(&rec);
	free(o.functions);
	return rc;
}

int cmd_annotate(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		FILE *out = argc < 2 ? stderr : stdout;

		fprintf(out, "%s\n%s\n%s", annotate_overview, annotate_description,
			annotate_subcommands);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "derive") == 0)
		return cmd_derive(argc - 1, argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "predict") == 0)
		return cmd_predict(argc - 1, argv + 1);
	if (strcmp(argv[1], "synth") == 0)
		return cmd_synth(argc - 1, argv + 1);
	if (strcmp(argv[1], "dump") == 0)
		return cmd_dump(argc - 1, argv + 1);
	if (strcmp(argv[1], "record") == 0)
		return cmd_annotate_record(argc - 1, argv + 1);
	fprintf(stderr,
		"lever annotate: unknown subcommand '%s'\nRun 'lever annotate --help' for usage.\n",
		argv[1]);
	return EXIT_USAGE;
}
