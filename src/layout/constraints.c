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
#include <inttypes.h>
#include <stdbool.h>
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
	long i = layout_program_struct_index(p, name);

	return i < 0 ? NULL : p->structs[i];
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

/* ------------------------------------------------- likely casts (guessed) */

/* Fields of a shared prefix must match this many, covering this many bytes. */
#define PREFIX_MIN_FIELDS 3
#define PREFIX_MIN_BYTES  16
#define PREFIX_MIN_NAMES  2

/* "slab_automove~2" and "slab_automove" are one C name defined twice. */
static bool same_c_name(const char *a, const char *b)
{
	size_t la = strcspn(a, "~"), lb = strcspn(b, "~");

	return la == lb && strncmp(a, b, la) == 0;
}

/*
 * The leading fields of a and b that sit at the same offsets with the same
 * sizes (flexible members end it); *names: how many of them also share
 * their name.
 */
static size_t shared_prefix(const struct layout_struct *a, const struct layout_struct *b,
			    size_t *names)
{
	size_t k = 0;

	*names = 0;
	while (k < a->n_fields && k < b->n_fields) {
		const struct layout_field *x = &a->fields[k], *y = &b->fields[k];

		if (x->flexible || y->flexible || x->offset != y->offset || x->size != y->size)
			break;
		*names += strcmp(x->name, y->name) == 0;
		k++;
	}
	return k;
}

static bool prefix_counts(const struct layout_struct *a, size_t k, size_t names)
{
	const struct layout_field *last = k ? &a->fields[k - 1] : NULL;

	return k >= PREFIX_MIN_FIELDS && names >= PREFIX_MIN_NAMES &&
	       last->offset + last->size >= PREFIX_MIN_BYTES;
}

static void pin_at_offsets(struct layout_struct *s, size_t k)
{
	for (size_t i = 0; i < k; i++) {
		s->fields[i].pinned = true;
		s->fields[i].at_offset = true;
	}
}

/* A first member of struct or union type (not a pointer, not an array). */
static bool embeds_first(const struct layout_struct *s)
{
	const struct layout_field *f = s->n_fields ? &s->fields[0] : NULL;

	return f && !f->flexible && !f->array_suffix[0] && !strchr(f->type, '*') &&
	       (strncmp(f->type, "struct ", 7) == 0 || strncmp(f->type, "union ", 6) == 0);
}

static void note_prefix(FILE *notes, const struct layout_struct *s,
			const struct layout_struct *other, size_t k, size_t names)
{
	const struct layout_field *last = &s->fields[k - 1];

	fprintf(notes,
		"lever layout report: %s: its first %zu fields (%" PRIu32
		" bytes) sit at the offsets and sizes of %s's (%zu with the same names): "
		"a cast between the two is likely, so they stay at their offsets (a "
		"constraint file's `unpin %s` lets them move)\n",
		s->name, k, last->offset + last->size, other->name, names, s->name);
}

int layout_pin_likely_casts(struct layout_program *p, FILE *notes)
{
	for (size_t i = 0; i < p->n_structs; i++) {
		struct layout_struct *a = p->structs[i];

		if (embeds_first(a) && !a->fields[0].pinned) {
			a->fields[0].pinned = true;
			if (notes && a->total_raw)
				fprintf(notes,
					"lever layout report: %s: its first member %s is a %s: a "
					"pointer to it may be cast to the whole (container_of, a "
					"base struct), so it stays first (`unpin %s` lets it "
					"move)\n",
					a->name, a->fields[0].name, a->fields[0].type, a->name);
		}
		for (size_t j = i + 1; j < p->n_structs; j++) {
			struct layout_struct *b = p->structs[j];
			size_t names, k;

			if (same_c_name(a->name, b->name))
				continue;
			k = shared_prefix(a, b, &names);
			if (!prefix_counts(a, k, names))
				continue;
			pin_at_offsets(a, k);
			pin_at_offsets(b, k);
			if (notes && a->total_raw)
				note_prefix(notes, a, b, k, names);
			if (notes && b->total_raw)
				note_prefix(notes, b, a, k, names);
		}
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
	bool whole = strcmp(verb, "reorder") == 0 || strcmp(verb, "unpin") == 0;
	char why[1024];

	if (!on_field && !whole && strcmp(verb, "keep") != 0)
		return fail(r,
			    "unknown constraint '%s' (known: keep, reorder, unpin, fixed, first, "
			    "last)",
			    verb);
	if (n < 2)
		return fail(r, "%s: which struct?", verb);
	if (on_field && n != 3)
		return fail(r, "expected: %s STRUCT FIELD", verb);
	if (whole && n != 2)
		return fail(r, "expected: %s STRUCT", verb);
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
	if (strcmp(verb, "unpin") == 0) {
		for (size_t i = 0; i < s->n_fields; i++)
			s->fields[i].pinned = s->fields[i].at_offset = false;
		return 0;
	}
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
