/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Before a command writes a report file (--html, --export-*): no command may
 * write over one of its inputs, and an existing file that holds data a run
 * produced (a causal profile, a samples file: the caller says what it
 * recognises, so this hallway knows no tool's format), not a report, is only
 * replaced when the user says --force (issue 14, point 9: `lever causal report --html profile.coz`
 * read the profile, then wrote HTML over it). An input is recognized by
 * device and inode, so another name for the same file is caught too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report.h"

#define SNIFF_BYTES 4096

static bool same_file(const struct stat *a, const char *path)
{
	struct stat b;

	return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* What the existing file holds, if it is data rather than a report; NULL otherwise. */
static const char *data_kind(const char *path, report_data_kind_fn recognise)
{
	char head[SNIFF_BYTES + 1];
	const char *kind = NULL;
	FILE *f = fopen(path, "r");
	size_t n;
	char *nl;

	if (!f)
		return NULL;
	n = fread(head, 1, SNIFF_BYTES, f);
	fclose(f);
	head[n] = '\0';
	if (n == SNIFF_BYTES && (nl = strrchr(head, '\n')))
		nl[1] = '\0'; /* whole lines only */
	kind = recognise(head);
	return kind;
}

int report_output_check(const char *out, const char *const *inputs, size_t n_inputs, bool force,
			report_data_kind_fn recognise, char *err, size_t size)
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
	if (force || !recognise || !S_ISREG(st.st_mode) || !(kind = data_kind(out, recognise)))
		return 0;
	snprintf(err, size,
		 "%s exists and holds %s: refusing to overwrite it (--force to replace it)", out,
		 kind);
	return -1;
}
