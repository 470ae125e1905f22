/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The record's `C` lines (doc/formats/annotate-record.md, spec/freud.md
 * §4.2.5, §5.3.5): `lever annotate record` writes the header, `S` and `F`
 * lines; this runtime appends one `C` line per recorded call on an O_APPEND
 * descriptor. Every write(2) carries whole lines only, so the record stays
 * readable whatever kills the program.
 *
 * Lines wait in a per-thread buffer (shadow.h), written when it is full, at
 * thread exit, exit, fork (before), exec and fatal signals. With a rate
 * (--rate=N/PERIOD) each symbol keeps a reservoir of N lines per period
 * (Vitter's algorithm R, decided at entry, spec §7.3 item 8), written when a
 * period ends (checked at entries) and at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "annotate/runtime/branches.h"
#include "annotate/runtime/runtime.h"
#include "annotate/runtime/shadow.h"

static int out_fd = -1;
static uint64_t nonce;
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
	nonce = n ? n : 1; /* never 0: ids are > 0 */
}

uint64_t ann_next_id(void)
{
	struct ann_thread *t = ann_thread_current();

	return nonce << 48 | (uint64_t)(t->slot & 0xffff) << 32 | ++t->counter;
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

/*
 * The ids are 20-digit numbers: eight digits at a time with one 64-bit
 * division (a multiply) each, the rest in 32-bit arithmetic, rather than a
 * 64-bit division per two digits.
 */
static void put_u64(struct out *o, uint64_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);

	while (v > UINT32_MAX) {
		p -= 8;
		put8_at(p, (uint32_t)(v % 100000000u));
		v /= 100000000u;
	}
	p = u32_before(p, (uint32_t)v);
	put(o, p, (size_t)(tmp + sizeof(tmp) - p));
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

size_t ann_format_call(char *buf, size_t size, const struct ann_probe *p, uint64_t id,
		       uint64_t parent, const struct ann_metrics_snapshot *delta,
		       const double *values, const uint64_t *outcomes)
{
	struct out o = {buf, buf + size - 1};

	put(&o, "C ", 2);
	put_u64(&o, p->symbol);
	put(&o, " ", 1);
	put_u64(&o, id);
	put(&o, " ", 1);
	put_u64(&o, parent);
	for (int m = 0; m < ANN_N_METRICS; m++) {
		if (!(ann_plan.metrics & ANN_METRIC_BIT(m)))
			continue;
		put(&o, metric_keys[m].text, metric_keys[m].len);
		if (m == ANN_TIME || m == ANN_CPU || m == ANN_WAIT || m == ANN_HOLD)
			put_us(&o, delta->v[m]);
		else
			put_u64(&o, delta->v[m]);
	}
	for (uint32_t i = 0; values && i < p->n_features; i++) {
		put(&o, " ", 1);
		put_u64(&o, i);
		put(&o, "=", 1);
		put_value(&o, values[i]);
	}
	/*
	 * Branch outcomes (doc/formats/annotate-record.md): T and N in order,
	 * the first ANN_BR_KEPT of them, then `+N` for the N more that ran; a
	 * branch that did not run is absent; `?` when they are unknown.
	 */
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
	*o.p++ = '\n';
	return (size_t)(o.p - buf);
}

/* ------------------------------------------------------------ per-thread buffers */

/*
 * Write a thread's whole lines. The owner flushes when its buffer is full;
 * another thread flushes it at exit or on a fatal signal. The flush lock
 * keeps the owner from refilling the buffer while another thread's write(2)
 * still reads it (a torn line). Flushes at exit and from signal handlers
 * only try it (wait false): a handler never waits, not even for the flush
 * it interrupted on its own thread. A line the owner appends during a foreign
 * flush at exit may be written twice: a thread still running then is racing
 * the end of the process anyway.
 */
static void flush_thread(struct ann_thread *t, bool wait)
{
	uint32_t len;

	if (wait) {
		while (atomic_exchange_explicit(&t->flush_lock, 1, memory_order_acquire))
			;
	} else if (atomic_exchange_explicit(&t->flush_lock, 1, memory_order_acquire)) {
		return;
	}
	len = atomic_load_explicit(&t->out_len, memory_order_acquire);
	if (len && out_fd >= 0) {
		/* the owner flushes inside ann_on_exit, whose own time is measured */
		write_all(t->out, len);
		atomic_store_explicit(&t->out_len, 0, memory_order_release);
	}
	atomic_store_explicit(&t->flush_lock, 0, memory_order_release);
}

void ann_output_flush_thread(void)
{
	struct ann_thread *t = ann_thread_current();

	if (t)
		flush_thread(t, true);
}

static bool direct; /* after the last flush at exit: no more buffering */

void ann_output_set_direct(void)
{
	direct = true;
}

static void buffer_line(struct ann_thread *t, const char *line, size_t len)
{
	uint32_t at = atomic_load_explicit(&t->out_len, memory_order_relaxed);

	if (direct) {
		write_all(line, len);
		return;
	}
	if (at + len > sizeof(t->out)) {
		flush_thread(t, true);
		at = 0;
	}
	if (len > sizeof(t->out)) {
		write_all(line, len);
		return;
	}
	memcpy(t->out + at, line, len);
	/* published only once whole: a fatal signal writes whole lines */
	atomic_store_explicit(&t->out_len, at + (uint32_t)len, memory_order_release);
}

char *ann_output_reserve(struct ann_thread *t, size_t max)
{
	uint32_t at = atomic_load_explicit(&t->out_len, memory_order_relaxed);

	if (direct || max > sizeof(t->out))
		return NULL;
	if (at + max > sizeof(t->out)) {
		flush_thread(t, true);
		at = 0;
	}
	return t->out + at;
}

void ann_output_commit(struct ann_thread *t, size_t len)
{
	uint32_t at = atomic_load_explicit(&t->out_len, memory_order_relaxed);

	/* published only once whole: a fatal signal writes whole lines */
	atomic_store_explicit(&t->out_len, at + (uint32_t)len, memory_order_release);
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

/* ------------------------------------------------------------ flushing everything */

/*
 * Exit, exec and fatal signals: every thread's whole lines and every
 * reservoir. From a signal handler a reservoir another thread holds is
 * skipped rather than waited for.
 */
void ann_output_flush_all(void)
{
	if (out_fd < 0)
		return;
	for (uint32_t i = 0; i < ANN_MAX_THREADS; i++)
		if (ann_threads[i])
			flush_thread(ann_threads[i], false);
	for (uint32_t i = 0; i < ann_plan.n_probes; i++) {
		struct ann_probe *p = &ann_plan.probes[i];

		if (p->res.owner && try_lock(&p->res)) {
			reservoir_write(p);
			unlock(&p->res);
		}
	}
}

/* A forked child: the parent writes what was sampled before; new ids. */
void ann_output_after_fork_child(void)
{
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
	for (uint32_t i = 0; i < ANN_MAX_THREADS; i++)
		if (ann_threads[i] && ann_threads[i] != ann_thread_current())
			atomic_store(&ann_threads[i]->out_len, 0);
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
		n = snprintf(line, sizeof(line),
			     "# probe %u pid=%d kind=%s calls=%llu recorded=%llu unwound=%llu "
			     "too-deep=%llu in-signal=%llu %s\n",
			     p->symbol, (int)getpid(), kind_names[p->installed],
			     (unsigned long long)p->calls, (unsigned long long)p->recorded,
			     (unsigned long long)p->dropped_unwound,
			     (unsigned long long)p->dropped_depth,
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
