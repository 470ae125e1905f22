/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Private to src/causal: the hash map used by the profile model. Its interned
 * strings are base's struct string_table, declared through base.h.
 */
#ifndef LEVER_CAUSAL_TABLE_H
#define LEVER_CAUSAL_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* uint64 key -> uint32 value (UINT32_MAX is reserved for "absent"). */
struct u64_map {
	uint64_t *keys;
	uint32_t *values;
	size_t n, cap;
};

void u64_map_init(struct u64_map *m);
void u64_map_free(struct u64_map *m);
uint32_t u64_map_get(const struct u64_map *m, uint64_t key);
int u64_map_put(struct u64_map *m, uint64_t key, uint32_t value);

#endif
