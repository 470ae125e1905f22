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

/* calls in progress per thread; deeper ones are not recorded */
#define ANN_SHADOW_DEPTH    1024
#define ANN_THREAD_VALUES   (64 << 10) /* feature values of the calls in progress */
#define ANN_THREAD_OUTCOMES (32 << 10) /* branch outcomes of the calls in progress, 2 a branch */
#define ANN_REC_BUFFER	    (32 << 10) /* bytes of records per buffer, two buffers per thread */
#define ANN_LINE_STACK	    1024       /* a C line this long is formatted on the stack */
#define ANN_MAX_THREADS	    4096       /* threads whose buffers a fatal signal can still write */

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

/*
 * A finished call, as the probed thread leaves it in its buffer (output.c
 * formats it into its C line later, on the writer thread or when a buffer is
 * flushed): the metrics asked for (uint64_t each, in ann_plan.metrics order),
 * n_values feature values (double), then `tail` bytes of per-call text that
 * the line carries after the features, padded to 8 bytes. probe ==
 * ANN_REC_LINE: a line already formatted, `id` bytes long (ann_output_call).
 */
struct ann_rec {
	uint32_t probe;	   /* index in ann_plan.probes */
	uint16_t n_values; /* 0: no features printed (a uprobe) */
	uint16_t tail;	   /* bytes of per-call text after the values: branch outcomes */
	uint64_t id, parent;
};

#define ANN_REC_LINE UINT32_MAX

/*
 * One of a thread's two record buffers. The owner appends to one without a
 * lock, publishing each whole record through len; when it is full it is
 * handed to the writer thread (full) and the owner goes on in the other.
 * Whoever formats and writes a buffer holds its lock.
 */
struct ann_recbuf {
	_Atomic uint32_t len;	  /* bytes of whole records in data */
	_Atomic uint32_t full;	  /* handed over: the owner appends to the other one */
	_Atomic uint32_t lock;	  /* held while its records are formatted and written */
	_Atomic uint32_t waiting; /* someone sleeps until lock is released */
	_Alignas(8) char data[ANN_REC_BUFFER];
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
	uint32_t cur;  /* the record buffer being filled */
	int wrote;     /* this thread wrote a buffer itself since its record began */
	char *scratch; /* for lines longer than ANN_LINE_STACK */
	size_t scratch_size;
	char *stage; /* text of this thread's records when it formats them itself */
	/* calls entered per probe (every call kept), summed at exit; NULL: p->calls */
	_Atomic uint64_t *calls;
	struct ann_frame frames[ANN_SHADOW_DEPTH];
	double values[ANN_THREAD_VALUES];
	uint64_t outcomes[ANN_THREAD_OUTCOMES];
	struct ann_recbuf rec[2];
};

extern struct ann_thread *ann_threads[ANN_MAX_THREADS];
/* The calling thread's state, created at its first probe; NULL if out of memory. */
struct ann_thread *ann_thread_get(void);
/* The calling thread's state, or NULL if it had no probe yet. */
struct ann_thread *ann_thread_current(void);
/* A buffer of at least size bytes, the thread's own. */
char *ann_thread_scratch(struct ann_thread *t, size_t size);

/*
 * output.c: a finished call (values NULL: no features), into the thread's
 * record buffer, or formatted into its reservoir slot (slot >= 0); counted as
 * sampled, and as recorded once its line is written or in the reservoir.
 * True when all it cost was the record's copy (see ann_on_exit).
 */
bool ann_output_record(struct ann_thread *t, struct ann_probe *p, uint64_t id, uint64_t parent,
		       int slot, const struct ann_metrics_snapshot *delta, const double *values,
		       const uint64_t *outcomes);
uint64_t ann_output_epoch(void);

/* output.c: the process's part of the ids (ann_next_id), drawn anew in a forked child */
extern uint64_t ann_id_nonce;

/* ann_next_id for the calling thread's state t */
static inline uint64_t ann_thread_next_id(struct ann_thread *t)
{
	return ann_id_nonce << 48 | (uint64_t)(t->slot & 0xffff) << 32 | ++t->counter;
}
bool ann_output_period_due(uint64_t now);
void ann_reservoir_claim(struct ann_probe *p, int slot, uint64_t id);

#endif
