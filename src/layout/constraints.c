// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * ABI constraints of `lever layout report` (spec autocpa.md §5.6 and the
 * §7 checklist's "user constraint file"; issue 17): what the thesis ignores
 * and a reorder must not break.
 *
 * - Structs shared with other binaries: a struct that the code of a shared
 *   object of the record references (its `ref` lines come from that
 *   library's DWARF) is laid out by that library's build too; reordering it
 *   in the program alone breaks the ABI. It is reported, never reordered.
 * - The user's constraint file (doc/formats/layout-constraints.md): structs
 *   not to touch (on-disk formats, casts, other binaries the record does not
 *   show), fields fixed at their offset, fields that must stay first (a
 *   "base class" member, container_of at offset 0) or last.
 *
 * Fixed and first/last fields are pinned (they keep their position, as a
 * record's `pinned` flag does); `fixed` also has its offset checked after
 * placing, since fields moved before it can change the padding.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"

#define CONSTRAINTS_MAGIC   "lever-layout-constraints"
#define CONSTRAINTS_VERSION 1
#define MAX_LINE	    4096

static struct layout_struct *find_struct(struct layout_program *p, const char *name)
{
	for (size_t i = 0; i < p->n_structs; i++)
		if (strcmp(p->structs[i]->name, name) == 0)
			return p->structs[i];
	return NULL;
}

static int freeze(struct layout_struct *s, const char *why)
{
	char *copy = strdup(why);

	if (!copy)
		return -1;
	free(s->frozen);
	s->frozen = copy;
	return 0;
}

int layout_mark_shared_structs(struct layout_record *rec)
{
	struct layout_program *p = &rec->program;
	char why[1024];

	for (size_t i = 0; i < p->n_refs; i++) {
		size_t m = LAYOUT_PC_MODULE(p->refs[i].pc);
		struct layout_struct *s = p->structs[p->refs[i].struct_index];

		if (!m || s->frozen || m >= rec->n_modules)
			continue;
		snprintf(why, sizeof(why),
			 "the code of %s uses it (its DWARF has the type): its layout is that "
			 "binary's ABI too (a constraint file's `reorder %s` allows it)",
			 rec->modules[m].path, s->name);
		if (freeze(s, why))
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- the file */

struct reader {
	const char *name;
	unsigned line;
	char *err;
	size_t err_size;
};

__attribute__((format(printf, 2, 3))) static int fail(struct reader *r, const char *fmt, ...)
{
	int n = snprintf(r->err, r->err_size, "%s:%u: ", r->name, r->line);
	va_list ap;

	if (n > 0 && (size_t)n < r->err_size) {
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->err_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Split on blanks into at most max words; the rest of the line after max-1 words is the last. */
static size_t split(char *line, char **word, size_t max)
{
	size_t n = 0;
	char *p = line;

	while (n < max) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		word[n++] = p;
		if (n == max) {
			/* the rest, without trailing blanks */
			char *end = p + strlen(p);

			while (end > p && isspace((unsigned char)end[-1]))
				*--end = '\0';
			break;
		}
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

static int check_header(struct reader *r, char **word, size_t n)
{
	if (n != 2 || strcmp(word[0], CONSTRAINTS_MAGIC) != 0)
		return fail(r, "not a constraint file: the first line must be '%s %d'",
			    CONSTRAINTS_MAGIC, CONSTRAINTS_VERSION);
	if (strcmp(word[1], "1") != 0)
		return fail(
		    r, "version %s of the constraint format is not known (this lever reads %d)",
		    word[1], CONSTRAINTS_VERSION);
	return 0;
}

/* The position a `first` or `last` field must hold. */
static long edge_position(const struct layout_struct *s, bool first)
{
	long last = (long)s->n_fields - 1;

	if (first)
		return 0;
	if (last > 0 && s->fields[last].flexible)
		last--; /* the flexible array member is last by itself */
	return last;
}

static int apply_field(struct reader *r, struct layout_struct *s, const char *verb,
		       const char *field)
{
	long i = layout_field_index(s, field);

	if (i < 0)
		return fail(r, "struct %s has no field %s", s->name, field);
	if (s->fields[i].flexible)
		return fail(r, "%s.%s is a flexible array member: it stays last by itself", s->name,
			    field);
	if (strcmp(verb, "first") == 0 || strcmp(verb, "last") == 0) {
		bool first = verb[0] == 'f';

		if (i != edge_position(s, first))
			return fail(r,
				    "%s is not where the constraint keeps it: `first` and `last` "
				    "keep a field where it is (%s)",
				    field, first ? "first" : "last");
	} else {
		s->fields[i].at_offset = true;
	}
	s->fields[i].pinned = true;
	return 0;
}

static int apply_line(struct reader *r, struct layout_program *p, char **word, size_t n,
		      FILE *notes)
{
	const char *verb = word[0];
	struct layout_struct *s;
	bool on_field =
	    strcmp(verb, "fixed") == 0 || strcmp(verb, "first") == 0 || strcmp(verb, "last") == 0;
	char why[1024];

	if (!on_field && strcmp(verb, "keep") != 0 && strcmp(verb, "reorder") != 0)
		return fail(r, "unknown constraint '%s' (known: keep, reorder, fixed, first, last)",
			    verb);
	if (n < 2)
		return fail(r, "%s: which struct?", verb);
	if (on_field && n != 3)
		return fail(r, "expected: %s STRUCT FIELD", verb);
	if (strcmp(verb, "reorder") == 0 && n != 2)
		return fail(r, "expected: reorder STRUCT");
	s = find_struct(p, word[1]);
	if (!s) {
		if (notes)
			fprintf(notes,
				"%s:%u: struct %s is not in the record: constraint skipped\n",
				r->name, r->line, word[1]);
		return 0;
	}
	if (on_field)
		return apply_field(r, s, verb, word[2]);
	if (strcmp(verb, "reorder") == 0) {
		free(s->frozen);
		s->frozen = NULL;
		return 0;
	}
	snprintf(why, sizeof(why), "%s:%u says so%s%s", r->name, r->line, n == 3 ? ": " : "",
		 n == 3 ? word[2] : "");
	return freeze(s, why) ? fail(r, "out of memory") : 0;
}

int layout_constraints_read(FILE *f, const char *name, struct layout_program *p, FILE *notes,
			    char *err, size_t err_size)
{
	struct reader r = {.name = name, .err = err, .err_size = err_size};
	char line[MAX_LINE + 2];

	while (fgets(line, sizeof(line), f)) {
		char *word[3];
		size_t n, len = strlen(line);

		r.line++;
		if (len > MAX_LINE)
			return fail(&r, "line longer than %d bytes", MAX_LINE);
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		n = split(line, word, 3);
		if (r.line == 1) {
			if (check_header(&r, word, n))
				return -1;
			continue;
		}
		if (!n || word[0][0] == '#')
			continue;
		if (apply_line(&r, p, word, n, notes))
			return -1;
	}
	if (ferror(f)) {
		r.line++;
		return fail(&r, "read error");
	}
	if (r.line == 0) {
		r.line = 1;
		return fail(&r, "empty: the first line must be '%s %d'", CONSTRAINTS_MAGIC,
			    CONSTRAINTS_VERSION);
	}
	return 0;
}
