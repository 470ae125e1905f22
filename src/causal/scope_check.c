/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Before a run of `lever causal`: do the source scope (-s) and the fixed line
 * (--fixed-line) name anything in the program? When only the main executable
 * is in scope, its line table answers this before the program runs, and a
 * pattern that matches no source file or a line that does not exist is an
 * error that names what the program does have, instead of a run that warns
 * "build with -g" or experiments on random lines (issue 14 point 12).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "causal/causal.h"
#include "elf/elf.h"

#define FILES_SHOWN 5

/* Does path match one of the tab-separated patterns ('%' wildcard)? */
static bool in_source_scope(const char *patterns, const char *path)
{
	char *copy = strdup(patterns), *save = NULL;
	bool match = false;

	if (!copy)
		return true;
	for (char *tok = strtok_r(copy, "\t", &save); tok && !match;
	     tok = strtok_r(NULL, "\t", &save))
		match = wildcard_match(tok, path);
	free(copy);
	return match;
}

/* Files of the table that have at least one line, in table order. */
static bool file_has_lines(const struct line_table *t, size_t file_id)
{
	for (size_t l = 0; l < t->n_lines; l++)
		if (t->lines[l].file_id == file_id)
			return true;
	return false;
}

static void list_files(const struct line_table *t, const char *patterns, bool in_scope_only)
{
	size_t shown = 0, total = 0;

	for (size_t f = 0; f < t->n_files; f++) {
		if (!file_has_lines(t, f) ||
		    (in_scope_only && !in_source_scope(patterns, t->files[f])))
			continue;
		if (shown++ < FILES_SHOWN)
			fprintf(stderr, "  %s\n", t->files[f]);
		total++;
	}
	if (total > FILES_SHOWN)
		fprintf(stderr, "  ... and %zu more\n", total - FILES_SHOWN);
}

static bool scope_matches_a_file(const struct line_table *t, const char *patterns)
{
	for (size_t f = 0; f < t->n_files; f++)
		if (file_has_lines(t, f) && in_source_scope(patterns, t->files[f]))
			return true;
	return false;
}

int causal_check_program_scope(const char *who, const char *program, const char *debug_root,
			       const char *source_scope, const char *fixed_line)
{
	const char *patterns = source_scope && *source_scope ? source_scope : "%";
	char err[512], file[4096];
	struct line_table *t;
	unsigned line;
	long id;
	int ret = 0;

	t = line_table_load(program, debug_root, NULL, NULL, err, sizeof(err));
	if (!t)
		return 0; /* no line information: the runtime says so, with its remedy */
	if (!scope_matches_a_file(t, patterns)) {
		fprintf(stderr,
			"%s: the source scope (-s) matches none of the source files of %s; "
			"patterns are matched against whole absolute paths ('%%' matches "
			"anything), and its files are:\n",
			who, program);
		list_files(t, patterns, false);
		ret = -1;
	} else if (fixed_line && parse_file_line(fixed_line, file, sizeof(file), &line)) {
		id = line_table_find_line(t, file, line);
		if (id < 0 || !in_source_scope(patterns, t->files[t->lines[id].file_id])) {
			fprintf(stderr,
				"%s: --fixed-line %s: %s has no code at that line in its "
				"source scope; its source files are:\n",
				who, fixed_line, program);
			list_files(t, patterns, true);
			ret = -1;
		}
	}
	line_table_free(t);
	return ret;
}
