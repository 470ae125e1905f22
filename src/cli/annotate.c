/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever annotate derive / check / predict / synth: Freud's analysis half
 * (spec/freud.md §3, §4.3; doc/annotate.md). Parses options, calls
 * src/annotate, prints. The recording half (`record`) is issue 15.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/annotate.h"
#include "cli/commands.h"

static const char annotate_usage[] =
    "usage: lever annotate derive RECORD [-f SYMBOL]... [--metric M] [--json]\n"
    "                             [--html FILE] [OPTIONS]\n"
    "       lever annotate check ANNOTATIONS RECORD [--alpha A] [--min-points N]\n"
    "       lever annotate predict ANNOTATIONS SYMBOL [--metric M] FEATURE=VALUE...\n"
    "       lever annotate synth --shape appendix-a|wide [--calls N] [--features K]\n"
    "                            [--seed S] -o RECORD\n"
    "\n"
    "Probabilistic performance annotations (Freud): how a function's cost depends on\n"
    "its inputs. RECORD is an annotate record (doc/formats/annotate-record.md).\n"
    "\n"
    "derive: one annotation per symbol, in the annotation language (doc/annotate.md).\n"
    "  -f, --function SYMBOL   only this symbol (repeatable; default: all)\n"
    "  -m, --metric M          time (default), cpu, mem, wait, hold, pfaults, Pfaults, cs\n"
    "      --json              JSON with full-precision coefficients (doc/annotate.md)\n"
    "      --html FILE         also a self-contained HTML page: per scope and feature,\n"
    "                          the calls against the feature and the fitted cost\n"
    "      --digits N          significant digits in the text (default 6)\n"
    "      --cv K              print the K-fold cross-validated R^2 (default 10; 0: off)\n"
    "  -v, --verbose           what the analysis tried, on stderr\n"
    "  Parameters (the seed's Table 5.3 and internal constants):\n"
    "      --correlation-threshold R  (0.9)   --min-det R2 (0.75)\n"
    "      --good-pvalue P (2e-11)            --bic-diff D (10)\n"
    "      --drop-k K (5)                     --min-part-points N (5)\n"
    "      --constant-tolerance T (0.01)      --cluster-overlap F (0.25)\n"
    "      --screen-terms N (64)              --max-interaction-features N (8)\n"
    "      --max-depth N (8)                  --no-heuristics  --no-clustering\n"
    "\n"
    "check: the record's calls against the annotations, a test per scope (t-test of\n"
    "standardised residuals; chi^2 for mixtures), Bonferroni at --alpha (0.01).\n"
    "Exit status 0: every function conforms; 1: some does not (or is missing);\n"
    "2: an error.\n"
    "\n"
    "predict: the distribution of the metric for the given feature values (names as\n"
    "in the annotation): mean, variance, and the 95% interval.\n"
    "\n"
    "synth: a synthetic record with a known answer (the seed's Appendix A functions,\n"
    "or a wide function for timing).\n";

enum {
	OPT_JSON = 256,
	OPT_HTML,
	OPT_DIGITS,
	OPT_CV,
	OPT_CORR,
	OPT_MIN_DET,
	OPT_PVALUE,
	OPT_BIC,
	OPT_DROP_K,
	OPT_PART,
	OPT_CONST,
	OPT_OVERLAP,
	OPT_SCREEN,
	OPT_INTER,
	OPT_DEPTH,
	OPT_NO_HEUR,
	OPT_NO_CLUST,
	OPT_ALPHA,
	OPT_MIN_POINTS,
	OPT_SHAPE,
	OPT_CALLS,
	OPT_FEATURES,
	OPT_SEED,
};

static bool parse_double(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return *s && !*end && isfinite(*v);
}

static bool parse_size(const char *s, size_t *v)
{
	char *end;
	unsigned long long x;

	if (!*s || *s == '-')
		return false;
	x = strtoull(s, &end, 10);
	*v = (size_t)x;
	return !*end;
}

static int bad_value(const char *opt, const char *value)
{
	fprintf(stderr, "lever annotate: bad value '%s' for %s\n", value, opt);
	return 2;
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

static int metric_option(const char *s, int *metric)
{
	*metric = annotate_metric_parse(s);
	return *metric < 0 ? bad_value("--metric", s) : 0;
}

/* ------------------------------------------------------------ derive */

struct derive_opts {
	struct annotate_params par;
	int metric, digits;
	size_t cv;
	bool json, verbose;
	const char *html;
	FILE *html_file;
	const char **functions;
	size_t n_functions;
};

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
		if (d.n_leaves == 0)
			printf("// no model found\n");
		annotate_print(stdout, &a, o->digits);
		annotate_annotation_free(&a);
	}
	*first = false;
	annotate_derivation_free(&d);
	return 0;
}

static int derive_option(int c, const char *arg, struct derive_opts *o)
{
	struct annotate_params *p = &o->par;
	size_t z;

	switch (c) {
	case 'f': {
		const char **fs = realloc(o->functions, (o->n_functions + 1) * sizeof(*fs));

		if (!fs)
			return 2;
		o->functions = fs;
		fs[o->n_functions++] = arg;
		return 0;
	}
	case 'm':
		return metric_option(arg, &o->metric);
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_HTML:
		o->html = arg;
		return 0;
	case 'v':
		o->verbose = true;
		return 0;
	case OPT_DIGITS:
		if (!parse_size(arg, &z) || z < 1 || z > 17)
			return bad_value("--digits", arg);
		o->digits = (int)z;
		return 0;
	case OPT_CV:
		return parse_size(arg, &o->cv) && o->cv != 1 ? 0 : bad_value("--cv", arg);
	case OPT_CORR:
		return parse_double(arg, &p->correlation_threshold) &&
			       p->correlation_threshold > 0 && p->correlation_threshold <= 1
			   ? 0
			   : bad_value("--correlation-threshold", arg);
	case OPT_MIN_DET:
		return parse_double(arg, &p->min_det) && p->min_det >= 0 && p->min_det <= 1
			   ? 0
			   : bad_value("--min-det", arg);
	case OPT_PVALUE:
		return parse_double(arg, &p->good_pvalue) && p->good_pvalue > 0 &&
			       p->good_pvalue <= 1
			   ? 0
			   : bad_value("--good-pvalue", arg);
	case OPT_BIC:
		return parse_double(arg, &p->bic_diff) && p->bic_diff >= 0
			   ? 0
			   : bad_value("--bic-diff", arg);
	case OPT_DROP_K:
		return parse_size(arg, &p->drop_k) && p->drop_k > 0 ? 0
								    : bad_value("--drop-k", arg);
	case OPT_PART:
		return parse_size(arg, &p->min_part_points) && p->min_part_points >= 2
			   ? 0
			   : bad_value("--min-part-points", arg);
	case OPT_CONST:
		return parse_double(arg, &p->constant_tolerance) && p->constant_tolerance >= 0
			   ? 0
			   : bad_value("--constant-tolerance", arg);
	case OPT_OVERLAP:
		return parse_double(arg, &p->cluster_overlap) && p->cluster_overlap >= 0
			   ? 0
			   : bad_value("--cluster-overlap", arg);
	case OPT_SCREEN:
		return parse_size(arg, &p->screen_terms) && p->screen_terms > 0
			   ? 0
			   : bad_value("--screen-terms", arg);
	case OPT_INTER:
		return parse_size(arg, &p->max_interaction_features) &&
			       p->max_interaction_features > 0 && p->max_interaction_features <= 32
			   ? 0
			   : bad_value("--max-interaction-features", arg);
	case OPT_DEPTH:
		return parse_size(arg, &p->max_depth) && p->max_depth <= 60
			   ? 0
			   : bad_value("--max-depth", arg);
	case OPT_NO_HEUR:
		p->heuristics = false;
		return 0;
	case OPT_NO_CLUST:
		p->clustering = false;
		return 0;
	}
	fprintf(stderr, "Run 'lever annotate --help' for the options.\n");
	return 2;
}

static int cmd_derive(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"function", required_argument, NULL, 'f'},
	    {"metric", required_argument, NULL, 'm'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"html", required_argument, NULL, OPT_HTML},
	    {"digits", required_argument, NULL, OPT_DIGITS},
	    {"cv", required_argument, NULL, OPT_CV},
	    {"verbose", no_argument, NULL, 'v'},
	    {"correlation-threshold", required_argument, NULL, OPT_CORR},
	    {"min-det", required_argument, NULL, OPT_MIN_DET},
	    {"good-pvalue", required_argument, NULL, OPT_PVALUE},
	    {"bic-diff", required_argument, NULL, OPT_BIC},
	    {"drop-k", required_argument, NULL, OPT_DROP_K},
	    {"min-part-points", required_argument, NULL, OPT_PART},
	    {"constant-tolerance", required_argument, NULL, OPT_CONST},
	    {"cluster-overlap", required_argument, NULL, OPT_OVERLAP},
	    {"screen-terms", required_argument, NULL, OPT_SCREEN},
	    {"max-interaction-features", required_argument, NULL, OPT_INTER},
	    {"max-depth", required_argument, NULL, OPT_DEPTH},
	    {"no-heuristics", no_argument, NULL, OPT_NO_HEUR},
	    {"no-clustering", no_argument, NULL, OPT_NO_CLUST},
	    {"help", no_argument, NULL, 'h'},
	    {0}};
	struct derive_opts o = {.metric = ANNOTATE_TIME, .digits = 6, .cv = 10};
	struct annotate_record rec;
	bool first = true;
	int c, rc = 0;

	annotate_params_default(&o.par);
	while ((c = getopt_long(argc, argv, "f:m:vh", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(annotate_usage, stdout);
			free(o.functions);
			return 0;
		}
		if ((rc = derive_option(c, optarg, &o))) {
			free(o.functions);
			return rc;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "lever annotate derive: expected one RECORD\n%s", annotate_usage);
		free(o.functions);
		return 2;
	}
	if ((rc = read_record(argv[optind], &rec))) {
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
		annotate_html_begin(o.html_file, argv[optind]);
	if (o.json)
		fputs("[\n", stdout);
	for (size_t i = 0; i < o.n_functions && !rc; i++) {
		const struct annotate_symbol *s = annotate_record_find(&rec, o.functions[i]);

		if (!s) {
			fprintf(stderr, "lever annotate: %s: no symbol '%s' in the record\n",
				argv[optind], o.functions[i]);
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

		if (s->tested)
			printf("  %-4s %-28s n=%-6zu stat=%-10.4g p=%-10.4g %s\n",
			       s->pass ? "ok" : "FAIL", s->test, s->n, s->statistic, s->p, s->text);
		else
			printf("  %-4s %-28s n=%-6zu %-26s %s\n", "-", "not tested", s->n,
			       "(too few calls)", s->text);
	}
}

static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"alpha", required_argument, NULL, OPT_ALPHA},
	    {"min-points", required_argument, NULL, OPT_MIN_POINTS},
	    {"help", no_argument, NULL, 'h'},
	    {0}};
	struct annotate_check_params p = {.alpha = 0.01, .min_points = 3};
	struct annotate_file file;
	struct annotate_record rec;
	char err[512];
	bool all = true;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(annotate_usage, stdout);
			return 0;
		case OPT_ALPHA:
			if (!parse_double(optarg, &p.alpha) || p.alpha <= 0 || p.alpha >= 1)
				return bad_value("--alpha", optarg);
			break;
		case OPT_MIN_POINTS:
			if (!parse_size(optarg, &p.min_points) || p.min_points < 2)
				return bad_value("--min-points", optarg);
			break;
		default:
			return 2;
		}
	}
	if (optind + 2 != argc) {
		fprintf(stderr, "lever annotate check: expected ANNOTATIONS RECORD\n");
		return 2;
	}
	if (annotate_parse_file(argv[optind], &file, err, sizeof(err))) {
		fprintf(stderr, "lever annotate: %s\n", err);
		return 2;
	}
	if ((rc = read_record(argv[optind + 1], &rec))) {
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

static int cmd_predict(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"metric", required_argument, NULL, 'm'}, {"help", no_argument, NULL, 'h'}, {0}};
	struct annotate_file file;
	struct annotate_prediction p;
	const struct annotate_annotation *a;
	struct bindings b;
	int metric = ANNOTATE_TIME, c, rc;
	char err[512];

	while ((c = getopt_long(argc, argv, "+m:h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(annotate_usage, stdout);
			return 0;
		}
		if (c != 'm' || metric_option(optarg, &metric))
			return 2;
	}
	if (optind + 2 > argc) {
		fprintf(stderr,
			"lever annotate predict: expected ANNOTATIONS SYMBOL FEATURE=VALUE...\n");
		return 2;
	}
	if (annotate_parse_file(argv[optind], &file, err, sizeof(err))) {
		fprintf(stderr, "lever annotate: %s\n", err);
		return 2;
	}
	a = annotate_file_find(&file, argv[optind + 1], metric);
	if (!a) {
		fprintf(stderr, "lever annotate: %s: no annotation for %s.%s\n", argv[optind],
			argv[optind + 1], annotate_metric_name((enum annotate_metric)metric));
		annotate_file_free(&file);
		return 2;
	}
	b = (struct bindings){.argv = argv + optind + 2, .argc = argc - optind - 2, .a = a};
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

static int cmd_synth(int argc, char **argv)
{
	static const struct option opts[] = {{"shape", required_argument, NULL, OPT_SHAPE},
					     {"calls", required_argument, NULL, OPT_CALLS},
					     {"features", required_argument, NULL, OPT_FEATURES},
					     {"seed", required_argument, NULL, OPT_SEED},
					     {"output", required_argument, NULL, 'o'},
					     {"help", no_argument, NULL, 'h'},
					     {0}};
	const char *shape = "appendix-a", *out = NULL;
	size_t calls = 151, features = 650, seed = 1;
	struct annotate_writer w;
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(annotate_usage, stdout);
			return 0;
		case OPT_SHAPE:
			shape = optarg;
			break;
		case OPT_CALLS:
			if (!parse_size(optarg, &calls) || calls == 0)
				return bad_value("--calls", optarg);
			break;
		case OPT_FEATURES:
			if (!parse_size(optarg, &features) || features < 3)
				return bad_value("--features", optarg);
			break;
		case OPT_SEED:
			if (!parse_size(optarg, &seed))
				return bad_value("--seed", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		default:
			return 2;
		}
	}
	if (!out || optind != argc) {
		fprintf(stderr, "lever annotate synth: expected -o RECORD and no other argument\n");
		return 2;
	}
	if (strcmp(shape, "appendix-a") != 0 && strcmp(shape, "wide") != 0)
		return bad_value("--shape", shape);
	if ((rc = annotate_writer_open(&w, out, "synthetic")) == 0)
		rc = annotate_synth(&w, shape, calls, features, seed);
	if (annotate_writer_close(&w) && !rc)
		rc = -EIO;
	if (rc) {
		fprintf(stderr, "lever annotate synth: %s: %s\n", out, strerror(-rc));
		return 2;
	}
	return 0;
}

int cmd_annotate(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(annotate_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "derive") == 0)
		return cmd_derive(argc - 1, argv + 1);
	if (strcmp(argv[1], "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "predict") == 0)
		return cmd_predict(argc - 1, argv + 1);
	if (strcmp(argv[1], "synth") == 0)
		return cmd_synth(argc - 1, argv + 1);
	if (strcmp(argv[1], "record") == 0) {
		fprintf(stderr, "lever annotate record: not built yet (issue 15); records can be "
				"written with the writer API or `lever annotate synth`\n");
		return 2;
	}
	fprintf(stderr, "lever annotate: unknown subcommand '%s'\n%s", argv[1], annotate_usage);
	return 2;
}
