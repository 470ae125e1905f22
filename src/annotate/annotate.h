/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * annotate: the analysis half of Freud (spec/freud.md), probabilistic
 * performance annotations.
 *
 * - records (doc/formats/annotate-record.md): per-call metrics and input
 *   features of instrumented functions; a reader and a writer;
 * - the annotation language (spec §2): a tolerant parser (§2.10) and a
 *   canonical printer, evaluation of scopes, means and variances;
 * - derivation (spec §4.3, §7.6): pre-processing, partition candidates
 *   (Algorithm 1), the regression tree (Algorithm 2), regression classes with
 *   backward elimination and BIC choice, the R and M heuristics, KDE
 *   clustering and mixtures (Algorithm 3);
 * - checking (spec §3.2) and prediction (§3.3);
 * - a seeded generator of synthetic records (the Appendix A shapes, and wide
 *   records for timing) for tests and benchmarks.
 *
 * Two fixed meanings (spec §7.2 items 1 and 2): the second argument of
 * Norm(mean, v) is the variance, in squared metric units, and `log` is the
 * base-2 logarithm, in fitting, printing, prediction and checking alike.
 *
 * Errors: functions return 0 or a negative errno-style code; those that read
 * text write "NAME:LINE: message" (or "NAME: offset N: message") into a
 * caller's buffer.
 */
#ifndef LEVER_ANNOTATE_H
#define LEVER_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------ metrics (spec §2.2, §4.2.2) */

enum annotate_metric {
	ANNOTATE_TIME,	  /* wall time, microseconds */
	ANNOTATE_CPU,	  /* CPU time of the thread, microseconds */
	ANNOTATE_MEM,	  /* bytes allocated */
	ANNOTATE_WAIT,	  /* lock waiting, microseconds */
	ANNOTATE_HOLD,	  /* lock holding, microseconds */
	ANNOTATE_PFAULTS, /* minor page faults */
	ANNOTATE_PFAULTS_MAJOR,
	ANNOTATE_CS, /* context switches */
	ANNOTATE_N_METRICS
};
/* The keyword ("time", "Pfaults", ...); NULL for a bad value. */
const char *annotate_metric_name(enum annotate_metric m);
/* The metric for a keyword (also "wait_time" for wait); -1 if unknown. */
int annotate_metric_parse(const char *name);
/* time, wait and hold: metrics with additive positive noise (spec §4.3.4). */
bool annotate_metric_is_time_like(enum annotate_metric m);

/* ------------------------------------------------------------ records */

enum annotate_feature_kind {
	ANNOTATE_INTEGER,
	ANNOTATE_BOOL,
	ANNOTATE_ENUM,
	ANNOTATE_FLOAT,
	ANNOTATE_STRING_LENGTH,
	ANNOTATE_ARRAY_COUNT,
	ANNOTATE_CONTAINER_SIZE,
	ANNOTATE_DYNAMIC_TYPE,
	ANNOTATE_BRANCH,
	ANNOTATE_N_KINDS
};
const char *annotate_feature_kind_name(enum annotate_feature_kind k);
int annotate_feature_kind_parse(const char *name);

#define ANNOTATE_RECORD_VERSION 1
#define ANNOTATE_RECORD_MAGIC	"lever-annotate-record"
#define ANNOTATE_MAX_LINE	(1u << 20)

/*
 * One feature of a symbol, and its values over the calls (a column; NaN is
 * a missing value). A branch feature holds the outcome (1 taken, 0 not
 * taken) of calls that executed it exactly once, NaN otherwise; `repeated`
 * counts calls that executed it more than once; `outcomes` keeps the strings.
 */
struct annotate_feature {
	char *name; /* the program's expression, e.g. j->items->len */
	enum annotate_feature_kind kind;
	double *values;
	size_t repeated;
	char **outcomes; /* a branch's: per call its outcome string as recorded, NULL if absent */
};

/*
 * One instrumented symbol: its features, and per call its id, the id of the
 * enclosing instrumented call (0 for none: the call tree), the metrics
 * (columns, NaN when not recorded) and the feature values.
 */
struct annotate_symbol {
	char *name;
	size_t n_features;
	struct annotate_feature *features;
	size_t n_calls, capacity;
	uint64_t *id, *parent;
	double *metrics[ANNOTATE_N_METRICS];
};

struct annotate_record {
	char *name; /* file name, for messages */
	char *run;  /* the run's description from the header, may be empty */
	size_t n_symbols;
	struct annotate_symbol *symbols;
	bool truncated; /* the last line was cut short (a killed program) */
};

/*
 * Read a record. A last line without its newline (the writer was killed
 * mid-write) is dropped and flagged in `truncated`; every other defect is an
 * error with the file and line.
 */
int annotate_record_read_file(const char *path, struct annotate_record *out, char *err,
			      size_t err_size);
int annotate_record_read_buffer(const char *name, const char *buf, size_t len,
				struct annotate_record *out, char *err, size_t err_size);
void annotate_record_free(struct annotate_record *r);
/* The symbol by exact name, or else the one whose name before '(' matches. */
struct annotate_symbol *annotate_record_find(const struct annotate_record *r, const char *name);
/* Index of a feature by name in a symbol, -1 if absent. */
long annotate_symbol_feature(const struct annotate_symbol *s, const char *name);

/*
 * Writer: each line goes out in one write(2) of a whole line, so a reader
 * never sees half a record except for the very last line. Symbols and
 * features are declared before the calls that use them.
 */
struct annotate_writer {
	int fd;
	bool own_fd;
	uint32_t n_symbols;
	uint32_t *n_features; /* per symbol */
	uint8_t **kinds;      /* per symbol, per feature */
	int error;	      /* first write error, negative errno */
};
int annotate_writer_open(struct annotate_writer *w, const char *path, const char *run);
int annotate_writer_fdopen(struct annotate_writer *w, int fd, const char *run);
/* Returns the new symbol's index, or a negative error. */
int annotate_writer_symbol(struct annotate_writer *w, const char *name);
/* Returns the feature's index within the symbol, or a negative error. */
int annotate_writer_feature(struct annotate_writer *w, uint32_t symbol,
			    enum annotate_feature_kind kind, const char *expression);
/*
 * One call. metrics[ANNOTATE_N_METRICS], NaN for those not recorded;
 * values[n_features of the symbol], NaN for missing. Branch features take
 * their outcomes from branches[f] (a string of 'T' and 'N', NULL or "" when
 * not executed) when branches is not NULL, else from values (1 or 0).
 */
int annotate_writer_call(struct annotate_writer *w, uint32_t symbol, uint64_t id, uint64_t parent,
			 const double *metrics, const double *values, const char *const *branches);
int annotate_writer_close(struct annotate_writer *w);

/* ------------------------------------------------------------ record planning (issue 15,
 * ann-probe) */

/*
 * What `lever annotate record` plans before it runs the program
 * (doc/formats/annotate-plan.md): the modules (program, shared libraries) and
 * in them the functions to probe, by file address and size, each with its
 * feature program (planned from DWARF where the module has it).
 */
struct annotate_plan_module {
	char *path;	    /* canonical absolute path */
	char build_id[130]; /* hex; "" when the file has none */
	bool has_symtab;    /* not stripped */
	bool has_debug;	    /* DWARF found (in the file or a debug file) */
};

struct annotate_plan_function {
	char *name;    /* the symbol (mangled for C++) */
	char *display; /* as the record names it: the demangled signature, or the C name */
	uint32_t module;
	uint64_t addr, size; /* file address (st_value) and size */
	void *ops;	     /* the feature program: n_ops struct ann_op (runtime/features.h) */
	uint32_t n_ops;
	uint32_t n_features;
	char **feature_expr; /* per feature: the program's expression */
	int *feature_kind;   /* per feature: enum annotate_feature_kind */
	/* --branches: its conditional branches, the record's branch features after the others */
	struct annotate_plan_branch *branches;
	uint32_t n_branches;
};

/* A conditional branch of a function (runtime/branches.h), by offset from its entry. */
struct annotate_plan_branch {
	uint64_t offset;
	uint8_t len, cond; /* as ann_branch_decode found them */
	int64_t target;	   /* the taken target, from the entry */
};

/*
 * A feature program several functions share: the globals of a compilation
 * unit, planned once and run by each function's program through ANN_OP_CALL
 * (doc/formats/annotate-plan.md `globals` lines).
 */
struct annotate_plan_program {
	void *ops; /* n_ops struct ann_op, emitting from index 0 */
	uint32_t n_ops;
};

struct annotate_plan {
	char *program; /* canonical path of the main program */
	size_t n_modules, n_functions, n_shared;
	struct annotate_plan_module *modules;
	struct annotate_plan_function *functions;
	struct annotate_plan_program *shared;
};

struct annotate_plan_settings {
	const char *record; /* absolute path of the record the runtime appends to */
	unsigned metrics;   /* bit per enum annotate_metric */
	uint32_t rate_n;    /* calls recorded per period per symbol; 0: every call */
	uint64_t period_ms;
	const char *probe; /* auto, sled, live, uprobe */
	unsigned max_depth, max_features;
};

/* Start a plan for program (as exec would run it). */
int annotate_plan_init(struct annotate_plan *plan, const char *program, char *err, size_t err_size);
/*
 * Add the functions matching spec: a C name, a mangled C++ name, a demangled
 * C++ name with or without its parameters, or a glob of any of these;
 * `LIB:SPEC` for a shared library (a path, or a file name looked up as the
 * dynamic loader would, globs allowed). Returns the number of functions
 * added (0 when every function it matches was planned already) or a
 * negative error with the reason in err.
 */
int annotate_plan_add(struct annotate_plan *plan, const char *spec, char *err, size_t err_size);
/*
 * Plan the features of every function (annotate_plan_features of the feature
 * planner, where linked in), at most max_depth dereferences and max_features
 * per variable. Modules without DWARF get none; *notes says so, once each.
 */
int annotate_plan_all_features(struct annotate_plan *plan, unsigned max_depth,
			       unsigned max_features, FILE *notes);
/*
 * List the conditional branches of every function (--branches; plan_branches.c):
 * its code disassembled from the file, start to end. A function whose code
 * cannot all be decoded gets none, and notes says why. 0 or -ENOMEM.
 */
int annotate_plan_all_branches(struct annotate_plan *plan, FILE *notes);
int annotate_plan_write(const struct annotate_plan *plan, const struct annotate_plan_settings *s,
			const char *path, char *err, size_t err_size);
void annotate_plan_free(struct annotate_plan *plan);
/* The demangled form of a C++ symbol (malloc'ed), or NULL when it is not one. */
char *annotate_demangle(const char *symbol);

/* ------------------------------------------------------------ feature plans (spec §4.2.3, §5.2) */

/*
 * The input features of a function, planned from its DWARF (plan_features.c):
 * a program for the runtime's interpreter (annotate/runtime/features.h and
 * features_ops.h, doc/formats/annotate-features.md) that emits feature i
 * into values[i], and per feature its name, the program's own expression
 * (`j->items->len`, `strlen(str)`, `v.size()`, `typeid(*c)`), and its kind.
 */
struct ann_op;
struct annotate_feature_decl {
	char *expr;
	enum annotate_feature_kind kind;
};
struct annotate_feature_plan {
	struct ann_op *ops;
	uint32_t n_ops;
	struct annotate_feature_decl *decls;
	uint32_t n_decls;
	/*
	 * ops [0, n_param_ops) and decls [0, n_param_decls) are the
	 * parameters'; the rest are the globals of the function's compilation
	 * unit, the same for all its functions (shared in the plan).
	 */
	uint32_t n_param_ops, n_param_decls;
};

/*
 * Plan the features of the function of module_path whose entry is at the
 * file address func_offset (DW_AT_low_pc / st_value; 0: look it up by
 * symbol), or else named symbol (mangled, plain, or a demangled signature).
 * Parameters at the function's first instruction and the globals of its
 * compilation unit, through at most max_depth pointer dereferences and
 * max_features features per variable. Cached per build ID in
 * $XDG_CACHE_HOME/lever/annotate/. Returns 0, or -ENODATA (no debug
 * information: say so once, record metrics only), -ENOENT (no such
 * function), another negative errno, with a message in err.
 */
int annotate_plan_features(const char *module_path, uint64_t func_offset, const char *symbol,
			   unsigned max_depth, unsigned max_features,
			   struct annotate_feature_plan *out, char *err, size_t err_size);
void annotate_feature_plan_free(struct annotate_feature_plan *p);

/* ------------------------------------------------------------ the annotation language */

enum annotate_expr_kind {
	ANNOTATE_E_NUM,
	ANNOTATE_E_FEATURE,
	ANNOTATE_E_LOG, /* log2(a) */
	ANNOTATE_E_POW, /* a ^ num */
	ANNOTATE_E_ADD,
	ANNOTATE_E_SUB,
	ANNOTATE_E_MUL,
	ANNOTATE_E_NEG,
	ANNOTATE_E_REF /* @signature[name := expr, ...] */
};

struct annotate_expr {
	enum annotate_expr_kind kind;
	double num; /* NUM; the exponent of POW */
	char *name; /* FEATURE; the signature of REF */
	struct annotate_expr *a, *b;
	size_t n_bind; /* REF */
	char **bind_name;
	struct annotate_expr **bind;
};

enum annotate_cmp { ANNOTATE_LT, ANNOTATE_LE, ANNOTATE_GT, ANNOTATE_GE, ANNOTATE_EQ, ANNOTATE_NE };

/* An operand of a condition: a number or a feature. */
struct annotate_operand {
	bool is_num;
	double num;
	char *name;
};

/*
 * One atom of a scope: `x`, `!x` (n == 1, truth of a feature), `x OP y`
 * (n == 2) or the chain `x OP y OP z` (n == 3).
 */
struct annotate_atom {
	int n;
	bool negated; /* `!x` */
	struct annotate_operand op[3];
	enum annotate_cmp cmp[2];
};

struct annotate_scope {
	size_t n_atoms; /* a conjunction */
	struct annotate_atom *atoms;
};

/*
 * One item: [scope] {p} heuristic Norm(mean, variance), or a scope over a
 * nested list of items (a mixture under a scope, spec §2.5).
 */
struct annotate_item {
	struct annotate_scope *scope; /* NULL: everywhere */
	bool has_prob;
	double prob;
	char heuristic; /* 0, 'R' or 'M' */
	struct annotate_expr *mean, *variance;
	size_t n_children;
	struct annotate_item *children;
};

struct annotate_decl {
	char *type, *name, *definition; /* definition: the native expression, as written */
};

struct annotate_annotation {
	char *signature;
	int metric; /* enum annotate_metric */
	size_t n_decls;
	struct annotate_decl *decls;
	size_t n_items;
	struct annotate_item *items;
	size_t elided; /* `...` seen (the seed's figures elide items) */
};

struct annotate_file {
	size_t n;
	struct annotate_annotation *annotations;
};

int annotate_parse(const char *name, const char *text, size_t len, struct annotate_file *out,
		   char *err, size_t err_size);
int annotate_parse_file(const char *path, struct annotate_file *out, char *err, size_t err_size);
void annotate_file_free(struct annotate_file *f);
void annotate_annotation_free(struct annotate_annotation *a);
void annotate_item_free(struct annotate_item *it);
void annotate_expr_free(struct annotate_expr *e);

/* Canonical form (doc/annotate.md); numbers with `digits` significant digits. */
void annotate_print(FILE *f, const struct annotate_annotation *a, int digits);
void annotate_print_expr(FILE *f, const struct annotate_expr *e, int digits);
/* One item, as a line (or block) of the canonical form, without indentation. */
void annotate_print_item(FILE *f, const struct annotate_item *it, int digits);
/* The canonical text into a new string (free() it); NULL when out of memory. */
char *annotate_to_string(const struct annotate_annotation *a, int digits);
/* Structural equality of two annotations (numbers compared exactly). */
bool annotate_equal(const struct annotate_annotation *a, const struct annotate_annotation *b);

/*
 * Feature values for evaluation: a lookup from a name to a value. Returns
 * false when the feature is unknown (the expression is then unevaluable).
 */
typedef bool (*annotate_lookup_fn)(void *ctx, const char *name, double *value);
/* Returns 0, or -ENOENT when a feature is missing, -EDOM for log of x <= 0. */
int annotate_eval(const struct annotate_expr *e, annotate_lookup_fn lookup, void *ctx, double *out);
/* 1 if the scope holds, 0 if not, negative if it cannot be evaluated. */
int annotate_scope_holds(const struct annotate_scope *s, annotate_lookup_fn lookup, void *ctx);
/* The annotation of `signature` (exact, or by the name before '(') for a metric. */
const struct annotate_annotation *annotate_file_find(const struct annotate_file *f,
						     const char *signature, int metric);

/* ------------------------------------------------------------ derivation */

/* Parameters: the seed's Table 5.3 and the repo's internal constants (spec §5.4.3). */
struct annotate_params {
	double correlation_threshold;	 /* 0.9 */
	double min_det;			 /* 0.75 */
	double good_pvalue;		 /* 2e-11 */
	double bic_diff;		 /* 10 */
	size_t drop_k;			 /* 5 */
	size_t min_part_points;		 /* 5 */
	double constant_tolerance;	 /* 0.01: (max - min) / mean below it is constant */
	double cluster_overlap;		 /* 0.25: tolerated overlap of cluster ranges */
	size_t max_interaction_features; /* 8: features whose pairwise interactions are tried */
	size_t screen_terms;		 /* 64: main terms kept by marginal screening */
	bool heuristics;		 /* R and M for time-like metrics */
	bool heuristics_any_metric;	 /* ... and for every metric (--heuristics-any-metric) */
	bool clustering;		 /* Algorithm 3 */
	size_t max_depth;		 /* 8: depth of the tree */
};
void annotate_params_default(struct annotate_params *p);

enum annotate_class {
	ANNOTATE_CONSTANT,
	ANNOTATE_LINEAR,
	ANNOTATE_NLOGN,
	ANNOTATE_QUADRATIC,
	ANNOTATE_N_CLASSES
};
const char *annotate_class_name(enum annotate_class c);

/* One factor of a regression term: feature, and its transform. */
enum annotate_transform { ANNOTATE_X, ANNOTATE_X2, ANNOTATE_XLOGX };

struct annotate_term {
	int n_factors; /* 1 or 2 */
	size_t feature[2];
	enum annotate_transform transform[2];
	double coef;
	double pvalue;
};

/* A fitted leaf model: a regression, a constant, or (in a mixture) a cluster. */
struct annotate_model {
	enum annotate_class cls;
	double intercept;
	size_t n_terms;
	struct annotate_term *terms;
	double variance; /* residual variance, RSS / (n - p) */
	double r_squared, bic, cv_r_squared;
	size_t n;
};

/* One leaf of the derived annotation. */
struct annotate_leaf {
	size_t n_atoms;
	struct annotate_atom *atoms; /* the scope, a conjunction (names are borrowed) */
	bool has_prob;
	double prob;
	char heuristic;
	struct annotate_model model;
	double lo, hi; /* cluster leaves: the metric interval */
	int group;     /* leaves of one mixture share a group number > 0 */
	size_t n_rows; /* the calls the leaf was fitted on (indices into the symbol) */
	size_t *rows;
	/*
	 * A regression that did not beat the constant model in cross-validation
	 * (doc/annotate.md, derive step 6) is replaced by the constant of the
	 * leaf's calls; these say what was replaced: its class and its
	 * cross-validated R^2 (NaN when it could not even be refitted without
	 * the held-out calls). rejected is false for every other leaf.
	 */
	bool rejected;
	enum annotate_class rejected_cls;
	double rejected_cv_r_squared;
};

struct annotate_derivation {
	const struct annotate_symbol *symbol;
	enum annotate_metric metric;
	char **names; /* per feature of the symbol: its name in the annotation */
	size_t n_observations;
	size_t n_candidates; /* numeric features before pre-processing */
	size_t n_regressors; /* after it */
	size_t n_partitions; /* partition candidates */
	size_t n_leaves;
	struct annotate_leaf *leaves;
	size_t n_rejected; /* leaves whose regression fell back to the constant */
	char *log;	   /* what was tried, one line each */
	size_t log_len, log_cap;
	double seconds;
	/* set by the caller (annotate_cross_validate) for the JSON; 0 folds: not computed */
	size_t cv_folds;
	double cv_r_squared;
};

int annotate_derive(const struct annotate_symbol *s, enum annotate_metric metric,
		    const struct annotate_params *params, struct annotate_derivation *out);
void annotate_derivation_free(struct annotate_derivation *d);
/* The derivation as an annotation of the language (free with annotate_annotation_free). */
int annotate_derivation_annotation(const struct annotate_derivation *d,
				   struct annotate_annotation *out);
void annotate_derivation_json(FILE *f, const struct annotate_derivation *d);
/*
 * A self-contained HTML page: annotate_html_begin, one section per
 * derivation (its annotation, and per scope and feature a chart of the calls
 * with the fitted cost), annotate_html_end.
 */
void annotate_html_begin(FILE *f, const char *title);
void annotate_derivation_html(FILE *f, const struct annotate_derivation *d);
void annotate_html_end(FILE *f);

/*
 * Cross-validated R^2 of the derived annotation over the symbol's calls:
 * k folds, each leaf refitted with its terms on the other folds and scored
 * on the held-out one; calls outside every scope are left out.
 */
double annotate_cross_validate(const struct annotate_derivation *d, size_t folds);

/* ------------------------------------------------------------ clustering (spec §4.3.5) */

struct annotate_cluster {
	double lo, hi;	 /* (lo, hi] */
	double centroid; /* the density maximum */
	double variance; /* mean squared distance to the centroid */
	size_t count;
};
/*
 * One-dimensional clusters of y by a variable-bandwidth kernel density
 * (sample-point, k-nearest-neighbour bandwidths): maxima are centroids,
 * minima boundaries. Returns the number of clusters (malloc'ed in *out), or a
 * negative error.
 */
int annotate_kde_clusters(const double *y, size_t n, struct annotate_cluster **out);

/* ------------------------------------------------------------ checking and prediction */

struct annotate_check_params {
	double alpha;	   /* 0.01 */
	size_t min_points; /* 3: scopes with fewer new points are not tested */
	/*
	 * Bonferroni: each test runs at alpha / max(family, tests of this
	 * function); a caller checking several annotations at once sets family
	 * to their total annotate_check_units().
	 */
	size_t family;
	/*
	 * 0 (default): a distribution's scope fails on any significant shift
	 * of the standardised residuals. T > 0: an equivalence margin -- the
	 * scope fails only when the calls' mean relative deviation from the
	 * annotation's mean, (y - mu(x)) / |mu(x)|, is significantly above T
	 * or below -T (two one-sided t-tests, doc/annotate.md "check").
	 */
	double tolerance;
};
/* The number of testable units (distributions and mixtures) of an annotation. */
size_t annotate_check_units(const struct annotate_annotation *a);

struct annotate_check_scope {
	char *text; /* the scope and distribution, printed */
	size_t n;
	double statistic, p;
	bool tested, pass;
	const char *test; /* "t", "t (one-sided)", "chi2" */
	/* distributions: mean of y over mean of mu(x), the tested calls (NaN: none) */
	double ratio;
};

struct annotate_check_result {
	char *signature;
	int metric;
	size_t n, unroutable;
	size_t n_scopes;
	struct annotate_check_scope *scopes;
	bool pass;
	bool found; /* the record has the symbol */
};

int annotate_check(const struct annotate_annotation *a, const struct annotate_symbol *s,
		   const struct annotate_check_params *p, struct annotate_check_result *out);
void annotate_check_result_free(struct annotate_check_result *r);

struct annotate_prediction {
	size_t n_components;
	double prob[16], mean[16], variance[16];
	char heuristic;
	double mean_total, low, high; /* the mixture's mean and its 95% interval */
};
/* -ENOENT: no scope holds or a feature is missing. */
int annotate_predict(const struct annotate_annotation *a, annotate_lookup_fn lookup, void *ctx,
		     struct annotate_prediction *out);

/* ------------------------------------------------------------ synthetic records */

/*
 * Write synthetic records with a known answer: "appendix-a" (the twenty
 * functions of the seed's Appendix A, spec §6.6, `calls` calls each) or
 * "wide" (one symbol with `features` candidate features, a few relevant).
 * Noise from a generator seeded with `seed`.
 */
int annotate_synth(struct annotate_writer *w, const char *shape, size_t calls, size_t features,
		   uint64_t seed);

/* ------------------------------------------------------------ dump (ann-metrics, issue 15) */

enum annotate_dump_format { ANNOTATE_DUMP_CSV, ANNOTATE_DUMP_JSON };
/*
 * The calls of a record as one table (doc/annotate.md "dump"): a row per
 * call with symbol, id, parent, the metrics present, the features by name
 * (missing: empty in CSV, null in JSON). Only the named symbols when
 * n_symbols > 0 (names as annotate_record_find takes them). Returns 0,
 * -ENOENT with *missing the name of a symbol not in the record, -ENOMEM, or
 * -EIO when writing to f failed.
 */
int annotate_dump(FILE *f, const struct annotate_record *r, const char *const *symbols,
		  size_t n_symbols, enum annotate_dump_format format, const char **missing);

/* ------------------------------------------------------------ end of dump */

#endif
