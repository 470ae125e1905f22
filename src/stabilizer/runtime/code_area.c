/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The code area: one reservation within ±2 GiB of the whole executable image
 * (rel32 displacements of copies must still reach the text, data and GOT;
 * spec §4.5, §12.3), placed with MAP_FIXED_NOREPLACE below the image (PIE)
 * or above it past room for brk (non-PIE):
 *
 *   [slots | eh arena]  read-write data: the entry jumps' targets and the
 *                       unwind blobs (their pointers are PC-relative)
 *   [stubs | copies]    read+execute, never writable
 *
 * W^X: code is written only through /proc/self/mem (the kernel's ptrace
 * access path writes into a read-only private mapping). No mapping is ever
 * writable and executable, and no second view exists: a MAP_SHARED dual
 * mapping (memfd or shared anonymous) would stay shared with fork()ed
 * children, which would then rewrite the parent's code. Private mappings are
 * copied on write, so a child's relocations stay its own.
 */
#include "stabilizer/runtime/code.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/base.h"

#define PAGE	       4096UL
#define NEAR_LIMIT     ((1UL << 31) - (1UL << 20)) /* rel32 reach, with a margin */
#define MIN_COPY_AREA  (4UL << 20)
#define MAX_COPY_AREA  (1UL << 30)
#define BRK_ROOM       (1UL << 30) /* left free above a non-PIE image */
#define PLACEMENT_STEP (2UL << 20)

static size_t page_round(size_t n)
{
	return (n + PAGE - 1) & ~(PAGE - 1);
}

/*
 * The bitmaps: bit i of word i / 64 set = granule i used. Every operation
 * works a word at a time: a copy is placed on each first call of a function
 * in a period (some 10,000 placements a second at a 50 ms interval), and a
 * bit-by-bit search had the allocator take a third of a re-randomized
 * sqlite3's time.
 */

/* Bits [first, first + n) of word w's range that lie in the word, as a mask. */
static uint64_t word_mask(size_t w, size_t first, size_t end)
{
	size_t lo = first > w * 64 ? first - w * 64 : 0;
	size_t hi = end < (w + 1) * 64 ? end - w * 64 : 64;
	uint64_t upto_hi = hi == 64 ? ~0ULL : (1ULL << hi) - 1;

	return upto_hi & ~((1ULL << lo) - 1);
}

static bool range_free(const uint64_t *b, size_t first, size_t n)
{
	size_t end = first + n;

	for (size_t w = first / 64; w * 64 < end; w++)
		if (b[w] & word_mask(w, first, end))
			return false;
	return true;
}

static void range_mark(uint64_t *b, size_t first, size_t n, bool used)
{
	size_t end = first + n;

	for (size_t w = first / 64; w * 64 < end; w++) {
		if (used)
			b[w] |= word_mask(w, first, end);
		else
			b[w] &= ~word_mask(w, first, end);
	}
}

/* The first granule at or after from (and before limit) whose bit is want; limit if none. */
static size_t next_bit(const uint64_t *b, size_t from, size_t limit, bool want)
{
	for (size_t w = from / 64; w * 64 < limit; w++) {
		uint64_t bits = want ? b[w] : ~b[w];

		bits &= word_mask(w, from, limit);
		if (bits) {
			size_t i = w * 64 + (size_t)__builtin_ctzll(bits);

			return i < limit ? i : limit;
		}
	}
	return limit;
}

long code_bitmap_alloc_first(uint64_t *bitmap, size_t total, size_t n)
{
	size_t pos = 0, end;

	if (n == 0 || n > total)
		return -1;
	while ((pos = next_bit(bitmap, pos, total, false)) + n <= total) {
		end = next_bit(bitmap, pos, pos + n, true);
		if (end == pos + n) {
			range_mark(bitmap, pos, n, true);
			return (long)pos;
		}
		pos = end;
	}
	return -1;
}

/*
 * Calls fn for each free run [pos, end) of at least n granules; stops when fn
 * returns true.
 */
static bool each_free_run(const uint64_t *b, size_t total, size_t n,
			  bool (*fn)(size_t pos, size_t end, size_t n, void *ctx), void *ctx)
{
	size_t pos = 0, end;

	while ((pos = next_bit(b, pos, total, false)) < total) {
		end = next_bit(b, pos, total, true);
		if (end - pos >= n && fn(pos, end, n, ctx))
			return true;
		pos = end;
	}
	return false;
}

struct pick {
	uint64_t count; /* valid positions seen so far */
	uint64_t want;	/* the index of the one to take; UINT64_MAX: just count */
	size_t pos;
};

static bool pick_position(size_t pos, size_t end, size_t n, void *ctx)
{
	struct pick *p = ctx;
	uint64_t here = end - pos - n + 1;

	if (p->want != UINT64_MAX && p->want < p->count + here) {
		p->pos = pos + (size_t)(p->want - p->count);
		return true;
	}
	p->count += here;
	return false;
}

/*
 * Uniform placement over the positions where n granules are free: a few
 * random tries (rejection sampling: an accepted try is uniform over them),
 * then, in a crowded area, the same distribution exactly by counting the
 * valid positions of every free run and taking the random-th one.
 */
long code_bitmap_alloc_random(uint64_t *bitmap, size_t total, size_t n, uint64_t random)
{
	struct pick p = {0, UINT64_MAX, 0};
	size_t span;

	if (n == 0 || n > total)
		return -1;
	span = total - n + 1;
	for (int t = 0; t < 16; t++) {
		size_t pos = (size_t)(random % span);

		random = random * 6364136223846793005ULL + 1442695040888963407ULL;
		random ^= random >> 29;
		if (range_free(bitmap, pos, n)) {
			range_mark(bitmap, pos, n, true);
			return (long)pos;
		}
	}
	each_free_run(bitmap, total, n, pick_position, &p);
	if (p.count == 0)
		return -1;
	p.want = random % p.count;
	p.count = 0;
	if (!each_free_run(bitmap, total, n, pick_position, &p))
		return -1;
	range_mark(bitmap, p.pos, n, true);
	return (long)p.pos;
}

void code_bitmap_free(uint64_t *bitmap, size_t first, size_t n)
{
	range_mark(bitmap, first, n, false);
}

/* Outside the area (the original entries, at start): flip the pages writable. */
static bool write_by_mprotect(uintptr_t addr, const void *buf, size_t len)
{
	uintptr_t lo = addr & ~(PAGE - 1), hi = page_round(addr + len);

	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) != 0)
		return false;
	memcpy((void *)addr, buf, len);
	return mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC) == 0;
}

static bool write_dual(struct code_area *a, uintptr_t addr, const void *buf, size_t len)
{
	if (addr >= a->rx_lo && addr + len <= a->rx_lo + a->rx_size) {
		memcpy(a->rw_alias + (addr - a->rx_lo), buf, len);
		return true;
	}
	return write_by_mprotect(addr, buf, len);
}

/* A shared RX mapping at rx_lo and its RW alias, holding contents (if any). */
static uint8_t *map_dual(uintptr_t rx_lo, size_t size, const void *contents)
{
	void *fresh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	void *rx, *alias;

	if (fresh == MAP_FAILED)
		return NULL;
	if (contents)
		memcpy(fresh, contents, size);
	alias = mremap(fresh, 0, size, MREMAP_MAYMOVE); /* same pages, second view */
	if (alias == MAP_FAILED) {
		munmap(fresh, size);
		return NULL;
	}
	/* Move the first view over the reservation, read+execute. */
	rx = mremap(fresh, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)rx_lo);
	if (rx == MAP_FAILED || mprotect(rx, size, PROT_READ | PROT_EXEC) != 0) {
		munmap(alias, size);
		return NULL;
	}
	return alias;
}

bool code_area_use_dual_mapping(struct code_area *a)
{
	uint8_t *alias;

	a->rx_lo = a->stubs;
	a->rx_size = a->base + a->size - a->stubs;
	alias = map_dual(a->rx_lo, a->rx_size, NULL);
	if (!alias)
		return false;
	a->rw_alias = alias;
	return true;
}

bool code_area_write(struct code_area *a, uintptr_t addr, const void *buf, size_t len)
{
	const char *p = buf;
	pid_t pid = getpid();

	if (a->rw_alias)
		return write_dual(a, addr, buf, len);
	/* A child made without pthread_atfork (raw clone) must not write
	 * through its parent's descriptor. */
	if (a->mem_fd >= 0 && a->mem_pid != pid) {
		close(a->mem_fd);
		a->mem_fd = -1;
	}
	if (a->mem_fd < 0) {
		a->mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		a->mem_pid = pid;
	}
	while (len > 0) {
		ssize_t n = pwrite(a->mem_fd, p, len, (off_t)addr);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		addr += (uintptr_t)n;
		len -= (size_t)n;
	}
	return true;
}

void code_area_after_fork(struct code_area *a)
{
	if (a->mem_fd >= 0)
		close(a->mem_fd);
	a->mem_fd = -1; /* reopened, as this process's, on the next write */
	if (a->rw_alias) {
		/* Shared pages are the parent's too: take a private set. */
		uint8_t *old = a->rw_alias, *alias = map_dual(a->rx_lo, a->rx_size, old);

		if (alias) {
			a->rw_alias = alias;
			munmap(old, a->rx_size);
		}
	}
}

static bool within_reach(uintptr_t base, size_t size, const struct code_image *img)
{
	uintptr_t lo = base < img->image_lo ? base : img->image_lo;
	uintptr_t hi = base + size > img->image_hi ? base + size : img->image_hi;

	return hi - lo < NEAR_LIMIT;
}

static void *try_map(uintptr_t addr, size_t size)
{
	void *p = mmap((void *)addr, size, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if ((uintptr_t)p != addr) { /* a kernel without MAP_FIXED_NOREPLACE */
		munmap(p, size);
		return NULL;
	}
	return p;
}

/* Below the image first (free under a PIE), then above it past the brk room. */
static uintptr_t reserve_near(const struct code_image *img, size_t size)
{
	uintptr_t lo = img->image_lo & ~(PAGE - 1);
	uintptr_t hi = page_round(img->image_hi);

	for (uintptr_t gap = PLACEMENT_STEP; gap < NEAR_LIMIT; gap += PLACEMENT_STEP) {
		if (lo > size + gap && within_reach(lo - size - gap, size, img) &&
		    try_map(lo - size - gap, size))
			return lo - size - gap;
		if (!within_reach(lo - size - gap, size, img))
			break;
	}
	for (uintptr_t gap = BRK_ROOM; within_reach(hi + gap, size, img); gap += PLACEMENT_STEP)
		if (try_map(hi + gap, size))
			return hi + gap;
	return 0;
}

/*
 * Homes: each relocatable function's fixed place for one copy and one unwind
 * blob, one after the other past the random parts; returns the granules of
 * both home parts.
 */
static void assign_homes(struct code_image *img, size_t copies_random, size_t eh_random,
			 size_t *home, size_t *home_eh)
{
	*home = *home_eh = 0;
	for (size_t i = 0; i < img->n_funcs; i++) {
		struct code_function *f = &img->funcs[i];

		if (f->skip != SKIP_NONE)
			continue;
		f->home_pos = (uint32_t)(copies_random + *home);
		f->home_eh_pos = (uint32_t)(eh_random + *home_eh);
		*home += (f->size + CODE_GRANULE - 1) / CODE_GRANULE;
		*home_eh += (code_metadata_size(f, img->names + f->name_off) + CODE_GRANULE - 1) /
			    CODE_GRANULE;
	}
}

int code_area_create(struct code_area *a, struct code_image *img, char *err, size_t err_size)
{
	size_t slots_bytes = page_round((img->n_funcs + 1) * sizeof(uint64_t));
	size_t eh_bytes = 64 * 1024, stubs_bytes, copies_bytes, rw_bytes, home, home_eh;
	uint64_t copies_want = 8 * (img->relocatable_bytes + CODE_GRANULE * img->relocatable);

	for (size_t i = 0; i < img->n_funcs; i++)
		if (img->funcs[i].skip == SKIP_NONE)
			eh_bytes += 8 * (code_metadata_size(&img->funcs[i],
							    img->names + img->funcs[i].name_off) +
					 CODE_GRANULE);
	eh_bytes = page_round(eh_bytes);
	stubs_bytes = page_round(img->n_funcs * CODE_STUB_LEN);
	copies_bytes = copies_want < MIN_COPY_AREA   ? MIN_COPY_AREA
		       : copies_want > MAX_COPY_AREA ? MAX_COPY_AREA
						     : page_round((size_t)copies_want);
	memset(a, 0, sizeof(*a));
	a->copies_random = copies_bytes / CODE_GRANULE;
	a->eh_random = eh_bytes / CODE_GRANULE;
	assign_homes(img, a->copies_random, a->eh_random, &home, &home_eh);
	copies_bytes = page_round(copies_bytes + home * CODE_GRANULE);
	eh_bytes = page_round(eh_bytes + home_eh * CODE_GRANULE);
	rw_bytes = slots_bytes + eh_bytes;
	a->mem_fd = -1;
	a->size = rw_bytes + stubs_bytes + copies_bytes;
	a->base = reserve_near(img, a->size);
	if (!a->base) {
		fmt_buffer(err, err_size, "no free address range within 2 GiB of the program");
		return -1;
	}
	if (mprotect((void *)a->base, rw_bytes, PROT_READ | PROT_WRITE) != 0 ||
	    mprotect((void *)(a->base + rw_bytes), stubs_bytes + copies_bytes,
		     PROT_READ | PROT_EXEC) != 0) {
		fmt_buffer(err, err_size, "cannot set up the code area");
		munmap((void *)a->base, a->size);
		return -1;
	}
	a->slots = (uint64_t *)a->base;
	a->eh_lo = a->base + slots_bytes;
	a->eh_granules = eh_bytes / CODE_GRANULE;
	a->stubs = a->base + rw_bytes;
	a->copies_lo = a->stubs + stubs_bytes;
	a->copies_granules = copies_bytes / CODE_GRANULE;
	a->copy_bitmap = mmap(NULL, page_round(a->copies_granules / 8 + 8), PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a->eh_bitmap = mmap(NULL, page_round(a->eh_granules / 8 + 8), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a->copy_bitmap == MAP_FAILED || a->eh_bitmap == MAP_FAILED) {
		fmt_buffer(err, err_size, "out of memory for the code area's bitmaps");
		munmap((void *)a->base, a->size);
		return -1;
	}
	return 0;
}
