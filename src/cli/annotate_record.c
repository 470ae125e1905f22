/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever annotate record: run a program with probes on chosen functions and
 * record, per sampled call, its metrics and input features
 * (spec/freud.md §4.2, §5.2-5.3; doc/annotate-record.md). Plans here
 * (src/annotate/plan.c: symbols, features, the plan file), writes the
 * record's header, `S` and `F` lines, then runs the program under
 * liblever-annotate.so, which appends the `C` lines, and reports what was
 * recorded.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "annotate/annotate.h"
#include "annotate/runtime/settings.h"
#include "base/base.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "launch/launch.h"

#define WHO "lever annotate record"
#define RECORD_USAGE                                                                               \
	"lever annotate record -f SYMBOL... [--metrics LIST] [--rate N/PERIOD] [--branches]\n"     \
	"                             [--probe auto|sled|live|uprobe] [-o DIR] -- PROGRAM "        \
	"[ARGS...]"

extern char **environ;

static const char *const probe_kinds[] = {"auto", "sled", "live", "uprobe", NULL};

struct record_opts {
	const char **functions;
	size_t n_functions;
	unsigned metrics;
	uint64_t max_depth, max_features;
	uint32_t rate_n;
	uint64_t period_ms;
	int probe;
	const char *dir;
	bool verbose, no_features, branches;
};

static int function_option(const struct cli_option *opt, const char *arg, void *ctx)
{
	struct record_opts *o = ctx;

	(void)opt;
	return cli_append_string(&o->functions, &o->n_functions, arg, WHO);
}

/* --metrics time,cpu,...: a set of metric keywords. */
static int metrics_option(const struct cli_option *opt, const char *arg, void *ctx)
{
	struct record_opts *o = ctx;
	char *copy = strdup(arg), *save = NULL, *tok;
	unsigned mask = 0;

	(void)opt;
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int m = annotate_metric_parse(tok);

		if (m < 0) {
			free(copy);
			return -1;
		}
		mask |= 1u << m;
	}
	free(copy);
	if (!mask)
		return -1;
	o->metrics = mask;
	return 0;
}

/* --rate N/PERIOD (PERIOD a duration, ms by default), or `all`. */
static int rate_option(const struct cli_option *opt, const char *arg, void *ctx)
{
	struct record_opts *o = ctx;
	const char *slash = strchr(arg, '/');
	char n_text[32];
	uint64_t n, ns;

	(void)opt;
	if (strcmp(arg, "all") == 0) {
		o->rate_n = 0;
		return 0;
	}
	if (!slash || (size_t)(slash - arg) >= sizeof(n_text))
		return -1;
	memcpy(n_text, arg, (size_t)(slash - arg));
	n_text[slash - arg] = 0;
	if (!parse_u64_range(n_text, 1, 1000000, &n) ||
	    !time_parse_duration(slash + 1, 1000000, &ns) || ns < 1000000)
		return -1;
	o->rate_n = (uint32_t)n;
	o->period_ms = ns / 1000000;
	return 0;
}

static int parse_record_options(struct record_opts *o, int argc, char **argv, int *first)
{
	const struct cli_option table[] = {
	    CLI_CALLBACK('f', "function", "SYMBOL", function_option,
			 "a function to probe (repeatable): C name, C++\n"
			 "mangled or demangled name (with or without its\n"
			 "parameters), a glob; LIB:SYMBOL for a shared\n"
			 "library (a path or a name, dlopen'ed ones too)"),
	    CLI_CALLBACK('m', "metrics", "LIST", metrics_option,
			 "comma-separated: time, cpu, mem, wait, hold,\n"
			 "pfaults, Pfaults, cs (default time)",
			 .what = "a list of time, cpu, mem, wait, hold, pfaults, Pfaults, cs"),
	    CLI_FLAG(0, "no-features", &o->no_features,
		     "metrics only: no feature is planned or read"),
	    CLI_FLAG(0, "branches", &o->branches,
		     "also record the outcome of every conditional\n"
		     "branch of the functions, per call (a trap per\n"
		     "branch executed: microseconds each; off by default)"),
	    CLI_UINT(0, "max-depth", &o->max_depth, "N", 0, 16,
		     "pointer dereferences followed for features\n(default 3)"),
	    CLI_UINT(0, "max-features", &o->max_features, "N", 1, 4096,
		     "features per variable (default 512)"),
	    CLI_CALLBACK(0, "rate", "N/PERIOD", rate_option,
			 "record N calls per PERIOD per function, a\n"
			 "reservoir sample (default 100/5s); `all`: every\n"
			 "call",
			 .what = "N/PERIOD (such as 100/5s, PERIOD at least 1ms) or all"),
	    CLI_ENUM(0, "probe", &o->probe, "KIND", probe_kinds,
		     "auto (default): the sled of lever cc --annotate,\n"
		     "else live patching, else a uprobe; or only one"),
	    CLI_STRING('o', "output", &o->dir, "DIR",
		       "write DIR/record and DIR/plan (default\nannotate.out)"),
	    CLI_FLAG('v', "verbose", &o->verbose, "say how each function was probed"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = WHO,
	    .usage = "usage: " RECORD_USAGE,
	    .description =
		"Runs PROGRAM with probes on the chosen functions and records, per sampled\n"
		"call, its metrics (inclusive of callees, the probe's own cost removed) and\n"
		"its input features (from DWARF), as an annotate record\n"
		"(doc/formats/annotate-record.md) for lever annotate derive.\n",
	    .options = table,
	    .epilogue = "Exit status: the program's; 2 for a usage error or a function that\n"
			"cannot be found; 1 if the runtime is missing or PROGRAM is statically\n"
			"linked; 126/127 if PROGRAM cannot be run or found.\n"
			"See doc/annotate-record.md.\n",
	    .takes_program = true,
	};
	int ret = cli_parse(&cmd, argc, argv, o, first);

	if (ret)
		return ret;
	if (!o->n_functions)
		return cli_usage_error(&cmd, "no function to probe: give -f SYMBOL");
	return 0;
}

/* The plan: every -f resolved, features planned. 0 or an exit status. */
static int make_plan(struct annotate_plan *plan, const struct record_opts *o, const char *program)
{
	char err[1024];

	if (annotate_plan_init(plan, program, err, sizeof(err))) {
		fprintf(stderr, WHO ": %s\n", err);
		return 2;
	}
	for (size_t i = 0; i < o->n_functions; i++)
		if (annotate_plan_add(plan, o->functions[i], err, sizeof(err)) < 0) {
			fprintf(stderr, WHO ": %s\n", err);
			return 2;
		}
	if (!o->no_features && annotate_plan_all_features(plan, (unsigned)o->max_depth,
							  (unsigned)o->max_features, stderr)) {
		fprintf(stderr, WHO ": out of memory\n");
		return 2;
	}
	if (o->branches && annotate_plan_all_branches(plan, stderr)) {
		fprintf(stderr, WHO ": out of memory\n");
		return 2;
	}
	return 0;
}

/* The record's header, S and F lines; the runtime appends the C lines. */
static int write_header(const struct annotate_plan *plan, const char *path, int argc, char **argv)
{
	struct annotate_writer w;
	char run[2048] = "";
	int rc;

	for (int i = 0; i < argc && strlen(run) + strlen(argv[i]) + 2 < sizeof(run); i++) {
		strcat(run, i ? " " : "");
		strcat(run, argv[i]);
	}
	rc = annotate_writer_open(&w, path, run);
	for (size_t i = 0; !rc && i < plan->n_functions; i++) {
		const struct annotate_plan_function *f = &plan->functions[i];

		rc = annotate_writer_symbol(&w, f->display) < 0 ? -EIO : 0;
		for (uint32_t k = 0; !rc && k < f->n_features; k++)
			rc = annotate_writer_feature(&w, (uint32_t)i,
						     (enum annotate_feature_kind)f->feature_kind[k],
						     f->feature_expr[k]) < 0
				 ? -EIO
				 : 0;
		/* the branch features follow the others: index n_features + k */
		for (uint32_t k = 0; !rc && k < f->n_branches; k++) {
			char name[1024];

			snprintf(name, sizeof(name), "%s+0x%llx", f->name,
				 (unsigned long long)f->branches[k].offset);
			rc = annotate_writer_feature(&w, (uint32_t)i, ANNOTATE_BRANCH, name) < 0
				 ? -EIO
				 : 0;
		}
	}
	if (annotate_writer_close(&w) && !rc)
		rc = -EIO;
	if (rc)
		fprintf(stderr, WHO ": %s: %s\n", path, strerror(-rc));
	return rc;
}

/* What the runtime said at exit (`# probe` lines), per function. */
static void report(const char *record, const struct annotate_plan *plan, bool verbose)
{
	FILE *f = fopen(record, "r");
	char line[4096];
	unsigned long long calls = 0, recorded = 0, sampled = 0, seen = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned sym;
		int pid;
		char kind[16];
		unsigned long long c, r, u, d, b;

		if (sscanf(line, "# sampled %u pid=%d sampled=%llu", &sym, &pid, &c) == 3) {
			sampled += c;
			continue;
		}
		if (sscanf(line,
			   "# probe %u pid=%d kind=%15s calls=%llu recorded=%llu unwound=%llu "
			   "too-deep=%llu in-signal=%llu",
			   &sym, &pid, kind, &c, &r, &u, &d, &b) != 8 ||
		    sym >= plan->n_functions)
			continue;
		seen++;
		calls += c;
		recorded += r;
		if (verbose || strcmp(kind, "none") == 0 || d || b)
			fprintf(stderr,
				WHO ": %s (pid %d): %s probe, %llu calls, %llu recorded, %llu "
				    "unwound, %llu too deep, %llu in a signal during a probe\n",
				plan->functions[sym].display, pid, kind, c, r, u, d, b);
	}
	fclose(f);
	/* recorded: the C lines the record holds; sampled may be more (reservoir replacements) */
	if (seen)
		fprintf(stderr, WHO ": %s: %llu calls recorded of %llu (%llu sampled)\n", record,
			recorded, calls, sampled);
	else
		fprintf(stderr, WHO ": %s: the runtime left no summary (killed, or exec'd away)\n",
			record);
}

static int build_env(struct launch_env *env, const char *plan_path, bool verbose)
{
	if (launch_env_init(env, WHO, environ))
		return -1;
	if (launch_env_set(env, ANN_ENV_PLAN, plan_path) ||
	    launch_env_set(env, ANN_ENV_VERBOSE, verbose ? "1" : NULL) ||
	    launch_env_add_runtime(env, ANN_RUNTIME_NAME))
		return -1;
	return 0;
}

static int run(const struct record_opts *o, int argc, char **argv, int prog)
{
	struct annotate_plan plan;
	struct annotate_plan_settings s;
	struct launch_program lp;
	struct launch_env env = {0};
	char dir[PATH_MAX], record[PATH_MAX + 16], plan_path[PATH_MAX + 16], err[512];
	int rc, status;

	if (launch_check_preloadable(WHO, argv[prog], "lever's annotate runtime"))
		return LAUNCH_EXIT_FAILURE;
	launch_inspect_program(argv[prog], &lp);
	if (lp.kind != LAUNCH_PROGRAM_DYNAMIC) {
		fprintf(stderr, WHO ": %s: not a dynamically linked ELF program%s\n", argv[prog],
			lp.kind == LAUNCH_PROGRAM_SCRIPT ? " (a script: probe its interpreter's "
							   "functions by running it directly)"
							 : "");
		return lp.kind == LAUNCH_PROGRAM_OTHER ? LAUNCH_EXIT_NOT_FOUND : 2;
	}
	if ((rc = make_plan(&plan, o, lp.path))) {
		annotate_plan_free(&plan);
		return rc;
	}
	if (mkdir(o->dir, 0777) && errno != EEXIST) {
		fprintf(stderr, WHO ": %s: %s\n", o->dir, strerror(errno));
		annotate_plan_free(&plan);
		return 2;
	}
	if (!realpath(o->dir, dir)) {
		fprintf(stderr, WHO ": %s: %s\n", o->dir, strerror(errno));
		annotate_plan_free(&plan);
		return 2;
	}
	snprintf(record, sizeof(record), "%s/record", dir);
	snprintf(plan_path, sizeof(plan_path), "%s/plan", dir);
	s = (struct annotate_plan_settings){.record = record,
					    .metrics = o->metrics,
					    .rate_n = o->rate_n,
					    .period_ms = o->period_ms,
					    .probe = probe_kinds[o->probe],
					    .max_depth = (unsigned)o->max_depth,
					    .max_features = (unsigned)o->max_features};
	if (write_header(&plan, record, argc - prog, argv + prog) ||
	    annotate_plan_write(&plan, &s, plan_path, err, sizeof(err))) {
		if (err[0])
			fprintf(stderr, WHO ": %s\n", err);
		annotate_plan_free(&plan);
		return 2;
	}
	if (build_env(&env, plan_path, o->verbose)) {
		launch_env_free(&env);
		annotate_plan_free(&plan);
		return LAUNCH_EXIT_FAILURE;
	}
	if (launch_run(WHO, argv + prog, &env, &status)) {
		rc = LAUNCH_EXIT_FAILURE;
	} else {
		char how[128];

		report(record, &plan, o->verbose);
		if (WIFSIGNALED(status))
			fprintf(stderr,
				WHO ": the program was %s; the record holds what was "
				    "written before\n",
				launch_describe_status(status, how, sizeof(how)));
		rc = launch_exit_status(status);
	}
	launch_env_free(&env);
	annotate_plan_free(&plan);
	return rc;
}

int cmd_annotate_record(int argc, char **argv)
{
	struct record_opts o = {.metrics = 1u << ANNOTATE_TIME,
				.max_depth = 3,
				.max_features = 512,
				.rate_n = 100,
				.period_ms = 5000,
				.dir = "annotate.out"};
	int prog = 0, rc = parse_record_options(&o, argc, argv, &prog);

	if (rc) {
		free(o.functions);
		return rc == CLI_HELP ? 0 : rc;
	}
	rc = run(&o, argc, argv, prog);
	free(o.functions);
	return rc;
}
