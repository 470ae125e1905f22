/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A map from 64-bit keys to 32-bit values for the profile model (its strings
 * are interned with src/base's string_table). Open addressing with linear
 * probing; the table grows at 50% load.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "causal/table.h"

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
