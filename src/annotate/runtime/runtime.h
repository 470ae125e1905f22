/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Internal declarations of liblever-annotate.so (spec/freud.md §5.3, §7.3,
 * §7.5): the plan as loaded, the probes, the per-thread shadow stack and the
 * record output. Nothing here is exported (hidden visibility).
 */
#ifndef LEVER_ANNOTATE_RUNTIME_H
#define LEVER_ANNOTATE_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "annotate/runtime/features.h"
#include "annotate/runtime/metrics.h"
#include "annotate/runtime/settings.h"

#define ANN_MAX_FEATURES 4096

/* CLOCK_MONOTONIC in ns (the calibrations' clock; async-signal-safe). */
static inline uint64_t ann_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* qsort order of uint64_t (the calibrations take medians). */
static inline int ann_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------ the plan */

struct ann_module {
	char *path;	     /* as `lever annotate record` resolved it */
	char build_id[130];  /* hex, "" when the file has none */
	uintptr_t load_bias; /* run-time address = file address + load_bias */
	bool loaded;	     /* found among the loaded objects */
	bool stale;	     /* loaded, but not the file that was planned */
};

/* Per symbol and period: the reservoir (Vitter's algorithm R). */
struct ann_reservoir {
	_Atomic uint64_t seen; /* calls that entered in this period */
	_Atomic uint32_t lock; /* guards the slots */
	uint32_t filled;       /* slots holding a line */
	char *lines;	       /* slots * line_max bytes */
	uint32_t *line_len;    /* per slot, 0 = empty */
	uint64_t *owner;       /* per slot, the call id that may write it */
};

/* A conditional branch of a probed function (the plan's `branch` lines, branches.h). */
struct ann_branch {
	uint64_t offset;    /* from the entry */
	int64_t target;	    /* the taken target, from the entry */
	uint8_t len, cond;  /* as ann_branch_decode finds them */
	bool armed;	    /* its int3 is written */
	uint32_t index;	    /* among its probe's branches */
	uintptr_t addr, to; /* run-time addresses: the branch, its target */
	struct ann_probe *probe;
	/* displaced by a live patch: its relocated copy in the trampoline (probe_live.c) */
	uintptr_t moved_to;
	uint8_t moved_len;
};

struct ann_probe {
	uint32_t index;	 /* in ann_plan.probes; ANN_NO_INDEX for the runtime's own */
	uint32_t symbol; /* index in the record's S lines */
	uint32_t module;
	uint64_t addr; /* file address of the function */
	uint64_t size;
	char *name;
	struct ann_op *ops;
	uint32_t n_ops;
	uint32_t n_features;
	struct ann_branch *branches; /* --branches: the record's features n_features + i */
	uint32_t n_branches;
	uint32_t n_armed;   /* branches whose int3 is written */
	uint32_t displaced; /* bytes at the entry a live patch moved into the trampoline */
	uintptr_t entry;    /* run-time address, once installed */
	enum ann_probe_kind installed; /* ANN_PROBE_AUTO while not installed */
	void *trampoline;
	bool tried; /* installation attempted */
	struct ann_reservoir res;
	uint32_t line_max; /* the longest C line this symbol can produce */
	/*
	 * calls: entries seen; sampled: calls that ended holding a reservoir
	 * slot or with every call kept (some are replaced later in the
	 * reservoir); recorded: C lines that reach the record.
	 */
	_Atomic uint64_t calls, sampled, recorded, dropped_depth, dropped_busy, dropped_unwound;
};

#define ANN_NO_INDEX UINT32_MAX

struct ann_plan {
	char record[4096];
	unsigned metrics; /* ANN_METRIC_BIT mask */
	uint32_t rate_n;  /* calls per period per symbol; 0 = every call */
	uint64_t period_ns;
	enum ann_probe_kind probe;
	uint32_t n_modules;
	struct ann_module *modules;
	uint32_t n_probes;
	struct ann_probe *probes;
	uint32_t n_shared; /* the `globals` programs, run by ANN_OP_CALL */
	struct ann_program *shared;
};

extern struct ann_plan ann_plan;
extern bool ann_verbose;

/* plan.c: read the plan file; 0, or -1 after a message on stderr. */
int ann_plan_load(const char *path, struct ann_plan *plan);
/* Free what ann_plan_load allocated (the runtime keeps its plan to the end). */
void ann_plan_free(struct ann_plan *plan);

/* Messages from the runtime: "lever annotate: ..." on stderr. */
void ann_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------ probes */

/* trampoline.c: code near `near` (within ±2 GiB), executable; NULL if none. */
void *ann_code_alloc(uintptr_t near, size_t size);
/* Make a code range writable (and back): for patching a function's entry. */
int ann_code_unprotect(uintptr_t addr, size_t len);
int ann_code_protect(uintptr_t addr, size_t len);
/*
 * An entry trampoline for probe p, in two steps: _begin emits the code that
 * saves the registers into a struct ann_entry_regs, calls ann_on_entry(p,
 * regs) and restores them, and returns where the displaced instructions
 * (relocated for that address by the caller, up to displaced_max bytes) go;
 * _end emits the jump to `resume` after them.
 */
uint8_t *ann_entry_trampoline_begin(struct ann_probe *p, uintptr_t near, size_t displaced_max,
				    uint8_t **displaced_at);
void ann_entry_trampoline_end(uint8_t *after_displaced, uintptr_t resume);
void ann_code_seal(void);
/* The exit trampoline every replaced return address points to. */
extern uintptr_t ann_exit_trampoline;
int ann_exit_trampoline_init(void);

/* probe_sled.c / probe_live.c / probe_uprobe.c: 0, or -1 with a reason in why. */
int ann_probe_sled(struct ann_probe *p, uintptr_t entry, char *why, size_t why_size);
int ann_probe_live(struct ann_probe *p, uintptr_t entry, char *why, size_t why_size);
/* Write `jmp target` at at, padding the rest of pad_to bytes with int3. */
int ann_write_jmp(uintptr_t at, uintptr_t target, size_t pad_to);
int ann_probe_uprobe(struct ann_probe *p, const struct ann_module *m, char *why, size_t why_size);
void ann_uprobe_finish(void);
/* Whether the function at entry starts with the sled lever cc --annotate adds. */
bool ann_has_sled(uintptr_t entry, uintptr_t *sled);

/*
 * branches.c: arm the planned branches of an installed probe (int3 over each,
 * after checking its bytes), with the SIGTRAP handler that emulates them.
 */
void ann_branches_arm(struct ann_probe *p);
/* Before the first probe is installed, when the plan has branches: SIGTRAP, the calibration. */
void ann_branches_init(void);
/*
 * shadow.c: one outcome of branch `index` of p, executed with stack pointer
 * sp; its trap cost cost_ns is probe time for the calls in progress.
 */
void ann_shadow_branch(struct ann_probe *p, uint32_t index, bool taken, uintptr_t sp,
		       uint64_t cost_ns);

/* install.c: install the probes of every loaded module not yet done. */
void ann_install_probes(void);

/* ------------------------------------------------------------ entry and exit */

/*
 * Called by the entry trampolines, and by the exit trampoline with the TSC
 * it read as soon as it had saved the registers (where the call's span ends).
 */
void ann_on_entry(struct ann_probe *p, struct ann_entry_regs *regs);
uintptr_t ann_on_exit(uintptr_t sp, uint64_t tsc_in);
/* Calibrate the probe's own cost (ns per probed call), once at start-up. */
void ann_calibrate(void);
/*
 * What ann_calibrate found: the untimed part of a recorded call's probe,
 * subtracted from the enclosing calls as a constant; the part inside a call's
 * own span; a call not sampled (ns each).
 */
void ann_probe_costs(uint64_t *unmeasured_ns, uint64_t *inside_ns, uint64_t *skip_ns);
/* The thread is done: close its open calls as not recorded, flush. */
void ann_thread_end(void);
/* Restore every replaced return address of this thread (exceptions, backtraces). */
void ann_shadow_restore_all(void);
/* Re-arm the calls still alive above sp, drop those below (a catch). */
void ann_shadow_rearm(uintptr_t sp);

/* ------------------------------------------------------------ output */

int ann_output_open(const char *record);
/* One call's C line, formatted into buf; its length. */
size_t ann_format_call(char *buf, size_t size, const struct ann_probe *p, uint64_t id,
		       uint64_t parent, const struct ann_metrics_snapshot *delta,
		       const double *values, const uint64_t *outcomes);
/*
 * A finished sampled call: into the thread's buffer (every call) or the
 * reservoir; counted as sampled, and as recorded once its line is sure to
 * reach the record (buffered, or written from the reservoir at the end of
 * the period), so that `recorded` is the number of C lines.
 */
void ann_output_call(struct ann_probe *p, uint64_t id, int slot, const char *line, size_t len);
/* Reservoir decision at entry: the slot (>= 0) or -1 (not sampled). */
int ann_sample_decide(struct ann_probe *p, uint64_t now_ns);
/* Write this thread's buffered records (whole lines only). */
void ann_output_flush_thread(void);
/* Write every reservoir's lines and every thread's records (exit). */
void ann_output_flush_all(void);
/*
 * The same with the writer thread left paused (fork, exec, _exit, fatal
 * signals), until ann_output_resume if the process goes on.
 */
void ann_output_flush_paused(void);
void ann_output_resume(void);
void ann_output_after_fork_child(void);
/* The writer thread that formats the records (after calibration), and its end at exit. */
void ann_output_start_writer(void);
void ann_output_stop_writer(void);
/* Calls entered a probe (every call kept: the sum of the threads' counts). */
uint64_t ann_probe_calls(const struct ann_probe *p);
/* From now on every line is written as it is made (the end of the run). */
void ann_output_set_direct(void);
/* The summary at exit (probes installed, calls, recorded, dropped). */
void ann_output_summary(void);
/* `# sampled` lines at exit: per probe, the calls sampled (see struct ann_probe). */
void ann_output_sampling_summary(void);
int ann_output_fd(void);

/* Identity of calls: (process nonce, thread slot, counter). */
uint64_t ann_next_id(void);
void ann_ids_reseed(void);

#endif
