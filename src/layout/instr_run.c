/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `lever layout record --source=instr` (issue 17): run a program built with
 * `lever cc --layout` with its runtime recording (LEVER_LAYOUT_TRACE, a
 * fresh directory, one trace per process), then replay the program's trace
 * through the cache model (instr.c) into the record. Traces of other
 * processes the program started are kept and named, not mixed in: their
 * address spaces are not the program's.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "layout/layout.h"
#include "layout/runtime/instr_format.h"

void layout_instr_run_default(struct layout_instr_run *run)
{
	memset(run, 0, sizeof(*run));
	run->who = "lever layout record";
	run->period = LAYOUT_INSTR_DEFAULT_PERIOD;
	run->burst = LAYOUT_INSTR_DEFAULT_BURST;
	layout_instr_options_default(&run->replay);
}

/* The file execvp would run for name: itself if it has a '/', else PATH's. */
static int find_program(const char *name, char *path, size_t size)
{
	const char *dirs = getenv("PATH");

	if (strchr(name, '/')) {
		snprintf(path, size, "%s", name);
		return access(path, X_OK);
	}
	for (const char *d = dirs ? dirs : "/usr/local/bin:/usr/bin:/bin"; *d;) {
		size_t len = strcspn(d, ":");

		snprintf(path, size, "%.*s/%s", (int)len, len ? d : ".", name);
		if (access(path, X_OK) == 0)
			return 0;
		d += len + (d[len] == ':');
	}
	return -1;
}

static void set_count(const char *name, uint32_t value)
{
	char text[16];

	snprintf(text, sizeof(text), "%u", value);
	setenv(name, text, 1);
}

static pid_t start(const struct layout_instr_run *run, const char *dir)
{
	char pattern[4200];
	pid_t pid;

	snprintf(pattern, sizeof(pattern), "%s/trace.%%p", dir);
	fflush(NULL);
	pid = fork();
	if (pid != 0)
		return pid;
	setenv(LAYOUT_INSTR_ENV_TRACE, pattern, 1);
	set_count(LAYOUT_INSTR_ENV_PERIOD, run->period);
	set_count(LAYOUT_INSTR_ENV_BURST, run->burst);
	execvp(run->argv[0], run->argv);
	fprintf(stderr, "%s: %s: %s\n", run->who, run->argv[0], strerror(errno));
	_exit(127);
}

static int wait_child(pid_t pid, int *status)
{
	struct sigaction ignore = {.sa_handler = SIG_IGN}, old_int, old_quit;
	int rc = 0;

	/* ^C goes to the program; lever stays to write what it recorded */
	sigaction(SIGINT, &ignore, &old_int);
	sigaction(SIGQUIT, &ignore, &old_quit);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR) {
			rc = -1;
			break;
		}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	return rc;
}

/* Remove dir and the traces in it, but keep (and name) those of other processes. */
static void clean_up(const char *who, const char *dir, const char *program_trace)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t others = 0;

	unlink(program_trace);
	while (d && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			others++;
	if (d)
		closedir(d);
	if (others)
		fprintf(stderr,
			"%s: %zu trace(s) of other processes are in %s (replay one with "
			"--trace FILE)\n",
			who, others, dir);
	else
		rmdir(dir);
}

void layout_instr_print_summary(FILE *f, const char *who, const struct layout_instr_summary *s)
{
	fprintf(f,
		"%s: %zu accesses of %zu thread(s) replayed (%u of every %u logged); model: "
		"%llu L1 misses (%llu coherence, %llu false sharing)\n",
		who, s->records, s->threads, s->burst, s->period,
		(unsigned long long)(s->model.l1_load_miss + s->model.l1_store_miss),
		(unsigned long long)s->model.coherence_miss,
		(unsigned long long)s->model.false_sharing_miss);
	if (s->partial_bytes)
		fprintf(f, "%s: the trace ends in a cut record (%zu bytes ignored)\n", who,
			s->partial_bytes);
	if (s->bad_sites)
		fprintf(f, "%s: %llu records named no site of the program (dropped)\n", who,
			(unsigned long long)s->bad_sites);
}

int layout_instr_record(const struct layout_instr_run *run, FILE *out, int *wait_status)
{
	const char *tmp = getenv("TMPDIR");
	char program[4096], dir[4096], trace[4200], err[1024];
	struct layout_instr_summary sum;
	pid_t pid;
	int rc;

	*wait_status = 0;
	if (find_program(run->argv[0], program, sizeof(program)) < 0) {
		fprintf(stderr, "%s: %s: no such program\n", run->who, run->argv[0]);
		return -1;
	}
	if (!layout_instr_has_sites(program)) {
		fprintf(stderr,
			"%s: %s has no struct field-access sites: build it with "
			"lever cc --layout (GCC)\n",
			run->who, program);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s/lever-layout.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "%s: cannot make a directory for the trace: %s\n", run->who,
			strerror(errno));
		return -1;
	}
	pid = start(run, dir);
	if (pid < 0 || wait_child(pid, wait_status) < 0) {
		fprintf(stderr, "%s: cannot run %s: %s\n", run->who, program, strerror(errno));
		rmdir(dir);
		return -1;
	}
	snprintf(trace, sizeof(trace), "%s/trace.%d", dir, (int)pid);
	if (access(trace, R_OK) != 0) {
		fprintf(stderr,
			"%s: %s wrote no trace (exec failed, or it was killed before start-up)\n",
			run->who, program);
		clean_up(run->who, dir, trace);
		return -1;
	}
	rc = layout_instr_collect(trace, program, out, &run->replay, &sum, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", run->who, err);
	else
		layout_instr_print_summary(stderr, run->who, &sum);
	clean_up(run->who, dir, trace);
	return rc;
}
