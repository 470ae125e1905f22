/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Code randomization: start, lazy relocation, re-randomization, reclamation
 * (spec stabilizer.md §4.3-4.5, §12.3 option B; the design is in code.h).
 *
 * Start: decide which functions can move (code_image.c), reserve the area
 * near the text, write one trap stub per function, point every slot at its
 * stub and overwrite each original entry with `[endbr64] jmp *slot(%rip)`.
 * The first call of a function in a period enters its stub, and
 * code_trap_resolve copies it to a random address, fixes its PC-relative
 * displacements, registers its unwind info, logs it and points the slot at
 * the copy. Re-randomization points every slot back at its stub (one atomic
 * store each) and reclaims old copies no thread's stack or registers refer
 * to (code_stop.c).
 *
 * Locking: one spinlock, always taken with every signal blocked, so a
 * program signal handler can never call into a relocation the same thread
 * is in the middle of, and a stop signal never finds a thread holding it.
 */
#include "stabilizer/runtime/code.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/base.h"
#include "stabilizer/runtime/stabilizer.h"

/* init.c owns the real definition; this one lets the parts build alone. */
__attribute__((weak)) struct stabilizer_config stabilizer_cfg;

static struct code_image img;
static struct code_area area;
static _Atomic int code_lock_word;
static uint64_t epoch = 1;
static struct rng placement_rng;
static uint8_t *scratch;
static struct code_copy *pool, *free_copies, *defunct;
static size_t pool_size;
static int perf_fd = -1, log_fd = -1;
static bool started, debug;
static unsigned gc_backoff, gc_skip; /* after failed stops: skip 2^k rounds */

static struct {
	uint64_t copies, freed, gc_rounds, gc_failed, placement_failed, homed, frozen;
} stats;
/* A placement failed for want of space, and nothing was freed since. */
static bool area_full;

static void lock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
	while (atomic_exchange_explicit(&code_lock_word, 1, memory_order_acquire))
		sched_yield();
}

static void unlock(const sigset_t *old)
{
	atomic_store_explicit(&code_lock_word, 0, memory_order_release);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static const char *function_name(const struct code_function *f)
{
	return img.names + f->name_off;
}

static uintptr_t stub_address(size_t index)
{
	return area.stubs + index * CODE_STUB_LEN;
}

static void set_slot(size_t index, uintptr_t target)
{
	atomic_store_explicit((_Atomic uint64_t *)&area.slots[index], target, memory_order_release);
}

/* ---------- copies ---------- */

static struct code_copy *copy_get(void)
{
	struct code_copy *c = free_copies;

	if (c)
		free_copies = c->next;
	return c;
}

static void copy_put(struct code_copy *c)
{
	c->next = free_copies;
	free_copies = c;
}

static void copy_release_space(struct code_copy *c)
{
	const struct code_function *f = &img.funcs[c->func];

	if (c->eh) {
		code_gdb_unregister((uint8_t *)c->eh + code_unwind_part(f));
		code_unwind_deregister(f, (uint8_t *)c->eh);
		code_bitmap_free(area.eh_bitmap, (c->eh - area.eh_lo) / CODE_GRANULE,
				 c->eh_granules);
		c->eh = 0;
	}
	code_bitmap_free(area.copy_bitmap, (c->addr - area.copies_lo) / CODE_GRANULE, c->granules);
}

/* The copy's bytes in scratch: the original, its rel32 fields shifted. */
static bool build_copy_bytes(const struct code_function *f, uintptr_t addr, size_t bytes)
{
	int64_t delta = (int64_t)(f->start - addr);
	size_t head = f->size < sizeof(f->prefix) ? f->size : sizeof(f->prefix);

	memcpy(scratch, f->prefix, head);
	if (f->size > head)
		memcpy(scratch + head, code_image_bytes(&img, f->start) + head, f->size - head);
	memset(scratch + f->size, 0xcc, bytes - f->size);
	for (uint32_t i = 0; i < f->fixup_count; i++) {
		uint32_t off = img.fixups[f->fixup_first + i];
		int32_t disp;
		int64_t moved;

		memcpy(&disp, scratch + off, 4);
		moved = disp + delta;
		if (moved != (int32_t)moved)
			return false;
		disp = (int32_t)moved;
		memcpy(scratch + off, &disp, 4);
	}
	return true;
}

static void log_copy(const struct code_function *f, uintptr_t addr)
{
	if (perf_fd >= 0)
		fd_printf(perf_fd, "%lx %x %s\n", (unsigned long)addr, f->size, function_name(f));
	if (log_fd >= 0)
		fd_printf(log_fd, "%llu %lx %u %s\n", (unsigned long long)epoch,
			  (unsigned long)addr, f->size, function_name(f));
}

/*
 * Fills c as the copy of function index at granule pos, its blob at eh_pos
 * (-1: none): bytes, unwind info, gdb entry, log line. False if not written.
 */
static bool fill_copy(struct code_copy *c, size_t index, long pos, long eh_pos)
{
	const struct code_function *f = &img.funcs[index];

	c->addr = area.copies_lo + (uintptr_t)pos * CODE_GRANULE;
	if (!build_copy_bytes(f, c->addr, (size_t)c->granules * CODE_GRANULE) ||
	    !code_area_write(&area, c->addr, scratch, (size_t)c->granules * CODE_GRANULE))
		return false;
	c->eh = eh_pos >= 0 ? area.eh_lo + (uintptr_t)eh_pos * CODE_GRANULE : 0;
	if (c->eh && f->fde.fde)
		code_unwind_register(f, (uint8_t *)c->eh, c->addr);
	if (c->eh)
		code_gdb_register((uint8_t *)c->eh + code_unwind_part(f), function_name(f), c->addr,
				  f->size, (const uint8_t *)c->eh + CODE_OBJECT_SPACE,
				  code_eh_len(f));
	stats.copies++;
	log_copy(f, c->addr);
	return true;
}

static struct code_copy *new_copy(size_t index, size_t *blob)
{
	const struct code_function *f = &img.funcs[index];
	struct code_copy *c = copy_get();

	if (!c)
		return NULL;
	*blob = code_metadata_size(f, function_name(f));
	c->func = (uint32_t)index;
	c->granules = (f->size + CODE_GRANULE - 1) / CODE_GRANULE;
	c->eh = 0;
	c->eh_granules = (uint32_t)((*blob + CODE_GRANULE - 1) / CODE_GRANULE);
	return c;
}

/* A new copy of function index at a random address; NULL if out of space. */
static struct code_copy *make_copy(size_t index)
{
	size_t blob;
	struct code_copy *c = new_copy(index, &blob);
	long pos, eh_pos = -1;

	if (!c)
		return NULL;
	pos = code_bitmap_alloc_random(area.copy_bitmap, area.copies_random, c->granules,
				       rng_next(&placement_rng));
	if (pos >= 0 && blob)
		eh_pos = code_bitmap_alloc_first(area.eh_bitmap, area.eh_random, c->eh_granules);
	if (pos < 0 || (blob && eh_pos < 0) || !fill_copy(c, index, pos, eh_pos)) {
		if (blob && eh_pos >= 0)
			code_bitmap_free(area.eh_bitmap, (size_t)eh_pos, c->eh_granules);
		if (pos >= 0)
			code_bitmap_free(area.copy_bitmap, (size_t)pos, c->granules);
		c->eh = 0;
		copy_put(c);
		return NULL;
	}
	return c;
}

/*
 * The function's copy at its home, made once and kept: the fallback when the
 * random part is full and the function has no copy to stay in. Its place is
 * fixed, so this part of the layout is no longer random; said once.
 */
static struct code_copy *home_copy(size_t index)
{
	struct code_function *f = &img.funcs[index];
	size_t blob;
	struct code_copy *c;

	if (f->home)
		return f->home;
	c = new_copy(index, &blob);
	if (!c)
		return NULL;
	if (!fill_copy(c, index, f->home_pos, blob ? (long)f->home_eh_pos : -1)) {
		copy_put(c);
		return NULL;
	}
	if (stats.homed++ == 0)
		fd_printf(2,
			  "lever stabilize: code: the code area is full (%llu of %llu reclamation "
			  "rounds could not stop every thread, so old copies stay); functions "
			  "without a copy now go to fixed places\n",
			  (unsigned long long)stats.gc_failed, (unsigned long long)stats.gc_rounds);
	f->home = c;
	return c;
}

uintptr_t code_trap_resolve(uint64_t index)
{
	struct code_function *f = &img.funcs[index];
	uintptr_t target;
	sigset_t old;

	lock(&old);
	if (!f->current || f->epoch != epoch) {
		struct code_copy *c = make_copy(index);

		if (!c) {
			/* full: stay in the current copy, or go home if there is none */
			stats.placement_failed++;
			area_full = true;
			if (!f->current)
				c = home_copy(index);
		}
		if (c) {
			/* a home copy is never freed: it does not go to the defunct list */
			if (f->current && f->current != f->home) {
				f->current->next = defunct;
				defunct = f->current;
			}
			f->current = c;
		}
		if (!f->current) {
			fd_printf(2, "lever stabilize: code: cannot place %s (out of memory)\n",
				  function_name(f));
			abort();
		}
		f->epoch = epoch;
		set_slot(index, f->current->addr);
	}
	target = f->current->addr;
	unlock(&old);
	return target;
}

/* ---------- reclamation ---------- */

struct scan_state {
	bool prepared;
};

/* Conservative: any word pointing into a defunct copy keeps it. */
static void scan_words(const uintptr_t *words, size_t n, void *ctx)
{
	struct scan_state *s = ctx;
	uintptr_t lo = area.copies_lo, hi = lo + area.copies_granules * CODE_GRANULE;

	if (!s->prepared) {
		for (struct code_copy *c = defunct; c; c = c->next)
			c->marked = false;
		s->prepared = true;
	}
	for (size_t i = 0; i < n; i++) {
		uintptr_t w = words[i];

		if (w < lo || w >= hi)
			continue;
		for (struct code_copy *c = defunct; c; c = c->next)
			if (w >= c->addr && w < c->addr + (uintptr_t)c->granules * CODE_GRANULE)
				c->marked = true;
	}
}

/*
 * Frees the defunct copies the scan found unreferenced. Copies retired after
 * the scan are at the head of the list, before the first scanned one.
 */
static void reclaim(struct code_copy *scanned_head)
{
	struct code_copy **link = &defunct;

	while (*link && *link != scanned_head)
		link = &(*link)->next;
	while (*link) {
		struct code_copy *c = *link;

		if (c->marked) {
			link = &c->next;
			continue;
		}
		*link = c->next;
		copy_release_space(c);
		copy_put(c);
		stats.freed++;
		area_full = false;
	}
}

static void collect_garbage(void)
{
	struct scan_state state = {.prepared = false};
	struct code_copy *scanned_head;
	sigset_t old;
	bool ok;

	lock(&old);
	scanned_head = defunct;
	unlock(&old);
	if (!scanned_head)
		return;
	/*
	 * Without the lock: a thread holding it has every signal blocked and
	 * is stopped only after releasing it, so while all are stopped nobody
	 * changes the list. The scan sees the list as of the stop.
	 */
	if (gc_skip > 0) {
		gc_skip--;
		return;
	}
	uint64_t t0 = time_monotonic_ns();
	ok = code_stop_and_scan(scan_words, &state);
	stats.gc_rounds++;
	if (debug)
		fd_printf(2, "lever stabilize: code: reclamation round: %s, %llu us\n",
			  ok ? "all threads stopped" : "timed out",
			  (unsigned long long)(time_monotonic_ns() - t0) / 1000);
	if (!ok) {
		/* A thread keeps the signal blocked: try less and less often. */
		stats.gc_failed++;
		if (gc_backoff < 10)
			gc_backoff++;
		gc_skip = 1u << gc_backoff;
		return;
	}
	gc_backoff = 0;
	if (!state.prepared)
		return;
	lock(&old);
	reclaim(scanned_head);
	unlock(&old);
}

void code_randomizer_rerandomize(void)
{
	sigset_t old;

	if (!started)
		return;
	lock(&old);
	if (area_full) {
		/* moving functions now would only fail: wait for space */
		stats.frozen++;
		unlock(&old);
		collect_garbage();
		return;
	}
	epoch++;
	for (size_t i = 0; i < img.n_funcs; i++)
		if (img.funcs[i].skip == SKIP_NONE && img.funcs[i].current)
			set_slot(i, stub_address(i));
	unlock(&old);
	collect_garbage();
}

/* ---------- start ---------- */

static bool write_stubs(void)
{
	size_t bytes = img.n_funcs * CODE_STUB_LEN;
	uint8_t *buf =
	    mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t common = (uintptr_t)&area.slots[img.n_funcs];
	bool ok;

	if (buf == MAP_FAILED)
		return false;
	area.slots[img.n_funcs] = (uint64_t)(uintptr_t)code_trap_entry;
	for (size_t i = 0; i < img.n_funcs; i++) {
		uint8_t *s = buf + i * CODE_STUB_LEN;
		uint32_t index = (uint32_t)i;
		int32_t rel = (int32_t)(common - (stub_address(i) + 11));

		s[0] = 0x68; /* push $index */
		memcpy(s + 1, &index, 4);
		s[5] = 0xff; /* jmp *common(%rip) */
		s[6] = 0x25;
		memcpy(s + 7, &rel, 4);
		memset(s + 11, 0xcc, CODE_STUB_LEN - 11);
	}
	ok = code_area_write(&area, area.stubs, buf, bytes);
	munmap(buf, bytes);
	return ok;
}

/* Overwrites f's entry with [endbr64] jmp *slot(%rip). */
static bool patch_entry(size_t index)
{
	const struct code_function *f = &img.funcs[index];
	uint8_t bytes[16];
	size_t n = 0;
	int32_t rel;

	if (f->entry_len > CODE_ENTRY_JMP_LEN) {
		memcpy(bytes, f->prefix, CODE_ENDBR_LEN);
		n = CODE_ENDBR_LEN;
	}
	rel = (int32_t)((uintptr_t)&area.slots[index] - (f->start + n + CODE_ENTRY_JMP_LEN));
	bytes[n++] = 0xff;
	bytes[n++] = 0x25;
	memcpy(bytes + n, &rel, 4);
	n += 4;
	return code_area_write(&area, f->start, bytes, n);
}

static void open_outputs(void)
{
	char path[64];
	const char *log = getenv(CODE_LOG_ENV);

	fmt_buffer(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	perf_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (perf_fd >= 0)
		fd_printf(perf_fd, "%lx %lx lever_stabilizer_trap_stubs\n",
			  (unsigned long)area.stubs, (unsigned long)(img.n_funcs * CODE_STUB_LEN));
	if (log && *log && log_fd < 0) {
		log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (log_fd < 0)
			fd_printf(2, "lever stabilize: cannot open %s for the code log\n", log);
		else
			fd_printf(log_fd,
				  "# lever stabilizer code log v1 pid %d: epoch address size "
				  "function\n",
				  (int)getpid());
	}
}

/* fork() runs with the lock held: no relocation is half done in the child. */
static sigset_t fork_saved_mask;

static void before_fork(void)
{
	lock(&fork_saved_mask);
}

static void after_fork_parent(void)
{
	unlock(&fork_saved_mask);
}

/* The child's copies are its own (private mappings); its files are not. */
static void after_fork_child(void)
{
	code_area_after_fork(&area);
	if (perf_fd >= 0) {
		char path[64];

		close(perf_fd);
		fmt_buffer(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		perf_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		for (size_t i = 0; i < img.n_funcs && perf_fd >= 0; i++)
			if (img.funcs[i].current)
				fd_printf(perf_fd, "%lx %x %s\n",
					  (unsigned long)img.funcs[i].current->addr,
					  img.funcs[i].size, function_name(&img.funcs[i]));
	}
	unlock(&fork_saved_mask);
}

static void report_start(void)
{
	if (stabilizer_cfg.verbose < 1)
		return;
	fd_printf(2,
		  "lever stabilize: code: %zu functions, %zu relocatable (%llu bytes), area %lx "
		  "(%lu KiB), code written through %s, %s\n",
		  img.n_funcs, img.relocatable, (unsigned long long)img.relocatable_bytes,
		  (unsigned long)area.base, (unsigned long)(area.size >> 10),
		  area.rw_alias ? "a read-write alias (dual mapping)" : "/proc/self/mem",
		  img.from_cache ? "decoded earlier (decode cache)" : "decoded now");
	for (int why = SKIP_TOO_SMALL; why < SKIP_COUNT; why++)
		if (img.skipped[why])
			fd_printf(2, "lever stabilize: code: %zu kept in place: %s\n",
				  img.skipped[why], code_skip_name((enum code_skip)why));
	if (stabilizer_cfg.verbose < 2)
		return;
	for (size_t i = 0; i < img.n_funcs; i++)
		if (img.funcs[i].skip != SKIP_NONE)
			fd_printf(2, "lever stabilize: code: keeps %s in place: %s\n",
				  function_name(&img.funcs[i]),
				  code_skip_name((enum code_skip)img.funcs[i].skip));
}

__attribute__((destructor)) static void report_end(void)
{
	if (!started || stabilizer_cfg.verbose < 1)
		return;
	fd_printf(2,
		  "lever stabilize: code: %llu copies made, %llu freed, %llu reclamation rounds "
		  "(%llu could not stop every thread), %llu placements failed, %llu copies at "
		  "home, %llu re-randomizations skipped (area full)\n",
		  (unsigned long long)stats.copies, (unsigned long long)stats.freed,
		  (unsigned long long)stats.gc_rounds, (unsigned long long)stats.gc_failed,
		  (unsigned long long)stats.placement_failed, (unsigned long long)stats.homed,
		  (unsigned long long)stats.frozen);
}

/* This runtime must not be one of the functions it moves. */
static bool runtime_in_main_program(void)
{
	Dl_info info;

	return dladdr((void *)code_randomizer_start, &info) && info.dli_fbase &&
	       (uintptr_t)info.dli_fbase >= img.image_lo &&
	       (uintptr_t)info.dli_fbase < img.image_hi;
}

static int refuse(const char *why)
{
	if (stabilizer_should_warn("code"))
		fd_printf(2, "lever stabilize: code randomization off: %s\n", why);
	return -1;
}

static bool allocate_tables(void)
{
	pool_size = 8 * img.relocatable + 1024;
	pool = mmap(NULL, pool_size * sizeof(*pool), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	scratch = mmap(NULL, img.max_size + 2 * CODE_GRANULE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pool == MAP_FAILED || scratch == MAP_FAILED)
		return false;
	for (size_t i = pool_size; i-- > 0;)
		copy_put(&pool[i]);
	return true;
}

int code_randomizer_start(void)
{
	char err[256];

	if (started)
		return 0;
	debug = getenv(CODE_DEBUG_ENV) != NULL;
	if (code_image_load(&img, err, sizeof(err)) != 0)
		return refuse(err);
	if (runtime_in_main_program())
		return refuse("the runtime is linked into the program itself");
	if (img.relocatable == 0)
		return refuse("no function of the program can be moved");
	if (code_area_create(&area, &img, err, sizeof(err)) != 0)
		return refuse(err);
	if (!allocate_tables() || code_stop_init() != 0)
		return refuse("out of memory");
	code_trap_detect_xsave();
	rng_seed(&placement_rng, stabilizer_cfg.seed ^ 0x636f64652d706c63ULL);
	if (getenv(CODE_WRITE_ENV) && strcmp(getenv(CODE_WRITE_ENV), "dual") == 0 &&
	    !code_area_use_dual_mapping(&area))
		return refuse("cannot set up a dual mapping for the code area");
	if (!write_stubs()) {
		/* /proc/self/mem not writable (hardened kernel): W^X by dual mapping. */
		if (area.rw_alias || !code_area_use_dual_mapping(&area) || !write_stubs())
			return refuse(
			    "cannot write code (neither /proc/self/mem nor a dual mapping)");
	}
	for (size_t i = 0; i < img.n_funcs; i++)
		if (img.funcs[i].skip == SKIP_NONE)
			set_slot(i, stub_address(i));
	open_outputs();
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	report_start();
	started = true;
	for (size_t i = 0; i < img.n_funcs; i++) {
		if (img.funcs[i].skip == SKIP_NONE && !patch_entry(i)) {
			/* Only the first write can fail (nothing patched yet). */
			started = false;
			return refuse("cannot patch function entries through /proc/self/mem");
		}
	}
	return 0;
}
