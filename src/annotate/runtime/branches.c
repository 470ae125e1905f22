/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Branch outcomes (`lever annotate record --branches`; spec/freud.md §4.2.4,
 * §7 "Branch outcome capture" option B; doc/annotate-record.md "Branches").
 * Each conditional branch the plan lists for a probed function is checked
 * against the bytes found at run time (the same decoder as the planner's,
 * branches.h) and gets an int3 over its first byte. The SIGTRAP that int3
 * raises is ours: the handler finds the branch by address, decides it as
 * the processor would from the flags (and rcx) the kernel saved, sets the
 * program counter to the target or the fall-through (and rcx for the
 * loops), and hands the outcome to the shadow stack (ann_shadow_branch).
 * Nothing is displaced or relocated: the branch is emulated, never run.
 *
 * A branch among the instructions a live entry patch moved into the
 * trampoline runs there, as its relocated copy (a jcc rel32 to the same
 * target; probe_live.c notes where): that copy is armed instead, and -v
 * says so. Skipped, and said with -v: functions probed by uprobes (no
 * shadow stack); said always: a branch whose bytes are not what was planned
 * (a rebuilt file has a new build ID and is refused before this; this is
 * code changed in memory).
 *
 * SIGTRAP is held for good (signals.h ANN_SIGNAL_ALWAYS): an int3 with
 * SIGTRAP blocked or ignored makes the kernel kill the process, so no mask
 * the program sets may block it (interpose_signals.c strips it), and the
 * program's own action, kept as its view, runs for every SIGTRAP that is not
 * one of ours (raise, a debugger-style int3 of its own, single steps).
 *
 * The table of armed branches is sorted by address and published whole,
 * before any of its int3s is written, so the handler (on any thread, at any
 * time) only reads a complete table; tables replaced by a dlopen's arming
 * are never freed, since a handler may still be reading one.
 *
 * Cost: a trap per branch executed, microseconds (bench/annotate_branches),
 * which is why it is opt-in. It is calibrated once, when the first branch is
 * armed, on a loop of this library with one armed branch against its
 * unarmed twin, and charged like the probe's own time (ann_shadow_branch):
 * subtracted from the time of every recorded call the trap happened in.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "annotate/runtime/branches.h"
#include "annotate/runtime/runtime.h"
#include "annotate/runtime/signals.h"

struct table {
	size_t n;
	struct ann_branch *b[]; /* by address */
};

static struct table *_Atomic armed;
static bool handler_taken;
static uint64_t trap_ns; /* calibrated cost of one trap */

/*
 * The calibration loops: n conditional branches each (n >= 1), the jne at
 * +9 jumping back to +2. Only the first is ever armed.
 */
long ann_branch_calib_armed(long n);
long ann_branch_calib_bare(long n);
__asm__(".text\n"
	".type ann_branch_calib_armed, @function\n"
	"ann_branch_calib_armed:\n"
	"	xor %ecx, %ecx\n"
	"1:	add $1, %rcx\n"
	"	cmp %rdi, %rcx\n"
	"	jne 1b\n"
	"	mov %rcx, %rax\n"
	"	ret\n"
	".size ann_branch_calib_armed, . - ann_branch_calib_armed\n"
	".type ann_branch_calib_bare, @function\n"
	"ann_branch_calib_bare:\n"
	"	xor %ecx, %ecx\n"
	"1:	add $1, %rcx\n"
	"	cmp %rdi, %rcx\n"
	"	jne 1b\n"
	"	mov %rcx, %rax\n"
	"	ret\n"
	".size ann_branch_calib_bare, . - ann_branch_calib_bare\n");

static struct ann_branch calib = {.offset = 9, .target = 2, .len = 2, .cond = 5};

static struct ann_branch *lookup(uintptr_t pc)
{
	struct table *t = atomic_load_explicit(&armed, memory_order_acquire);
	size_t lo = 0, hi = t ? t->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->b[mid]->addr == pc)
			return t->b[mid];
		if (t->b[mid]->addr < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void on_trap(int sig, siginfo_t *info, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *r = uc->uc_mcontext.gregs;
	struct ann_branch *b;

	/* an int3 leaves the program counter after itself; the kernel sends it (si_code > 0) */
	if (info && info->si_code > 0 && (b = lookup((uintptr_t)r[REG_RIP] - 1))) {
		uint64_t rcx = (uint64_t)r[REG_RCX];
		bool taken = ann_branch_taken(b->cond, (uint64_t)r[REG_EFL], &rcx);

		if (b->cond >= ANN_BR_LOOP)
			r[REG_RCX] = (greg_t)rcx;
		r[REG_RIP] = (greg_t)(taken ? b->to : b->addr + b->len);
		if (b->probe)
			ann_shadow_branch(b->probe, b->index, taken, (uintptr_t)r[REG_RSP],
					  trap_ns);
		return;
	}
	ann_signals_forward(sig, info, ucv);
}

static int cmp_addr(const void *x, const void *y)
{
	uintptr_t a = (*(struct ann_branch *const *)x)->addr,
		  b = (*(struct ann_branch *const *)y)->addr;

	return a < b ? -1 : a > b;
}

/* The current table and p's branches that passed the checks, sorted; NULL if out of memory. */
static struct table *grown_table(struct ann_probe *p)
{
	struct table *old = atomic_load(&armed), *t;
	size_t n = old ? old->n : 0, k = n;

	t = malloc(sizeof(*t) + (n + p->n_branches) * sizeof(t->b[0]));
	if (!t)
		return NULL;
	if (old)
		memcpy(t->b, old->b, n * sizeof(t->b[0]));
	for (uint32_t i = 0; i < p->n_branches; i++)
		if (p->branches[i].armed)
			t->b[k++] = &p->branches[i];
	t->n = k;
	qsort(t->b, t->n, sizeof(t->b[0]), cmp_addr);
	return t;
}

/*
 * In the program's code, made writable for the write; in a trampoline chunk
 * not yet sealed (its installation batch), left so: the seal makes it
 * read+execute.
 */
static bool write_int3(uintptr_t at, bool in_trampoline)
{
	if (ann_code_unprotect(at, 1))
		return false;
	*(volatile uint8_t *)at = 0xcc;
	__builtin___clear_cache((char *)at, (char *)at + 1);
	return in_trampoline || ann_code_protect(at, 1) == 0;
}

/*
 * The cost of a trap: rounds of PER branches on the armed loop against its
 * twin just before (the same load on both), the median round. A few ms, once.
 */
static void calibrate(void)
{
	enum { ROUNDS = 9, PER = 200 };
	long (*volatile armed_fn)(long) = ann_branch_calib_armed;
	long (*volatile bare_fn)(long) = ann_branch_calib_bare;
	struct table *t = malloc(sizeof(*t) + sizeof(t->b[0]));
	struct ann_branch_insn insn;
	uint64_t d[ROUNDS];

	if (!t)
		return;
	calib.addr = (uintptr_t)ann_branch_calib_armed + calib.offset;
	if (!ann_branch_decode((const uint8_t *)calib.addr, 2, &insn) || insn.cond != calib.cond ||
	    (int64_t)calib.offset + insn.len + insn.rel != calib.target) {
		free(t);
		ann_msg("no calibration of the branch traps' cost (unexpected code)");
		return;
	}
	calib.to = (uintptr_t)ann_branch_calib_armed + (uintptr_t)calib.target;
	t->n = 1;
	t->b[0] = &calib;
	atomic_store_explicit(&armed, t, memory_order_release);
	if (!write_int3(calib.addr, false)) {
		ann_msg("no calibration of the branch traps' cost (mprotect refused)");
		return;
	}
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t0 = ann_now_ns(), t1, t2;

		bare_fn(PER);
		t1 = ann_now_ns();
		armed_fn(PER);
		t2 = ann_now_ns();
		d[r] = (t2 - t1 > t1 - t0 ? (t2 - t1) - (t1 - t0) : 0) / PER;
	}
	qsort(d, ROUNDS, sizeof(d[0]), ann_cmp_u64);
	trap_ns = d[ROUNDS / 2];
	if (ann_verbose)
		ann_msg("branch outcomes: %llu ns per branch executed (a trap), subtracted from "
			"the time of the calls it happens in",
			(unsigned long long)trap_ns);
}

void ann_branches_init(void)
{
	bool any = false;

	for (uint32_t i = 0; i < ann_plan.n_probes; i++)
		any |= ann_plan.probes[i].n_branches > 0;
	if (!any)
		return;
	if (ann_signals_take(SIGTRAP, on_trap, SA_NODEFER, ANN_SIGNAL_ALWAYS)) {
		ann_msg("SIGTRAP cannot be handled: no branch outcomes");
		return;
	}
	handler_taken = true;
	/* before main: the threads the program starts inherit the unblocked mask */
	ann_signals_unblock(SIGTRAP);
	calibrate();
}

void ann_branches_arm(struct ann_probe *p)
{
	uint32_t displaced = 0, changed = 0, moved = 0, n = 0;
	struct table *t;

	if (!p->n_branches)
		return;
	if (p->installed != ANN_PROBE_SLED && p->installed != ANN_PROBE_LIVE) {
		if (ann_verbose)
			ann_msg("%s: no branch outcomes with a %s probe", p->name,
				p->installed == ANN_PROBE_UPROBE ? "uprobe" : "missing");
		return;
	}
	if (!handler_taken)
		return; /* ann_branches_init said why */
	for (uint32_t i = 0; i < p->n_branches; i++) {
		struct ann_branch *b = &p->branches[i];
		struct ann_branch_insn d;

		b->probe = p;
		b->addr = p->entry + b->offset;
		b->to = (uintptr_t)((int64_t)p->entry + b->target);
		if (b->offset < p->displaced) {
			/* it runs as its relocated copy, a jcc rel32 to the same target */
			if (!b->moved_to ||
			    !ann_branch_decode((const uint8_t *)b->moved_to, b->moved_len, &d) ||
			    d.len != b->moved_len || d.cond != b->cond ||
			    b->moved_to + d.len + (uintptr_t)(intptr_t)d.rel != b->to) {
				displaced++;
				continue;
			}
			b->addr = b->moved_to;
			b->len = b->moved_len;
			moved++;
		} else if (!ann_branch_decode((const uint8_t *)b->addr, p->size - b->offset, &d) ||
			   d.len != b->len || d.cond != b->cond ||
			   (int64_t)b->offset + d.len + d.rel != b->target) {
			changed++;
			continue;
		}
		b->armed = true;
		n++;
	}
	if (changed)
		ann_msg("%s: %u of its conditional branches are not the planned code; they are "
			"not recorded",
			p->name, changed);
	if (displaced)
		ann_msg("%s: %u branch%s in the %u bytes its live patch moved, not relocated as "
			"expected: not recorded",
			p->name, displaced, displaced == 1 ? "" : "es", p->displaced);
	if (moved && ann_verbose)
		ann_msg("%s: %u branch%s in the %u bytes its live patch moved: armed in the "
			"trampoline, where %s",
			p->name, moved, moved == 1 ? "" : "es", p->displaced,
			moved == 1 ? "it runs" : "they run");
	if (!n)
		return;
	t = grown_table(p);
	if (!t) {
		for (uint32_t i = 0; i < p->n_branches; i++)
			p->branches[i].armed = false;
		ann_msg("%s: out of memory: no branch outcomes", p->name);
		return;
	}
	atomic_store_explicit(&armed, t, memory_order_release);
	p->n_armed = n;
	for (uint32_t i = 0; i < p->n_branches; i++) {
		struct ann_branch *b = &p->branches[i];

		if (b->armed && !write_int3(b->addr, b->moved_to != 0)) {
			/* in the table, never trapped, and not written in the calls */
			b->armed = false;
			p->n_armed--;
			ann_msg("%s+%#llx: cannot write its int3 (mprotect refused)", p->name,
				(unsigned long long)b->offset);
		}
	}
	if (ann_verbose)
		ann_msg("%s: %u conditional branch%s armed", p->name, p->n_armed,
			p->n_armed == 1 ? "" : "es");
}
