/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Before a command writes a report file (--html, --export-*): no command may
 * write over one of its inputs, and an existing file that holds a causal
 * profile (doc/formats/profile.md) or a samples file (doc/formats/samples.md)
 * is data a run produced, not a report, so it is only replaced when the user
 * says --force (issue 14, point 9: `lever causal report --html profile.coz`
 * read the profile, then wrote HTML over it). An input is recognized by
 * device and inode, so another name for the same file is caught too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "causal/profile_format.h"
#include "report/report.h"

#define SNIFF_BYTES 4096

static bool same_file(const struct stat *a, const char *path)
{
	struct stat b;

	return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* The first non-blank line is a record of a causal profile, or a JSON Lines record. */
static bool looks_like_profile(const char *line)
{
	static const char *const types[] = {
	    PROFILE_RECORD_STARTUP,    PROFILE_RECORD_LEVER,	PROFILE_RECORD_EXPERIMENT,
	    PROFILE_RECORD_THROUGHPUT, PROFILE_RECORD_PROGRESS, PROFILE_RECORD_LATENCY,
	    PROFILE_RECORD_RUNTIME,    PROFILE_RECORD_SAMPLES,	PROFILE_RECORD_SHUTDOWN,
	};

	if (line[0] == '{')
		return strstr(line, "\"" PROFILE_JSON_KEY_TYPE "\"") != NULL;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t n = strlen(types[i]);

		if (strncmp(line, types[i], n) == 0 && line[n] == PROFILE_SEPARATOR[0])
			return true;
	}
	return false;
}

/* Every line read holds one number, or is blank or a '#' comment; at least one number. */
static bool looks_like_samples(char *text)
{
	bool any = false;

	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *end;

		line += strspn(line, " \t\r");
		if (!*line || *line == '#')
			continue;
		strtod(line, &end);
		if (end == line || end[strspn(end, " \t\r")] != '\0')
			return false;
		any = true;
	}
	return any;
}

/* What the existing file holds, if it is data rather than a report; NULL otherwise. */
static const char *data_kind(const char *path)
{
	char head[SNIFF_BYTES + 1];
	const char *kind = NULL;
	FILE *f = fopen(path, "r");
	size_t n;
	char *nl, *first;

	if (!f)
		return NULL;
	n = fread(head, 1, SNIFF_BYTES, f);
	fclose(f);
	head[n] = '\0';
	if (n == SNIFF_BYTES && (nl = strrchr(head, '\n')))
		nl[1] = '\0'; /* whole lines only */
	first = head + strspn(head, " \t\r\n");
	if (looks_like_profile(first))
		kind = "a causal profile";
	else if (looks_like_samples(head))
		kind = "samples";
	return kind;
}

int report_output_check(const char *out, const char *const *inputs, size_t n_inputs, bool force,
			char *err, size_t size)
{
	struct stat st;
	const char *kind;

	if (!out || strcmp(out, "-") == 0 || stat(out, &st) != 0)
		return 0; /* standard output, or a new file */
	for (size_t i = 0; i < n_inputs; i++) {
		if (inputs[i] && same_file(&st, inputs[i])) {
			snprintf(err, size, "%s is also an input (%s): refusing to write over it",
				 out, inputs[i]);
			return -1;
		}
	}
	if (force || !S_ISREG(st.st_mode) || !(kind = data_kind(out)))
		return 0;
	snprintf(err, size,
		 "%s exists and holds %s: refusing to overwrite it (--force to replace it)", out,
		 kind);
	return -1;
}
