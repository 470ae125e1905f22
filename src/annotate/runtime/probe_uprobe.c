/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The uprobe fallback (spec/freud.md §7.5 (c)), for functions that can be
 * neither sled- nor live-patched, or on request (--probe=uprobe): a uprobe
 * and a uretprobe per function through perf_event_open of the `uprobe` PMU
 * (/sys/bus/event_source/devices/uprobe/type), one of each per CPU, sampling
 * every hit with its thread and CLOCK_MONOTONIC time into one ring buffer per
 * CPU. A reader thread pairs entries and returns per thread (a per-thread
 * stack, which also gives the PARENT ids) and writes the C lines.
 *
 * Time only: the other metrics are per-thread counters the kernel's probe
 * cannot read for us. The kernel trap costs microseconds; that cost is
 * measured at start-up on a function of this library (with and without a
 * probe pair) and subtracted: its part inside the measured span from every
 * call, the whole of it per probed call nested inside.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "annotate/runtime/runtime.h"
#include "annotate/runtime/shadow.h"

#define RING_PAGES 64 /* data pages per CPU (256 KiB) */
#define MAX_CPUS   256
#define MAX_EVENTS 4096
#define MAX_TIDS   1024
#define TID_DEPTH  256

struct sample {
	uint64_t id;
	uint32_t pid, tid;
	uint64_t time;
};

struct ring {
	int fd; /* the CPU's first event: owns the buffer */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	size_t size;
};

struct event_map {
	uint64_t id;
	struct ann_probe *probe;
	bool ret;
};

struct open_call {
	struct ann_probe *probe;
	uint64_t id, t0, nested;
	int slot;
};

struct tid_stack {
	uint32_t tid;
	uint32_t depth;
	struct open_call calls[TID_DEPTH];
};

static int pmu_type = -1;
static int n_cpus;
static struct ring rings[MAX_CPUS];
static struct event_map events[MAX_EVENTS];
static unsigned n_events;
static struct tid_stack *tids; /* MAX_TIDS, open addressing by tid */
static pthread_t reader;
static _Atomic int reader_running, reader_stop;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t cost_full_ns, cost_inside_ns;
static struct sample *batch;
static size_t batch_cap;

static int read_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	int t = -1;

	if (f) {
		if (fscanf(f, "%d", &t) != 1)
			t = -1;
		fclose(f);
	}
	return t;
}

struct offset_query {
	uintptr_t addr; /* run-time address */
	uint64_t offset;
	bool found;
};

/* The file offset of a run-time address, from the PT_LOAD holding it. */
static int find_offset(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct offset_query *q = ctx;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && q->addr >= lo && q->addr < lo + ph->p_memsz) {
			q->offset = q->addr - lo + ph->p_offset;
			q->found = true;
			return 1;
		}
	}
	return 0;
}

static int open_event(const char *path, uint64_t offset, bool ret, int cpu)
{
	struct perf_event_attr a = {
	    .size = sizeof(a),
	    .type = (uint32_t)pmu_type,
	    .config = ret ? 1 : 0, /* format/retprobe: config:0 */
	    .config1 = (uint64_t)(uintptr_t)path,
	    .config2 = offset,
	    .sample_period = 1,
	    .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
	    .inherit = 1,
	    .use_clockid = 1,
	    .clockid = CLOCK_MONOTONIC,
	};

	return (int)syscall(SYS_perf_event_open, &a, 0, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int attach(int fd, int cpu, struct ann_probe *p, bool ret)
{
	struct ring *r = &rings[cpu];
	uint64_t id;

	if (n_events == MAX_EVENTS || ioctl(fd, PERF_EVENT_IOC_ID, &id))
		return -1;
	if (r->fd < 0) {
		size_t len = (size_t)(1 + RING_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (m == MAP_FAILED)
			return -1;
		r->fd = fd;
		r->meta = m;
		r->data = (uint8_t *)m + sysconf(_SC_PAGESIZE);
		r->size = len - (size_t)sysconf(_SC_PAGESIZE);
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd)) {
		return -1;
	}
	events[n_events++] = (struct event_map){.id = id, .probe = p, .ret = ret};
	return 0;
}

static int setup(char *why, size_t why_size)
{
	if (pmu_type >= 0)
		return 0;
	pmu_type = read_pmu_type();
	if (pmu_type < 0) {
		snprintf(why, why_size,
			 "the kernel has no uprobe PMU "
			 "(/sys/bus/event_source/devices/uprobe)");
		return -1;
	}
	n_cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (n_cpus > MAX_CPUS)
		n_cpus = MAX_CPUS;
	for (int c = 0; c < MAX_CPUS; c++)
		rings[c].fd = -1;
	tids = mmap(NULL, sizeof(*tids) * MAX_TIDS, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tids == MAP_FAILED) {
		tids = NULL;
		snprintf(why, why_size, "out of memory");
		return -1;
	}
	return 0;
}

static int attach_function(struct ann_probe *p, const char *path, uintptr_t entry, char *why,
			   size_t why_size)
{
	struct offset_query q = {.addr = entry};

	dl_iterate_phdr(find_offset, &q);
	if (!q.found) {
		snprintf(why, why_size, "its address is in no loaded segment");
		return -1;
	}
	for (int c = 0; c < n_cpus; c++) {
		for (int ret = 0; ret <= 1; ret++) {
			int fd = open_event(path, q.offset, ret, c);

			if (fd < 0) {
				snprintf(why, why_size, "perf_event_open of a %s: %s",
					 ret ? "uretprobe" : "uprobe", strerror(errno));
				return -1;
			}
			if (attach(fd, c, p, ret)) {
				snprintf(why, why_size, "cannot map the perf ring buffer: %s",
					 strerror(errno));
				close(fd);
				return -1;
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------------ reading */

static struct tid_stack *tid_state(uint32_t tid)
{
	for (uint32_t i = 0; i < MAX_TIDS; i++) {
		struct tid_stack *s = &tids[(tid + i) % MAX_TIDS];

		if (s->tid == tid)
			return s;
		if (s->tid == 0) {
			s->tid = tid;
			return s;
		}
	}
	return NULL;
}

static const struct event_map *event_of(uint64_t id)
{
	for (unsigned i = 0; i < n_events; i++)
		if (events[i].id == id)
			return &events[i];
	return NULL;
}

static void push_sample(const struct sample *s)
{
	if (batch_cap == 0 || (size_t)batch[-1].id >= batch_cap) {
		/* batch[-1].id holds the count: one allocation, grown here */
		size_t cap = batch_cap ? batch_cap * 2 : 4096;
		struct sample *b = realloc(batch ? batch - 1 : NULL, (cap + 1) * sizeof(*b));

		if (!b)
			return;
		if (!batch)
			b[0].id = 0;
		batch = b + 1;
		batch_cap = cap;
	}
	batch[batch[-1].id++] = *s;
}

static void copy_out(const struct ring *r, uint64_t at, void *dst, size_t len)
{
	size_t off = (size_t)(at % r->size), first = r->size - off < len ? r->size - off : len;

	memcpy(dst, r->data + off, first);
	memcpy((uint8_t *)dst + first, r->data, len - first);
}

static void drain_ring(struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;

	while (tail < head) {
		struct perf_event_header h;

		copy_out(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + sizeof(struct sample)) {
			struct sample s;

			copy_out(r, tail + sizeof(h), &s, sizeof(s));
			push_sample(&s);
		}
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int by_time(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static void call_returned(struct tid_stack *st, uint64_t t1)
{
	struct open_call *c = &st->calls[--st->depth];
	struct ann_metrics_snapshot d = {0};
	uint64_t own = cost_inside_ns + c->nested * cost_full_ns, span = t1 - c->t0;

	if (st->depth)
		st->calls[st->depth - 1].nested += c->nested + 1;
	if (c->slot == -2)
		return; /* not sampled */
	d.v[ANN_TIME] = span > own ? span - own : 0;
	/* counted where it is formatted */
	ann_output_record(ann_thread_current(), c->probe, c->id,
			  st->depth ? st->calls[st->depth - 1].id : 0, c->slot, &d, NULL, NULL);
}

static void process(const struct sample *s)
{
	const struct event_map *e = event_of(s->id);
	struct tid_stack *st;

	if (!e || !e->probe || !(st = tid_state(s->tid)))
		return;
	if (!e->ret) {
		struct open_call *c;
		int slot = -1;

		if (!ann_plan.rate_n) /* with a rate, the reservoir counts the calls */
			atomic_fetch_add(&e->probe->calls, 1);
		if (st->depth == TID_DEPTH) {
			atomic_fetch_add(&e->probe->dropped_depth, 1);
			return;
		}
		if (ann_plan.rate_n)
			slot = ann_sample_decide(e->probe, s->time);
		c = &st->calls[st->depth++];
		*c = (struct open_call){.probe = e->probe,
					.t0 = s->time,
					.slot = ann_plan.rate_n && slot < 0 ? -2 : slot};
		if (c->slot != -2) {
			c->id = ann_next_id();
			if (slot >= 0)
				ann_reservoir_claim(e->probe, slot, c->id);
		}
		return;
	}
	/* a return: the innermost open call of this probe on the thread (a longjmp skips returns)
	 */
	for (uint32_t i = st->depth; i-- > 0;) {
		if (st->calls[i].probe != e->probe)
			continue;
		while (st->depth > i + 1) {
			atomic_fetch_add(&st->calls[st->depth - 1].probe->dropped_unwound, 1);
			st->depth--;
		}
		call_returned(st, s->time);
		return;
	}
}

static void drain(void)
{
	pthread_mutex_lock(&drain_lock);
	for (int c = 0; c < n_cpus; c++)
		if (rings[c].fd >= 0)
			drain_ring(&rings[c]);
	if (batch && batch[-1].id) {
		size_t n = (size_t)batch[-1].id;

		qsort(batch, n, sizeof(*batch), by_time);
		for (size_t i = 0; i < n; i++)
			process(&batch[i]);
		batch[-1].id = 0;
	}
	pthread_mutex_unlock(&drain_lock);
}

static void *reader_main(void *arg)
{
	struct ann_thread *t = ann_thread_get();

	(void)arg;
	if (t)
		t->busy = 1; /* this thread is ours: no probes on it */
	while (!atomic_load(&reader_stop)) {
		struct timespec ts = {0, 5 * 1000 * 1000};

		drain();
		nanosleep(&ts, NULL);
	}
	drain();
	ann_output_flush_thread();
	return NULL;
}

/* ------------------------------------------------------------ calibration */

__attribute__((noinline, used)) int ann_uprobe_calibration_target(int x)
{
	__asm__ volatile("" : "+r"(x)::"memory");
	return x;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t loop_ns(int n)
{
	uint64_t t0 = now_ns();

	for (int i = 0; i < n; i++)
		ann_uprobe_calibration_target(i);
	return now_ns() - t0;
}

/*
 * Probe a function of our own, call it, read the pairs back: the whole cost
 * per call (with minus without) and the part inside the measured span (the
 * span of a function that does nothing).
 */
static void calibrate(void)
{
	enum { N = 2000 };
	static struct ann_probe cal = {.index = ANN_NO_INDEX, .name = "uprobe calibration"};
	uintptr_t target = (uintptr_t)ann_uprobe_calibration_target;
	Dl_info info;
	char why[256];
	uint64_t bare, probed, inside = 0, pairs = 0;
	unsigned first = n_events;

	if (!dladdr((void *)target, &info))
		return;
	bare = loop_ns(N);
	probed = loop_ns(N);
	bare = bare < probed ? bare : probed;
	if (attach_function(&cal, info.dli_fname, target, why, sizeof(why)))
		return;
	probed = loop_ns(N);
	cost_full_ns = probed > bare ? (probed - bare) / N : 0;
	/* the pairs, read here rather than recorded */
	for (int c = 0; c < n_cpus; c++)
		if (rings[c].fd >= 0)
			drain_ring(&rings[c]);
	if (batch) {
		size_t n = (size_t)batch[-1].id;
		uint64_t open = 0;

		qsort(batch, n, sizeof(*batch), by_time);
		for (size_t i = 0; i < n; i++) {
			const struct event_map *e = event_of(batch[i].id);

			if (!e || e->probe != &cal)
				continue;
			if (!e->ret)
				open = batch[i].time;
			else if (open) {
				inside += batch[i].time - open;
				pairs++;
				open = 0;
			}
		}
		batch[-1].id = 0;
	}
	cost_inside_ns = pairs ? inside / pairs : 0;
	/* detach: the calibration events stop counting */
	for (unsigned i = first; i < n_events; i++)
		events[i].probe = NULL;
	if (ann_verbose)
		ann_msg("uprobe cost: %llu ns per call (%llu inside its span)",
			(unsigned long long)cost_full_ns, (unsigned long long)cost_inside_ns);
}

/* ------------------------------------------------------------ the probe */

int ann_probe_uprobe(struct ann_probe *p, const struct ann_module *m, char *why, size_t why_size)
{
	static bool calibrated, said;

	if (setup(why, why_size))
		return -1;
	if (!calibrated) {
		calibrated = true;
		calibrate();
	}
	p->entry = m->load_bias + p->addr;
	if (attach_function(p, m->path, p->entry, why, why_size))
		return -1;
	p->installed = ANN_PROBE_UPROBE;
	if (!said && (ann_plan.metrics & ~ANN_METRIC_BIT(ANN_TIME))) {
		ann_msg("uprobe probes record time only");
		said = true;
	}
	if (p->n_features && ann_verbose)
		ann_msg("%s: uprobe probes record no features", p->name);
	if (!atomic_exchange(&reader_running, 1) &&
	    pthread_create(&reader, NULL, reader_main, NULL) != 0)
		atomic_store(&reader_running, 0);
	return 0;
}

/* At exit: stop the reader after a last drain; calls still open are not recorded. */
void ann_uprobe_finish(void)
{
	if (!atomic_load(&reader_running))
		return;
	atomic_store(&reader_stop, 1);
	pthread_join(reader, NULL);
	atomic_store(&reader_running, 0);
}
