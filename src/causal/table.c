/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Small hash tables for the profile model: interned strings, and a map from
 * 64-bit keys to 32-bit values. Open addressing with linear probing; tables
 * grow at 50% load.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "causal/table.h"

static uint64_t hash_bytes(const char *s, size_t len)
{
	return fnv1a(FNV1A_INIT, s, len);
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
	free(t->slots);
	string_table_init(t);
}

static int string_table_grow(struct string_table *t)
{
	size_t cap = t->cap_slots ? t->cap_slots * 2 : 64;
	uint32_t *slots = malloc(cap * sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < cap; i++)
		slots[i] = UINT32_MAX;
	for (size_t i = 0; i < t->n; i++) {
		uint64_t h = hash_bytes(t->text[i], strlen(t->text[i]));
		size_t j = h & (cap - 1);

		while (slots[j] != UINT32_MAX)
			j = (j + 1) & (cap - 1);
		slots[j] = (uint32_t)i;
	}
	free(t->slots);
	t->slots = slots;
	t->cap_slots = cap;
	return 0;
}

static size_t string_table_probe(const struct string_table *t, const char *s, size_t len)
{
	size_t j = hash_bytes(s, len) & (t->cap_slots - 1);

	while (t->slots[j] != UINT32_MAX) {
		const char *x = t->text[t->slots[j]];

		if (strncmp(x, s, len) == 0 && x[len] == '\0')
			break;
		j = (j + 1) & (t->cap_slots - 1);
	}
	return j;
}

uint32_t string_table_find(const struct string_table *t, const char *s, size_t len)
{
	if (!t->cap_slots)
		return UINT32_MAX;
	return t->slots[string_table_probe(t, s, len)];
}

uint32_t string_table_intern(struct string_table *t, const char *s, size_t len)
{
	size_t j;
	char *copy;

	if (t->cap_slots && t->slots[string_table_probe(t, s, len)] != UINT32_MAX)
		return t->slots[string_table_probe(t, s, len)];
	if (t->n >= UINT32_MAX - 1)
		return UINT32_MAX;
	if ((t->n + 1) * 2 > t->cap_slots && string_table_grow(t))
		return UINT32_MAX;
	if (t->n == t->cap_text) {
		size_t cap = t->cap_text ? t->cap_text * 2 : 64;
		char **text = realloc(t->text, cap * sizeof(*text));

		if (!text)
			return UINT32_MAX;
		t->text = text;
		t->cap_text = cap;
	}
	copy = malloc(len + 1);
	if (!copy)
		return UINT32_MAX;
	memcpy(copy, s, len);
	copy[len] = '\0';
	j = string_table_probe(t, s, len);
	t->text[t->n] = copy;
	t->slots[j] = (uint32_t)t->n;
	return (uint32_t)t->n++;
}

const char *string_table_text(const struct string_table *t, uint32_t id)
{
	return id < t->n ? t->text[id] : "";
}

void u64_map_init(struct u64_map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64_map_free(struct u64_map *m)
{
	free(m->keys);
	free(m->values);
	u64_map_init(m);
}

static int u64_map_grow(struct u64_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint32_t *values = malloc(cap * sizeof(*values));

	if (!keys || !values) {
		free(keys);
		free(values);
		return -1;
	}
	for (size_t i = 0; i < cap; i++)
		values[i] = UINT32_MAX;
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (m->values[i] == UINT32_MAX)
			continue;
		j = hash_u64(m->keys[i]) & (cap - 1);
		while (values[j] != UINT32_MAX)
			j = (j + 1) & (cap - 1);
		keys[j] = m->keys[i];
		values[j] = m->values[i];
	}
	free(m->keys);
	free(m->values);
	m->keys = keys;
	m->values = values;
	m->cap = cap;
	return 0;
}

static size_t u64_map_probe(const struct u64_map *m, uint64_t key)
{
	size_t j = hash_u64(key) & (m->cap - 1);

	while (m->values[j] != UINT32_MAX && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	return j;
}

uint32_t u64_map_get(const struct u64_map *m, uint64_t key)
{
	if (!m->cap)
		return UINT32_MAX;
	return m->values[u64_map_probe(m, key)];
}

int u64_map_put(struct u64_map *m, uint64_t key, uint32_t value)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && u64_map_grow(m))
		return -1;
	j = u64_map_probe(m, key);
	if (m->values[j] == UINT32_MAX)
		m->n++;
	m->keys[j] = key;
	m->values[j] = value;
	return 0;
}
