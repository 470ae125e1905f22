/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Entry and exit of instrumented calls (spec/freud.md §7.3 items 2-3, §7.6
 * "Agent: per-thread state and handlers"): a per-thread shadow stack of the
 * calls in progress. At a sampled entry the real return address is saved on
 * it and replaced by the exit trampoline's, so the exit is seen whichever
 * `ret` the function leaves by, including the `ret` of a function it
 * tail-called.
 *
 * Frames are keyed by the stack pointer at entry (the address of the return
 * address). A call whose frame is gone without returning (longjmp,
 * siglongjmp, an exception caught above it) has a key below the current
 * stack pointer: such frames are dropped, not recorded, at the next entry or
 * exit. Equal keys are a tail call (the callee's return address slot is the
 * caller's), so they stay and unwind in order.
 *
 * A signal that lands while this thread is inside a handler here (`busy`)
 * gets no probes in its handler: that keeps the stack consistent without
 * blocking signals. C++ exceptions: see interpose_unwind.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "annotate/runtime/branches.h"
#include "annotate/runtime/runtime.h"
#include "annotate/runtime/shadow.h"

static __thread struct ann_thread *self __attribute__((tls_model("initial-exec")));
static _Atomic uint32_t next_slot;
struct ann_thread *ann_threads[ANN_MAX_THREADS];
static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/*
 * The probe's own time (spec §7.3 item 3), charged to every enclosing call
 * on the thread's shadow stack (through overhead_ns). What varies from call
 * to call is timed with the TSC: the feature reads at a sampled entry, the
 * reservoirs written when a period ends, a line formatted for a reservoir, a
 * buffer the thread writes itself. The rest is the same at every call, and
 * a TSC read costs ~20 ns on a VM, so it is calibrated once at start-up on a
 * probed function of this library, through the real trampolines: a recorded
 * call's cost outside its own span (cost_unmeasured_ns: both trampolines
 * and handlers, the copy of its record), the part inside its span
 * (cost_inside_ns), and a call the rate does not sample (cost_skip_ns).
 */
static uint64_t cost_unmeasured_ns, cost_inside_ns, cost_skip_ns;

static int calibration_clock(void);

void ann_probe_costs(uint64_t *unmeasured_ns, uint64_t *inside_ns, uint64_t *skip_ns)
{
	*unmeasured_ns = cost_unmeasured_ns;
	*inside_ns = cost_inside_ns;
	*skip_ns = cost_skip_ns;
}

static double ns_per_tick; /* calibrated at start-up against CLOCK_MONOTONIC */

/*
 * The handlers' windows are timed with the bare TSC (a few ns per read; only
 * differences within one handler are taken, converted once); a difference
 * that is absurd (over 0.1 s: a migration to a CPU whose TSC disagrees)
 * counts as nothing rather than as garbage; a slow write of the buffer counts.
 */
static uint64_t span_ns(uint64_t tsc_from, uint64_t tsc_to)
{
	uint64_t ns = (uint64_t)((double)(tsc_to - tsc_from) * ns_per_tick);

	return ns < 100000000 ? ns : 0;
}

static uint64_t window_ns(uint64_t tsc_from)
{
	return span_ns(tsc_from, __builtin_ia32_rdtsc());
}

static void thread_destructor(void *arg)
{
	(void)arg;
	ann_thread_end();
}

static void make_key(void)
{
	pthread_key_create(&thread_key, thread_destructor);
}

/* The bounds of the calling thread's stack (for the main thread, as far as it may grow). */
static void thread_stack(struct ann_thread *t)
{
	pthread_attr_t attr;
	void *lo;
	size_t size;

	t->stack_lo = 0;
	t->stack_hi = UINTPTR_MAX; /* unknown: every address counts as this stack */
	if (pthread_getattr_np(pthread_self(), &attr))
		return;
	if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
		t->stack_lo = (uintptr_t)lo;
		t->stack_hi = (uintptr_t)lo + size;
	}
	pthread_attr_destroy(&attr);
}

struct ann_thread *ann_thread_get(void)
{
	struct ann_thread *t = self;
	uint32_t slot;

	if (t)
		return t;
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return NULL;
	slot = atomic_fetch_add(&next_slot, 1);
	t->slot = slot;
	/* per-thread call counts (every call kept): no shared atomic per call */
	if (slot < ANN_MAX_THREADS && ann_plan.n_probes) {
		void *c = mmap(NULL, ann_plan.n_probes * sizeof(*t->calls), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		t->calls = c == MAP_FAILED ? NULL : c;
	}
	t->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)slot << 32) ^ (uint64_t)(uintptr_t)t;
	if (slot < ANN_MAX_THREADS)
		ann_threads[slot] = t;
	thread_stack(t);
	self = t;
	pthread_once(&key_once, make_key);
	pthread_setspecific(thread_key, t);
	return t;
}

struct ann_thread *ann_thread_current(void)
{
	return self;
}

static uint64_t now_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Frames whose key is below sp belong to calls that can no longer return. */
static bool on_thread_stack(const struct ann_thread *t, uintptr_t sp)
{
	return sp >= t->stack_lo && sp < t->stack_hi;
}

static void drop_top(struct ann_thread *t)
{
	struct ann_frame *f = &t->frames[t->depth - 1];

	atomic_fetch_add(&f->probe->dropped_unwound, 1);
	t->values_top = f->values_at;
	t->outcomes_top = f->outcomes_at;
	t->depth--;
}

/*
 * Only on the thread's own stack do addresses say which frames are gone: a
 * signal handler on an alternate stack, or a coroutine's stack, may lie
 * above the calls still running below it, so frames elsewhere are never
 * dropped by comparison (frame_for finds them by their exact key).
 */
static void drop_dead(struct ann_thread *t, uintptr_t sp)
{
	if (!on_thread_stack(t, sp))
		return;
	while (t->depth && t->frames[t->depth - 1].sp < sp &&
	       on_thread_stack(t, t->frames[t->depth - 1].sp))
		drop_top(t);
}

/*
 * A call of p that gets no frame, inside a recorded call of p (recursion):
 * its branches would count as the recorded call's, which therefore gets
 * none (written as unknown).
 */
static void branches_unknown(struct ann_thread *t, const struct ann_probe *p)
{
	if (p->n_armed && t->depth && t->frames[t->depth - 1].probe == p)
		t->frames[t->depth - 1].has_outcomes = false;
}

void ann_on_entry(struct ann_probe *p, struct ann_entry_regs *regs)
{
	struct ann_thread *t = ann_thread_get();
	uintptr_t sp = (uintptr_t)regs->gpr[7];
	struct ann_frame *f;
	uint64_t tsc_flip = 0;
	int slot;

	if (!t || t->busy || t->disabled) {
		if (t && t->busy)
			atomic_fetch_add(&p->dropped_busy, 1);
		return;
	}
	t->busy = 1;
	if (ann_plan.rate_n) {
		/*
		 * The common case, a call not sampled, stays cheap: one atomic
		 * increment (the reservoir's count, which also counts the calls),
		 * a multiply, and the clock only every 256 calls of the thread
		 * (a period ends that much late at most). It costs the
		 * calibrated constant; writing the reservoirs when a period
		 * ends is timed.
		 */
		if (--t->clock_countdown <= 0) {
			t->clock_countdown = 256;
			t->now = now_coarse_ns();
		}
		if (ann_output_period_due(t->now))
			tsc_flip = __builtin_ia32_rdtsc();
		slot = ann_sample_decide(p, t->now);
		if (tsc_flip)
			t->overhead_ns += window_ns(tsc_flip);
		if (slot < 0) {
			t->overhead_ns += cost_skip_ns;
			branches_unknown(t, p);
			t->busy = 0;
			return;
		}
	} else if (t->calls && p->index < ann_plan.n_probes) {
		/* only this thread writes its count: a plain add, read at exit */
		_Atomic uint64_t *c = &t->calls[p->index];

		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		slot = -1;
	} else {
		atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed);
		slot = -1;
	}
	drop_dead(t, sp);
	if (t->depth == ANN_SHADOW_DEPTH || t->values_top + p->n_features > ANN_THREAD_VALUES) {
		atomic_fetch_add(&p->dropped_depth, 1);
		t->overhead_ns += cost_skip_ns;
		branches_unknown(t, p);
		t->busy = 0;
		return;
	}
	f = &t->frames[t->depth];
	f->sp = sp;
	f->ret = *(uintptr_t *)sp;
	f->probe = p;
	f->id = ann_thread_next_id(t);
	f->parent = t->depth ? t->frames[t->depth - 1].id : 0;
	f->slot = slot;
	f->epoch = ann_plan.rate_n ? ann_output_epoch() : 0;
	f->armed = true;
	f->values_at = t->values_top;
	if (slot >= 0)
		ann_reservoir_claim(p, slot, f->id);
	if (p->n_ops) {
		/* the feature reads, the variable part of an entry, are timed */
		uint64_t tsc_ops = __builtin_ia32_rdtsc();
		double *v = &t->values[t->values_top];

		if (ann_features_eval(p->ops, p->n_ops, regs, ann_plan.modules[p->module].load_bias,
				      v, p->n_features))
			for (uint32_t i = 0; i < p->n_features; i++)
				v[i] = __builtin_nan("");
		t->overhead_ns += window_ns(tsc_ops);
	}
	t->values_top += p->n_features;
	f->outcomes_at = t->outcomes_top;
	f->has_outcomes = false;
	if (p->n_armed && t->outcomes_top + 2 * p->n_branches <= ANN_THREAD_OUTCOMES) {
		memset(&t->outcomes[t->outcomes_top], 0, 2 * p->n_branches * sizeof(uint64_t));
		t->outcomes_top += 2 * p->n_branches;
		f->has_outcomes = true;
	}
	*(uintptr_t *)sp = ann_exit_trampoline;
	t->depth++;
	t->busy = 0;
	/*
	 * last, so that the measured span holds as little of the probe as
	 * possible (the clock read after the other metrics); the rest of this
	 * entry's work is in the calibrated constant charged at its exit
	 */
	ann_metrics_read_tsc(&f->start, ann_plan.metrics, 0);
	f->overhead0 = t->overhead_ns;
}

/* The frame the returning call owns: the innermost one keyed by sp. */
static struct ann_frame *frame_for(struct ann_thread *t, uintptr_t sp)
{
	drop_dead(t, sp);
	if (t->depth && t->frames[t->depth - 1].sp == sp)
		return &t->frames[t->depth - 1];
	/* frames above it on another stack, left by a handler that jumped out */
	for (uint32_t i = t->depth; i-- > 0;) {
		if (t->frames[i].sp != sp)
			continue;
		while (t->depth > i + 1)
			drop_top(t);
		return &t->frames[i];
	}
	return NULL;
}

static bool record_call(struct ann_thread *t, struct ann_frame *f,
			const struct ann_metrics_snapshot *end)
{
	struct ann_probe *p = f->probe;
	struct ann_metrics_snapshot d;
	uint64_t own = t->overhead_ns - f->overhead0 + cost_inside_ns;
	const uint64_t *outcomes = f->has_outcomes ? &t->outcomes[f->outcomes_at] : NULL;
	int slot;

	for (int m = 0; m < ANN_N_METRICS; m++)
		d.v[m] = end->v[m] >= f->start.v[m] ? end->v[m] - f->start.v[m] : 0;
	if (t->calibrating)
		t->calibration_span += d.v[calibration_clock()];
	/* the probe's own time, ours and that of the probed calls inside, is not the function's */
	for (int m = ANN_TIME; m <= ANN_CPU; m++)
		d.v[m] = d.v[m] > own ? d.v[m] - own : 0;
	/*
	 * Lock waiting and holding happen inside the call, so neither can exceed
	 * its time; a subtracted estimate of the probe's cost that came out a
	 * little high must not make them seem to.
	 */
	for (int m = ANN_WAIT; m <= ANN_HOLD && ann_plan.metrics & ANN_METRIC_BIT(ANN_TIME); m++)
		if (d.v[m] > d.v[ANN_TIME])
			d.v[m] = d.v[ANN_TIME];
	slot = f->slot >= 0 && f->epoch == ann_output_epoch() ? f->slot : -1;
	/* a record for the writer thread to format, or a reservoir's line; counted there */
	return ann_output_record(t, p, f->id, f->parent, slot, &d, &t->values[f->values_at],
				 outcomes);
}

uintptr_t ann_on_exit(uintptr_t sp_after_ret, uint64_t tsc_in)
{
	struct ann_metrics_snapshot end;
	struct ann_thread *t = self;
	struct ann_frame *f;
	uintptr_t ret;
	bool quiet = false;
	int busy;

	/*
	 * The span ends at the trampoline's TSC read (time); from there on this
	 * is probe time for the enclosing calls.
	 */
	ann_metrics_read_tsc(&end, ann_plan.metrics, tsc_in);
	busy = t->busy;
	t->busy = 1;
	f = frame_for(t, sp_after_ret - 8);
	if (!f) {
		/* cannot happen unless the stack was switched under us: nowhere to return */
		static const char msg[] = "lever annotate: shadow stack lost its frame; aborting\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			abort();
		abort();
	}
	ret = f->ret;
	if (!t->disabled)
		quiet = record_call(t, f, &end);
	t->values_top = f->values_at;
	t->outcomes_top = f->outcomes_at;
	t->depth--;
	/*
	 * A call whose record was only copied (the common case with every call
	 * kept) costs the calibrated constant, which holds this handler's work:
	 * no TSC read to end its window. Anything more (a reservoir's line, a
	 * buffer the thread wrote itself) is timed.
	 */
	t->overhead_ns += (quiet ? 0 : window_ns(tsc_in)) + cost_unmeasured_ns;
	t->busy = busy;
	return ret;
}

/*
 * From the SIGTRAP handler (branches.c): the outcome goes to the innermost
 * call in progress if it is a recorded call of p and the branch ran in its
 * body, at or below its return address (a frame below sp is one a longjmp
 * left, not yet dropped). Otherwise the call of p that ran it is not
 * recorded.
 */
void ann_shadow_branch(struct ann_probe *p, uint32_t index, bool taken, uintptr_t sp,
		       uint64_t cost_ns)
{
	struct ann_thread *t = self;
	struct ann_frame *f;
	uint64_t *o;

	if (!t || t->disabled)
		return;
	/* the trap happened inside every call in progress: not their own time */
	t->overhead_ns += cost_ns;
	if (t->busy || !t->depth || index >= p->n_branches)
		return;
	f = &t->frames[t->depth - 1];
	if (f->probe != p || !f->has_outcomes || (on_thread_stack(t, sp) && sp > f->sp))
		return;
	o = &t->outcomes[f->outcomes_at + 2 * index];
	if (o[0] < ANN_BR_KEPT && taken)
		o[1] |= 1ull << o[0];
	o[0]++;
}

void ann_shadow_restore_all(void)
{
	struct ann_thread *t = self;

	if (!t)
		return;
	for (uint32_t i = t->depth; i-- > 0;) {
		struct ann_frame *f = &t->frames[i];

		if (f->armed) {
			*(uintptr_t *)f->sp = f->ret;
			f->armed = false;
		}
	}
}

void ann_shadow_rearm(uintptr_t sp)
{
	struct ann_thread *t = self;

	if (!t)
		return;
	t->busy = 1;
	drop_dead(t, sp);
	for (uint32_t i = 0; i < t->depth; i++) {
		struct ann_frame *f = &t->frames[i];

		if (!f->armed) {
			*(uintptr_t *)f->sp = ann_exit_trampoline;
			f->armed = true;
		}
	}
	t->busy = 0;
}

void ann_thread_end(void)
{
	struct ann_thread *t = self;

	if (!t)
		return;
	/*
	 * pthread_exit or a cancellation from inside probed calls: they never
	 * return, so they are not recorded; what is buffered is written.
	 */
	t->busy = 1;
	for (uint32_t i = 0; i < t->depth; i++)
		atomic_fetch_add(&t->frames[i].probe->dropped_unwound, 1);
	t->depth = 0;
	ann_output_flush_thread();
	t->disabled = 1;
	t->busy = 0;
}

/* ------------------------------------------------------------ calibration */

/* The clock metric that is recorded: wall time, else CPU time. */
static int calibration_clock(void)
{
	return ann_plan.metrics & ANN_METRIC_BIT(ANN_CPU) &&
		       !(ann_plan.metrics & ANN_METRIC_BIT(ANN_TIME))
		   ? ANN_CPU
		   : ANN_TIME;
}

/* An empty function of this library, with a sled, that calibration probes. */
__attribute__((noinline, patchable_function_entry(5, 0))) int ann_calibration_target(int x)
{
	__asm__ volatile("" : "+r"(x)::"memory");
	return x;
}

/* Its twin, never probed: the same loop without the probe, interleaved with the probed one. */
__attribute__((noinline, patchable_function_entry(5, 0))) int ann_calibration_bare(int x)
{
	__asm__ volatile("" : "+r"(x)::"memory");
	return x;
}

static uint64_t loop_ns(int (*target)(int), int n)
{
	int (*volatile fn)(int) = target;
	uint64_t t0 = ann_now_ns();

	for (int i = 0; i < n; i++)
		fn(i);
	return ann_now_ns() - t0;
}

static void calibrate_tsc(void)
{
	uint64_t t0 = ann_now_ns(), c0 = __builtin_ia32_rdtsc(), t1, c1;

	do {
		t1 = ann_now_ns();
		c1 = __builtin_ia32_rdtsc();
	} while (t1 - t0 < 2000000);
	ns_per_tick = c1 > c0 ? (double)(t1 - t0) / (double)(c1 - c0) : 0;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), ann_cmp_u64);
	return v[n / 2];
}

/*
 * Probe ann_calibration_target through its sled and the real trampolines,
 * call it in rounds with every call recorded (formatted, not written: the
 * thread is `calibrating`) and with every call skipped, each against the same
 * loop on its unprobed twin run just before. Medians over the rounds.
 */
void ann_calibrate(void)
{
	enum { ROUNDS = 21, PER = 200 };
	static struct ann_probe probe = {.index = ANN_NO_INDEX, .name = "calibration"};
	uint64_t unmeasured[ROUNDS], inside[ROUNDS], skip[ROUNDS];
	struct ann_thread *t = ann_thread_get();
	uint32_t rate = ann_plan.rate_n;
	char why[128];

	calibrate_tsc();
	if (!t)
		return;
	if (ann_probe_sled(&probe, (uintptr_t)ann_calibration_target, why, sizeof(why))) {
		ann_msg("no calibration of the probe's cost: %s", why);
		return;
	}
	ann_code_seal();
	t->calibrating = 1;
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t o0, wall, bare;

		/* the unprobed loop beside each probed one, so that both see the same load */
		bare = loop_ns(ann_calibration_bare, PER);
		ann_plan.rate_n = 0;
		t->calibration_span = 0;
		o0 = t->overhead_ns;
		wall = loop_ns(ann_calibration_target, PER);
		/* what the handlers timed themselves is in overhead_ns; the rest is not */
		wall = wall > bare ? wall - bare : 0;
		unmeasured[r] =
		    (wall > t->overhead_ns - o0 ? wall - (t->overhead_ns - o0) : 0) / PER;
		inside[r] = t->calibration_span / PER;
		ann_plan.rate_n = 1;
		probe.res.seen = 1u << 30; /* a full reservoir: every call is skipped */
		bare = loop_ns(ann_calibration_bare, PER);
		o0 = t->overhead_ns;
		wall = loop_ns(ann_calibration_target, PER);
		wall = wall > bare ? wall - bare : 0;
		skip[r] = (wall > t->overhead_ns - o0 ? wall - (t->overhead_ns - o0) : 0) / PER;
	}
	ann_plan.rate_n = rate;
	t->overhead_ns = 0;
	t->calibrating = 0;
	/* noise falls on either loop of a round: the median round, not the least */
	cost_unmeasured_ns = median(unmeasured, ROUNDS);
	cost_inside_ns = median(inside, ROUNDS);
	cost_skip_ns = median(skip, ROUNDS);
	if (ann_verbose)
		ann_msg("probe cost: %llu ns per recorded call besides what it times itself "
			"(%llu inside its span), %llu ns per call not sampled",
			(unsigned long long)cost_unmeasured_ns, (unsigned long long)cost_inside_ns,
			(unsigned long long)cost_skip_ns);
}
