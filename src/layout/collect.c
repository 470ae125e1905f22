// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * `lever layout record`: sampling a program from outside with
 * perf_event_open (spec autocpa.md §8.3 items 6–7, §8.6, §8.9) and writing
 * a layout record (doc/formats/layout-record.md, version 2).
 *
 * - One event per CPU, on the program's pid with `inherit` (threads and
 *   children are followed; a per-task inherited event cannot be mmap'ed,
 *   spec platform §7), or on every process with -a. Each CPU's ring buffer
 *   is drained while the program runs; lost records (PERF_RECORD_LOST) and
 *   throttling are counted and reported, never silently dropped.
 * - Samples and the MMAP2/FORK/COMM(exec) records that say which file a pc
 *   belongs to arrive in different CPUs' rings; they are resolved after the
 *   run in time order, as perf report does.
 * - `pmu`: PEBS (Intel's cpu/mem-loads/ and cpu/mem-stores/) or IBS (AMD's
 *   ibs_op) with the data address and source; self-tested at start-up.
 * - `clock`: cpu-clock samples with the user registers; the memory operand
 *   of the sampled instruction (the previous one, --skid) is decoded and its
 *   address computed (collect_decode.c).
 * - The record starts with the static part of every module sampled that has
 *   DWARF (layout_static_write, layout-static's), then the samples per
 *   (pc, thread), the data addresses, -g's call chains and the counters.
 * Samples are kept in memory until the program ends (256 bytes each, mostly
 * the registers), which bounds how long one recording can run.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <limits.h>

#include "base/base.h"
#include "launch/launch.h"
#include "layout/layout.h"

#define DEFAULT_PMU_ROOT "/sys/bus/event_source/devices"

/* ------------------------------------------------------------ what the rings give */

enum side_kind { SIDE_MMAP, SIDE_FORK, SIDE_EXEC };

struct side_event {
	uint64_t time;
	enum side_kind kind;
	uint32_t pid, ppid;
	uint64_t start, len, pgoff;
	uint32_t path; /* string_table id */
};

struct raw_sample {
	uint64_t time, ip, addr, data_src;
	uint32_t pid, tid;
	size_t chain_at; /* its user call chain: frames[chain_at..+chain_n) */
	uint32_t chain_n;
	uint64_t regs_valid;
	uint64_t regs[LAYOUT_PERF_REGS];
};

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	size_t data_size, map_size;
};

struct collector {
	const struct layout_collect_options *o;
	uint64_t sample_type, regs_mask;
	enum layout_source source;
	const char *event_name;
	uint64_t period; /* 0: frequency mode */
	size_t n_rings;
	struct ring *rings;
	int *extra_fds; /* events redirected into a ring (pmu stores) */
	size_t n_extra;
	unsigned char *scratch;
	struct string_table paths;
	struct side_event *side;
	size_t n_side, side_cap;
	struct raw_sample *samples;
	size_t n_samples, samples_cap;
	uint64_t *frames; /* the call chains' return addresses, all samples' */
	size_t n_frames, frames_cap;
	uint64_t lost, throttled, malformed;
	uint64_t kernel; /* samples in the kernel (ibs_op): not ours to attribute */
	uint64_t own;	 /* -a: samples of lever itself, left out (spec §7 "filter the daemon") */
	uint32_t self_pid;
	uint32_t child; /* the program's first process */
	/*
	 * The program followed on one cpu-wide event per CPU (pid -1) rather
	 * than on per-task inherited ones: a per-task cpu-clock event starts
	 * and cancels its hrtimer at every context switch of every thread,
	 * which costs a server far more than its samples (doc/layout.md,
	 * "Recording"). The samples of other processes are left out after the
	 * run, by process tree.
	 */
	bool cpu_wide;
	bool out_of_memory;
};

static int push(void **items, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 1024;
		void *g = realloc(*items, c * size);

		if (!g)
			return -1;
		*items = g;
		*cap = c;
	}
	(*n)++;
	return 0;
}

static struct side_event *new_side(struct collector *c)
{
	if (push((void **)&c->side, &c->n_side, &c->side_cap, sizeof(*c->side))) {
		c->out_of_memory = true;
		return NULL;
	}
	return memset(&c->side[c->n_side - 1], 0, sizeof(*c->side));
}

static void on_mmap2(struct collector *c, const struct perf_event_header *h)
{
	const unsigned char *p = (const unsigned char *)h + sizeof(*h);
	struct {
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_generation;
		uint32_t prot, flags;
	} m;
	const char *name = (const char *)p + sizeof(m);
	size_t room = h->size - sizeof(*h) - sizeof(m);
	struct side_event *e;
	uint64_t time;

	if (h->size < sizeof(*h) + sizeof(m) + 1 || !(h->misc & PERF_RECORD_MISC_USER))
		return;
	memcpy(&m, p, sizeof(m));
	/* only code files: anonymous memory, [vdso] and data maps hold no pcs we can decode */
	if (!(m.prot & PROT_EXEC) || name[0] != '/' || !memchr(name, '\0', room))
		return;
	if (layout_perf_record_time(h, h->size, c->sample_type, &time))
		return;
	e = new_side(c);
	if (!e)
		return;
	*e = (struct side_event){.time = time,
				 .kind = SIDE_MMAP,
				 .pid = m.pid,
				 .start = m.addr,
				 .len = m.len,
				 .pgoff = m.pgoff,
				 .path = string_table_intern(&c->paths, name, strlen(name))};
}

static void on_task(struct collector *c, const struct perf_event_header *h)
{
	struct {
		uint32_t pid, ppid, tid, ptid;
		uint64_t time;
	} t;
	struct side_event *e;

	if (h->size < sizeof(*h) + sizeof(t))
		return;
	memcpy(&t, (const unsigned char *)h + sizeof(*h), sizeof(t));
	if (t.pid == t.ppid) /* a new thread shares its process's maps */
		return;
	e = new_side(c);
	if (e)
		*e = (struct side_event){
		    .time = t.time, .kind = SIDE_FORK, .pid = t.pid, .ppid = t.ppid};
}

static void on_comm(struct collector *c, const struct perf_event_header *h)
{
	uint32_t pid;
	uint64_t time;
	struct side_event *e;

	if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC) || h->size < sizeof(*h) + 8 ||
	    layout_perf_record_time(h, h->size, c->sample_type, &time))
		return;
	memcpy(&pid, (const unsigned char *)h + sizeof(*h), sizeof(pid));
	e = new_side(c);
	if (e)
		*e = (struct side_event){.time = time, .kind = SIDE_EXEC, .pid = pid};
}

static void on_sample(struct collector *c, const struct perf_event_header *h)
{
	struct layout_perf_sample s;
	struct raw_sample *r;

	if (layout_perf_parse_sample(h, h->size, c->sample_type, c->regs_mask, &s)) {
		c->malformed++;
		return;
	}
	if (s.pid == c->self_pid) {
		c->own++;
		return;
	}
	/* ibs_op cannot leave the kernel out by itself (exclude_kernel is refused) */
	if ((s.misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER) {
		c->kernel++;
		return;
	}
	if (push((void **)&c->samples, &c->n_samples, &c->samples_cap, sizeof(*c->samples))) {
		c->out_of_memory = true;
		c->n_samples = c->samples_cap;
		c->lost++;
		return;
	}
	r = &c->samples[c->n_samples - 1];
	*r = (struct raw_sample){.chain_at = c->n_frames,
				 .time = s.time,
				 .ip = s.ip,
				 .addr = s.addr,
				 .data_src = s.data_src,
				 .pid = s.pid,
				 .tid = s.tid,
				 .regs_valid = s.regs_valid};
	memcpy(r->regs, s.regs, sizeof(r->regs));
	/* the user frames; PERF_CONTEXT_* markers (the top 4095 values) are not pcs */
	for (uint64_t i = 0; i < s.n_callchain && r->chain_n < LAYOUT_MAX_CHAIN_DEPTH; i++) {
		uint64_t pc = layout_perf_callchain_at(&s, i);

		if (pc >= (uint64_t)-4095)
			continue;
		if (push((void **)&c->frames, &c->n_frames, &c->frames_cap, sizeof(*c->frames))) {
			c->out_of_memory = true;
			break;
		}
		c->frames[c->n_frames - 1] = pc;
		r->chain_n++;
	}
}

static int on_record(const struct perf_event_header *h, void *ctx)
{
	struct collector *c = ctx;
	uint64_t v[2];

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		on_sample(c, h);
		break;
	case PERF_RECORD_MMAP2:
		on_mmap2(c, h);
		break;
	case PERF_RECORD_FORK:
		on_task(c, h);
		break;
	case PERF_RECORD_COMM:
		on_comm(c, h);
		break;
	case PERF_RECORD_LOST: /* u64 id, u64 lost */
		if (h->size >= sizeof(*h) + 16) {
			memcpy(v, (const unsigned char *)h + sizeof(*h), sizeof(v));
			c->lost += v[1];
		}
		break;
	case PERF_RECORD_LOST_SAMPLES: /* u64 lost */
		if (h->size >= sizeof(*h) + 8) {
			memcpy(v, (const unsigned char *)h + sizeof(*h), 8);
			c->lost += v[0];
		}
		break;
	case PERF_RECORD_THROTTLE:
		c->throttled++;
		break;
	default:
		break;
	}
	return 0;
}

static void drain(struct collector *c)
{
	for (size_t i = 0; i < c->n_rings; i++) {
		struct ring *r = &c->rings[i];
		uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = r->meta->data_tail;

		if (layout_perf_ring_read(r->data, r->data_size, &tail, head, c->scratch, on_record,
					  c) < 0) {
			/* cannot happen with a sane kernel; skip what is there and count it */
			c->malformed++;
			tail = head;
		}
		__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	}
}

/* ------------------------------------------------------------ opening the events */

static long perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static void common_attr(const struct collector *c, struct perf_event_attr *a)
{
	const struct layout_collect_options *o = c->o;

	a->size = sizeof(*a);
	a->sample_type = c->sample_type;
	a->sample_regs_user = c->regs_mask;
	if (c->period) {
		a->sample_period = c->period;
	} else {
		a->freq = 1;
		a->sample_freq = o->freq;
	}
	/* the side band that says which file a pc is in (one event per ring is enough) */
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->exclude_callchain_kernel = 1;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->sample_id_all = 1;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(o->ring_pages * (uint64_t)sysconf(_SC_PAGESIZE) / 4);
	if (!o->system_wide) {
		a->inherit = 1;
		a->enable_on_exec = 1;
	}
}

static void clock_attr(struct collector *c, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	c->sample_type =
	    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER;
	if (c->o->callchain)
		c->sample_type |= PERF_SAMPLE_CALLCHAIN;
	c->regs_mask = LAYOUT_PERF_REGS_GENERAL;
	/* cpu-clock counts nanoseconds: a frequency becomes a fixed period, so
	 * that every sample stands for the same CPU time and records compare */
	c->period = c->o->period ? c->o->period : 1000000000ull / (c->o->freq ? c->o->freq : 1000);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	common_attr(c, a);
}

/*
 * The PMU's memory-sampling events, as `perf mem` picks them: Intel's
 * cpu/mem-loads,ldlat=30/ and cpu/mem-stores/ with the highest precise_ip
 * the CPU takes, else AMD's ibs_op (whose samples carry the data address
 * through PERF_SAMPLE_ADDR on Linux ≥ 6.1). n_attrs: how many were set.
 */
static int pmu_attrs(struct collector *c, struct perf_event_attr *a, size_t *n_attrs, char *why,
		     size_t why_size)
{
	const char *root = c->o->pmu_root ? c->o->pmu_root : DEFAULT_PMU_ROOT;
	char dir[PATH_MAX], err[512] = "";

	c->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
			 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;
	if (c->o->callchain)
		c->sample_type |= PERF_SAMPLE_CALLCHAIN;
	c->regs_mask = 0;
	c->period = c->o->period;
	memset(a, 0, 2 * sizeof(*a));
	/* a hybrid Intel CPU names its big cores' PMU cpu_core */
	snprintf(dir, sizeof(dir), "%s/cpu/events/mem-loads", root);
	snprintf(dir, sizeof(dir), access(dir, F_OK) == 0 ? "%s/cpu" : "%s/cpu_core", root);
	if (layout_pmu_event_attr(dir, "mem-loads", "ldlat=30", &a[0], err, sizeof(err)) == 0 ||
	    layout_pmu_event_attr(dir, "mem-loads", NULL, &a[0], err, sizeof(err)) == 0) {
		*n_attrs = 1;
		c->event_name = "mem-loads";
		if (layout_pmu_event_attr(dir, "mem-stores", NULL, &a[1], err, sizeof(err)) == 0) {
			*n_attrs = 2;
			c->event_name = "mem-loads,mem-stores";
		}
	} else {
		snprintf(dir, sizeof(dir), "%s/ibs_op", root);
		if (layout_pmu_event_attr(dir, NULL, NULL, &a[0], err, sizeof(err))) {
			snprintf(why, why_size,
				 "no memory-sampling PMU (neither %s/cpu/events/mem-loads (or "
				 "cpu_core/) nor %s/ibs_op exists)",
				 root, root);
			return -1;
		}
		*n_attrs = 1;
		c->event_name = "ibs_op";
	}
	for (size_t i = 0; i < *n_attrs; i++) {
		common_attr(c, &a[i]);
		a[i].precise_ip = c->event_name[0] == 'i' ? 0 : 3;
		if (c->event_name[0] == 'i') /* IBS refuses privilege filters: done on our side */
			a[i].exclude_kernel = a[i].exclude_hv = 0;
	}
	if (*n_attrs == 2) /* the stores' ring is the loads': one side band */
		a[1].mmap = a[1].mmap2 = a[1].comm = a[1].comm_exec = a[1].task = 0;
	return 0;
}

/* The self-test: can this event be opened at all (on ourselves, disabled)? */
static int self_test(struct perf_event_attr *a, char *why, size_t why_size)
{
	for (;;) {
		struct perf_event_attr t = *a;
		long fd;

		t.inherit = 0;
		t.enable_on_exec = 0;
		fd = perf_open(&t, 0, -1, -1);
		if (fd >= 0) {
			close((int)fd);
			return 0;
		}
		/* fewer skid guarantees than asked: try the next lower level, as perf does */
		if ((errno == EINVAL || errno == EOPNOTSUPP) && a->precise_ip > 0) {
			a->precise_ip--;
			continue;
		}
		snprintf(why, why_size, "perf_event_open(type %u, config %#llx, config1 %#llx): %s",
			 a->type, (unsigned long long)a->config, (unsigned long long)a->config1,
			 strerror(errno));
		return -1;
	}
}

/*
 * Can a of the program's clock be one event per CPU instead (root or
 * CAP_PERFMON, or perf_event_paranoid <= 0)? If so, a becomes that event.
 */
static bool cpu_wide_opens(struct perf_event_attr *a)
{
	struct perf_event_attr t = *a;
	long fd;

	t.inherit = 0;
	t.enable_on_exec = 0;
	fd = perf_open(&t, -1, 0, -1);
	if (fd < 0)
		return false;
	close((int)fd);
	*a = t;
	return true;
}

static int map_ring(struct collector *c, int fd, struct ring *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	r->fd = fd;
	r->data_size = (size_t)c->o->ring_pages * page;
	r->map_size = r->data_size + page;
	r->meta = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->meta == MAP_FAILED) {
		r->meta = NULL;
		return -1;
	}
	r->data = (unsigned char *)r->meta + page;
	return 0;
}

/* One ring per CPU; the second event (pmu stores) writes into the first's. */
static int open_events(struct collector *c, struct perf_event_attr *a, size_t n_attrs, pid_t pid)
{
	int n_cpus = get_nprocs_conf();

	c->rings = calloc((size_t)n_cpus, sizeof(*c->rings));
	c->extra_fds = calloc((size_t)n_cpus * n_attrs, sizeof(*c->extra_fds));
	if (!c->rings || !c->extra_fds)
		return -1;
	for (int cpu = 0; cpu < n_cpus; cpu++) {
		long fd = perf_open(&a[0], pid, cpu, -1);

		if (fd < 0) {
			if (errno == ENODEV) /* an offline CPU */
				continue;
			fprintf(stderr, "%s: perf_event_open on CPU %d: %s%s\n", c->o->who, cpu,
				strerror(errno),
				errno == EACCES || errno == EPERM
				    ? " (-a needs root or CAP_PERFMON; see "
				      "/proc/sys/kernel/perf_event_paranoid)"
				    : "");
			return -1;
		}
		if (map_ring(c, (int)fd, &c->rings[c->n_rings])) {
			fprintf(stderr, "%s: mmap of the ring buffer (%u pages): %s\n", c->o->who,
				c->o->ring_pages, strerror(errno));
			close((int)fd);
			return -1;
		}
		c->n_rings++;
		for (size_t k = 1; k < n_attrs; k++) {
			long extra = perf_open(&a[k], pid, cpu, -1);

			if (extra < 0 || ioctl((int)extra, PERF_EVENT_IOC_SET_OUTPUT, fd)) {
				fprintf(stderr, "%s: second event on CPU %d: %s\n", c->o->who, cpu,
					strerror(errno));
				if (extra >= 0)
					close((int)extra);
				return -1;
			}
			c->extra_fds[c->n_extra++] = (int)extra;
		}
	}
	if (!c->n_rings) {
		fprintf(stderr, "%s: no CPU to sample on\n", c->o->who);
		return -1;
	}
	return 0;
}

static void close_events(struct collector *c)
{
	for (size_t i = 0; i < c->n_extra; i++)
		close(c->extra_fds[i]);
	for (size_t i = 0; i < c->n_rings; i++) {
		if (c->rings[i].meta)
			munmap(c->rings[i].meta, c->rings[i].map_size);
		close(c->rings[i].fd);
	}
	free(c->rings);
	free(c->extra_fds);
	c->rings = NULL;
	c->extra_fds = NULL;
	c->n_rings = c->n_extra = 0;
}

static void enable_events(struct collector *c)
{
	for (size_t i = 0; i < c->n_rings; i++)
		ioctl(c->rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
	for (size_t i = 0; i < c->n_extra; i++)
		ioctl(c->extra_fds[i], PERF_EVENT_IOC_ENABLE, 0);
}

/*
 * -a: processes that were running before the events opened announce no
 * mmaps; read their executable maps from /proc (time 0), as perf record's
 * synthesized events do.
 */
static void synthesize_proc_maps(struct collector *c)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;

	while (proc && (de = readdir(proc))) {
		char path[300], line[4096 + 128];
		unsigned long pid;
		char *end;
		FILE *f;

		pid = strtoul(de->d_name, &end, 10);
		if (*end || end == de->d_name)
			continue;
		snprintf(path, sizeof(path), "/proc/%lu/maps", pid);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long long lo, hi, off;
			char perms[8];
			int name_at = 0;
			struct side_event *e;
			char *nl;

			if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off,
				   &name_at) < 4 ||
			    !name_at || perms[2] != 'x' || line[name_at] != '/')
				continue;
			nl = strchr(line + name_at, '\n');
			if (nl)
				*nl = '\0';
			e = new_side(c);
			if (!e)
				break;
			*e = (struct side_event){.kind = SIDE_MMAP,
						 .pid = (uint32_t)pid,
						 .start = lo,
						 .len = hi - lo,
						 .pgoff = off,
						 .path =
						     string_table_intern(&c->paths, line + name_at,
									 strlen(line + name_at))};
		}
		if (f)
			fclose(f);
	}
	if (proc)
		closedir(proc);
}

/* ------------------------------------------------------------ running the program */

/* A SIGTERM (or SIGHUP) sent to lever alone, to pass on to the program. */
static volatile sig_atomic_t pending_signal;

static void on_signal(int sig)
{
	if (sig == SIGTERM || sig == SIGHUP)
		pending_signal = sig;
}

static int run_and_drain(struct collector *c, pid_t child, int go_fd, int *wait_status)
{
	struct pollfd *fds = calloc(c->n_rings, sizeof(*fds));
	struct sigaction catch = {.sa_handler = on_signal}, old[4];
	static const int signals[4] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
	int rc = 0;

	if (!fds)
		return -1;
	for (size_t i = 0; i < c->n_rings; i++)
		fds[i] = (struct pollfd){.fd = c->rings[i].fd, .events = POLLIN};
	/*
	 * ^C and ^\ reach the program too (same process group): lever waits for
	 * it to exit and keeps what was sampled. A SIGTERM or SIGHUP sent to
	 * lever alone (timeout(1), a closed session) is passed on to it.
	 */
	for (int i = 0; i < 4; i++)
		sigaction(signals[i], &catch, &old[i]);
	if (c->o->system_wide || c->cpu_wide)
		enable_events(c);
	if (write(go_fd, "g", 1) != 1)
		rc = -1;
	close(go_fd);
	for (;;) {
		pid_t w;

		poll(fds, c->n_rings, 100);
		drain(c);
		w = waitpid(child, wait_status, WNOHANG);
		if (w == child || (w < 0 && errno != EINTR))
			break;
		if (pending_signal) {
			kill(child, pending_signal);
			pending_signal = 0;
		}
	}
	drain(c);
	for (int i = 0; i < 4; i++)
		sigaction(signals[i], &old[i], NULL);
	free(fds);
	return rc;
}

/* Fork a child that waits for a byte on a pipe before it execs argv. */
static pid_t fork_waiting(const struct layout_collect_options *o, int *go_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char b;

		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(LAUNCH_EXIT_FAILURE); /* the recorder gave up */
		_exit(launch_exec(o->who, o->argv, NULL));
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	*go_fd = p[1];
	return pid;
}

/* ------------------------------------------------------------ resolving samples */

struct module {
	const char *path;
	struct layout_code *code; /* NULL: unreadable */
	uint32_t path_id;
};

struct pid_map {
	uint32_t pid;
	uint64_t start, len, pgoff;
	uint32_t module;
};

/* Counts keyed by (module pc, tid[, address, write]); an open-addressing table. */
struct count_key {
	uint64_t pc, addr;
	uint32_t tid;
	uint32_t flags; /* bit 0: write; bit 1: an access (address known) */
};

struct count_entry {
	struct count_key key;
	uint64_t count;
	bool used;
};

struct count_table {
	struct count_entry *e;
	size_t n, cap;
};

static uint64_t key_hash(const struct count_key *k)
{
	return hash_u64(k->pc ^ hash_u64(k->addr ^ ((uint64_t)k->tid << 32 | k->flags)));
}

static int count_add(struct count_table *t, const struct count_key *k, uint64_t n)
{
	if (2 * (t->n + 1) > t->cap) {
		struct count_table g = {.cap = t->cap ? 2 * t->cap : 1024};

		g.e = calloc(g.cap, sizeof(*g.e));
		if (!g.e)
			return -1;
		for (size_t i = 0; i < t->cap; i++)
			if (t->e[i].used)
				count_add(&g, &t->e[i].key, t->e[i].count);
		free(t->e);
		*t = g;
	}
	for (size_t i = key_hash(k) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (!t->e[i].used) {
			t->e[i] = (struct count_entry){.key = *k, .count = n, .used = true};
			t->n++;
			return 0;
		}
		if (memcmp(&t->e[i].key, k, sizeof(*k)) == 0) {
			t->e[i].count += n;
			return 0;
		}
	}
}

/* Call chains counted per (tid, frames): an open-addressing table over a frame pool. */
struct chain_entry {
	uint64_t hash, count;
	size_t at; /* in chain_table.pool */
	uint32_t n, tid;
	bool used;
};

struct chain_table {
	struct chain_entry *e;
	size_t n, cap;
	uint64_t *pool;
	size_t n_pool, pool_cap;
};

static bool chain_equal(const struct chain_table *t, const struct chain_entry *e, uint32_t tid,
			const uint64_t *pcs, uint32_t n)
{
	return e->tid == tid && e->n == n && memcmp(t->pool + e->at, pcs, n * sizeof(*pcs)) == 0;
}

static int chain_add(struct chain_table *t, uint32_t tid, const uint64_t *pcs, uint32_t n)
{
	uint64_t h = fnv1a(hash_u64(tid), pcs, n * sizeof(*pcs));
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct chain_entry *g = calloc(cap, sizeof(*g));

		if (!g)
			return -1;
		for (size_t k = 0; k < t->cap; k++)
			if (t->e[k].used) {
				for (i = t->e[k].hash & (cap - 1); g[i].used;
				     i = (i + 1) & (cap - 1))
					;
				g[i] = t->e[k];
			}
		free(t->e);
		t->e = g;
		t->cap = cap;
	}
	for (i = h & (t->cap - 1); t->e[i].used; i = (i + 1) & (t->cap - 1))
		if (t->e[i].hash == h && chain_equal(t, &t->e[i], tid, pcs, n)) {
			t->e[i].count++;
			return 0;
		}
	while (t->n_pool + n > t->pool_cap) {
		size_t cap = t->pool_cap ? 2 * t->pool_cap : 4096;
		uint64_t *g = realloc(t->pool, cap * sizeof(*g));

		if (!g)
			return -1;
		t->pool = g;
		t->pool_cap = cap;
	}
	memcpy(t->pool + t->n_pool, pcs, n * sizeof(*pcs));
	t->e[i] = (struct chain_entry){
	    .hash = h, .count = 1, .at = t->n_pool, .n = n, .tid = tid, .used = true};
	t->n_pool += n;
	t->n++;
	return 0;
}

struct resolver {
	struct collector *c;
	struct layout_decoder *dec;
	struct module *modules;
	size_t n_modules;
	struct pid_map *maps;
	size_t n_maps, maps_cap;
	struct count_table counts;
	struct chain_table chains;
	/* the counters written as `stat` lines */
	uint64_t samples, memory, no_memory, address_unknown, no_previous, outside, unreadable;
	uint64_t others; /* cpu-wide: samples of processes outside the program's tree */
	uint32_t *tree;	 /* cpu-wide: the program's processes so far */
	size_t n_tree, tree_cap;
	size_t static_modules; /* modules whose static part the record has */
	size_t n_used;	       /* modules in the record */
	const char *program;   /* canonical path of PROGRAM: module 0 */
};

static uint32_t module_of(struct resolver *r, uint32_t path_id)
{
	const char *path = string_table_text(&r->c->paths, path_id);

	for (size_t i = 0; i < r->n_modules; i++)
		if (r->modules[i].path_id == path_id)
			return (uint32_t)i;
	if (r->n_modules == LAYOUT_MAX_MODULES)
		return UINT32_MAX;
	r->modules = realloc(r->modules, (r->n_modules + 1) * sizeof(*r->modules));
	if (!r->modules)
		return UINT32_MAX;
	r->modules[r->n_modules] =
	    (struct module){.path = path, .code = layout_code_open(path), .path_id = path_id};
	return (uint32_t)r->n_modules++;
}

static void apply_side(struct resolver *r, const struct side_event *e)
{
	size_t n = r->n_maps;

	switch (e->kind) {
	case SIDE_EXEC: /* a new image: the old maps are gone */
		for (size_t i = 0; i < r->n_maps;)
			if (r->maps[i].pid == e->pid)
				r->maps[i] = r->maps[--r->n_maps];
			else
				i++;
		return;
	case SIDE_FORK:
		for (size_t i = 0; i < n; i++)
			if (r->maps[i].pid == e->ppid) {
				struct pid_map m = r->maps[i];

				m.pid = e->pid;
				if (push((void **)&r->maps, &r->n_maps, &r->maps_cap, sizeof(m)))
					return;
				r->maps[r->n_maps - 1] = m;
			}
		return;
	case SIDE_MMAP: {
		uint32_t m = module_of(r, e->path);

		if (m == UINT32_MAX)
			return;
		if (push((void **)&r->maps, &r->n_maps, &r->maps_cap, sizeof(*r->maps)))
			return;
		r->maps[r->n_maps - 1] = (struct pid_map){e->pid, e->start, e->len, e->pgoff, m};
		return;
	}
	}
}

static const struct pid_map *find_map(const struct resolver *r, uint32_t pid, uint64_t ip)
{
	/* the newest map wins: a later mmap over the same range replaced the old */
	for (size_t i = r->n_maps; i-- > 0;)
		if (r->maps[i].pid == pid && ip - r->maps[i].start < r->maps[i].len)
			return &r->maps[i];
	return NULL;
}

/* clock: the memory instruction a sample stands for, and its data address. */
static void resolve_clock(struct resolver *r, const struct raw_sample *s, const struct module *m,
			  uint32_t module, uint64_t vaddr)
{
	struct layout_mem_operand op;
	uint64_t at = vaddr, ea;

	if (r->c->o->skid == LAYOUT_SKID_PREVIOUS &&
	    layout_code_previous(m->code, r->dec, vaddr, &at)) {
		r->no_previous++;
		at = vaddr;
	}
	if (layout_code_decode(m->code, r->dec, at, &op)) {
		r->unreadable++;
		return;
	}
	if (!op.has_memory) {
		r->no_memory++;
		return;
	}
	r->memory++;
	count_add(&r->counts,
		  &(struct count_key){.pc = LAYOUT_MODULE_PC(module, at), .tid = s->tid}, 1);
	/* the registers are those after the previous instruction ran */
	if (layout_effective_address(&op, s->ip - (vaddr - at), s->regs, s->regs_valid, &ea)) {
		r->address_unknown++;
		return;
	}
	count_add(
	    &r->counts,
	    &(struct count_key){.pc = LAYOUT_MODULE_PC(module, at),
				.addr = ea,
				.tid = s->tid,
				/* a read-modify-write writes: it takes the line from others */
				.flags = 2u | (op.write ? 1u : 0u)},
	    1);
}

/* pmu: the precise pc and the data address the hardware gives. */
static void resolve_pmu(struct resolver *r, const struct raw_sample *s, uint32_t module,
			uint64_t vaddr)
{
	/* data_src's mem_op (bits 0-4): 2 load, 4 store; NA (1) for non-memory IBS ops */
	uint64_t op = s->data_src & 0x1f;

	if (s->data_src && !(op & (PERF_MEM_OP_LOAD | PERF_MEM_OP_STORE))) {
		r->no_memory++;
		return;
	}
	r->memory++;
	count_add(&r->counts,
		  &(struct count_key){.pc = LAYOUT_MODULE_PC(module, vaddr), .tid = s->tid}, 1);
	if (!s->addr) {
		r->address_unknown++;
		return;
	}
	count_add(&r->counts,
		  &(struct count_key){.pc = LAYOUT_MODULE_PC(module, vaddr),
				      .addr = s->addr,
				      .tid = s->tid,
				      .flags = 2u | ((op & PERF_MEM_OP_STORE) ? 1u : 0u)},
		  1);
}

/* A run-time pc of process pid as a module-qualified file address, or LAYOUT_CHAIN_UNKNOWN. */
static uint64_t file_pc(const struct resolver *r, uint32_t pid, uint64_t ip)
{
	const struct pid_map *map = find_map(r, pid, ip);
	uint64_t vaddr;

	if (!map || !r->modules[map->module].code ||
	    layout_code_offset_to_vaddr(r->modules[map->module].code, ip - map->start + map->pgoff,
					&vaddr))
		return LAYOUT_CHAIN_UNKNOWN;
	return LAYOUT_MODULE_PC(map->module, vaddr);
}

static void resolve_chain(struct resolver *r, const struct raw_sample *s)
{
	uint64_t pcs[LAYOUT_MAX_CHAIN_DEPTH];

	for (uint32_t k = 0; k < s->chain_n; k++)
		pcs[k] = file_pc(r, s->pid, r->c->frames[s->chain_at + k]);
	if (chain_add(&r->chains, s->tid, pcs, s->chain_n))
		r->c->out_of_memory = true;
}

static void resolve_sample(struct resolver *r, const struct raw_sample *s)
{
	const struct pid_map *map;
	const struct module *m;
	uint64_t vaddr;

	r->samples++;
	if (s->chain_n)
		resolve_chain(r, s);
	map = find_map(r, s->pid, s->ip);
	if (!map) {
		r->outside++; /* vdso, JIT code, or a process whose maps we never saw */
		return;
	}
	m = &r->modules[map->module];
	if (!m->code ||
	    layout_code_offset_to_vaddr(m->code, s->ip - map->start + map->pgoff, &vaddr)) {
		r->unreadable++;
		return;
	}
	if (r->c->source == LAYOUT_SOURCE_CLOCK)
		resolve_clock(r, s, m, map->module, vaddr);
	else
		resolve_pmu(r, s, map->module, vaddr);
}

static int compare_side(const void *a, const void *b)
{
	const struct side_event *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time ? 1 : 0;
}

static int compare_samples(const void *a, const void *b)
{
	const struct raw_sample *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time ? 1 : 0;
}

static bool in_tree(const struct resolver *r, uint32_t pid)
{
	for (size_t i = 0; i < r->n_tree; i++)
		if (r->tree[i] == pid)
			return true;
	return false;
}

/*
 * A side event, in time order. cpu-wide: the program's tree starts when
 * the child execs it (before, the child is lever's fork, which per-task
 * events leave out with enable_on_exec) and grows by its forks; the other
 * processes' maps are not kept (nor their files opened).
 */
static void follow_side(struct resolver *r, const struct side_event *e)
{
	struct collector *c = r->c;

	if (c->cpu_wide) {
		bool joins = (e->kind == SIDE_EXEC && e->pid == c->child) ||
			     (e->kind == SIDE_FORK && in_tree(r, e->ppid));

		if (joins && !in_tree(r, e->pid)) {
			if (push((void **)&r->tree, &r->n_tree, &r->tree_cap, sizeof(*r->tree))) {
				c->out_of_memory = true;
				return;
			}
			r->tree[r->n_tree - 1] = e->pid;
		}
		if (!in_tree(r, e->pid))
			return;
	}
	apply_side(r, e);
}

static void resolve_all(struct resolver *r)
{
	struct collector *c = r->c;
	size_t k = 0;

	if (c->n_side) /* qsort(NULL, 0) is undefined */
		qsort(c->side, c->n_side, sizeof(*c->side), compare_side);
	if (c->n_samples) /* qsort(NULL, 0) is undefined */
		qsort(c->samples, c->n_samples, sizeof(*c->samples), compare_samples);
	/* module 0 is the program, whether or not it was sampled */
	module_of(r, string_table_intern(&c->paths, r->program, strlen(r->program)));
	for (size_t i = 0; i < c->n_samples; i++) {
		while (k < c->n_side && c->side[k].time <= c->samples[i].time)
			follow_side(r, &c->side[k++]);
		if (c->cpu_wide && !in_tree(r, c->samples[i].pid)) {
			r->others++;
			continue;
		}
		resolve_sample(r, &c->samples[i]);
	}
}

/* ------------------------------------------------------------ the record */

static int compare_counts(const void *a, const void *b)
{
	const struct count_entry *x = a, *y = b;

	if (x->key.pc != y->key.pc)
		return x->key.pc < y->key.pc ? -1 : 1;
	if (x->key.flags != y->key.flags)
		return x->key.flags < y->key.flags ? -1 : 1;
	if (x->key.addr != y->key.addr)
		return x->key.addr < y->key.addr ? -1 : 1;
	return x->key.tid < y->key.tid ? -1 : x->key.tid > y->key.tid ? 1 : 0;
}

static const char *source_name(enum layout_source s)
{
	return s == LAYOUT_SOURCE_PMU ? "pmu" : s == LAYOUT_SOURCE_INSTR ? "instr" : "clock";
}

/*
 * Record indexes of the modules with samples, in the order of their first
 * sample (module 0, the program, always); how many.
 */
static size_t number_modules(const struct resolver *r, const struct count_entry *e, size_t n,
			     uint32_t *index)
{
	size_t next = 1;

	for (size_t m = 0; m < r->n_modules; m++)
		index[m] = UINT32_MAX;
	index[0] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t m = LAYOUT_PC_MODULE(e[i].key.pc);

		if (index[m] == UINT32_MAX)
			index[m] = (uint32_t)next++;
	}
	/* the modules call chains pass through are listed too */
	for (size_t i = 0; i < r->chains.n_pool; i++) {
		size_t m = LAYOUT_PC_MODULE(r->chains.pool[i]);

		if (r->chains.pool[i] != LAYOUT_CHAIN_UNKNOWN && index[m] == UINT32_MAX)
			index[m] = (uint32_t)next++;
	}
	return next;
}

/* A path as one column: tabs and newlines (legal in file names) would split it. */
static void put_path(FILE *f, const char *path)
{
	for (const char *p = path; *p; p++)
		fputc(*p == '\t' || *p == '\n' || *p == '\r' ? '?' : *p, f);
}

/*
 * The `program` or `module` line of module m and, when wanted and the file
 * has DWARF, its static part: layout_static_write's struct, field, ref and
 * block lines (layout-static; cached by build ID).
 */
static void write_module_head(struct resolver *r, FILE *f, size_t m, bool with_static)
{
	const struct module *mod = &r->modules[m];
	const char *build_id = mod->code ? layout_code_build_id(mod->code) : "";
	struct layout_static_options so = {.cache = true};
	char err[512], *text = NULL;
	size_t len = 0;
	FILE *part;

	fprintf(f, "%s\t", m ? "module" : "program");
	put_path(f, mod->path);
	fprintf(f, "\t%s\n", *build_id ? build_id : "-");
	if (!with_static || !mod->code || strpbrk(mod->path, "\t\n\r"))
		return;
	part = open_memstream(&text, &len);
	if (!part)
		return;
	/* written aside: a failure half-way must not leave half a static part */
	if (layout_static_write(mod->path, &so, part, NULL, err, sizeof(err)) == 0) {
		fclose(part);
		fwrite(text, 1, len, f);
		r->static_modules++;
	} else {
		fclose(part);
		if (m == 0)
			fprintf(stderr, "%s: no static part for %s: %s\n", r->c->o->who, mod->path,
				err);
	}
	free(text);
}

/* The head of the record (program, modules, static parts, source, period) read back. */
static int read_head(struct resolver *r, const uint32_t *index, size_t n_used, bool library_statics,
		     struct layout_record *rec)
{
	struct collector *c = r->c;
	char *text = NULL, err[600];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		return -1;
	r->static_modules = 0;
	fprintf(f, "lever-layout-record\t%d\n", LAYOUT_RECORD_VERSION);
	fprintf(f, "source\t%s\t%s\n", source_name(c->source), c->event_name);
	if (c->period)
		fprintf(f, "period\t%llu\n", (unsigned long long)c->period);
	write_module_head(r, f, 0, true);
	for (size_t k = 1; k < n_used; k++)
		for (size_t m = 1; m < r->n_modules; m++)
			if (index[m] == k)
				write_module_head(r, f, m, library_statics);
	fclose(f);
	f = fmemopen(text, len, "r");
	rc = f ? layout_record_read(f, "static part", rec, err, sizeof(err)) : -1;
	if (f)
		fclose(f);
	if (rc && f && library_statics)
		fprintf(stderr,
			"%s: the shared objects' static parts do not combine (%s); kept "
			"the program's only\n",
			c->o->who, err);
	else if (rc && f)
		fprintf(stderr, "%s: the static part cannot be read back (%s)\n", c->o->who, err);
	free(text);
	return rc;
}

static int fill_chains(struct resolver *r, const uint32_t *index, struct layout_record *rec)
{
	const struct chain_table *t = &r->chains;

	rec->chains = calloc(t->n ? t->n : 1, sizeof(*rec->chains));
	if (!rec->chains)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		const struct chain_entry *e = &t->e[i];
		struct layout_chain *c;

		if (!e->used)
			continue;
		c = &rec->chains[rec->n_chains++];
		*c = (struct layout_chain){.count = e->count, .tid = e->tid, .n = e->n};
		c->pcs = malloc(e->n * sizeof(*c->pcs));
		if (!c->pcs)
			return -1;
		for (uint32_t k = 0; k < e->n; k++) {
			uint64_t pc = t->pool[e->at + k];

			c->pcs[k] = pc == LAYOUT_CHAIN_UNKNOWN
					? pc
					: LAYOUT_MODULE_PC(index[LAYOUT_PC_MODULE(pc)],
							   LAYOUT_PC_ADDRESS(pc));
		}
	}
	return 0;
}

static int fill_record(struct resolver *r, struct layout_record *rec)
{
	struct collector *c = r->c;
	struct count_entry *e = r->counts.e;
	uint32_t *index = calloc(r->n_modules ? r->n_modules : 1, sizeof(*index));
	size_t n = 0, n_used;
	const struct {
		const char *name;
		uint64_t value;
	} stats[] = {
	    {"samples", r->samples},
	    {"memory-samples", r->memory},
	    {"no-memory-operand", r->no_memory},
	    {"address-unknown", r->address_unknown},
	    {"previous-unknown", r->no_previous},
	    {"outside-known-code", r->outside},
	    {"code-unreadable", r->unreadable},
	    {"lost", c->lost},
	    {"throttled", c->throttled},
	    {"malformed", c->malformed},
	    {"recorder-own", c->own},
	    {"kernel", c->kernel},
	    {"other-processes", r->others},
	};

	memset(rec, 0, sizeof(*rec));
	if (!index)
		return -1;
	/* compact the table in place, sorted by module pc */
	for (size_t i = 0; i < r->counts.cap; i++)
		if (e[i].used)
			e[n++] = e[i];
	if (n) /* qsort(NULL, 0) is undefined */
		qsort(e, n, sizeof(*e), compare_counts);
	n_used = number_modules(r, e, n, index);
	r->n_used = n_used;
	if (read_head(r, index, n_used, true, rec) && read_head(r, index, n_used, false, rec)) {
		free(index);
		return -1;
	}
	rec->samples = calloc(n ? n : 1, sizeof(*rec->samples));
	rec->accesses = calloc(n ? n : 1, sizeof(*rec->accesses));
	if (!rec->samples || !rec->accesses) {
		free(index);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t pc = LAYOUT_MODULE_PC(index[LAYOUT_PC_MODULE(e[i].key.pc)],
					       LAYOUT_PC_ADDRESS(e[i].key.pc));

		if (e[i].key.flags & 2u)
			rec->accesses[rec->n_accesses++] =
			    (struct layout_access){.pc = pc,
						   .addr = e[i].key.addr,
						   .count = e[i].count,
						   .tid = e[i].key.tid,
						   .write = e[i].key.flags & 1u};
		else
			rec->samples[rec->n_samples++] = (struct layout_sample){
			    .pc = pc, .count = e[i].count, .tid = e[i].key.tid};
	}
	if (fill_chains(r, index, rec)) {
		free(index);
		return -1;
	}
	free(index);
	for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++)
		if (layout_record_add_stat(rec, stats[i].name, stats[i].value))
			return -1;
	return 0;
}

static void print_summary(const struct collector *c, const struct resolver *r)
{
	const char *who = c->o->who;

	fprintf(stderr,
		"%s: %llu samples (%s, %s): %llu at memory instructions, %llu without a memory "
		"operand, %llu whose data address the registers do not give\n",
		who, (unsigned long long)r->samples, source_name(c->source), c->event_name,
		(unsigned long long)r->memory, (unsigned long long)r->no_memory,
		(unsigned long long)r->address_unknown);
	fprintf(stderr,
		"%s: static part (structs, references, blocks) of %zu of the %zu modules "
		"sampled\n",
		who, r->static_modules, r->n_used);
	if (c->cpu_wide)
		fprintf(stderr,
			"%s: one event per CPU (--per-task for per-thread events): %llu samples "
			"of other processes left out\n",
			who, (unsigned long long)r->others);
	if (r->outside || r->unreadable)
		fprintf(stderr,
			"%s: %llu samples outside known code (vdso, JIT), %llu in code "
			"that could not be read\n",
			who, (unsigned long long)r->outside, (unsigned long long)r->unreadable);
	if (c->lost || c->throttled || c->malformed)
		fprintf(stderr,
			"%s: warning: %llu samples lost (ring buffer full: raise --mmap-pages or "
			"lower the rate), throttled %llu times, %llu malformed records\n",
			who, (unsigned long long)c->lost, (unsigned long long)c->throttled,
			(unsigned long long)c->malformed);
}

/* ------------------------------------------------------------ the whole */

static int choose_source(struct collector *c, struct perf_event_attr *a, size_t *n_attrs)
{
	const struct layout_collect_options *o = c->o;
	char why[600];

	if (o->source == LAYOUT_SOURCE_INSTR) {
		fprintf(
		    stderr,
		    "%s: --source=instr: programs built with `lever cc --layout` are not in this "
		    "build yet\n",
		    o->who);
		return -1;
	}
	if (o->source == LAYOUT_SOURCE_PMU) {
		if (pmu_attrs(c, a, n_attrs, why, sizeof(why)) == 0 &&
		    self_test(&a[0], why, sizeof(why)) == 0 &&
		    (*n_attrs < 2 || self_test(&a[1], why, sizeof(why)) == 0)) {
			c->source = LAYOUT_SOURCE_PMU;
			return 0;
		}
		if (o->source_given) {
			fprintf(stderr, "%s: --source=pmu: %s\n", o->who, why);
			return -1;
		}
		fprintf(stderr, "%s: no PMU memory sampling here (%s); using --source=clock\n",
			o->who, why);
	}
	clock_attr(c, a);
	*n_attrs = 1;
	c->source = LAYOUT_SOURCE_CLOCK;
	/* the attribution is part of what the samples mean: merge refuses to mix them */
	c->event_name = o->skid == LAYOUT_SKID_PREVIOUS ? "cpu-clock" : "cpu-clock:no-skid";
	if (self_test(&a[0], why, sizeof(why))) {
		fprintf(stderr, "%s: --source=clock: %s\n", o->who, why);
		return -1;
	}
	return 0;
}

static void free_resolver(struct resolver *r)
{
	for (size_t i = 0; i < r->n_modules; i++)
		layout_code_free(r->modules[i].code);
	free(r->modules);
	free(r->maps);
	free(r->counts.e);
	free(r->chains.e);
	free(r->chains.pool);
	free(r->tree);
	layout_decoder_free(r->dec);
}

int layout_collect(const struct layout_collect_options *o, FILE *out, int *wait_status)
{
	struct collector c = {.o = o, .self_pid = (uint32_t)getpid()};
	struct resolver r = {.c = &c};
	struct layout_record rec;
	struct perf_event_attr attrs[2];
	char resolved[PATH_MAX], program[PATH_MAX];
	size_t n_attrs = 0;
	int go_fd = -1, rc = -1, err;
	pid_t child;

	err = launch_resolve_program(o->argv[0], resolved, sizeof(resolved));
	if (err) {
		fprintf(stderr, "%s: %s: %s\n", o->who, o->argv[0], strerror(-err));
		/* as env(1) and lever's other launchers say it */
		return err == -ENOENT ? LAUNCH_EXIT_NOT_FOUND : LAUNCH_EXIT_CANNOT_EXEC;
	}
	if (!realpath(resolved, program))
		str_copy(program, resolved, sizeof(program));
	r.program = program;
	if (choose_source(&c, attrs, &n_attrs))
		return -1;
	if (!o->system_wide && !o->per_task && c.source == LAYOUT_SOURCE_CLOCK)
		c.cpu_wide = cpu_wide_opens(&attrs[0]);
	c.scratch = malloc(1 << 16);
	string_table_init(&c.paths);
	r.dec = layout_decoder_new();
	if (!c.scratch || !r.dec) {
		fprintf(stderr, "%s: out of memory\n", o->who);
		goto out;
	}
	child = fork_waiting(o, &go_fd);
	if (child < 0) {
		fprintf(stderr, "%s: fork: %s\n", o->who, strerror(errno));
		goto out;
	}
	c.child = (uint32_t)child;
	if (open_events(&c, attrs, n_attrs, o->system_wide || c.cpu_wide ? -1 : child)) {
		close(go_fd); /* the child sees EOF and exits without running the program */
		waitpid(child, NULL, 0);
		goto out;
	}
	if (o->system_wide)
		synthesize_proc_maps(&c);
	if (run_and_drain(&c, child, go_fd, wait_status))
		goto out;
	close_events(&c);
	if (c.out_of_memory)
		fprintf(stderr, "%s: warning: out of memory while recording; counted as lost\n",
			o->who);
	resolve_all(&r);
	if (fill_record(&r, &rec)) {
		fprintf(stderr, "%s: cannot build the record (out of memory?)\n", o->who);
		layout_record_free(&rec);
		goto out;
	}
	print_summary(&c, &r);
	rc = layout_record_write(out, &rec);
	if (rc)
		fprintf(stderr, "%s: %s: write error\n", o->who, o->output_name);
	layout_record_free(&rec);
out:
	close_events(&c);
	free_resolver(&r);
	string_table_free(&c.paths);
	free(c.side);
	free(c.samples);
	free(c.frames);
	free(c.scratch);
	return rc;
}
