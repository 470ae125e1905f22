/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The per-thread state of liblever-annotate.so: the shadow stack of calls in
 * progress (shadow.c), the feature values of those calls, and the thread's
 * output buffer (output.c). Mapped with mmap at the thread's first probe, so
 * that a probe never calls malloc.
 */
#ifndef LEVER_ANNOTATE_SHADOW_H
#define LEVER_ANNOTATE_SHADOW_H

#include "annotate/runtime/runtime.h"

#define ANN_SHADOW_DEPTH  1024 /* calls in progress per thread; deeper ones are not recorded */
#define ANN_THREAD_VALUES (64 << 10) /* feature values of the calls in progress */
#define ANN_THREAD_OUTCOMES                                                                        \
	(32 << 10)		   /* branch outcomes of the calls in progress, 2 per branch       \
				    */
#define ANN_OUT_BUFFER	(64 << 10) /* bytes of whole lines buffered per thread */
#define ANN_LINE_STACK	1024	   /* a C line this long is formatted on the stack */
#define ANN_MAX_THREADS 4096	   /* threads whose buffers a fatal signal can still write */

struct ann_frame {
	uintptr_t sp;  /* stack pointer at entry: where the return address is */
	uintptr_t ret; /* the real return address */
	struct ann_probe *probe;
	uint64_t id, parent;
	uint64_t overhead0; /* the thread's probe time at entry */
	uint64_t epoch;	    /* the output period the call was sampled in */
	int slot;	    /* reservoir slot, -1 when every call is kept */
	bool armed;	    /* the return address is replaced */
	uint32_t values_at; /* its feature values: values[values_at...] */
	/*
	 * Its branch outcomes (--branches): per branch of the probe, the count
	 * and the first ANN_BR_KEPT outcomes as bits (1 taken), at
	 * outcomes[outcomes_at...]; unknown (no room, or a call of the same
	 * function inside it that was not sampled) when !has_outcomes.
	 */
	uint32_t outcomes_at;
	bool has_outcomes;
	struct ann_metrics_snapshot start;
};

struct ann_thread {
	volatile int busy;	      /* inside a handler: a signal's probes stand aside */
	int disabled;		      /* after thread end */
	int calibrating;	      /* format, do not write */
	uint64_t calibration_span;    /* sum of the recorded spans while calibrating */
	uint32_t slot;		      /* thread slot, part of the ids */
	uint32_t counter;	      /* ids of this thread */
	uint64_t rng;		      /* reservoir draws */
	uint64_t overhead_ns;	      /* probe time spent on this thread so far */
	int clock_countdown;	      /* calls until the clock is read again (rates) */
	uint64_t now;		      /* CLOCK_MONOTONIC_COARSE as last read */
	uintptr_t stack_lo, stack_hi; /* the thread's own stack */
	uint32_t depth;
	uint32_t values_top;
	uint32_t outcomes_top;
	_Atomic uint32_t out_len;    /* bytes of whole lines in out */
	_Atomic uint32_t flush_lock; /* held while out is being written */
	char *scratch;		     /* for lines longer than ANN_LINE_STACK */
	size_t scratch_size;
	struct ann_frame frames[ANN_SHADOW_DEPTH];
	double values[ANN_THREAD_VALUES];
	uint64_t outcomes[ANN_THREAD_OUTCOMES];
	char out[ANN_OUT_BUFFER];
};

extern struct ann_thread *ann_threads[ANN_MAX_THREADS];
/* The calling thread's state, created at its first probe; NULL if out of memory. */
struct ann_thread *ann_thread_get(void);
/* The calling thread's state, or NULL if it had no probe yet. */
struct ann_thread *ann_thread_current(void);
/* A buffer of at least size bytes, the thread's own. */
char *ann_thread_scratch(struct ann_thread *t, size_t size);

/* output.c: room for a line of at most max bytes in the thread's buffer (NULL: none), then its
 * length */
char *ann_output_reserve(struct ann_thread *t, size_t max);
void ann_output_commit(struct ann_thread *t, size_t len);
uint64_t ann_output_epoch(void);
void ann_reservoir_claim(struct ann_probe *p, int slot, uint64_t id);

#endif
