/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The shuffling heap of liblever-stabilizer.so (spec §4.2, paper §3.2), in
 * three layers (the base in two files):
 *
 *   heap_api.c      malloc, free, calloc, realloc, the aligned family and
 *                   malloc_usable_size; decides once whether the heap is on
 *                   (else everything goes to glibc's __libc_* functions)
 *   heap_shuffle.c  per thread and size class an array of N = 256 objects,
 *                   filled lazily; every malloc and free is one step of the
 *                   inside-out Fisher-Yates shuffle, without locks
 *   heap_base.c     the deterministic-reuse base: size classes carved from
 *                   slabs in one reserved region, a LIFO stack of free
 *                   objects per thread and class, a shared depot per class
 *                   (locked) that gives whole free pages back to the system
 *   heap_lane.c     the base of the classes up to 896 bytes: lanes of pages
 *                   that several classes share (issue 14 point 14), in
 *                   arenas of windows that threads do not share
 *   heap_large.c    allocations above HEAP_SMALL_MAX: a mapping each, the
 *                   recently freed ones kept for reuse within a byte budget
 */
#ifndef LEVER_STABILIZER_HEAP_H
#define LEVER_STABILIZER_HEAP_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/single_threaded.h>

#include "base/base.h"

#define HEAP_ALIGN     16u /* alignof(max_align_t) on x86-64 */
#define HEAP_SHUFFLE_N 256u
#define HEAP_SMALL_MAX (256u * 1024u)
#define HEAP_N_CLASSES 52u

/*
 * A test-and-test-and-set lock: one atomic exchange to take it, a release
 * store to drop it, waiters yield. While the process has one thread (glibc's
 * __libc_single_threaded: false before a second thread starts, never true
 * again) nobody can race, and locking is skipped: even one atomic exchange
 * waits for the stores before it to drain.
 */
struct heap_lock {
	atomic_bool held;
};

static inline void heap_lock(struct heap_lock *l)
{
	if (__libc_single_threaded)
		return;
	while (atomic_exchange_explicit(&l->held, true, memory_order_acquire)) {
		for (int spin = 0; atomic_load_explicit(&l->held, memory_order_relaxed); spin++)
			if (spin > 100)
				sched_yield();
	}
}

static inline void heap_unlock(struct heap_lock *l)
{
	if (!__libc_single_threaded)
		atomic_store_explicit(&l->held, false, memory_order_release);
}

static inline void heap_lock_reset(struct heap_lock *l)
{
	atomic_store_explicit(&l->held, false, memory_order_relaxed);
}

/*
 * One thread's free objects of one size class: a stack of pointers, not a
 * list threaded through the objects, so that freeing never writes to an
 * object (its cache line is usually cold) and free objects hold no links
 * that returning their pages to the system would destroy.
 */
#define HEAP_LOCAL_CAP 64
struct heap_free_list {
	unsigned count;
	unsigned arena;		   /* the lane arena its thread carves from (heap_lane.c) */
	void *obj[HEAP_LOCAL_CAP]; /* obj[count - 1] is handed out next */
};

/* ------------------------------------------------------------ heap_base.c */

#define HEAP_CLASS_SPAN (1ULL << 33) /* 8 GiB of address space per class */

/*
 * What malloc's and free's fast paths need of a class, constant after
 * heap_base_init: they are inline below, so that one malloc or free is one
 * call into the library, not seven (issue 14 point 14).
 */
struct heap_class_info {
	uint64_t size;
	uint64_t inverse;     /* ceil(2^64 / size): offset / size is a multiply-high */
	unsigned local_limit; /* of a thread's free stack for this class */
};
extern char *heap_region; /* class c owns [c * HEAP_CLASS_SPAN, +HEAP_CLASS_SPAN) of it */
extern struct heap_class_info heap_info[HEAP_N_CLASSES];

/* Reserve the region for the size classes; 0, or -1 if mmap refused. */
int heap_base_init(void);
size_t heap_class_size(unsigned c);

/*
 * The size class of a request of n bytes, 1 <= n <= HEAP_SMALL_MAX:
 * multiples of 16 up to 128, then four classes per power of two.
 */
static inline unsigned heap_class_of_size(size_t n)
{
	unsigned k;
	size_t quarter;

	if (n <= 128)
		return n ? (unsigned)((n + 15) / 16 - 1) : 0;
	k = 63 - (unsigned)__builtin_clzll((unsigned long long)(n - 1)); /* 2^k < n <= 2^(k+1) */
	quarter = (size_t)1 << (k - 2);
	return 8 + (k - 7) * 4 + (unsigned)((n - ((size_t)1 << k) + quarter - 1) / quarter) - 1;
}

/* Is p inside the size-class region? */
static inline bool heap_base_owns(const void *p)
{
	return heap_region &&
	       (uintptr_t)p - (uintptr_t)heap_region < HEAP_N_CLASSES * HEAP_CLASS_SPAN;
}

/* ------------------------------------------------------------ heap_lane.c */

/*
 * The classes up to 896 bytes do not get pages of their own: the first
 * HEAP_LANE_CLASSES spans of the region form one area of windows of 64
 * pages, each cut into 260 periods of HEAP_LANE_PERIOD = 1008 bytes (64
 * bytes are left at the end). Period i of a window has the layout of its
 * phase i % HEAP_LANE_PHASES: lanes, byte ranges [lo, lo + len) of the
 * period, each given to one class, so that the classes of a window share its
 * pages. 1008 is 16 times an odd number, so the periods 0-255 start at the
 * 256 multiples of 16 of a page, each once (256-259 at those of 0-3 again),
 * and the 65 of one phase at the 64 lines of a page: an object's page in the
 * window (address bits 12-17) and its line in the page (bits 6-11) are both
 * uniform, and objects cross page boundaries as in one big slab.
 */
#define HEAP_LANE_CLASSES   19u /* classes 0-18: up to 896 bytes */
#define HEAP_LANE_AREA	    ((uint64_t)HEAP_LANE_CLASSES * HEAP_CLASS_SPAN)
#define HEAP_LANE_PERIOD    1008u /* 63 * 16 */
#define HEAP_LANE_PHASES    4u
#define HEAP_WINDOW_SHIFT   18u
#define HEAP_WINDOW_BYTES   (1u << HEAP_WINDOW_SHIFT) /* 64 pages */
#define HEAP_WINDOW_PERIODS 260u		      /* 260 * 1008 = 256 KiB - 64 */
#define HEAP_WINDOW_PAGES   64u
#define HEAP_WINDOW_LANES   32u
#define HEAP_LANE_ARENAS    8u /* thread heap i carves from arena i % HEAP_LANE_ARENAS */

struct heap_lane {
	uint16_t lo, len;      /* bytes [lo, lo + len) of the periods of its phase */
	uint8_t cls;	       /* the class it belongs to */
	uint8_t phase;	       /* its periods: i % HEAP_LANE_PHASES == phase */
	uint8_t per_period;    /* its objects in one period: len / size */
	uint32_t depot_count;  /* its objects in the depot */
	uint32_t next_partial; /* next lane of the class with depot objects (id + 1) */
};

struct heap_window {
	/* 16-byte granule of a period of each phase: its lane */
	uint8_t lane_of[HEAP_LANE_PHASES][HEAP_LANE_PERIOD / HEAP_ALIGN];
	struct heap_lane lane[HEAP_WINDOW_LANES];
	uint16_t out[HEAP_WINDOW_PAGES]; /* carved objects on the page not in the depot */
	uint64_t touched;		 /* pages objects were carved on */
	uint64_t purged;		 /* pages given back and not handed out since */
	uint32_t next_dirty;		 /* next window with pages to check at a purge (+ 1) */
	uint16_t used[HEAP_LANE_PHASES]; /* bytes of each phase's period given to lanes */
	uint8_t lanes, dirty;
	uint8_t arena; /* the lane arena that opened it: its lanes, depot and lock */
	/* one bit per 16 bytes of the window: the object starting there is in the depot */
	uint64_t depot[HEAP_WINDOW_BYTES / HEAP_ALIGN / 64];
} __attribute__((aligned(4096)));

/* A window's metadata is one page, made usable when the window opens. */
_Static_assert(sizeof(struct heap_window) == 4096, "a window's metadata is one page");

extern struct heap_window *heap_windows; /* one per HEAP_WINDOW_BYTES of the lane area */

/* The object of a lane class that p points into, and its class. */
static inline void *heap_lane_locate(const void *p, unsigned *cls)
{
	uint64_t off = (uintptr_t)p - (uintptr_t)heap_region;
	uint64_t w = off >> HEAP_WINDOW_SHIFT;
	unsigned x = (unsigned)off & (HEAP_WINDOW_BYTES - 1);
	unsigned period = x / HEAP_LANE_PERIOD, u = x - period * HEAP_LANE_PERIOD;
	const struct heap_window *win = &heap_windows[w];
	const struct heap_lane *l =
	    &win->lane[win->lane_of[period % HEAP_LANE_PHASES][u / HEAP_ALIGN]];
	const struct heap_class_info *k = &heap_info[l->cls];
	uint64_t index = (uint64_t)(((unsigned __int128)(u - l->lo) * k->inverse) >> 64);

	*cls = l->cls;
	return (char *)p - u + l->lo + index * k->size;
}

static inline bool heap_in_lanes(const void *p)
{
	return (uintptr_t)p - (uintptr_t)heap_region < HEAP_LANE_AREA;
}

static inline unsigned heap_class_of_ptr(const void *p)
{
	unsigned c;

	if (heap_in_lanes(p)) {
		heap_lane_locate(p, &c);
		return c;
	}
	return (unsigned)(((uintptr_t)p - (uintptr_t)heap_region) / HEAP_CLASS_SPAN);
}

/*
 * Above the lanes, offset / size as the multiply-high of offset and
 * ceil(2^64 / size): the inverse errs by less than 1, which adds less than
 * offset / 2^64 to the exact quotient, below the 1 / size that separates it
 * from the next integer while offset * size < 2^64 (here offset < 2^33,
 * size <= 2^18).
 */
static inline void *heap_span_object_start(const void *p, unsigned c)
{
	const struct heap_class_info *k = &heap_info[c];
	uint64_t offset = (uintptr_t)p - (uintptr_t)heap_region - c * HEAP_CLASS_SPAN;
	uint64_t index = (uint64_t)(((unsigned __int128)offset * k->inverse) >> 64);

	return heap_region + c * HEAP_CLASS_SPAN + index * k->size;
}

static inline void *heap_object_start(const void *p, unsigned c)
{
	unsigned lane_class;

	if (c < HEAP_LANE_CLASSES)
		return heap_lane_locate(p, &lane_class);
	return heap_span_object_start(p, c);
}

/* The start and class of the object p (owned by the base) points into. */
static inline void *heap_base_locate(const void *p, unsigned *cls)
{
	if (heap_in_lanes(p))
		return heap_lane_locate(p, cls);
	*cls = (unsigned)(((uintptr_t)p - (uintptr_t)heap_region) / HEAP_CLASS_SPAN);
	return heap_span_object_start(p, *cls);
}

/* Reserve the windows' metadata; 0, or -1 if mmap refused. */
int heap_lane_init(size_t page_size);
void heap_lane_seed(uint64_t seed);
void heap_lane_refill(unsigned c, struct heap_free_list *local);
void *heap_lane_fresh(unsigned c, unsigned arena);
void heap_lane_spill(unsigned c, struct heap_free_list *local);
size_t heap_lane_purged_bytes(void);
void heap_lane_lock_all(void);
void heap_lane_unlock_all(void);
void heap_lane_reset_locks(void);

/* ------------------------------------------------------------ heap_base.c, again */

/* Keys of the slab bijections come from per-class streams of this seed. */
void heap_base_seed(uint64_t seed);
/*
 * A fresh object of class c, never handed out before, for the thread owning
 * `local` (its lane arena); NULL when the region is exhausted.
 */
void *heap_base_fresh(unsigned c, const struct heap_free_list *local);
/* The slow paths of the two below: local empty, local full. */
void *heap_base_refill(unsigned c, struct heap_free_list *local);
void heap_base_spill(unsigned c, struct heap_free_list *local);

/*
 * One object of class c for the thread owning `local`, or NULL when the
 * region is exhausted: from local, else a batch from the class's depot, else
 * fresh objects of the class's current slab, which come in the order of a
 * seeded bijection of its slots. Freed objects go to local, last-in
 * first-out; a thread with too many passes its oldest half to the depot,
 * which returns pages holding only free objects to the system (madvise).
 */
static inline void *heap_base_malloc(unsigned c, struct heap_free_list *local)
{
	if (__builtin_expect(local->count != 0, 1))
		return local->obj[--local->count];
	return heap_base_refill(c, local);
}

static inline void heap_base_free(unsigned c, struct heap_free_list *local, void *p)
{
	if (__builtin_expect(local->count >= heap_info[c].local_limit, 0))
		heap_base_spill(c, local);
	local->obj[local->count++] = p;
}

/* Fork: the class locks, taken before and released or reset after. */
void heap_base_lock_all(void);
/* Bytes of class memory given back to the system so far (for tests). */
size_t heap_base_purged_bytes(void);
void heap_base_unlock_all(void);
void heap_base_reset_locks(void);

/* ------------------------------------------------------------ heap_large.c */

/*
 * A mapping of its own for size bytes aligned to align (a power of two >= 16),
 * possibly a recently freed one: zeroed then only if zero is set.
 */
void *heap_large_alloc(size_t size, size_t align, bool zero);
/* Bytes of freed mappings kept for reuse (for tests). */
size_t heap_large_cached_bytes(void);
/* Fork: the cache's lock. */
void heap_large_lock_all(void);
void heap_large_unlock_all(void);
void heap_large_reset_locks(void);
/* Does p carry a large-allocation header? (p not in the base region) */
bool heap_large_owns(const void *p);
void heap_large_free(void *p);
size_t heap_large_usable(const void *p);
/* Resize in place or move the mapping (mremap); NULL if out of memory. */
void *heap_large_realloc(void *p, size_t size);
void heap_large_seed(uint64_t seed);

/* ------------------------------------------------------------ heap_shuffle.c */

void heap_shuffle_init(uint64_t seed);
/* An object of class c, chosen at random among N buffered; NULL if out of memory. */
void *heap_shuffle_malloc(unsigned c);
/* Put p (the start of an object of class c) into the buffer; free the one it evicts. */
void heap_shuffle_free(unsigned c, void *p);
/* Fork: every lock taken before, released (parent) or reset (child) after. */
void heap_shuffle_lock_all(void);
void heap_shuffle_unlock_all(void);
void heap_shuffle_reset_locks(void);
/* The child of a fork draws from streams of its own. */
void heap_shuffle_reseed_child(void);

#endif
