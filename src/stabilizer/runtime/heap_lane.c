/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The base allocator of the small size classes (up to 896 bytes) under the
 * shuffling layer (spec §4.2): lanes in shared windows, so that a class with
 * few objects does not hold pages of its own (issue 14 point 14).
 *
 * Why not a slab per class: the shuffled heap must randomize the cache
 * index bits 6-17 of every object (spec §4.2, the NIST tests of
 * stabilize_heap_random), so a class's fresh objects are spread over 256 KiB
 * (64 pages). With a slab of its own, each class then touches 64 pages as
 * soon as it has a few dozen objects: 256 KiB per class in use, twice
 * glibc's footprint on a malloc-heavy program of 16 classes.
 *
 * Here the area is cut into windows of 64 pages, each window into 260
 * periods of 1008 bytes, and the periods of each of HEAP_LANE_PHASES phases
 * (i % HEAP_LANE_PHASES) into lanes: byte ranges [lo, lo + len), one class
 * each, so that the classes of a window share its pages (heap.h). A class
 * whose lane is full takes a new lane in a window with room, a new window if
 * none has. A lane's objects (a run of len / size objects in each of its 65
 * periods) are handed out in the order of a seeded bijection of its slots,
 * so each fresh object starts in a random period of its phase: on a random
 * page of the window (bits 12-17), at a random line of that page (bits
 * 6-11), as 1008 is an odd multiple of 16. Objects are contiguous and may
 * cross a page boundary, so no line of a page is left out (which would bias
 * bits 6-11). free() finds an object's lane and start from the window's
 * table, with no header (heap_lane_locate in heap.h).
 *
 * Threads: thread heap i carves from lane arena i % HEAP_LANE_ARENAS, which
 * has lanes, windows, a depot and a lock of its own (see struct lane_arena),
 * so that two threads' objects do not share cache lines.
 *
 * Free objects: threads keep stacks of them (heap_base's thread stacks);
 * a full stack passes half to the depot of each object's arena, under that
 * arena's lock (slow paths only). The depot marks its objects in the
 * window's bitmap (a bit per 16 bytes), lists each class's lanes that have
 * depot objects, and counts per page the carved objects on it that are not
 * in the depot (an object across two pages counts on both): a page whose
 * count drops to zero holds nothing in use, and after every PURGE_BYTES put
 * into an arena's depot such pages are given back to the system
 * (MADV_DONTNEED).
 */
#include <string.h>
#include <sys/mman.h>

#include "stabilizer/runtime/heap.h"

#define PERMUTE_ROUNDS 3
#define LANE_BYTES     256u	  /* a lane holds as many objects as fit, at least one */
#define OPEN_WINDOWS   8	  /* windows with room kept for new lanes */
#define PURGE_BYTES    (1u << 20) /* put into the depot between two purges */
#define WINDOW_BYTES   ((size_t)HEAP_WINDOW_BYTES)
#define WINDOWS	       (HEAP_LANE_AREA / HEAP_WINDOW_BYTES)
#define PAGE	       4096u
#define LANE_PERIODS   (HEAP_WINDOW_PERIODS / HEAP_LANE_PHASES) /* periods of one phase */

struct lane_class {
	size_t size;
	unsigned len;		 /* bytes of a lane in each period */
	unsigned per_period;	 /* its objects in one period of a whole lane */
	unsigned cur_per_period; /* of the lane being carved (shorter at the end of a period) */
	uint32_t cur;		 /* the lane being carved (id + 1), 0: none yet */
	unsigned bits;		 /* its slots <= 2^bits < 2 * slots */
	uint64_t next;		 /* next input of the bijection, < 2^bits */
	uint64_t mul[PERMUTE_ROUNDS], add[PERMUTE_ROUNDS];
	uint32_t partial; /* lanes with depot objects (id + 1) */
	struct rng rng;	  /* the bijections' keys */
};

/*
 * Thread heaps carve from HEAP_LANE_ARENAS arenas, each with windows of its
 * own: two threads' objects never share a window, so they never share a
 * cache line. When they did (one set of lanes for all threads), two threads
 * writing their own objects wrote the same lines (5% of the lines
 * malloc_heavy's two threads touch); the arenas saved 8% of its CPU time on
 * two threads (glibc gives each thread an arena too). An object freed by a
 * thread of another arena goes back to the depot of its window's arena.
 */
struct lane_arena {
	struct heap_lock lock; /* everything below, and its windows */
	struct lane_class classes[HEAP_LANE_CLASSES];
	uint32_t open_windows[OPEN_WINDOWS]; /* window + 1, 0: empty */
	uint32_t dirty_windows;		     /* window + 1 */
	size_t pending;			     /* bytes put into the depot since the last purge */
} __attribute__((aligned(64)));

struct heap_window *heap_windows;
static struct lane_arena arenas[HEAP_LANE_ARENAS];
static _Atomic size_t windows_opened;
static bool can_purge; /* the system's pages are the lanes' pages */
static _Atomic size_t purged_total;

/* A lane's id: its window and its index in it. */
static uint32_t lane_id(size_t w, unsigned l)
{
	return (uint32_t)(w * HEAP_WINDOW_LANES + l);
}

static struct heap_lane *lane_of_id(uint32_t id, struct heap_window **w)
{
	*w = &heap_windows[id / HEAP_WINDOW_LANES];
	return &(*w)->lane[id % HEAP_WINDOW_LANES];
}

static char *window_base(size_t w)
{
	return heap_region + w * WINDOW_BYTES;
}

static size_t window_index(const struct heap_window *w)
{
	return (size_t)(w - heap_windows);
}

int heap_lane_init(size_t page_size)
{
	size_t bytes = WINDOWS * sizeof(struct heap_window);
	void *meta =
	    mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (meta == MAP_FAILED)
		return -1;
	heap_windows = meta;
	can_purge = page_size == PAGE;
	for (unsigned a = 0; a < HEAP_LANE_ARENAS; a++) {
		for (unsigned c = 0; c < HEAP_LANE_CLASSES; c++) {
			struct lane_class *lc = &arenas[a].classes[c];

			lc->size = heap_class_size(c);
			lc->per_period =
			    LANE_BYTES / lc->size ? (unsigned)(LANE_BYTES / lc->size) : 1;
			lc->len = (unsigned)(lc->per_period * lc->size);
		}
	}
	return 0;
}

/* Arena 0 (the main thread's) is seeded as the one set of lanes was. */
void heap_lane_seed(uint64_t seed)
{
	for (unsigned a = 0; a < HEAP_LANE_ARENAS; a++)
		for (unsigned c = 0; c < HEAP_LANE_CLASSES; c++)
			rng_seed(&arenas[a].classes[c].rng, seed + 0x9e3779b97f4a7c15ULL * (c + 1) +
								0xbf58476d1ce4e5b9ULL * a);
}

size_t heap_lane_purged_bytes(void)
{
	return atomic_load_explicit(&purged_total, memory_order_relaxed);
}

/* ------------------------------------------------------------ windows and lanes (lock held) */

/* Make the next window and its metadata usable, for arena a. */
static struct heap_window *open_window(unsigned a)
{
	size_t w = atomic_fetch_add_explicit(&windows_opened, 1, memory_order_relaxed);
	struct heap_window *win = &heap_windows[w];

	/* a window that failed is skipped: the next one may still work */
	if (w >= WINDOWS || mprotect(window_base(w), WINDOW_BYTES, PROT_READ | PROT_WRITE) ||
	    mprotect(win, sizeof(*win), PROT_READ | PROT_WRITE))
		return NULL;
	win->arena = (uint8_t)a;
	return win;
}

/* The phase of win with the least room that still has len bytes, or -1. */
static int phase_with_room(const struct heap_window *win, unsigned len)
{
	int best = -1;

	if (win->lanes >= HEAP_WINDOW_LANES)
		return -1;
	for (unsigned ph = 0; ph < HEAP_LANE_PHASES; ph++)
		if (HEAP_LANE_PERIOD - win->used[ph] >= len &&
		    (best < 0 || win->used[ph] > win->used[best]))
			best = (int)ph;
	return best;
}

/* Room left in win for lanes: its emptiest phase. */
static unsigned window_room(const struct heap_window *win)
{
	unsigned room = 0;

	for (unsigned ph = 0; ph < HEAP_LANE_PHASES; ph++)
		if (HEAP_LANE_PERIOD - win->used[ph] > room)
			room = HEAP_LANE_PERIOD - win->used[ph];
	return win->lanes < HEAP_WINDOW_LANES ? room : 0;
}

/*
 * Where class lc's next lane goes: the open window and phase that leave the
 * least room after a whole lane, else the most room in which a shorter lane
 * of at least one object per period fits (so that the ends of the periods
 * are not lost), else a new window. *len: the lane's bytes.
 */
static struct heap_window *window_with_room(struct lane_arena *ar, const struct lane_class *lc,
					    unsigned *phase, unsigned *len)
{
	uint32_t *open_windows = ar->open_windows;
	struct heap_window *win, *part = NULL;
	unsigned slot = 0, least = HEAP_LANE_PERIOD + 1, part_room = 0, part_phase = 0;
	int ph;

	for (unsigned i = 0; i < OPEN_WINDOWS; i++) {
		unsigned room;

		if (!open_windows[i]) {
			slot = i, least = 0;
			continue;
		}
		win = &heap_windows[open_windows[i] - 1];
		ph = phase_with_room(win, lc->len);
		if (ph >= 0) {
			*phase = (unsigned)ph;
			*len = lc->len;
			return win;
		}
		room = window_room(win);
		if (room >= lc->size && room > part_room) {
			for (unsigned p = 0; p < HEAP_LANE_PHASES; p++)
				if (HEAP_LANE_PERIOD - win->used[p] == room)
					part_phase = p;
			part = win, part_room = room;
		}
		if (least && room < least)
			slot = i, least = room; /* the fullest makes way for a new one */
	}
	if (part) {
		*phase = part_phase;
		*len = (unsigned)(part_room / lc->size * lc->size);
		return part;
	}
	win = open_window((unsigned)(ar - arenas));
	if (win)
		open_windows[slot] = (uint32_t)window_index(win) + 1;
	*phase = 0;
	*len = lc->len;
	return win;
}

/* A new lane for class c and the keys of its bijection; -1 when the area is full. */
static int start_lane(struct lane_arena *ar, struct lane_class *lc, unsigned c)
{
	unsigned index, slots, ph, len;
	struct heap_window *win = window_with_room(ar, lc, &ph, &len);
	struct heap_lane *l;

	if (!win)
		return -1;
	index = win->lanes++;
	l = &win->lane[index];
	l->lo = win->used[ph];
	l->len = (uint16_t)len;
	l->cls = (uint8_t)c;
	l->phase = (uint8_t)ph;
	l->per_period = (uint8_t)(len / lc->size);
	memset(&win->lane_of[ph][l->lo / HEAP_ALIGN], (int)index, len / HEAP_ALIGN);
	win->used[ph] = (uint16_t)(win->used[ph] + len);
	lc->cur = lane_id(window_index(win), index) + 1;
	lc->cur_per_period = l->per_period;
	slots = LANE_PERIODS * l->per_period;
	lc->bits = 64 - (unsigned)__builtin_clzll((uint64_t)slots - 1);
	lc->next = 0;
	for (int i = 0; i < PERMUTE_ROUNDS; i++) {
		lc->mul[i] = rng_next(&lc->rng) | 1;
		lc->add[i] = rng_next(&lc->rng);
	}
	return 0;
}

/* A bijection of [0, 2^bits): rounds of odd multiply, xor-shift and add, all invertible. */
static uint64_t permute(const struct lane_class *lc, uint64_t x)
{
	uint64_t mask = ((uint64_t)1 << lc->bits) - 1;
	unsigned shift = lc->bits / 2 + 1;

	for (int r = 0; r < PERMUTE_ROUNDS; r++) {
		x = (x * lc->mul[r]) & mask;
		x ^= x >> shift;
		x = (x + lc->add[r]) & mask;
	}
	return x;
}

/* Slot k of the lane's t-th period: its offset in the window. */
static size_t slot_offset(const struct heap_lane *l, size_t size, unsigned t, unsigned k)
{
	return (size_t)(t * HEAP_LANE_PHASES + l->phase) * HEAP_LANE_PERIOD + l->lo + k * size;
}

/* The first and last page of the object at offset at of the window. */
static void object_pages(size_t at, size_t size, unsigned *first, unsigned *last)
{
	*first = (unsigned)(at / PAGE);
	*last = (unsigned)((at + size - 1) / PAGE);
}

/* The object at offset at is handed out (fresh or from the depot). */
static void pages_in_use(struct heap_window *win, size_t at, size_t size)
{
	unsigned first, last;

	object_pages(at, size, &first, &last);
	for (unsigned pg = first; pg <= last; pg++) {
		win->out[pg]++;
		win->touched |= (uint64_t)1 << pg;
		win->purged &= ~((uint64_t)1 << pg);
	}
}

/* The next fresh object of the class, or NULL when the area is full. */
static void *carve(struct lane_arena *ar, unsigned c)
{
	struct lane_class *lc = &ar->classes[c];

	for (;;) {
		while (lc->cur && lc->next < ((uint64_t)1 << lc->bits)) {
			uint64_t slot = permute(lc, lc->next++);
			struct heap_window *win;
			struct heap_lane *l = lane_of_id(lc->cur - 1, &win);
			size_t at;

			if (slot >= (uint64_t)LANE_PERIODS * lc->cur_per_period)
				continue;
			at = slot_offset(l, lc->size, (unsigned)(slot % LANE_PERIODS),
					 (unsigned)(slot / LANE_PERIODS));
			pages_in_use(win, at, lc->size);
			return window_base(window_index(win)) + at;
		}
		if (start_lane(ar, lc, c))
			return NULL;
	}
}

/* ------------------------------------------------------------ the depot (lock held) */

/* p's window belongs to arena ar, whose lock is held. */
static void depot_put(struct lane_arena *ar, unsigned c, void *p)
{
	struct lane_class *lc = &ar->classes[c];
	size_t off = (size_t)((char *)p - heap_region), w = off >> HEAP_WINDOW_SHIFT;
	size_t at = off & (WINDOW_BYTES - 1), bit = at / HEAP_ALIGN;
	struct heap_window *win = &heap_windows[w];
	unsigned period = (unsigned)(at / HEAP_LANE_PERIOD), first, last;
	unsigned index =
	    win->lane_of[period % HEAP_LANE_PHASES][at % HEAP_LANE_PERIOD / HEAP_ALIGN];
	struct heap_lane *l = &win->lane[index];
	bool idle = false;

	win->depot[bit / 64] |= (uint64_t)1 << (bit % 64);
	if (l->depot_count++ == 0) {
		l->next_partial = lc->partial;
		lc->partial = lane_id(w, index) + 1;
	}
	object_pages(at, lc->size, &first, &last);
	for (unsigned pg = first; pg <= last; pg++)
		idle |= --win->out[pg] == 0;
	if (idle && !win->dirty) {
		win->dirty = 1;
		win->next_dirty = ar->dirty_windows;
		ar->dirty_windows = (uint32_t)w + 1;
	}
	ar->pending += lc->size;
}

/* Up to want objects from the class's lanes in the depot, the last one put first. */
static unsigned depot_take(struct lane_class *lc, void **out, unsigned want)
{
	unsigned n = 0;

	while (n < want && lc->partial) {
		struct heap_window *win;
		struct heap_lane *l = lane_of_id(lc->partial - 1, &win);
		char *base = window_base(window_index(win));

		for (unsigned i = 0; i < LANE_PERIODS && n < want && l->depot_count; i++) {
			for (unsigned k = 0; k < l->per_period && n < want; k++) {
				size_t at = slot_offset(l, lc->size, i, k), bit = at / HEAP_ALIGN;

				if (!(win->depot[bit / 64] >> (bit % 64) & 1))
					continue;
				win->depot[bit / 64] &= ~((uint64_t)1 << (bit % 64));
				pages_in_use(win, at, lc->size);
				l->depot_count--;
				out[n++] = base + at;
			}
		}
		if (!l->depot_count)
			lc->partial = l->next_partial;
	}
	return n;
}

/* Give back the pages of the window whose carved objects are all in the depot. */
static void purge_window(struct heap_window *win)
{
	char *base = window_base(window_index(win));
	unsigned run = 0, pg;

	for (pg = 0; pg <= HEAP_WINDOW_PAGES; pg++) {
		bool idle = pg < HEAP_WINDOW_PAGES && !win->out[pg] && (win->touched >> pg & 1) &&
			    !(win->purged >> pg & 1);

		if (idle)
			continue;
		if (pg > run &&
		    !madvise(base + (size_t)run * PAGE, (size_t)(pg - run) * PAGE, MADV_DONTNEED)) {
			for (unsigned i = run; i < pg; i++)
				win->purged |= (uint64_t)1 << i;
			atomic_fetch_add_explicit(&purged_total, (size_t)(pg - run) * PAGE,
						  memory_order_relaxed);
		}
		run = pg + 1;
	}
}

static void purge(struct lane_arena *ar)
{
	while (ar->dirty_windows) {
		struct heap_window *win = &heap_windows[ar->dirty_windows - 1];

		ar->dirty_windows = win->next_dirty;
		win->dirty = 0;
		if (can_purge)
			purge_window(win);
	}
	ar->pending = 0;
}

/* ------------------------------------------------------------ thread stacks */

static struct lane_arena *arena_of(unsigned a)
{
	return &arenas[a % HEAP_LANE_ARENAS];
}

/* Fill an empty local stack to half its limit: from the depot, else fresh objects. */
void heap_lane_refill(unsigned c, struct heap_free_list *local)
{
	struct lane_arena *ar = arena_of(local->arena);
	unsigned want = heap_info[c].local_limit / 2, n;
	void *fresh[HEAP_LOCAL_CAP];

	heap_lock(&ar->lock);
	n = depot_take(&ar->classes[c], local->obj, want);
	if (n) {
		heap_unlock(&ar->lock);
		local->count = n;
		return;
	}
	while (n < want && (fresh[n] = carve(ar, c)))
		n++;
	heap_unlock(&ar->lock);
	/* stored in reverse, so they are handed out in the bijection's order */
	for (unsigned i = 0; i < n; i++)
		local->obj[i] = fresh[n - 1 - i];
	local->count = n;
}

void *heap_lane_fresh(unsigned c, unsigned arena)
{
	struct lane_arena *ar = arena_of(arena);
	void *p;

	heap_lock(&ar->lock);
	p = carve(ar, c);
	heap_unlock(&ar->lock);
	return p;
}

static void arena_done(struct lane_arena *ar)
{
	if (ar->pending >= PURGE_BYTES)
		purge(ar);
	heap_unlock(&ar->lock);
}

/*
 * Move the older half of a full local stack to the depot: each object to its
 * window's arena's, under one arena lock at a time.
 */
void heap_lane_spill(unsigned c, struct heap_free_list *local)
{
	unsigned half = local->count / 2;
	struct lane_arena *held = NULL;

	for (unsigned i = 0; i < half; i++) {
		size_t w = (size_t)((char *)local->obj[i] - heap_region) >> HEAP_WINDOW_SHIFT;
		struct lane_arena *ar = &arenas[heap_windows[w].arena];

		if (ar != held) {
			if (held)
				arena_done(held);
			heap_lock(&ar->lock);
			held = ar;
		}
		depot_put(ar, c, local->obj[i]);
	}
	if (held)
		arena_done(held);
	memmove(local->obj, local->obj + half, (local->count - half) * sizeof(local->obj[0]));
	local->count -= half;
}

void heap_lane_lock_all(void)
{
	for (unsigned a = 0; a < HEAP_LANE_ARENAS; a++)
		heap_lock(&arenas[a].lock);
}

void heap_lane_unlock_all(void)
{
	for (unsigned a = HEAP_LANE_ARENAS; a-- > 0;)
		heap_unlock(&arenas[a].lock);
}

void heap_lane_reset_locks(void)
{
	for (unsigned a = 0; a < HEAP_LANE_ARENAS; a++)
		heap_lock_reset(&arenas[a].lock);
}
