/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever causal sweep: load amplification (AMP) at several loads. Runs
 * `lever causal --arrival-speedup=D [OPTIONS] -- PROGRAM` RUNS times for
 * every arrival speedup D of the list, interleaved (run 1 of every level,
 * then run 2, ..., each round in a rotated order) so that drift of the
 * machine spreads over all levels alike. Every run appends to the same
 * profile; each experiment record carries its arrival-speedup, so
 * `lever causal report` separates the levels again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "launch/launch.h"

#define WHO	   "lever causal sweep"
#define MAX_LEVELS 64

static const char sweep_description[] =
    "Load amplification at several loads: runs PROGRAM under `lever causal\n"
    "--arrival-speedup=D OPTIONS` RUNS times for each D in LIST, interleaved\n"
    "across the levels (round r runs every level once, in an order rotated by\n"
    "r). All runs append to one profile (-o, default ./profile.coz); every\n"
    "experiment record names its arrival speedup, and `lever causal report`\n"
    "shows the scalability curve and per-load causal profiles.\n";

static const char sweep_epilogue[] =
    "OPTIONS are those of `lever causal` (see lever causal --help); for a\n"
    "scalability curve alone use --fixed-speedup=0 (and --end-to-end for one\n"
    "effective runtime per run). The sweep stops at the first run that fails,\n"
    "and says how it ended (an exit status, or the signal that killed it).\n"
    "See doc/causal.md.\n";

struct sweep {
	char levels[MAX_LEVELS][24]; /* arrival speedups in ns, as text */
	size_t n_levels;
	uint64_t runs;
	char **pass; /* options passed through to lever causal */
	int n_pass;
	char **program; /* PROGRAM [ARGS], NULL-terminated */
};

/* --arrival-speedup=LIST: comma-separated times; -1 when one is not a time. */
static int parse_levels(const struct cli_option *opt, const char *list, void *ctx)
{
	struct sweep *s = ctx;
	char *copy = strdup(list), *save = NULL;
	uint64_t ns;
	int ret = 0;

	(void)opt;
	if (!copy)
		return 1;
	s->n_levels = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		if (s->n_levels == MAX_LEVELS || !causal_parse_arrival_speedup(tok, &ns))
			ret = -1;
		else
			snprintf(s->levels[s->n_levels++], sizeof(s->levels[0]), "%llu",
				 (unsigned long long)ns);
	}
	free(copy);
	return ret || !s->n_levels ? -1 : 0;
}

/*
 * Sweep's own options are read here; every other argument before "--" is
 * lever causal's and passes through (lever causal checks it on the first run).
 * Returns 0, CLI_HELP or an exit status.
 */
static int parse_sweep(struct sweep *s, int argc, char **argv)
{
	const struct cli_option table[] = {
	    CLI_CALLBACK(0, "arrival-speedup", "LIST", parse_levels,
			 "comma-separated times (ns by default; us, ms, s),\n"
			 "e.g. 0,250us,500us; include 0 for the baseline",
			 .what =
			     "a time list (at most 64 comma-separated times in ns, us, ms or s; "
			     "not an empty list)"),
	    CLI_UINT('n', "runs", &s->runs, "N", 1, 1000, "runs per level (1..1000)",
		     .what = "a count 1..1000"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = WHO,
	    .usage = "usage: lever causal sweep --arrival-speedup=LIST -n RUNS [OPTIONS] -- "
		     "PROGRAM [ARGS...]",
	    .description = sweep_description,
	    .options = table,
	    .epilogue = sweep_epilogue,
	    .help_column = 30,
	};
	int sep = cli_find_separator(argc, argv, true), ret;

	for (int i = 1; i < sep; i++) {
		const char *value;
		const struct cli_option *opt = cli_lookup(table, argv[i], &value);

		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			cli_print_help(&cmd, stdout);
			return CLI_HELP;
		}
		if (!opt) {
			s->pass[s->n_pass++] = argv[i];
			continue;
		}
		if (!value && i + 1 >= sep)
			return cli_usage_error(&cmd, "option '%s' needs a value", argv[i]);
		ret = cli_apply(&cmd, opt, value ? value : argv[++i], s);
		if (ret)
			return ret;
	}
	if (!s->n_levels)
		return cli_usage_error(&cmd, "--arrival-speedup=LIST is required");
	if (!s->runs)
		return cli_usage_error(&cmd, "-n RUNS is required");
	if (sep + 1 >= argc)
		return cli_usage_error(&cmd, "no program given: lever causal sweep ... -- PROGRAM");
	s->program = argv + sep + 1;
	return 0;
}

/* One run: lever causal --arrival-speedup=D PASS... -- PROGRAM; 0 if it succeeded. */
static int run_level(const struct sweep *s, const char *level, char **argv_buf)
{
	char arrival[64], how[128];
	int n = 0, status;

	snprintf(arrival, sizeof(arrival), "--arrival-speedup=%s", level);
	argv_buf[n++] = "/proc/self/exe";
	argv_buf[n++] = "causal";
	argv_buf[n++] = arrival;
	for (int i = 0; i < s->n_pass; i++)
		argv_buf[n++] = s->pass[i];
	argv_buf[n++] = "--";
	for (char **p = s->program; *p; p++)
		argv_buf[n++] = *p;
	argv_buf[n] = NULL;
	if (launch_run(WHO, argv_buf, NULL, &status))
		return LAUNCH_EXIT_FAILURE;
	if (status == 0)
		return 0;
	fprintf(stderr, WHO ": the run at arrival speedup %s ns ended (%s); stopping\n", level,
		launch_describe_status(status, how, sizeof(how)));
	return launch_exit_status(status);
}

int cmd_causal_sweep(int argc, char **argv)
{
	struct sweep s = {.n_levels = 0};
	char **argv_buf;
	unsigned done = 0, total;
	int ret;

	s.pass = calloc((size_t)argc + 1, sizeof(*s.pass));
	argv_buf = calloc((size_t)argc + 8, sizeof(*argv_buf));
	if (!s.pass || !argv_buf) {
		fprintf(stderr, "lever causal sweep: out of memory\n");
		ret = 1;
		goto out;
	}
	ret = parse_sweep(&s, argc, argv);
	if (ret) {
		ret = ret == CLI_HELP ? 0 : ret;
		goto out;
	}
	total = (unsigned)s.runs * (unsigned)s.n_levels;
	for (unsigned r = 0; r < s.runs; r++) {
		for (size_t k = 0; k < s.n_levels; k++) {
			const char *level = s.levels[(k + r) % s.n_levels];

			fprintf(stderr, "lever causal sweep: run %u/%u, arrival speedup %s ns\n",
				++done, total, level);
			ret = run_level(&s, level, argv_buf);
			if (ret)
				goto out;
		}
	}
out:
	free(s.pass);
	free(argv_buf);
	return ret;
}
