// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The cache model of spec autocpa.md §8.4: deterministic, private L1 and
 * L2 per simulated core, a shared last-level cache, LRU sets indexed by
 * line address modulo the set count, 64-byte lines, write-allocate.
 *
 * Coherence is a directory per line (sharers, Modified owner) enough to
 * classify the misses sharing causes: a write invalidates the copies of
 * the other cores, and the next miss of such a core is a coherence miss —
 * false sharing when the bytes it had touched since the last transfer and
 * the writer's bytes do not overlap, true sharing when they do (§8.4
 * "false-sharing classification"). Other misses are cold (the core never
 * held the line) or replacement (capacity or conflict).
 *
 * Simplifications, stated: the levels are non-inclusive and filled on a
 * miss; a line a core loses from both private levels leaves the sharer set
 * (a dirty one is written back silently); the LLC is looked up even when
 * another core supplies the line; there is no prefetcher.
 */
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"

#define MAX_CORES 64

struct cache_level {
	uint32_t sets, ways;
	uint64_t *tags;	  /* line + 1; 0 = empty */
	uint64_t *stamps; /* last use, for LRU */
};

/* Directory entry of one line. */
struct line_state {
	uint64_t line_plus_1; /* 0 = free slot */
	uint64_t sharers;     /* cores holding it in L1 or L2 */
	uint64_t seen;	      /* cores that ever held it */
	uint64_t lost;	      /* cores whose copy another core's write invalidated */
	uint64_t lost_false;  /* ... where the bytes did not overlap */
	int32_t owner;	      /* core holding it Modified, or -1 */
};

struct field_counts {
	uint64_t key_plus_1; /* (struct << 32 | field) + 1; 0: free slot */
	uint32_t struct_index, field_index;
	struct layout_cache_counts counts;
};

struct layout_cache {
	uint32_t cores;
	struct cache_level *l1, *l2, llc;
	uint64_t clock;
	/* directory: open addressing; masks[slot * cores + core] = bytes touched since the last
	 * transfer */
	size_t dir_cap, dir_used;
	struct line_state *dir;
	uint64_t *masks;
	struct layout_cache_counts totals;
	/* per-(struct, field) counts: open addressing, key + 1 = 0 is free */
	size_t fields_cap, n_fields;
	struct field_counts *fields;
};

void layout_cache_config_default(struct layout_cache_config *c)
{
	c->cores = 4;
	c->l1 = (struct layout_cache_level_config){32 * 1024, 8};
	c->l2 = (struct layout_cache_level_config){256 * 1024, 4};
	c->llc = (struct layout_cache_level_config){8 * 1024 * 1024, 16};
}

static int level_init(struct cache_level *l, const struct layout_cache_level_config *c)
{
	if (!c->ways || !c->size || c->size % (c->ways * LAYOUT_LINE_SIZE))
		return -1;
	l->ways = c->ways;
	l->sets = c->size / (c->ways * LAYOUT_LINE_SIZE);
	l->tags = calloc((size_t)l->sets * l->ways, sizeof(*l->tags));
	l->stamps = calloc((size_t)l->sets * l->ways, sizeof(*l->stamps));
	return l->tags && l->stamps ? 0 : -1;
}

static void level_free(struct cache_level *l)
{
	free(l->tags);
	free(l->stamps);
}

void layout_cache_free(struct layout_cache *m)
{
	if (!m)
		return;
	for (uint32_t c = 0; m->l1 && c < m->cores; c++)
		level_free(&m->l1[c]);
	for (uint32_t c = 0; m->l2 && c < m->cores; c++)
		level_free(&m->l2[c]);
	free(m->l1);
	free(m->l2);
	level_free(&m->llc);
	free(m->dir);
	free(m->masks);
	free(m->fields);
	free(m);
}

struct layout_cache *layout_cache_new(const struct layout_cache_config *c)
{
	struct layout_cache *m;
	int rc = 0;

	if (!c->cores || c->cores > MAX_CORES)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->cores = c->cores;
	m->l1 = calloc(c->cores, sizeof(*m->l1));
	m->l2 = calloc(c->cores, sizeof(*m->l2));
	if (!m->l1 || !m->l2) {
		layout_cache_free(m);
		return NULL;
	}
	for (uint32_t k = 0; k < c->cores && rc == 0; k++)
		rc = level_init(&m->l1[k], &c->l1) | level_init(&m->l2[k], &c->l2);
	if (rc == 0)
		rc = level_init(&m->llc, &c->llc);
	m->dir_cap = 1024;
	m->dir = calloc(m->dir_cap, sizeof(*m->dir));
	m->masks = calloc(m->dir_cap * m->cores, sizeof(*m->masks));
	if (rc || !m->dir || !m->masks) {
		layout_cache_free(m);
		return NULL;
	}
	return m;
}

/* ------------------------------------------------------------ sets */

static bool level_lookup(struct cache_level *l, uint64_t line, uint64_t clock)
{
	uint64_t *tags = &l->tags[(line % l->sets) * l->ways];

	for (uint32_t w = 0; w < l->ways; w++)
		if (tags[w] == line + 1) {
			l->stamps[(line % l->sets) * l->ways + w] = clock;
			return true;
		}
	return false;
}

/* Insert line, evicting the least recently used way; returns the victim + 1, or 0. */
static uint64_t level_insert(struct cache_level *l, uint64_t line, uint64_t clock)
{
	size_t base = (line % l->sets) * l->ways, victim = base;
	uint64_t evicted;

	for (uint32_t w = 0; w < l->ways; w++) {
		if (!l->tags[base + w]) {
			victim = base + w;
			break;
		}
		if (l->stamps[base + w] < l->stamps[victim])
			victim = base + w;
	}
	evicted = l->tags[victim];
	l->tags[victim] = line + 1;
	l->stamps[victim] = clock;
	return evicted;
}

static bool level_contains(const struct cache_level *l, uint64_t line)
{
	const uint64_t *tags = &l->tags[(line % l->sets) * l->ways];

	for (uint32_t w = 0; w < l->ways; w++)
		if (tags[w] == line + 1)
			return true;
	return false;
}

static void level_remove(struct cache_level *l, uint64_t line)
{
	uint64_t *tags = &l->tags[(line % l->sets) * l->ways];

	for (uint32_t w = 0; w < l->ways; w++)
		if (tags[w] == line + 1)
			tags[w] = 0;
}

/* ------------------------------------------------------------ directory */

/* Fibonacci hashing: the top bits of line × 2^64/φ spread consecutive lines. */
static size_t hash_slot(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - __builtin_ctzll(cap)));
}

static size_t dir_slot(const struct layout_cache *m, uint64_t line)
{
	size_t i = hash_slot(line, m->dir_cap);

	while (m->dir[i].line_plus_1 && m->dir[i].line_plus_1 != line + 1)
		i = (i + 1) & (m->dir_cap - 1);
	return i;
}

static int dir_grow(struct layout_cache *m)
{
	struct layout_cache old = *m;

	m->dir_cap *= 2;
	m->dir = calloc(m->dir_cap, sizeof(*m->dir));
	m->masks = calloc(m->dir_cap * m->cores, sizeof(*m->masks));
	if (!m->dir || !m->masks) {
		free(m->dir);
		free(m->masks);
		m->dir = old.dir;
		m->masks = old.masks;
		m->dir_cap = old.dir_cap;
		return -1;
	}
	for (size_t i = 0; i < old.dir_cap; i++) {
		size_t j;

		if (!old.dir[i].line_plus_1)
			continue;
		j = dir_slot(m, old.dir[i].line_plus_1 - 1);
		m->dir[j] = old.dir[i];
		memcpy(&m->masks[j * m->cores], &old.masks[i * m->cores],
		       m->cores * sizeof(*m->masks));
	}
	free(old.dir);
	free(old.masks);
	return 0;
}

/* The line's directory slot, created on first use; -1 on ENOMEM. */
static long dir_get(struct layout_cache *m, uint64_t line)
{
	size_t i = dir_slot(m, line);

	if (m->dir[i].line_plus_1)
		return (long)i;
	if (2 * (m->dir_used + 1) > m->dir_cap) {
		if (dir_grow(m))
			return -1;
		i = dir_slot(m, line);
	}
	m->dir[i] = (struct line_state){.line_plus_1 = line + 1, .owner = -1};
	m->dir_used++;
	return (long)i;
}

/* ------------------------------------------------------------ coherence */

static void drop_from_core(struct layout_cache *m, uint32_t core, uint64_t line)
{
	long slot = dir_get(m, line);

	if (slot < 0)
		return;
	m->dir[slot].sharers &= ~(1ull << core);
	if (m->dir[slot].owner == (int32_t)core)
		m->dir[slot].owner = -1;
	m->masks[(size_t)slot * m->cores + core] = 0;
}

/* After a private-level eviction: the core holds the line no more if neither level has it. */
static void private_evicted(struct layout_cache *m, uint32_t core, uint64_t victim_plus_1)
{
	uint64_t v;

	if (!victim_plus_1)
		return;
	v = victim_plus_1 - 1;
	if (!level_contains(&m->l1[core], v) && !level_contains(&m->l2[core], v))
		drop_from_core(m, core, v);
}

/*
 * A write by `core` with bytes `mask`: every other copy is invalidated
 * (coh.inval; coh.hitm when the other core had it Modified), and each
 * loser remembers whether its bytes overlapped the writer's.
 */
static void invalidate_others(struct layout_cache *m, size_t slot, uint32_t core, uint64_t mask,
			      struct layout_cache_counts *d)
{
	struct line_state *ls = &m->dir[slot];
	uint64_t *masks = &m->masks[slot * m->cores];
	uint64_t line = ls->line_plus_1 - 1, writer = masks[core] | mask;

	for (uint32_t o = 0; o < m->cores; o++) {
		if (o == core || !(ls->sharers & (1ull << o)))
			continue;
		d->inval++;
		if (ls->owner == (int32_t)o)
			d->hitm++;
		ls->lost |= 1ull << o;
		if (masks[o] & writer)
			ls->lost_false &= ~(1ull << o);
		else
			ls->lost_false |= 1ull << o;
		level_remove(&m->l1[o], line);
		level_remove(&m->l2[o], line);
		masks[o] = 0;
	}
	ls->sharers &= 1ull << core;
	ls->owner = (int32_t)core;
	masks[core] = 0; /* a transfer: the writer's bytes count from here */
}

/* A read of a line Modified elsewhere: coh.hitm, the owner keeps a shared copy. */
static void read_from_owner(struct layout_cache *m, size_t slot, uint32_t core,
			    struct layout_cache_counts *d)
{
	struct line_state *ls = &m->dir[slot];

	if (ls->owner < 0 || ls->owner == (int32_t)core)
		return;
	d->hitm++;
	ls->owner = -1;
}

static void classify_l1_miss(const struct line_state *ls, uint32_t core,
			     struct layout_cache_counts *d)
{
	uint64_t bit = 1ull << core;

	if (!(ls->seen & bit)) {
		d->cold_miss++;
	} else if (ls->lost & bit) {
		d->coherence_miss++;
		if (ls->lost_false & bit)
			d->false_sharing_miss++;
		else
			d->true_sharing_miss++;
	}
}

static int access_line(struct layout_cache *m, uint32_t core, uint64_t line, uint64_t mask,
		       bool write, struct layout_cache_counts *d)
{
	long slot = dir_get(m, line);
	struct line_state *ls;
	uint64_t bit = 1ull << core;

	if (slot < 0)
		return -1;
	m->clock++;
	if (write)
		invalidate_others(m, (size_t)slot, core, mask, d);
	else
		read_from_owner(m, (size_t)slot, core, d);
	if (!level_lookup(&m->l1[core], line, m->clock)) {
		ls = &m->dir[slot];
		if (write)
			d->l1_store_miss++;
		else
			d->l1_load_miss++;
		classify_l1_miss(ls, core, d);
		if (!level_lookup(&m->l2[core], line, m->clock)) {
			d->l2_miss++;
			if (!level_lookup(&m->llc, line, m->clock)) {
				d->llc_miss++;
				level_insert(&m->llc, line, m->clock);
			}
			private_evicted(m, core, level_insert(&m->l2[core], line, m->clock));
		}
		private_evicted(m, core, level_insert(&m->l1[core], line, m->clock));
	}
	/* the evictions above may have grown the directory: look the line up again */
	slot = dir_get(m, line);
	if (slot < 0)
		return -1;
	ls = &m->dir[slot];
	ls->sharers |= bit;
	ls->seen |= bit;
	ls->lost &= ~bit;
	ls->lost_false &= ~bit;
	m->masks[(size_t)slot * m->cores + core] |= mask;
	if (write)
		ls->owner = (int32_t)core;
	return 0;
}

/* ------------------------------------------------------------ per-field counts */

static void add_counts(struct layout_cache_counts *to, const struct layout_cache_counts *d)
{
	to->accesses += d->accesses;
	to->l1_load_miss += d->l1_load_miss;
	to->l1_store_miss += d->l1_store_miss;
	to->l2_miss += d->l2_miss;
	to->llc_miss += d->llc_miss;
	to->cold_miss += d->cold_miss;
	to->coherence_miss += d->coherence_miss;
	to->false_sharing_miss += d->false_sharing_miss;
	to->true_sharing_miss += d->true_sharing_miss;
	to->hitm += d->hitm;
	to->inval += d->inval;
}

static uint64_t field_key(uint32_t s, uint32_t f)
{
	return ((uint64_t)s << 32 | f) + 1;
}

static size_t field_slot(const struct field_counts *table, size_t cap, uint64_t key)
{
	size_t i = hash_slot(key, cap);

	while (table[i].key_plus_1 && table[i].key_plus_1 != key)
		i = (i + 1) & (cap - 1);
	return i;
}

static const struct field_counts *find_field(const struct layout_cache *m, uint32_t s, uint32_t f)
{
	size_t i;

	if (!m->fields_cap)
		return NULL;
	i = field_slot(m->fields, m->fields_cap, field_key(s, f));
	return m->fields[i].key_plus_1 ? &m->fields[i] : NULL;
}

static int fields_grow(struct layout_cache *m)
{
	size_t cap = m->fields_cap ? 2 * m->fields_cap : 64;
	struct field_counts *table = calloc(cap, sizeof(*table));

	if (!table)
		return -1;
	for (size_t i = 0; i < m->fields_cap; i++)
		if (m->fields[i].key_plus_1)
			table[field_slot(table, cap, m->fields[i].key_plus_1)] = m->fields[i];
	free(m->fields);
	m->fields = table;
	m->fields_cap = cap;
	return 0;
}

static int add_field_counts(struct layout_cache *m, uint32_t s, uint32_t f,
			    const struct layout_cache_counts *d)
{
	uint64_t key = field_key(s, f);
	size_t i;

	if (2 * (m->n_fields + 1) > m->fields_cap && fields_grow(m))
		return -1;
	i = field_slot(m->fields, m->fields_cap, key);
	if (!m->fields[i].key_plus_1) {
		m->fields[i] =
		    (struct field_counts){.key_plus_1 = key, .struct_index = s, .field_index = f};
		m->n_fields++;
	}
	add_counts(&m->fields[i].counts, d);
	return 0;
}

static uint64_t byte_mask(uint64_t from, uint64_t to)
{
	uint64_t n = to - from;

	return (n >= 64 ? ~0ull : ((1ull << n) - 1)) << from;
}

int layout_cache_access(struct layout_cache *m, const struct layout_cache_event *e)
{
	struct layout_cache_counts d = {.accesses = 1};
	uint64_t first, last, end;

	if (e->core >= m->cores || !e->size || e->addr + e->size < e->addr)
		return -1;
	end = e->addr + e->size;
	first = e->addr / LAYOUT_LINE_SIZE;
	last = (end - 1) / LAYOUT_LINE_SIZE;
	/* an access that straddles a line boundary touches both lines (§8.4) */
	for (uint64_t line = first; line <= last; line++) {
		uint64_t lo = line == first ? e->addr % LAYOUT_LINE_SIZE : 0;
		uint64_t hi = line == last ? end - line * LAYOUT_LINE_SIZE : LAYOUT_LINE_SIZE;

		if (access_line(m, e->core, line, byte_mask(lo, hi), e->write, &d))
			return -1;
	}
	add_counts(&m->totals, &d);
	if (e->struct_index >= 0 && e->field_index >= 0)
		return add_field_counts(m, (uint32_t)e->struct_index, (uint32_t)e->field_index, &d);
	return 0;
}

const struct layout_cache_counts *layout_cache_totals(const struct layout_cache *m)
{
	return &m->totals;
}

struct layout_cache_counts layout_cache_field_counts(const struct layout_cache *m,
						     uint32_t struct_index, uint32_t field_index)
{
	const struct field_counts *fc = find_field(m, struct_index, field_index);
	struct layout_cache_counts none = {0};

	return fc ? fc->counts : none;
}
