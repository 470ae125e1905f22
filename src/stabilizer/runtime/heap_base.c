/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The base allocator under the shuffling layer: size classes, each with its
 * own part of one reserved region, carved into slabs. The classes up to 896
 * bytes (HEAP_LANE_CLASSES) share pages instead, in heap_lane.c: their parts
 * of the region form its lane area, and heap_base_refill, _spill and _fresh
 * hand them over; the thread stacks below serve both.
 *
 * Size classes: multiples of 16 up to 128 bytes, then four per power of two
 * up to 256 KiB (160, 192, 224, 256, 320, ...): at most 25% of an object is
 * rounding waste, where the paper's power-of-two classes waste up to 50%
 * (its cactusADM overhead).
 *
 * The region is reserved PROT_NONE (no commit charge, whatever the
 * overcommit policy) and each slab is made read-write when it is started.
 * Because class c owns [region + c * HEAP_CLASS_SPAN, region + (c + 1) * HEAP_CLASS_SPAN)
 * and slabs are whole numbers of objects, free() finds a pointer's class and
 * object start by arithmetic, with no header: interior pointers of aligned
 * allocations work too.
 *
 * The region starts at a 1 GiB boundary, so that address bits 0-29 of every
 * object depend only on the seed and the program's allocations, not on
 * where ASLR put the mapping: a seed reproduces the cache-index bits.
 *
 * A slab spans at least 256 KiB (address bits 0-17) and holds at least
 * HEAP_SHUFFLE_N objects. Its objects are handed out in the order of a
 * bijection of the slot numbers keyed from the class's random stream, so
 * fresh objects are spread over the slab; freed objects are reused last-in
 * first-out, as in the paper's base (a bump allocator with free lists),
 * leaving it to the shuffling layer to randomize reuse.
 *
 * Threads: each thread keeps a stack of free objects per class (no
 * locking), of at most LOCAL_BYTES or HEAP_LOCAL_CAP objects. A thread that
 * runs out takes half a stack's worth from the class's depot or carves fresh
 * objects, under the class lock; one whose stack is full passes the oldest
 * half to the depot, so memory freed by one thread and allocated by another
 * flows back.
 *
 * Returning memory: the depot records its objects in a bitmap (one bit per
 * object of the class), grouped by slab. After every PURGE_BYTES put into a
 * class's depot, the slabs that received objects are scanned and every page
 * that holds only depot objects is given back with MADV_DONTNEED (and marked,
 * so that it is not given back twice). Nothing is stored inside free
 * objects, so their pages can go. A program that frees what it allocated
 * keeps at most the shuffling buffers, the thread stacks, PURGE_BYTES per
 * class and the pages shared with live objects.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stabilizer/runtime/heap.h"

#define REGION_ALIGN   (1ULL << 30) /* where the region starts */
#define SLAB_MIN_BYTES (256u * 1024u)
#define PERMUTE_ROUNDS 3
#define LOCAL_BYTES    (256u * 1024u) /* a thread's free bytes of one class, at most */
#define LOCAL_MIN      4u
#define PURGE_BYTES    (1u << 20) /* put into a class's depot between two purges */

/* The depot's view of one slab; slabs are linked by index + 1 (0 ends a list). */
struct slab_meta {
	uint32_t depot_count;  /* objects of the slab in the depot */
	uint32_t next_partial; /* next slab with depot objects */
	uint32_t next_dirty;   /* next slab that received objects since the last purge */
	uint32_t dirty;
};

struct base_class {
	struct heap_lock lock; /* everything below but the constants set at init */
	size_t size;
	char *start;	 /* of the class's span */
	char *next_slab; /* where the next slab begins */
	char *slab;	 /* the slab being carved */
	size_t slab_objects;
	unsigned slab_bits; /* slab_objects <= 2^slab_bits < 2 * slab_objects */
	uint64_t slab_next; /* next input of the bijection, < 2^slab_bits */
	uint64_t mul[PERMUTE_ROUNDS], add[PERMUTE_ROUNDS];
	struct rng rng;
	/* the depot */
	uint64_t *free_bits;   /* one per object of the span: in the depot */
	uint64_t *purged_bits; /* one per page of the span: given back */
	struct slab_meta *slabs;
	size_t slabs_started;
	uint32_t partial; /* slabs with depot objects */
	uint32_t dirty;	  /* slabs to scan at the next purge */
	size_t pending;	  /* bytes put into the depot since the last purge */
} __attribute__((aligned(64)));

char *heap_region;
struct heap_class_info heap_info[HEAP_N_CLASSES];
static struct base_class classes[HEAP_N_CLASSES];
static size_t page_size = 4096;
static _Atomic size_t purged_total;

size_t heap_class_size(unsigned c)
{
	unsigned k, j;

	if (c < 8)
		return 16u * (c + 1);
	k = 7 + (c - 8) / 4;
	j = 1 + (c - 8) % 4;
	return ((size_t)1 << k) + j * ((size_t)1 << (k - 2));
}

static size_t round_up(size_t x, size_t to)
{
	return (x + to - 1) / to * to;
}

/* Bytes of metadata address space class c needs: bitmaps and slab table. */
static size_t meta_bytes(const struct base_class *b)
{
	size_t objects = HEAP_CLASS_SPAN / b->size, slabs = objects / b->slab_objects + 1;

	return round_up(round_up(objects, 64) / 8, page_size) +
	       round_up(HEAP_CLASS_SPAN / page_size / 8, page_size) +
	       round_up(slabs * sizeof(struct slab_meta), page_size);
}

static void place_meta(struct base_class *b, char *meta)
{
	size_t objects = HEAP_CLASS_SPAN / b->size;

	b->free_bits = (uint64_t *)meta;
	meta += round_up(round_up(objects, 64) / 8, page_size);
	b->purged_bits = (uint64_t *)meta;
	meta += round_up(HEAP_CLASS_SPAN / page_size / 8, page_size);
	b->slabs = (struct slab_meta *)meta;
}

/* Reserve PROT_NONE (no commit charge) and at `align`; NULL if refused. */
static char *reserve(size_t size, size_t align)
{
	char *p =
	    mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *aligned;

	if (p == MAP_FAILED)
		return NULL;
	aligned = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (aligned > p)
		munmap(p, (size_t)(aligned - p));
	munmap(aligned + size, (size_t)(p + align - aligned));
	return aligned;
}

int heap_base_init(void)
{
	size_t meta_total = 0;
	long ps = sysconf(_SC_PAGESIZE);
	char *meta;

	if (ps > 0)
		page_size = (size_t)ps;
	for (unsigned c = 0; c < HEAP_N_CLASSES; c++) {
		struct base_class *b = &classes[c];
		size_t n, limit;

		b->size = heap_class_size(c);
		n = (SLAB_MIN_BYTES + b->size - 1) / b->size;
		b->slab_objects = n < HEAP_SHUFFLE_N ? HEAP_SHUFFLE_N : n;
		b->slab_bits = 64 - (unsigned)__builtin_clzll(b->slab_objects - 1);
		limit = LOCAL_BYTES / b->size;
		heap_info[c].size = b->size;
		heap_info[c].inverse = UINT64_MAX / b->size + 1; /* ceil(2^64 / size) */
		heap_info[c].local_limit = limit < LOCAL_MIN	    ? LOCAL_MIN
					   : limit > HEAP_LOCAL_CAP ? HEAP_LOCAL_CAP
								    : (unsigned)limit;
		if (c >= HEAP_LANE_CLASSES)
			meta_total += meta_bytes(b);
	}
	if (heap_lane_init(page_size))
		return -1;
	meta = reserve(meta_total, page_size);
	heap_region = meta ? reserve(HEAP_N_CLASSES * HEAP_CLASS_SPAN, REGION_ALIGN) : NULL;
	if (!heap_region) {
		if (meta)
			munmap(meta, meta_total);
		return -1;
	}
	/*
	 * Small pages only, whatever the system's transparent huge page policy:
	 * objects are spread over their slabs and windows on purpose, and pages
	 * go back one by one, so a huge page would make one small object cost
	 * 2 MiB (a kernel without THP refuses the advice: nothing to do then).
	 */
	madvise(heap_region, HEAP_N_CLASSES * HEAP_CLASS_SPAN, MADV_NOHUGEPAGE);
	for (unsigned c = HEAP_LANE_CLASSES; c < HEAP_N_CLASSES; c++) {
		struct base_class *b = &classes[c];

		b->start = heap_region + c * HEAP_CLASS_SPAN;
		b->next_slab = b->start;
		place_meta(b, meta);
		meta += meta_bytes(b);
	}
	return 0;
}

size_t heap_base_purged_bytes(void)
{
	return atomic_load_explicit(&purged_total, memory_order_relaxed) + heap_lane_purged_bytes();
}

/* A bijection of [0, 2^bits): rounds of odd multiply, xor-shift and add, all invertible. */
static uint64_t slab_permute(const struct base_class *b, uint64_t x)
{
	uint64_t mask = ((uint64_t)1 << b->slab_bits) - 1;
	unsigned shift = b->slab_bits / 2 + 1;

	for (int r = 0; r < PERMUTE_ROUNDS; r++) {
		x = (x * b->mul[r]) & mask;
		x ^= x >> shift;
		x = (x + b->add[r]) & mask;
	}
	return x;
}

/* Make [lo, hi) read-write, whole pages. */
static int commit(const void *lo, const void *hi)
{
	uintptr_t a = (uintptr_t)lo & ~(uintptr_t)(page_size - 1);
	uintptr_t z = ((uintptr_t)hi + page_size - 1) & ~(uintptr_t)(page_size - 1);

	return mprotect((void *)a, z - a, PROT_READ | PROT_WRITE);
}

/* The slab's pages and its part of the depot's bitmaps and slab table. */
static int commit_slab(struct base_class *b, size_t bytes)
{
	size_t s = b->slabs_started, first = s * b->slab_objects;
	size_t off = (size_t)(b->next_slab - b->start);

	return commit(b->next_slab, b->next_slab + bytes) ||
	       commit(b->free_bits + first / 64,
		      b->free_bits + (first + b->slab_objects) / 64 + 1) ||
	       commit(b->purged_bits + off / page_size / 64,
		      b->purged_bits + (off + bytes) / page_size / 64 + 1) ||
	       commit(b->slabs + s, b->slabs + s + 1);
}

static int start_slab(struct base_class *b, struct rng *r)
{
	size_t bytes = b->slab_objects * b->size;

	if (b->next_slab + bytes > b->start + HEAP_CLASS_SPAN || commit_slab(b, bytes))
		return -1;
	b->slab = b->next_slab;
	b->next_slab += bytes;
	b->slabs_started++;
	b->slab_next = 0;
	for (int i = 0; i < PERMUTE_ROUNDS; i++) {
		b->mul[i] = rng_next(r) | 1;
		b->add[i] = rng_next(r);
	}
	return 0;
}

void heap_base_seed(uint64_t seed)
{
	heap_lane_seed(seed ^ 0x2545f4914f6cdd1dULL);
	for (unsigned c = HEAP_LANE_CLASSES; c < HEAP_N_CLASSES; c++)
		rng_seed(&classes[c].rng, seed + 0x9e3779b97f4a7c15ULL * (c + 1));
}

/* The next fresh object of the class (lock held), or NULL. */
static void *carve(struct base_class *b)
{
	for (;;) {
		while (b->slab && b->slab_next < ((uint64_t)1 << b->slab_bits)) {
			uint64_t slot = slab_permute(b, b->slab_next++);

			if (slot < b->slab_objects)
				return b->slab + slot * b->size;
		}
		if (start_slab(b, &b->rng))
			return NULL;
	}
}

/* ------------------------------------------------------------ the depot (lock held) */

static bool bit_test(const uint64_t *bits, size_t i)
{
	return bits[i / 64] >> (i % 64) & 1;
}

static void bit_set(uint64_t *bits, size_t i)
{
	bits[i / 64] |= (uint64_t)1 << (i % 64);
}

static void bit_clear(uint64_t *bits, size_t i)
{
	bits[i / 64] &= ~((uint64_t)1 << (i % 64));
}

/* Are bits [lo, hi] all set? */
static bool bits_all_set(const uint64_t *bits, size_t lo, size_t hi)
{
	for (size_t w = lo / 64; w <= hi / 64; w++) {
		unsigned from = w == lo / 64 ? lo % 64 : 0, to = w == hi / 64 ? hi % 64 : 63;
		uint64_t mask = (~(uint64_t)0 >> (63 - to)) & (~(uint64_t)0 << from);

		if ((bits[w] & mask) != mask)
			return false;
	}
	return true;
}

static size_t object_index(const struct base_class *b, const void *p)
{
	return (size_t)((const char *)p - b->start) / b->size;
}

static void depot_put(struct base_class *b, void *p)
{
	size_t i = object_index(b, p), s = i / b->slab_objects;
	struct slab_meta *m = &b->slabs[s];

	bit_set(b->free_bits, i);
	if (m->depot_count++ == 0) {
		m->next_partial = b->partial;
		b->partial = (uint32_t)(s + 1);
	}
	if (!m->dirty) {
		m->dirty = 1;
		m->next_dirty = b->dirty;
		b->dirty = (uint32_t)(s + 1);
	}
	b->pending += b->size;
}

/* An object leaves the depot: its pages are in use again. */
static void unmark_purged(struct base_class *b, size_t i)
{
	size_t first = i * b->size / page_size, last = ((i + 1) * b->size - 1) / page_size;

	for (size_t pg = first; pg <= last; pg++)
		bit_clear(b->purged_bits, pg);
}

/* Up to want objects from the depot's partial slabs, most recently filled first. */
static unsigned depot_take(struct base_class *b, void **out, unsigned want)
{
	unsigned n = 0;

	while (n < want && b->partial) {
		size_t s = b->partial - 1, first = s * b->slab_objects,
		       end = first + b->slab_objects;
		struct slab_meta *m = &b->slabs[s];

		for (size_t w = first / 64; n < want && m->depot_count && w * 64 < end; w++) {
			uint64_t word = b->free_bits[w];

			while (word && n < want) {
				size_t i = w * 64 + (unsigned)__builtin_ctzll(word);

				word &= word - 1;
				if (i < first || i >= end)
					continue;
				bit_clear(b->free_bits, i);
				unmark_purged(b, i);
				m->depot_count--;
				out[n++] = b->start + i * b->size;
			}
		}
		if (!m->depot_count)
			b->partial = m->next_partial;
	}
	return n;
}

/* Give back pages [first, last) of the class's span and mark them. */
static void give_back(struct base_class *b, size_t first, size_t last)
{
	if (first >= last)
		return;
	if (madvise(b->start + first * page_size, (last - first) * page_size, MADV_DONTNEED))
		return;
	for (size_t pg = first; pg < last; pg++)
		bit_set(b->purged_bits, pg);
	atomic_fetch_add_explicit(&purged_total, (last - first) * page_size, memory_order_relaxed);
}

/* Does page pg hold only depot objects (and is it not given back yet)? */
static bool page_free(const struct base_class *b, size_t pg, size_t objects)
{
	size_t lo = pg * page_size / b->size, hi = ((pg + 1) * page_size - 1) / b->size;

	if (hi >= objects || bit_test(b->purged_bits, pg))
		return false;
	return bits_all_set(b->free_bits, lo, hi);
}

static void purge_slab(struct base_class *b, size_t s)
{
	size_t bytes = b->slab_objects * b->size, objects = b->slabs_started * b->slab_objects;
	size_t pg = s * bytes / page_size, last = ((s + 1) * bytes - 1) / page_size, run = pg;

	while (pg <= last) {
		size_t lo = pg * page_size / b->size, next = pg + 1;

		if (page_free(b, pg, objects)) {
			pg = next;
			continue;
		}
		give_back(b, run, pg);
		/* an object in use spans all its pages: skip them */
		if (b->size >= page_size && !bit_test(b->free_bits, lo) &&
		    (lo + 1) * b->size / page_size > next)
			next = (lo + 1) * b->size / page_size;
		pg = run = next;
	}
	give_back(b, run, last + 1 < pg ? last + 1 : pg);
}

static void purge(struct base_class *b)
{
	while (b->dirty) {
		size_t s = b->dirty - 1;
		struct slab_meta *m = &b->slabs[s];

		b->dirty = m->next_dirty;
		m->dirty = 0;
		if (m->depot_count)
			purge_slab(b, s);
	}
	b->pending = 0;
}

/* ------------------------------------------------------------ thread stacks */

/* Fill an empty local stack to half its limit: from the depot, else fresh objects. */
static void refill(struct base_class *b, struct heap_free_list *local)
{
	unsigned want = heap_info[b - classes].local_limit / 2, n;
	void *fresh[HEAP_LOCAL_CAP];

	heap_lock(&b->lock);
	n = depot_take(b, local->obj, want);
	if (n) {
		heap_unlock(&b->lock);
		local->count = n;
		return;
	}
	while (n < want && (fresh[n] = carve(b)))
		n++;
	heap_unlock(&b->lock);
	/* stored in reverse, so they are handed out in the bijection's order */
	for (unsigned i = 0; i < n; i++)
		local->obj[i] = fresh[n - 1 - i];
	local->count = n;
}

void *heap_base_fresh(unsigned c, const struct heap_free_list *local)
{
	struct base_class *b = &classes[c];
	void *p;

	if (c < HEAP_LANE_CLASSES)
		return heap_lane_fresh(c, local->arena);
	heap_lock(&b->lock);
	p = carve(b);
	heap_unlock(&b->lock);
	return p;
}

void *heap_base_refill(unsigned c, struct heap_free_list *local)
{
	if (c < HEAP_LANE_CLASSES)
		heap_lane_refill(c, local);
	else
		refill(&classes[c], local);
	return local->count ? local->obj[--local->count] : NULL;
}

/* Move the older half of a full local stack to the depot. */
static void spill(struct base_class *b, struct heap_free_list *local)
{
	unsigned half = local->count / 2;

	heap_lock(&b->lock);
	for (unsigned i = 0; i < half; i++)
		depot_put(b, local->obj[i]);
	if (b->pending >= PURGE_BYTES)
		purge(b);
	heap_unlock(&b->lock);
	memmove(local->obj, local->obj + half, (local->count - half) * sizeof(local->obj[0]));
	local->count -= half;
}

void heap_base_spill(unsigned c, struct heap_free_list *local)
{
	if (c < HEAP_LANE_CLASSES)
		heap_lane_spill(c, local);
	else
		spill(&classes[c], local);
}

void heap_base_lock_all(void)
{
	heap_lane_lock_all();
	for (unsigned c = HEAP_LANE_CLASSES; c < HEAP_N_CLASSES; c++)
		heap_lock(&classes[c].lock);
}

void heap_base_unlock_all(void)
{
	for (unsigned c = HEAP_N_CLASSES; c-- > HEAP_LANE_CLASSES;)
		heap_unlock(&classes[c].lock);
	heap_lane_unlock_all();
}

void heap_base_reset_locks(void)
{
	heap_lane_reset_locks();
	for (unsigned c = HEAP_LANE_CLASSES; c < HEAP_N_CLASSES; c++)
		heap_lock_reset(&classes[c].lock);
}
