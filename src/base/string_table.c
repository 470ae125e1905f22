/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Interned strings: each distinct string stored once and named by a small id,
 * 0..n-1 in order of first appearance, so that callers keep ids in their
 * records and compare them with ==. The profile model interns its source
 * lines and names with it, the DWARF line tables their file paths.
 *
 * Open addressing with linear probing over a power-of-two slot array kept at
 * most half full; each string's hash is kept, so growing never rehashes text
 * and a probe compares bytes only when the hashes agree. This allocates: use
 * it on the analysis side, never in a signal handler or on a hot path.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

#define FIRST_SLOTS 64

/* FNV-1a folded so that the low bits, which pick the slot, see the high ones. */
static uint64_t string_hash(const char *s, size_t len)
{
	uint64_t h = fnv1a(FNV1A_INIT, s, len);

	return h ^ (h >> 29);
}

void string_table_init(struct string_table *t)
{
	memset(t, 0, sizeof(*t));
}

void string_table_free(struct string_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->text[i]);
	free(t->text);
	free(t->hashes);
	free(t->slots);
	string_table_init(t);
}

/* Slot holding s (its id + 1), or the empty slot where it would go. */
static size_t string_table_probe(const struct string_table *t, const char *s, size_t len,
				 uint64_t h)
{
	size_t mask = t->n_slots - 1, j = h & mask;

	for (; t->slots[j]; j = (j + 1) & mask) {
		uint32_t id = t->slots[j] - 1;
		const char *x = t->text[id];

		if (t->hashes[id] == h && memcmp(x, s, len) == 0 && x[len] == '\0')
			break;
	}
	return j;
}

static bool string_table_grow_slots(struct string_table *t)
{
	size_t size = t->n_slots ? t->n_slots * 2 : FIRST_SLOTS;
	uint32_t *slots;

	if (size > SIZE_MAX / 2 / sizeof(*slots))
		return false;
	slots = calloc(size, sizeof(*slots));
	if (!slots)
		return false;
	for (size_t id = 0; id < t->n; id++) {
		size_t j = t->hashes[id] & (size - 1);

		while (slots[j])
			j = (j + 1) & (size - 1);
		slots[j] = (uint32_t)id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->n_slots = size;
	return true;
}

/* Room for one more string in text[] and hashes[]. */
static bool string_table_grow_text(struct string_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : FIRST_SLOTS;
	char **text;
	uint64_t *hashes;

	if (t->n < t->cap)
		return true;
	if (cap > SIZE_MAX / sizeof(*hashes))
		return false;
	text = realloc(t->text, cap * sizeof(*text));
	if (!text)
		return false;
	t->text = text;
	hashes = realloc(t->hashes, cap * sizeof(*hashes));
	if (!hashes)
		return false;
	t->hashes = hashes;
	t->cap = cap;
	return true;
}

uint32_t string_table_find(const struct string_table *t, const char *s, size_t len)
{
	uint32_t slot;

	if (!t->n_slots)
		return UINT32_MAX;
	slot = t->slots[string_table_probe(t, s, len, string_hash(s, len))];
	return slot ? slot - 1 : UINT32_MAX;
}

uint32_t string_table_intern(struct string_table *t, const char *s, size_t len)
{
	uint64_t h = string_hash(s, len);
	size_t j;
	char *copy;

	if (t->n_slots) {
		j = string_table_probe(t, s, len, h);
		if (t->slots[j])
			return t->slots[j] - 1;
	}
	/* UINT32_MAX - 1 ids at most: id + 1 must fit a slot, UINT32_MAX means failure. */
	if (t->n >= UINT32_MAX - 1)
		return UINT32_MAX;
	if ((t->n + 1) * 2 > t->n_slots && !string_table_grow_slots(t))
		return UINT32_MAX;
	if (!string_table_grow_text(t))
		return UINT32_MAX;
	copy = malloc(len + 1);
	if (!copy)
		return UINT32_MAX;
	memcpy(copy, s, len);
	copy[len] = '\0';
	j = string_table_probe(t, s, len, h);
	t->text[t->n] = copy;
	t->hashes[t->n] = h;
	t->slots[j] = (uint32_t)t->n + 1;
	return (uint32_t)t->n++;
}

const char *string_table_text(const struct string_table *t, uint32_t id)
{
	return id < t->n ? t->text[id] : "";
}

char **string_table_release(struct string_table *t, size_t *n)
{
	char **text = t->text;

	*n = t->n;
	t->text = NULL;
	t->n = 0;
	string_table_free(t);
	return text;
}
