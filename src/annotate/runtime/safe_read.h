/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Safe reads of the profiled program's memory for the feature interpreter
 * (spec/freud.md §5.2.2 "PIN_SafeCopy", §7.3 item 5): a bad pointer gives a
 * failed read, never a crash, and a good pointer costs no system call.
 * Internal to liblever-annotate.so (safe_read.c says how).
 */
#ifndef LEVER_ANNOTATE_RUNTIME_SAFE_READ_H
#define LEVER_ANNOTATE_RUNTIME_SAFE_READ_H

#include <stddef.h>
#include <stdint.h>

/*
 * Copy n bytes at address src to dst. Returns 0, or -1 if any of them is not
 * readable (dst then holds nothing useful). Async-signal-safe, lock-free,
 * allocation-free; the first call initialises lazily (ann_safe_read_init).
 */
int ann_safe_read(void *dst, uintptr_t src, size_t n);

/*
 * Snapshot the readable mappings and install the fault fix-up. Idempotent,
 * async-signal-safe; the runtime calls it at start-up so that no sampled call
 * pays for it.
 */
void ann_safe_read_init(void);

/*
 * (Re)install the SIGSEGV/SIGBUS fix-up over whatever handler is there now
 * (which becomes the program's action, unless it was ours). The program's
 * sigaction calls cannot remove it (interpose_signals.c); a raw system call
 * can, and then reads stay safe but each costs a system call. For tests.
 */
void ann_safe_read_install_fixup(void);

/* Re-read /proc/self/maps now (tests; the reader does it on its own). */
void ann_safe_read_refresh(void);

/* How the calling thread's reads were served (snapshots: all threads'), for tests. */
struct ann_safe_read_counts {
	uint64_t fast;	    /* inside a known readable range, copied directly */
	uint64_t verified;  /* outside the table, read by process_vm_readv */
	uint64_t refused;   /* not readable: the read failed cleanly */
	uint64_t recovered; /* direct copies that faulted (a stale table) */
	uint64_t refreshes; /* snapshots of /proc/self/maps */
	uint32_t ranges;    /* readable ranges in the current snapshot */
};
void ann_safe_read_counts(struct ann_safe_read_counts *out);

#endif
