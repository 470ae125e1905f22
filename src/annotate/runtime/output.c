/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The record's `C` lines (doc/formats/annotate-record.md, spec/freud.md
 * §4.2.5, §5.3.5): `lever annotate record` writes the header, `S` and `F`
 * lines; this runtime appends one `C` line per recorded call on an O_APPEND
 * descriptor. Every write(2) carries whole lines only, so the record stays
 * readable whatever kills the program.
 *
 * A recorded call leaves a binary record (struct ann_rec) in one of its
 * thread's two buffers (shadow.h); a full buffer goes to the writer thread,
 * which formats its records into C lines and writes them, while the thread
 * fills the other one. What is buffered is written at thread exit, exit,
 * fork (before), exec, _exit and fatal signals. With a rate
 * (--rate=N/PERIOD) each symbol keeps a reservoir of N lines per period
 * (Vitter's algorithm R, decided at entry, spec §7.3 item 8), written when a
 * period ends (checked at entries) and at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "annotate/runtime/branches.h"
#include "annotate/runtime/runtime.h"
#include "annotate/runtime/shadow.h"

static int out_fd = -1;
uint64_t ann_id_nonce;
static _Atomic uint64_t epoch;
static _Atomic uint64_t period_end_ns;

int ann_output_fd(void)
{
	return out_fd;
}

void ann_ids_reseed(void)
{
	uint16_t n = 0;

	if (getrandom(&n, sizeof(n), GRND_NONBLOCK) != sizeof(n))
		n = (uint16_t)(getpid() ^ (uint64_t)time(NULL));
	ann_id_nonce = n ? n : 1; /* never 0: ids are > 0 */
}

uint64_t ann_next_id(void)
{
	struct ann_thread *t = ann_thread_current();

	return ann_thread_next_id(t);
}

/* Whether the sampling period has ended by now (its reservoirs are due to be written). */
bool ann_output_period_due(uint64_t now)
{
	uint64_t end = atomic_load_explicit(&period_end_ns, memory_order_relaxed);

	return end && now >= end;
}

uint64_t ann_output_epoch(void)
{
	return atomic_load_explicit(&epoch, memory_order_relaxed);
}

static void write_all(const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(out_fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* a full disk: lines are lost, never half-written on purpose */
		buf += n;
		len -= (size_t)n;
	}
}

int ann_output_open(const char *record)
{
	out_fd = open(record, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (out_fd < 0) {
		ann_msg("%s: %s", record, strerror(errno));
		return -1;
	}
	ann_ids_reseed();
	return 0;
}

/* ------------------------------------------------------------ formatting */

struct out {
	char *p, *end;
};

static void put(struct out *o, const char *s, size_t n)
{
	if ((size_t)(o->end - o->p) < n)
		n = (size_t)(o->end - o->p);
	memcpy(o->p, s, n);
	o->p += n;
}

/* Two digits per division: formatting is most of the cost of a recorded call. */
static const char digit_pairs[201] = "0001020304050607080910111213141516171819"
				     "2021222324252627282930313233343536373839"
				     "4041424344454647484950515253545556575859"
				     "6061626364656667686970717273747576777879"
				     "8081828384858687888990919293949596979899";

/* Exactly eight digits of v < 10^8 at p: four independent 32-bit steps. */
static void put8_at(char *p, uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;

	memcpy(p, digit_pairs + 2 * (hi / 100), 2);
	memcpy(p + 2, digit_pairs + 2 * (hi % 100), 2);
	memcpy(p + 4, digit_pairs + 2 * (lo / 100), 2);
	memcpy(p + 6, digit_pairs + 2 * (lo % 100), 2);
}

/* The digits of v ending at p, without leading zeros; where they begin. */
static char *u32_before(char *p, uint32_t v)
{
	while (v >= 100) {
		uint32_t r = v % 100;

		v /= 100;
		p -= 2;
		memcpy(p, digit_pairs + 2 * r, 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

/* How many decimal digits v has. */
static size_t digits(uint64_t v)
{
	size_t n = 1;

	for (; v >= 10000; v /= 10000)
		n += 4;
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/*
 * The ids are 20-digit numbers: eight digits at a time with one 64-bit
 * division (a multiply) each, the rest in 32-bit arithmetic, rather than a
 * 64-bit division per two digits; written in place, right to left, once
 * their count is known (no copy through memcpy of a variable length).
 */
static void put_u64(struct out *o, uint64_t v)
{
	size_t n = digits(v);
	char tmp[24], *p;

	if ((size_t)(o->end - o->p) < n) { /* a cut line: the digits that fit */
		p = tmp + sizeof(tmp);
		while (v > UINT32_MAX) {
			p -= 8;
			put8_at(p, (uint32_t)(v % 100000000u));
			v /= 100000000u;
		}
		p = u32_before(p, (uint32_t)v);
		put(o, p, (size_t)(tmp + sizeof(tmp) - p));
		return;
	}
	p = o->p + n;
	while (v > UINT32_MAX) {
		p -= 8;
		put8_at(p, (uint32_t)(v % 100000000u));
		v /= 100000000u;
	}
	u32_before(p, (uint32_t)v);
	o->p += n;
}

/*
 * The decimal text of the last large id a drain formatted: a thread's ids
 * follow each other (nonce, slot, counter), so the next one usually differs
 * in its last eight digits only, made with one put8_at instead of the whole
 * number's divisions.
 */
struct id_cache {
	uint64_t v;   /* the id; 0: empty */
	uint32_t low; /* v % 10^8 */
	uint32_t n;   /* its digits, 9 to 20 */
	char text[24];
};

static void put_id(struct out *o, uint64_t v, struct id_cache *c)
{
	if (c && c->v && v >= c->v && v - c->v < 100000000u - c->low &&
	    (size_t)(o->end - o->p) >= sizeof(c->text)) {
		c->low += (uint32_t)(v - c->v);
		c->v = v;
		put8_at(c->text + c->n - 8, c->low);
		memcpy(o->p, c->text,
		       sizeof(c->text)); /* a fixed copy; the digits past n are dropped */
		o->p += c->n;
		return;
	}
	put_u64(o, v);
	if (c && v >= 100000000u) {
		c->n = (uint32_t)digits(v);
		memcpy(c->text, o->p - c->n, c->n);
		c->v = v;
		c->low = (uint32_t)(v % 100000000u);
	}
}

/* ns as µs with three decimals */
static void put_us(struct out *o, uint64_t ns)
{
	char frac[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
			(char)('0' + ns % 10)};

	put_u64(o, ns / 1000);
	put(o, frac, 4);
}

/*
 * A feature value: integers exactly, other numbers with 17 significant digits
 * (snprintf, which glibc runs without allocating for this precision), a
 * missing value as '?'.
 */
static void put_value(struct out *o, double v)
{
	char tmp[40];
	int n;

	if (isnan(v) || isinf(v)) {
		put(o, "?", 1);
	} else if (v == floor(v) && fabs(v) < 9e15) {
		if (v < 0) {
			put(o, "-", 1);
			v = -v;
		}
		put_u64(o, (uint64_t)v);
	} else {
		n = snprintf(tmp, sizeof(tmp), "%.17g", v);
		put(o, tmp, n > 0 ? (size_t)n : 0);
	}
}

/* " key=" per metric, with its length */
static const struct {
	const char *text;
	size_t len;
} metric_keys[ANN_N_METRICS] = {
    {" time=", 6}, {" cpu=", 5},     {" mem=", 5},     {" wait=", 6},
    {" hold=", 6}, {" pfaults=", 9}, {" Pfaults=", 9}, {" cs=", 4},
};

static bool time_like(int m)
{
	return m == ANN_TIME || m == ANN_CPU || m == ANN_WAIT || m == ANN_HOLD;
}

/* The metrics asked for: how many values a record carries (8 bits, no libgcc call). */
static uint32_t n_metrics(void)
{
	uint32_t m = ann_plan.metrics & 0xff;

	m = m - ((m >> 1) & 0x55);
	m = (m & 0x33) + ((m >> 2) & 0x33);
	return (m + (m >> 4)) & 0x0f;
}

/*
 * One call's C line, from the metrics asked for (m, in ann_plan.metrics
 * order) and the feature values. Whatever a call carries beyond them, of
 * variable length (its tail: text such as " i=TNT" made when the call
 * ended), goes last, before the newline.
 */
static size_t format_line(char *buf, size_t size, const struct ann_probe *p, uint64_t id,
			  uint64_t parent, const uint64_t *m, const double *values,
			  uint32_t n_values, const char *tail, size_t tail_len,
			  struct id_cache *ids)
{
	struct out o = {buf, buf + size - 1};

	put(&o, "C ", 2);
	put_u64(&o, p->symbol);
	put(&o, " ", 1);
	put_id(&o, id, ids);
	put(&o, " ", 1);
	put_id(&o, parent, ids);
	for (int k = 0; k < ANN_N_METRICS; k++) {
		if (!(ann_plan.metrics & ANN_METRIC_BIT(k)))
			continue;
		put(&o, metric_keys[k].text, metric_keys[k].len);
		if (time_like(k))
			put_us(&o, *m++);
		else
			put_u64(&o, *m++);
	}
	for (uint32_t i = 0; i < n_values; i++) {
		put(&o, " ", 1);
		put_u64(&o, i);
		put(&o, "=", 1);
		put_value(&o, values[i]);
	}
	/* the per-call fields of variable length, already text */
	if (tail_len)
		put(&o, tail, tail_len);
	*o.p++ = '\n';
	return (size_t)(o.p - buf);
}

static void compact_metrics(uint64_t *m, const struct ann_metrics_snapshot *delta)
{
	for (unsigned b = ann_plan.metrics & ((1u << ANN_N_METRICS) - 1); b; b &= b - 1)
		*m++ = delta->v[__builtin_ctz(b)];
}

/*
 * Branch outcomes (doc/formats/annotate-record.md), a call's tail: T and N
 * in order, the first ANN_BR_KEPT of them, then `+N` for the N more that
 * ran; a branch that did not run is absent; `?` when they are unknown
 * (outcomes NULL). The text's length; at most outcomes_max(p) bytes.
 */
static size_t format_outcomes(char *buf, size_t size, const struct ann_probe *p,
			      const uint64_t *outcomes)
{
	struct out o = {buf, buf + size};

	for (uint32_t i = 0; p->n_armed && i < p->n_branches; i++) {
		char tn[ANN_BR_KEPT];
		uint64_t n = outcomes ? outcomes[2 * i] : 1,
			 kept = n < ANN_BR_KEPT ? n : ANN_BR_KEPT;

		if (!p->branches[i].armed || n == 0)
			continue;
		put(&o, " ", 1);
		put_u64(&o, p->n_features + i);
		put(&o, "=", 1);
		if (!outcomes) {
			put(&o, "?", 1);
			continue;
		}
		for (uint64_t k = 0; k < kept; k++)
			tn[k] = (outcomes[2 * i + 1] >> k & 1) ? 'T' : 'N';
		put(&o, tn, kept);
		if (n > kept) {
			put(&o, "+", 1);
			put_u64(&o, n - kept);
		}
	}
	return (size_t)(o.p - buf);
}

/* The longest tail format_outcomes can write for p (0 without armed branches). */
static size_t outcomes_max(const struct ann_probe *p)
{
	return p->n_armed ? (size_t)p->n_branches * (ANN_BR_KEPT + 32) : 0;
}

size_t ann_format_call(char *buf, size_t size, const struct ann_probe *p, uint64_t id,
		       uint64_t parent, const struct ann_metrics_snapshot *delta,
		       const double *values, const uint64_t *outcomes)
{
	uint64_t m[ANN_N_METRICS];
	size_t len;

	compact_metrics(m, delta);
	len = format_line(buf, size, p, id, parent, m, values, values ? p->n_features : 0, NULL, 0,
			  NULL);
	if (!outcomes_max(p) || len == 0)
		return len;
	/* the outcomes replace the newline, which then ends them */
	len--;
	len += format_outcomes(buf + len, size - 1 - len, p, outcomes);
	buf[len++] = '\n';
	return len;
}

/* ------------------------------------------------------------ records */

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static size_t rec_size(const struct ann_rec *r)
{
	if (r->probe == ANN_REC_LINE)
		return sizeof(*r) + pad8(r->id);
	return sizeof(*r) + 8 * (n_metrics() + r->n_values) + pad8(r->tail);
}

/* The longest line a record can give. */
static size_t rec_line_max(const struct ann_rec *r)
{
	if (r->probe == ANN_REC_LINE)
		return r->id;
	return ann_plan.probes[r->probe].line_max + r->tail;
}

static size_t rec_format(const struct ann_rec *r, char *buf, size_t size, struct id_cache *ids)
{
	const uint64_t *m = (const uint64_t *)(r + 1);
	uint32_t nm = n_metrics();
	struct ann_probe *p;

	if (r->probe == ANN_REC_LINE) {
		memcpy(buf, m, r->id);
		return r->id;
	}
	p = &ann_plan.probes[r->probe];
	return format_line(buf, size, p, r->id, r->parent, m, (const double *)(m + nm), r->n_values,
			   (const char *)(m + nm + r->n_values), r->tail, ids);
}

/*
 * Text is staged in buffers of 64 KiB plus the longest line a record of this
 * plan can give, so that every write(2) carries many whole lines.
 */
#define STAGE_TEXT (64u << 10)

static size_t stage_size(void)
{
	static size_t size;
	size_t longest = ANN_REC_BUFFER; /* a formatted line fits a record buffer */

	if (size)
		return size;
	for (uint32_t i = 0; i < ann_plan.n_probes; i++) {
		size_t l =
		    128 + ANN_N_METRICS * 32 + ann_plan.probes[i].n_features * 32 + UINT16_MAX;

		if (l > longest)
			longest = l;
	}
	size = (STAGE_TEXT + longest + 4095) & ~(size_t)4095;
	return size;
}

static char *map_stage(void)
{
	void *m =
	    mmap(NULL, stage_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return m == MAP_FAILED ? NULL : m;
}

/* n call records of the probe at index i were written: sampled and recorded */
static void count_run(uint32_t i, uint64_t n)
{
	if (i == ANN_REC_LINE || !n)
		return; /* a formatted line was counted when it was buffered */
	atomic_fetch_add_explicit(&ann_plan.probes[i].sampled, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&ann_plan.probes[i].recorded, n, memory_order_relaxed);
}

/*
 * Format a buffer's records and write them, whole lines per write(2), then
 * empty it (with its lock held). Without a stage (no memory) the records are
 * lost, never half-written.
 */
static void drain(struct ann_recbuf *b, char *stage)
{
	uint32_t len = atomic_load_explicit(&b->len, memory_order_acquire), run_of = ANN_REC_LINE;
	size_t at = 0, o = 0, cap = stage_size();
	uint64_t run = 0;
	struct id_cache ids = {0};

	while (stage && out_fd >= 0 && at < len) {
		const struct ann_rec *r = (const struct ann_rec *)(b->data + at);

		if (cap - o < rec_line_max(r)) {
			write_all(stage, o);
			o = 0;
		}
		o += rec_format(r, stage + o, cap - o, &ids);
		at += rec_size(r);
		/* calls are counted once their lines are sure to be written, a run of a probe at
		 * once */
		if (r->probe != run_of) {
			count_run(run_of, run);
			run_of = r->probe;
			run = 0;
		}
		run++;
	}
	if (o)
		write_all(stage, o);
	count_run(run_of, run);
	atomic_store_explicit(&b->len, 0, memory_order_release);
	atomic_store_explicit(&b->full, 0, memory_order_release);
}

/*
 * A thread waiting for the writer sleeps on the lock (a futex): the CPU this
 * frees may be what lets the writer finish.
 */
static void lock_buf(struct ann_recbuf *b)
{
	struct timespec ms = {0, 1000 * 1000};

	for (int i = 0; atomic_exchange_explicit(&b->lock, 1, memory_order_acquire); i++) {
		if (i < 64)
			continue;
		atomic_store(&b->waiting, 1);
		syscall(SYS_futex, &b->lock, FUTEX_WAIT_PRIVATE, 1, &ms, NULL, 0);
	}
}

static bool try_lock_buf(struct ann_recbuf *b)
{
	return !atomic_exchange_explicit(&b->lock, 1, memory_order_acquire);
}

static void unlock_buf(struct ann_recbuf *b)
{
	atomic_store(&b->lock, 0);
	if (atomic_load(&b->waiting) && atomic_exchange(&b->waiting, 0))
		syscall(SYS_futex, &b->lock, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* The owner formats and writes one of its buffers itself. */
static void drain_own(struct ann_thread *t, struct ann_recbuf *b)
{
	if (!atomic_load_explicit(&b->len, memory_order_acquire))
		return; /* empty (and written, if it was handed over) */
	if (!t->stage)
		t->stage = map_stage();
	lock_buf(b);
	drain(b, t->stage);
	unlock_buf(b);
	t->wrote = 1; /* the thread's own time, which its probe times */
}

/* ------------------------------------------------------------ the writer thread */

/*
 * The writer thread formats and writes the buffers the probed threads hand
 * over, so that a recorded call costs its thread the copy of a few words.
 * It sleeps on a futex until a buffer is handed over (or 100 ms). On a
 * machine without an idle CPU it takes the probed threads' CPU at times,
 * inside the spans of their calls where the probe cannot see it;
 * LEVER_ANNOTATE_WRITER=idle makes it SCHED_IDLE, which keeps the spans
 * exact there, but it then rarely gets a CPU at all (the scheduler wakes it
 * on the CPU of the thread that handed the buffer over, where it starves),
 * and the threads write their own buffers. Exit,
 * fork, exec, _exit and fatal signals pause it (it finishes the buffer it is
 * writing, so that no write of it is cut) and write the rest themselves.
 * Without it (it could not start; a forked child, which has no thread but
 * the one that forked) the owners format their buffers themselves when full.
 */
static pthread_t writer;
static _Atomic int writer_running, writer_stop, writer_pause, writer_busy, writer_asleep;
static _Atomic uint32_t writer_wake; /* the futex word: bumped at every hand-over */
static char *writer_stage;
static bool writer_idle; /* LEVER_ANNOTATE_WRITER=idle: SCHED_IDLE */
static __thread bool on_writer __attribute__((tls_model("initial-exec")));

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

static void wake_writer(void)
{
	atomic_fetch_add(&writer_wake, 1);
	if (atomic_load(&writer_asleep))
		futex(&writer_wake, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* One pass over the threads' buffers: those handed over are written. Whether any was. */
static bool writer_round(void)
{
	bool any = false;

	for (uint32_t i = 0; i < ANN_MAX_THREADS && ann_threads[i]; i++) {
		for (int k = 0; k < 2; k++) {
			struct ann_recbuf *b = &ann_threads[i]->rec[k];

			if (!atomic_load_explicit(&b->full, memory_order_acquire))
				continue;
			/* busy, then pause: a pausing thread sees one or the other */
			atomic_store(&writer_busy, 1);
			if (atomic_load(&writer_pause)) {
				atomic_store(&writer_busy, 0);
				return any;
			}
			if (try_lock_buf(b)) {
				if (atomic_load_explicit(&b->full, memory_order_acquire))
					drain(b, writer_stage);
				unlock_buf(b);
				any = true;
			}
			atomic_store(&writer_busy, 0);
		}
	}
	return any;
}

static void *writer_main(void *arg)
{
	struct ann_thread *t = ann_thread_get();
	struct timespec nap = {0, 100 * 1000 * 1000};

	(void)arg;
	on_writer = true;
	if (t)
		t->disabled = 1; /* this thread is ours: no probes on it */
	/* only CPU time nobody else wants, if asked (see above) */
	if (writer_idle)
		sched_setscheduler(0, SCHED_IDLE, &(struct sched_param){0});
	while (!atomic_load(&writer_stop)) {
		uint32_t seq = atomic_load(&writer_wake);

		atomic_store(&writer_asleep, 1);
		if (!writer_round())
			futex(&writer_wake, FUTEX_WAIT_PRIVATE, seq, &nap);
		atomic_store(&writer_asleep, 0);
	}
	writer_round();
	return NULL;
}

void ann_output_start_writer(void)
{
	const char *how = getenv(ANN_ENV_WRITER);
	sigset_t all, old;

	if (how && strcmp(how, "0") == 0)
		return;
	writer_idle = how && strcmp(how, "idle") == 0;
	if (!(writer_stage = map_stage()))
		return;
	/* every signal blocked in the writer: the program's signals go to its own threads */
	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
	if (pthread_create(&writer, NULL, writer_main, NULL) == 0)
		atomic_store(&writer_running, 1);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
}

/* At exit: the writer writes what was handed over and ends. */
void ann_output_stop_writer(void)
{
	if (!atomic_load(&writer_running) || on_writer)
		return;
	atomic_store(&writer_stop, 1);
	wake_writer();
	futex(&writer_wake, FUTEX_WAKE_PRIVATE, 1, NULL);
	pthread_join(writer, NULL);
	atomic_store(&writer_running, 0);
}

/*
 * The writer finishes the buffer it is writing and starts no other until
 * writer_resume. Waits at most about a second (a writer that never gets the
 * CPU back): buffers it still holds are then skipped by the flush.
 */
static void writer_quiesce(void)
{
	struct timespec t0, now;

	atomic_fetch_add(&writer_pause, 1);
	if (on_writer)
		return;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t0);
	for (int i = 0; atomic_load(&writer_busy); i++) {
		if (i < 64)
			continue;
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
		if (now.tv_sec - t0.tv_sec > 1)
			break;
	}
}

static void writer_resume(void)
{
	atomic_fetch_sub(&writer_pause, 1);
}

/* ------------------------------------------------------------ appending */

static bool direct; /* after the last flush at exit: no more buffering */

void ann_output_set_direct(void)
{
	direct = true;
}

/*
 * The buffer being filled is full: hand it to the writer and go on in the
 * other one, written here first if the writer has not written it yet;
 * without a writer, write this one now and go on in it.
 */
static __attribute__((noinline)) struct ann_recbuf *hand_over(struct ann_thread *t)
{
	struct ann_recbuf *b = &t->rec[t->cur], *other = &t->rec[t->cur ^ 1];

	if (!atomic_load_explicit(&writer_running, memory_order_relaxed) ||
	    t->slot >= ANN_MAX_THREADS) {
		drain_own(t, b);
		return b;
	}
	/*
	 * The writer is behind (it has no idle CPU): the other, older buffer
	 * is written here first, timed, so that a thread's lines stay in the
	 * order its calls ended (waiting for the writer if it is writing it).
	 */
	if (atomic_load_explicit(&other->full, memory_order_acquire))
		drain_own(t, other);
	atomic_store_explicit(&b->full, 1, memory_order_release);
	wake_writer();
	t->cur ^= 1;
	return other;
}

/* Room for n bytes of records; NULL if a record that big never fits. */
static inline char *rec_room(struct ann_thread *t, size_t n)
{
	struct ann_recbuf *b = &t->rec[t->cur];
	uint32_t at = atomic_load_explicit(&b->len, memory_order_relaxed);

	if (n > ANN_REC_BUFFER)
		return NULL;
	if (__builtin_expect(at + n > ANN_REC_BUFFER, 0)) {
		b = hand_over(t);
		at = atomic_load_explicit(&b->len, memory_order_relaxed);
	}
	return b->data + at;
}

/* Publish the record just written at rec_room: whole, for a flush on a fatal signal. */
static void rec_commit(struct ann_thread *t, size_t n)
{
	struct ann_recbuf *b = &t->rec[t->cur];
	uint32_t at = atomic_load_explicit(&b->len, memory_order_relaxed);

	atomic_store_explicit(&b->len, at + (uint32_t)n, memory_order_release);
}

/* A formatted line, written as it is or as a record of its own. */
static void buffer_line(struct ann_thread *t, const char *line, size_t len)
{
	size_t n = sizeof(struct ann_rec) + pad8(len);
	struct ann_rec *r;

	if (direct || !t || !(r = (struct ann_rec *)rec_room(t, n))) {
		write_all(line, len);
		return;
	}
	*r = (struct ann_rec){.probe = ANN_REC_LINE, .id = len};
	memcpy(r + 1, line, len);
	rec_commit(t, n);
}

char *ann_thread_scratch(struct ann_thread *t, size_t size)
{
	if (t->scratch_size < size) {
		void *m =
		    mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return NULL;
		if (t->scratch)
			munmap(t->scratch, t->scratch_size);
		t->scratch = m;
		t->scratch_size = size;
	}
	return t->scratch;
}

/* ------------------------------------------------------------ reservoirs */

static void lock(struct ann_reservoir *r)
{
	while (atomic_exchange_explicit(&r->lock, 1, memory_order_acquire))
		;
}

static bool try_lock(struct ann_reservoir *r)
{
	return !atomic_exchange_explicit(&r->lock, 1, memory_order_acquire);
}

static void unlock(struct ann_reservoir *r)
{
	atomic_store_explicit(&r->lock, 0, memory_order_release);
}

int ann_reservoirs_init(void)
{
	for (uint32_t i = 0; i < ann_plan.n_probes; i++) {
		struct ann_probe *p = &ann_plan.probes[i];
		size_t n = ann_plan.rate_n, bytes;
		char *m;

		p->index = i;
		p->line_max = 128 + ANN_N_METRICS * 32 + p->n_features * 32 +
			      p->n_branches * (ANN_BR_KEPT + 32);
		if (!n)
			continue;
		bytes = n * (p->line_max + sizeof(uint32_t) + sizeof(uint64_t));
		m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return -1;
		p->res.owner = (uint64_t *)m;
		p->res.line_len = (uint32_t *)(m + n * sizeof(uint64_t));
		p->res.lines = m + n * (sizeof(uint64_t) + sizeof(uint32_t));
	}
	return 0;
}

static void reservoir_write(struct ann_probe *p)
{
	struct ann_reservoir *r = &p->res;

	uint64_t lines = 0;

	for (uint32_t s = 0; s < ann_plan.rate_n; s++) {
		if (r->line_len[s]) {
			write_all(r->lines + (size_t)s * p->line_max, r->line_len[s]);
			lines++;
		}
		r->line_len[s] = 0;
		r->owner[s] = 0;
	}
	/* only now is it known which sampled calls the record holds */
	atomic_fetch_add(&p->recorded, lines);
	/* with a rate the reservoir's count is the count of calls */
	atomic_fetch_add(&p->calls, atomic_exchange(&r->seen, 0));
}

/* A period ended: write every reservoir, start the next one (timed by the entry's window). */
static void flip_period(uint64_t now, uint64_t end)
{
	if (!atomic_compare_exchange_strong(&period_end_ns, &end, now + ann_plan.period_ns))
		return; /* another thread flips it */
	atomic_fetch_add(&epoch, 1);
	for (uint32_t i = 0; i < ann_plan.n_probes; i++) {
		struct ann_probe *p = &ann_plan.probes[i];

		if (!p->res.owner)
			continue;
		lock(&p->res);
		reservoir_write(p);
		unlock(&p->res);
	}
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

int ann_sample_decide(struct ann_probe *p, uint64_t now)
{
	uint64_t end = atomic_load_explicit(&period_end_ns, memory_order_relaxed), k;
	struct ann_thread *t = ann_thread_current();

	if (!p->res.owner)
		return -1;
	if (end == 0) {
		atomic_compare_exchange_strong(&period_end_ns, &end, now + ann_plan.period_ns);
	} else if (now >= end) {
		flip_period(now, end);
	}
	k = atomic_fetch_add_explicit(&p->res.seen, 1, memory_order_relaxed) + 1;
	if (k <= ann_plan.rate_n)
		return (int)(k - 1);
	/* uniform in [0, k): a multiply instead of a division */
	k = k < (1ull << 32) ? (uint64_t)(uint32_t)xorshift(&t->rng) * k >> 32
			     : xorshift(&t->rng) % k;
	return k < ann_plan.rate_n ? (int)k : -1;
}

void ann_reservoir_claim(struct ann_probe *p, int slot, uint64_t id)
{
	if (!p->res.owner)
		return;
	lock(&p->res);
	p->res.owner[slot] = id; /* a call still running in this slot is detached */
	unlock(&p->res);
}

void ann_output_call(struct ann_probe *p, uint64_t id, int slot, const char *line, size_t len)
{
	struct ann_thread *t = ann_thread_current();

	atomic_fetch_add_explicit(&p->sampled, 1, memory_order_relaxed);
	if (slot >= 0 && p->res.owner) {
		lock(&p->res);
		if (p->res.owner[slot] == id && len <= p->line_max) {
			memcpy(p->res.lines + (size_t)slot * p->line_max, line, len);
			p->res.line_len[slot] = (uint32_t)len;
		}
		unlock(&p->res);
		return; /* recorded when the reservoir is written, if still there */
	}
	/* every call kept, or sampled in a period that has been written since */
	buffer_line(t, line, len);
	atomic_fetch_add_explicit(&p->recorded, 1, memory_order_relaxed);
}

/*
 * A finished call. In a reservoir, its line (a few calls per period); else a
 * binary record, formatted when its buffer is written (rec_format counts
 * it). While calibrating, the record is made and dropped. True when all it
 * did was the record's copy (no formatting, no write on this thread).
 */
/* A call's line made now: for a reservoir, a record too big for a buffer, the end of the run. */
static __attribute__((noinline)) void record_line(struct ann_thread *t, struct ann_probe *p,
						  uint64_t id, uint64_t parent, int slot,
						  const struct ann_metrics_snapshot *delta,
						  const double *values, const uint64_t *outcomes)
{
	char line[ANN_LINE_STACK], *buf = line;
	size_t len = sizeof(line);

	if (t && p->line_max > len && (buf = ann_thread_scratch(t, p->line_max)))
		len = p->line_max;
	if (!buf)
		return;
	len = ann_format_call(buf, len, p, id, parent, delta, values, outcomes);
	if (!t || !t->calibrating)
		ann_output_call(p, id, slot, buf, len); /* counts it */
}

bool ann_output_record(struct ann_thread *t, struct ann_probe *p, uint64_t id, uint64_t parent,
		       int slot, const struct ann_metrics_snapshot *delta, const double *values,
		       const uint64_t *outcomes)
{
	uint32_t n_values = values ? p->n_features : 0;
	size_t n = sizeof(struct ann_rec) + 8 * (n_metrics() + n_values);
	size_t tail_max = outcomes_max(p), tail;
	struct ann_rec *r;
	uint64_t *m;

	/* a probe outside the plan (calibration) is never formatted from a record */
	/* room for the longest tail; a tail too long for a record is formatted now */
	if (t && !direct && (slot < 0 || !p->res.owner) && tail_max <= UINT16_MAX &&
	    (p->index < ann_plan.n_probes || t->calibrating) &&
	    (t->wrote = 0, r = (struct ann_rec *)rec_room(t, n + pad8(tail_max)))) {
		*r = (struct ann_rec){
		    .probe = p->index, .n_values = (uint16_t)n_values, .id = id, .parent = parent};
		m = (uint64_t *)(r + 1);
		compact_metrics(m, delta);
		if (n_values)
			memcpy(m + n_metrics(), values, n_values * sizeof(double));
		/* the per-call fields of variable length, as text: the branch outcomes */
		tail = tail_max ? format_outcomes((char *)(m + n_metrics() + n_values), tail_max, p,
						  outcomes)
				: 0;
		r->tail = (uint16_t)tail;
		if (!t->calibrating)
			rec_commit(t, n + pad8(tail));
		return !t->wrote;
	}
	record_line(t, p, id, parent, slot, delta, values, outcomes);
	return false;
}

/* ------------------------------------------------------------ flushing */

/* For flushes of other threads' buffers (exit, fork, exec, fatal signals). */
static char *flush_stage;
static _Atomic int flush_stage_lock;

/* This thread's records, all written (its end, a flush it asks for). */
void ann_output_flush_thread(void)
{
	struct ann_thread *t = ann_thread_current();

	if (!t)
		return;
	/* the older buffer first (its lines come first), then the current one */
	drain_own(t, &t->rec[t->cur ^ 1]);
	drain_own(t, &t->rec[t->cur]);
}

/*
 * Every thread's records and every reservoir, with the writer paused. Only
 * tried: a buffer someone is writing, or a reservoir another thread holds, is
 * skipped rather than waited for (a signal handler never waits, not even for
 * a flush it interrupted on its own thread). A record the owner appends
 * during a foreign flush may be lost or written twice: a thread still running
 * then is racing the end of the process anyway.
 */
static void flush_all(void)
{
	if (out_fd < 0)
		return;
	writer_quiesce();
	if (!atomic_exchange_explicit(&flush_stage_lock, 1, memory_order_acquire)) {
		if (!flush_stage)
			flush_stage = map_stage();
		for (uint32_t i = 0; i < ANN_MAX_THREADS; i++) {
			struct ann_thread *t = ann_threads[i];

			for (int k = 0; t && k < 2; k++) {
				struct ann_recbuf *b = &t->rec[t->cur ^ 1 ^ k];

				if (atomic_load(&b->len) && try_lock_buf(b)) {
					drain(b, flush_stage);
					unlock_buf(b);
				}
			}
		}
		atomic_store_explicit(&flush_stage_lock, 0, memory_order_release);
	}
	for (uint32_t i = 0; i < ann_plan.n_probes; i++) {
		struct ann_probe *p = &ann_plan.probes[i];

		if (p->res.owner && try_lock(&p->res)) {
			reservoir_write(p);
			unlock(&p->res);
		}
	}
}

/* Exit (after the writer stopped) and a flush asked for: the writer goes on after. */
void ann_output_flush_all(void)
{
	flush_all();
	writer_resume();
}

/*
 * Before fork and exec, at _exit and fatal signals: the writer stays paused
 * (until ann_output_resume, if the process goes on), so that no write of its
 * is cut by the end of the process image.
 */
void ann_output_flush_paused(void)
{
	flush_all();
}

void ann_output_resume(void)
{
	writer_resume();
}

/* Calls entered, every call kept: the threads' counts and those folded into p->calls. */
uint64_t ann_probe_calls(const struct ann_probe *p)
{
	uint64_t n = atomic_load(&p->calls);

	for (uint32_t i = 0; i < ANN_MAX_THREADS; i++)
		if (ann_threads[i] && ann_threads[i]->calls && p->index < ann_plan.n_probes)
			n += atomic_load_explicit(&ann_threads[i]->calls[p->index],
						  memory_order_relaxed);
	return n;
}

/*
 * A forked child: the parent writes what was sampled before; new ids. The
 * child has no writer thread (only the thread that forked goes on): its
 * threads write their buffers themselves.
 */
void ann_output_after_fork_child(void)
{
	atomic_store(&writer_running, 0);
	atomic_store(&writer_pause, 0);
	atomic_store(&writer_busy, 0);
	atomic_store(&flush_stage_lock, 0);
	for (uint32_t i = 0; i < ann_plan.n_probes; i++) {
		struct ann_probe *p = &ann_plan.probes[i];

		atomic_store(&p->res.lock, 0);
		if (p->res.owner) {
			memset(p->res.line_len, 0, ann_plan.rate_n * sizeof(uint32_t));
			memset(p->res.owner, 0, ann_plan.rate_n * sizeof(uint64_t));
			atomic_store(&p->res.seen, 0);
		}
		atomic_store(&p->calls, 0);
		atomic_store(&p->sampled, 0);
		atomic_store(&p->recorded, 0);
	}
	for (uint32_t i = 0; i < ANN_MAX_THREADS; i++) {
		struct ann_thread *t = ann_threads[i];

		for (int k = 0; t && k < 2; k++) {
			atomic_store(&t->rec[k].len, 0);
			atomic_store(&t->rec[k].full, 0);
			atomic_store(&t->rec[k].lock, 0);
		}
		for (uint32_t j = 0; t && t->calls && j < ann_plan.n_probes; j++)
			atomic_store(&t->calls[j], 0);
	}
	ann_ids_reseed();
}

static const char *const kind_names[] = {"none", "sled", "live", "uprobe"};

/*
 * `# probe` comment lines (ignored by readers): what `lever annotate record`
 * reports; first the calibrated costs the process subtracted, so that a
 * record states how exact its times can be (doc/formats/annotate-record.md).
 */
void ann_output_summary(void)
{
	uint64_t unmeasured, inside, skip;
	char line[512];
	int n;

	if (out_fd < 0)
		return;
	ann_probe_costs(&unmeasured, &inside, &skip);
	n = snprintf(line, sizeof(line),
		     "# probe-cost pid=%d unmeasured-ns=%llu inside-ns=%llu skip-ns=%llu\n",
		     (int)getpid(), (unsigned long long)unmeasured, (unsigned long long)inside,
		     (unsigned long long)skip);
	if (n > 0 && (size_t)n < sizeof(line))
		write_all(line, (size_t)n);
	for (uint32_t i = 0; i < ann_plan.n_probes; i++) {
		struct ann_probe *p = &ann_plan.probes[i];
		n = snprintf(
		    line, sizeof(line),
		    "# probe %u pid=%d kind=%s calls=%llu recorded=%llu unwound=%llu "
		    "too-deep=%llu in-signal=%llu %s\n",
		    p->symbol, (int)getpid(), kind_names[p->installed],
		    (unsigned long long)ann_probe_calls(p), (unsigned long long)p->recorded,
		    (unsigned long long)p->dropped_unwound, (unsigned long long)p->dropped_depth,
		    (unsigned long long)p->dropped_busy, p->name);

		if (n > 0)
			write_all(line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	}
}

/*
 * `# sampled` comment lines, after the `# probe` ones: how many calls were
 * sampled, of which `recorded` (in `# probe`) are in the record; the others
 * were replaced in a reservoir, or ended after their period was written.
 */
void ann_output_sampling_summary(void)
{
	char line[128];

	if (out_fd < 0)
		return;
	for (uint32_t i = 0; i < ann_plan.n_probes; i++) {
		const struct ann_probe *p = &ann_plan.probes[i];
		int n = snprintf(line, sizeof(line), "# sampled %u pid=%d sampled=%llu\n",
				 p->symbol, (int)getpid(), (unsigned long long)p->sampled);

		if (n > 0 && (size_t)n < sizeof(line))
			write_all(line, (size_t)n);
	}
}

void ann_msg(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "lever annotate: ");

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0)
		return;
}
