// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Safe reads for the feature interpreter (spec/freud.md §7.3 item 5: "every
 * dereference must be a safe read"; §7.5 lists the replacements of Pin's
 * PIN_SafeCopy).
 *
 * Why this design. A feature program chases pointers from a function's
 * arguments on every sampled call, so the common case (a good pointer) must
 * not cost a system call, and a bad one (NULL, garbage, freed and unmapped)
 * must not crash the program. Three layers:
 *
 *  1. A table of the readable ranges of the address space, a snapshot of
 *     /proc/self/maps. A read inside it is copied directly.
 *  2. A read outside it is done by process_vm_readv on ourselves: the kernel
 *     checks the address, so a bad pointer fails with EFAULT and a good one
 *     in a mapping born after the snapshot succeeds, and then triggers a new
 *     snapshot (at most one per millisecond) so that such memory becomes a
 *     fast read. Bad pointers never trigger one.
 *  3. The table can be stale: memory unmapped since the snapshot (free() of
 *     a large block) still looks readable. The direct copy is therefore a
 *     tiny assembly routine whose only load, if it faults, is recovered by a
 *     SIGSEGV/SIGBUS handler that moves the saved instruction pointer to the
 *     routine's error exit (the way the Linux kernel's exception tables
 *     work). Faults anywhere else go to the program's own action, which
 *     the program sets and reads back as if our handler were not there
 *     (interpose_signals.c).
 *
 * Everything here is async-signal-safe (open/read/close, sigaction,
 * process_vm_readv; no stdio, no malloc, no locks that wait): a sampled call
 * may come from a signal handler. The snapshot is double-buffered and
 * published with one atomic store; readers never wait for it, and a reader
 * racing a snapshot at worst takes the slow path or the recovered fault.
 * Mappings that can fault although readable ([vvar], device files) are left
 * out of the table, so reads there go through the kernel check.
 */
#include "annotate/runtime/safe_read.h"

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "annotate/runtime/signals.h"

#define RANGE_CAPACITY	    4096
#define REFRESH_INTERVAL_NS 1000000ll

struct range {
	uintptr_t lo, hi;
};

static struct range tables[2][RANGE_CAPACITY];
static _Atomic uint32_t table_count[2];
static _Atomic unsigned table_current;
static atomic_flag refreshing = ATOMIC_FLAG_INIT;
static _Atomic long long last_refresh_ns;
/* 0 not started, 1 in progress, 2 ready */
static _Atomic int init_state;
static _Atomic bool fixup_installed;
/*
 * Whether any readable mapping lies above the 47-bit user address space of
 * 4-level paging (only with 5-level paging and an mmap hint asking for it).
 * Without one, an address up there is garbage (a random 64-bit value almost
 * always is) and is refused without a system call.
 */
#define LOW_USER_LIMIT (1ull << 47)
static _Atomic bool high_mappings;

/* Per thread: a shared counter would bounce its cache line between threads
   on every read (and cost a locked instruction). */
static __thread uint64_t n_fast, n_verified, n_refused, n_recovered;
static _Atomic uint64_t n_refreshes;

/*
 * int ann_guarded_copy(void *dst, const void *src, size_t n): 0, or -1 when a
 * load from src faulted. Only the loads between the begin and end labels are
 * recovered; dst is always the caller's own memory.
 */
int ann_guarded_copy(void *dst, const void *src, size_t n);
extern const char ann_guarded_copy_begin[], ann_guarded_copy_end[], ann_guarded_copy_fixup[];
__asm__(".text\n"
	".p2align 4\n"
	".hidden ann_guarded_copy\n"
	".hidden ann_guarded_copy_begin\n"
	".hidden ann_guarded_copy_end\n"
	".hidden ann_guarded_copy_fixup\n"
	".type ann_guarded_copy, @function\n"
	"ann_guarded_copy:\n"
	"ann_guarded_copy_begin:\n"
	"	cmpq $8, %rdx\n"
	"	jne 2f\n"
	"	movq (%rsi), %rax\n"
	"	movq %rax, (%rdi)\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	"2:	testq %rdx, %rdx\n"
	"	jz 3f\n"
	"1:	movb (%rsi), %al\n"
	"	movb %al, (%rdi)\n"
	"	incq %rsi\n"
	"	incq %rdi\n"
	"	decq %rdx\n"
	"	jnz 1b\n"
	"3:	xorl %eax, %eax\n"
	"	ret\n"
	"ann_guarded_copy_end:\n"
	"ann_guarded_copy_fixup:\n"
	"	movl $-1, %eax\n"
	"	ret\n"
	".size ann_guarded_copy, .-ann_guarded_copy\n");

static void fault_handler(int sig, siginfo_t *info, void *ucv)
{
	ucontext_t *uc = ucv;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];

	if (pc >= (uintptr_t)ann_guarded_copy_begin && pc < (uintptr_t)ann_guarded_copy_end) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)ann_guarded_copy_fixup;
		n_recovered++;
		return;
	}
	/* not ours: the program's action, as if we were not here */
	ann_signals_forward(sig, info, ucv);
}

static bool handler_is_ours(int sig)
{
	struct sigaction now;

	if (ann_real_sigaction(sig, NULL, &now) != 0)
		return false;
	return (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == fault_handler;
}

static void install_fixup(void)
{
	/* SA_NODEFER: a program handler we forward to may fault in turn */
	if (ann_signals_take(SIGSEGV, fault_handler, SA_ONSTACK | SA_NODEFER, ANN_SIGNAL_ALWAYS) ||
	    ann_signals_take(SIGBUS, fault_handler, SA_ONSTACK | SA_NODEFER, ANN_SIGNAL_ALWAYS))
		return;
	atomic_store(&fixup_installed, true);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* A line of /proc/self/maps, parsed a character at a time (no buffering). */
struct maps_line {
	uintptr_t lo, hi;
	int field;    /* 0 "lo-hi", 1 perms, 2 offset, 3 dev, 4 inode, 5 path */
	int perm_pos; /* characters of the perms field seen */
	bool readable;
	bool in_hi;
	bool was_space;
	char path[8]; /* its first characters */
	int path_len;
};

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Mappings that are readable yet may fault on a read, or have effects. */
static bool risky_path(const struct maps_line *l)
{
	return (l->path_len >= 5 && memcmp(l->path, "[vvar", 5) == 0) ||
	       (l->path_len >= 5 && memcmp(l->path, "/dev/", 5) == 0 &&
		!(l->path_len >= 8 && memcmp(l->path, "/dev/shm", 8) == 0) &&
		!(l->path_len >= 8 && memcmp(l->path, "/dev/zer", 8) == 0));
}

static void maps_char(struct maps_line *l, char c)
{
	if (l->field == 0) {
		int d = hex_digit(c);

		if (c == '-')
			l->in_hi = true;
		else if (d >= 0 && l->in_hi)
			l->hi = l->hi << 4 | (uintptr_t)d;
		else if (d >= 0)
			l->lo = l->lo << 4 | (uintptr_t)d;
	}
	if (c == ' ' && l->field < 5) {
		/* separators; the path itself may contain spaces */
		if (!l->was_space)
			l->field++;
		l->was_space = true;
		return;
	}
	l->was_space = false;
	if (l->field == 1 && l->perm_pos++ == 0)
		l->readable = c == 'r';
	if (l->field == 5 && l->path_len == 0 && c == ' ')
		return; /* the padding before the path */
	if (l->field == 5 && l->path_len < (int)sizeof(l->path))
		l->path[l->path_len++] = c;
}

static uint32_t add_range(struct range *t, uint32_t n, uintptr_t lo, uintptr_t hi)
{
	if (n > 0 && t[n - 1].hi == lo) {
		t[n - 1].hi = hi;
		return n;
	}
	if (n == RANGE_CAPACITY)
		return n; /* the rest go through the kernel check */
	t[n].lo = lo;
	t[n].hi = hi;
	return n + 1;
}

static void snapshot(void)
{
	unsigned next = 1 - atomic_load(&table_current);
	struct range *t = tables[next];
	struct maps_line line;
	char buf[4096];
	uint32_t n = 0;
	ssize_t got;
	int fd;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	memset(&line, 0, sizeof(line));
	while ((got = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] != '\n') {
				maps_char(&line, buf[i]);
				continue;
			}
			if (line.readable && line.hi > line.lo && !risky_path(&line))
				n = add_range(t, n, line.lo, line.hi);
			memset(&line, 0, sizeof(line));
		}
	}
	close(fd);
	atomic_store_explicit(&table_count[next], n, memory_order_relaxed);
	atomic_store_explicit(&high_mappings, n > 0 && t[n - 1].hi > LOW_USER_LIMIT,
			      memory_order_relaxed);
	atomic_store_explicit(&table_current, next, memory_order_release);
	atomic_fetch_add_explicit(&n_refreshes, 1, memory_order_relaxed);
}

static void refresh_now(void)
{
	if (atomic_flag_test_and_set(&refreshing))
		return; /* another thread is at it */
	snapshot();
	atomic_store(&last_refresh_ns, now_ns());
	/* Someone replaced our handler: direct copies would no longer be
	   recovered, so until it is back every read goes through the kernel. */
	atomic_store(&fixup_installed, handler_is_ours(SIGSEGV) && handler_is_ours(SIGBUS));
	atomic_flag_clear(&refreshing);
}

void ann_safe_read_refresh(void)
{
	refresh_now();
}

void ann_safe_read_install_fixup(void)
{
	if (handler_is_ours(SIGSEGV) && handler_is_ours(SIGBUS)) {
		atomic_store(&fixup_installed, true);
		return;
	}
	install_fixup();
}

void ann_safe_read_init(void)
{
	int expected = 0;

	if (!atomic_compare_exchange_strong(&init_state, &expected, 1))
		return;
	install_fixup();
	refresh_now();
	atomic_store(&init_state, 2);
}

static bool in_table(uintptr_t src, size_t n)
{
	unsigned cur = atomic_load_explicit(&table_current, memory_order_acquire);
	uint32_t count = atomic_load_explicit(&table_count[cur], memory_order_relaxed);
	const struct range *t = tables[cur];
	uint32_t lo = 0, hi = count;

	if (count > RANGE_CAPACITY)
		return false;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t[mid].hi <= src)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < count && t[lo].lo <= src && src + n <= t[lo].hi;
}

static int kernel_checked_read(void *dst, uintptr_t src, size_t n)
{
	struct iovec local = {.iov_base = dst, .iov_len = n};
	struct iovec remote = {.iov_base = (void *)src, .iov_len = n};
	ssize_t got = syscall(SYS_process_vm_readv, (long)syscall(SYS_getpid), &local, 1UL, &remote,
			      1UL, 0UL);

	return got == (ssize_t)n ? 0 : -1;
}

int ann_safe_read(void *dst, uintptr_t src, size_t n)
{
	int state = atomic_load_explicit(&init_state, memory_order_acquire);

	if (n == 0)
		return 0;
	if (src + n < src || src < 4096)
		goto refused;
	if (state == 0) {
		ann_safe_read_init();
		state = atomic_load_explicit(&init_state, memory_order_acquire);
	}
	if (state == 2 && atomic_load_explicit(&fixup_installed, memory_order_relaxed) &&
	    in_table(src, n)) {
		if (ann_guarded_copy(dst, (const void *)src, n) == 0) {
			n_fast++;
			return 0;
		}
		/* Unmapped since the snapshot: fall through to the kernel. */
	}
	if (state == 2 && src + n > LOW_USER_LIMIT &&
	    !atomic_load_explicit(&high_mappings, memory_order_relaxed))
		goto refused;
	if (kernel_checked_read(dst, src, n) != 0)
		goto refused;
	n_verified++;
	if (state == 2 && now_ns() - atomic_load(&last_refresh_ns) >= REFRESH_INTERVAL_NS)
		refresh_now();
	return 0;
refused:
	n_refused++;
	return -1;
}

void ann_safe_read_counts(struct ann_safe_read_counts *out)
{
	unsigned cur = atomic_load(&table_current);

	out->fast = n_fast;
	out->verified = n_verified;
	out->refused = n_refused;
	out->recovered = n_recovered;
	out->refreshes = atomic_load(&n_refreshes);
	out->ranges = atomic_load(&table_count[cur]);
}
