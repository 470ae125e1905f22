// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The struct data model of spec autocpa.md §2.6 and the x86-64 SysV
 * placement every algorithm lays fields out with (spec §2.7E "precise
 * formula": align each field, pad, round the size up).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

static bool is_power_of_two(uint32_t v)
{
	return v && !(v & (v - 1));
}

struct layout_struct *layout_struct_new(const char *name)
{
	struct layout_struct *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->name = strdup(name);
	if (!s->name) {
		free(s);
		return NULL;
	}
	s->align = 1;
	return s;
}

/* Where the next field of this alignment goes after the fields so far. */
static uint32_t next_offset(const struct layout_struct *s, uint32_t align)
{
	uint32_t end = 0;

	if (s->n_fields) {
		const struct layout_field *last = &s->fields[s->n_fields - 1];
		end = last->offset + last->size;
	}
	return align_up(end, align);
}

int layout_struct_add_field(struct layout_struct *s, const char *type, const char *name,
			    const char *array_suffix, uint32_t offset, uint32_t size,
			    uint32_t align)
{
	struct layout_field *grown, *f;

	if (!is_power_of_two(align) || align > LAYOUT_LINE_SIZE)
		return -1;
	/* Nothing may follow a flexible array member. */
	if (s->n_fields && s->fields[s->n_fields - 1].flexible)
		return -1;
	if (offset != next_offset(s, align))
		return -1;
	grown = realloc(s->fields, (s->n_fields + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	s->fields = grown;
	f = &s->fields[s->n_fields];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	f->type = strdup(type);
	f->array_suffix = strdup(array_suffix ? array_suffix : "");
	if (!f->name || !f->type || !f->array_suffix) {
		free(f->name);
		free(f->type);
		free(f->array_suffix);
		return -1;
	}
	f->offset = offset;
	f->size = size;
	f->align = align;
	f->flexible = strcmp(f->array_suffix, "[]") == 0;
	if (f->flexible && size != 0) {
		free(f->name);
		free(f->type);
		free(f->array_suffix);
		return -1;
	}
	if (align > s->align)
		s->align = align;
	s->n_fields++;
	return 0;
}

int layout_struct_finish(struct layout_struct *s)
{
	if (!s->n_fields)
		return -1;
	s->size = align_up(next_offset(s, 1), s->align);
	return 0;
}

long layout_field_index(const struct layout_struct *s, const char *name)
{
	for (size_t i = 0; i < s->n_fields; i++)
		if (strcmp(s->fields[i].name, name) == 0)
			return (long)i;
	return -1;
}

long layout_program_struct_index(const struct layout_program *p, const char *name)
{
	for (size_t i = 0; i < p->n_structs; i++)
		if (strcmp(p->structs[i]->name, name) == 0)
			return (long)i;
	return -1;
}

int layout_pin_field(struct layout_struct *s, const char *name)
{
	long i = layout_field_index(s, name);

	if (i < 0)
		return -1;
	s->fields[i].pinned = true;
	return 0;
}

void layout_struct_free(struct layout_struct *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_fields; i++) {
		free(s->fields[i].name);
		free(s->fields[i].type);
		free(s->fields[i].array_suffix);
	}
	for (size_t i = 0; i < s->n_patterns; i++)
		free(s->patterns[i].bits);
	free(s->patterns);
	free(s->objects);
	free(s->frozen);
	free(s->fields);
	free(s->name);
	free(s);
}

int layout_struct_add_object_access(struct layout_struct *s, uint64_t object, uint32_t field,
				    uint32_t tid, uint64_t count, bool write)
{
	if (field >= s->n_fields)
		return -1;
	if (s->n_objects == s->objects_cap) {
		size_t cap = s->objects_cap ? 2 * s->objects_cap : 16;
		struct layout_object_access *g = realloc(s->objects, cap * sizeof(*g));

		if (!g)
			return -1;
		s->objects = g;
		s->objects_cap = cap;
	}
	s->objects[s->n_objects++] = (struct layout_object_access){.object = object,
								   .field = field,
								   .tid = tid,
								   .weight = count,
								   .writes = write ? count : 0};
	return 0;
}

static int compare_object_access(const void *x, const void *y)
{
	const struct layout_object_access *a = x, *b = y;

	if (a->object != b->object)
		return a->object < b->object ? -1 : 1;
	if (a->field != b->field)
		return a->field < b->field ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* Sorted so that each object's accesses are consecutive; equal keys merged. */
void layout_struct_objects_finish(struct layout_struct *s)
{
	size_t n = 0;

	if (!s->n_objects)
		return;
	qsort(s->objects, s->n_objects, sizeof(*s->objects), compare_object_access);
	for (size_t i = 1; i < s->n_objects; i++) {
		if (!compare_object_access(&s->objects[n], &s->objects[i])) {
			s->objects[n].weight += s->objects[i].weight;
			s->objects[n].writes += s->objects[i].writes;
		} else {
			s->objects[++n] = s->objects[i];
		}
	}
	s->n_objects = n + 1;
}

uint32_t layout_place(const struct layout_struct *s, const uint32_t *order, const bool *line_start,
		      uint32_t *offsets)
{
	uint32_t end = 0, align = s->align;

	for (size_t k = 0; k < s->n_fields; k++) {
		const struct layout_field *f = &s->fields[order[k]];
		uint32_t a = f->align;

		if (line_start && line_start[order[k]]) {
			a = LAYOUT_LINE_SIZE;
			align = LAYOUT_LINE_SIZE;
		}
		offsets[k] = align_up(end, a);
		end = offsets[k] + f->size;
	}
	return align_up(end, align);
}
