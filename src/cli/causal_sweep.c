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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "cli/commands.h"

#define EXIT_USAGE 2
#define MAX_LEVELS 64

static const char sweep_usage[] =
    "usage: lever causal sweep --arrival-speedup=LIST -n RUNS [OPTIONS] -- PROGRAM [ARGS...]\n"
    "\n"
    "Load amplification at several loads: runs PROGRAM under `lever causal\n"
    "--arrival-speedup=D OPTIONS` RUNS times for each D in LIST, interleaved\n"
    "across the levels (round r runs every level once, in an order rotated by\n"
    "r). All runs append to one profile (-o, default ./profile.coz); every\n"
    "experiment record names its arrival speedup, and `lever causal report`\n"
    "shows the scalability curve and per-load causal profiles.\n"
    "\n"
    "      --arrival-speedup LIST  comma-separated times (ns by default; us, ms, s),\n"
    "                              e.g. 0,250us,500us; include 0 for the baseline\n"
    "  -n, --runs N                runs per level (1..1000)\n"
    "  -h, --help                  show this help\n"
    "\n"
    "OPTIONS are those of `lever causal` (see lever causal --help); for a\n"
    "scalability curve alone use --fixed-speedup=0 (and --end-to-end for one\n"
    "effective runtime per run). The sweep stops at the first run that fails.\n"
    "See doc/causal.md.\n";

struct sweep {
	char levels[MAX_LEVELS][24]; /* arrival speedups in ns, as text */
	size_t n_levels;
	unsigned runs;
	char **pass; /* options passed through to lever causal */
	int n_pass;
	char **program; /* PROGRAM [ARGS], NULL-terminated */
};

static int sweep_error(const char *msg, const char *arg)
{
	fprintf(stderr, "lever causal sweep: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\nRun 'lever causal sweep --help' for usage.\n");
	return EXIT_USAGE;
}

static int parse_levels(struct sweep *s, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	uint64_t ns;
	int ret = 0;

	if (!copy)
		return 1;
	s->n_levels = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (s->n_levels == MAX_LEVELS) {
			ret = sweep_error("--arrival-speedup: more than 64 levels%s", "");
			break;
		}
		if (!causal_parse_arrival_speedup(tok, &ns)) {
			ret = sweep_error("--arrival-speedup: '%s' is not a time (ns, us, ms, s)",
					  tok);
			break;
		}
		snprintf(s->levels[s->n_levels++], sizeof(s->levels[0]), "%llu",
			 (unsigned long long)ns);
	}
	free(copy);
	if (!ret && !s->n_levels)
		ret = sweep_error("--arrival-speedup: empty list%s", "");
	return ret;
}

/* The value of option name (as "--name=V" or "--name V"); advances *i. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) == 0 && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (strcmp(argv[*i], name) == 0 && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

static bool is_option(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

/* Returns 0, -1 after --help, or an exit status. */
static int parse_sweep(struct sweep *s, int argc, char **argv)
{
	int sep = argc, ret;
	uint64_t v;
	const char *val;
	bool have_levels = false;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0 || strcmp(argv[i], "---") == 0) {
			sep = i;
			break;
		}
	for (int i = 1; i < sep; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(sweep_usage, stdout);
			return -1;
		}
		if (is_option(argv[i], "--arrival-speedup")) {
			val = option_value(sep, argv, &i, "--arrival-speedup");
			if (!val)
				return sweep_error("option '%s' needs a value", argv[i]);
			ret = parse_levels(s, val);
			if (ret)
				return ret;
			have_levels = true;
		} else if (strcmp(argv[i], "-n") == 0 || is_option(argv[i], "--runs")) {
			val = strcmp(argv[i], "-n") == 0 ? (i + 1 < sep ? argv[++i] : NULL)
							 : option_value(sep, argv, &i, "--runs");
			if (!val || !parse_u64_range(val, 1, 1000, &v))
				return sweep_error("--runs: '%s' is not a count 1..1000",
						   val ? val : "");
			s->runs = (unsigned)v;
		} else {
			s->pass[s->n_pass++] = argv[i];
		}
	}
	if (!have_levels)
		return sweep_error("--arrival-speedup=LIST is required%s", "");
	if (!s->runs)
		return sweep_error("-n RUNS is required%s", "");
	if (sep + 1 >= argc)
		return sweep_error("no program given: lever causal sweep ... -- PROGRAM%s", "");
	s->program = argv + sep + 1;
	return 0;
}

/* One run: lever causal --arrival-speedup=D PASS... -- PROGRAM; its exit status. */
static int run_level(const struct sweep *s, const char *level, char **argv_buf)
{
	char arrival[64];
	int n = 0, status;
	pid_t pid;

	snprintf(arrival, sizeof(arrival), "--arrival-speedup=%s", level);
	argv_buf[n++] = "lever";
	argv_buf[n++] = "causal";
	argv_buf[n++] = arrival;
	for (int i = 0; i < s->n_pass; i++)
		argv_buf[n++] = s->pass[i];
	argv_buf[n++] = "--";
	for (char **p = s->program; *p; p++)
		argv_buf[n++] = *p;
	argv_buf[n] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "lever causal sweep: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execv("/proc/self/exe", argv_buf);
		fprintf(stderr, "lever causal sweep: cannot run lever: %s\n", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int cmd_causal_sweep(int argc, char **argv)
{
	struct sweep s = {.runs = 0};
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
		ret = ret < 0 ? 0 : ret;
		goto out;
	}
	total = s.runs * (unsigned)s.n_levels;
	for (unsigned r = 0; r < s.runs; r++) {
		for (size_t k = 0; k < s.n_levels; k++) {
			const char *level = s.levels[(k + r) % s.n_levels];

			fprintf(stderr, "lever causal sweep: run %u/%u, arrival speedup %s ns\n",
				++done, total, level);
			ret = run_level(&s, level, argv_buf);
			if (ret) {
				fprintf(stderr,
					"lever causal sweep: the run at arrival speedup %s ns "
					"exited with status %d; stopping\n",
					level, ret);
				goto out;
			}
		}
	}
out:
	free(s.pass);
	free(argv_buf);
	return ret;
}
