/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Private to src/causal: hash tables used by the profile model. */
#ifndef LEVER_CAUSAL_TABLE_H
#define LEVER_CAUSAL_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* Interned strings, ids 0..n-1 in order of first appearance. */
struct string_table {
	char **text;
	size_t n, cap_text;
	uint32_t *slots; /* ids, UINT32_MAX = empty */
	size_t cap_slots;
};

void string_table_init(struct string_table *t);
void string_table_free(struct string_table *t);
/* Id of s[0..len), adding it if new; UINT32_MAX when out of memory. */
uint32_t string_table_intern(struct string_table *t, const char *s, size_t len);
/* Id of s[0..len), or UINT32_MAX if absent. */
uint32_t string_table_find(const struct string_table *t, const char *s, size_t len);
const char *string_table_text(const struct string_table *t, uint32_t id);

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
