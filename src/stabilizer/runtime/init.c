/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Start-up of liblever-stabilizer.so: read the LEVER_STABILIZE_* settings
 * that `lever stabilize` put in the environment (stabilizer.h), derive one
 * random stream per part from the seed, start the enabled parts, and unless
 * one_time is set, call the parts' re-randomize hooks every interval from one
 * thread with every signal blocked (so it never runs the program's handlers).
 *
 * The heap needs the settings first: its first malloc can come before this
 * constructor, so stabilizer_config_load() works at any time, once, without
 * allocating, and reads /proc/self/environ if libc has not set environ yet.
 *
 * Processes:
 *  - exec'd children inherit LD_PRELOAD and the settings, so they run under
 *    the stabilizer too; this constructor hands them a seed derived from
 *    this process's (LEVER_STABILIZE_SEED is rewritten), so a child's layout
 *    differs from its parent's yet the whole tree is reproducible from the
 *    root seed. Siblings exec'd by one process share their seed.
 *  - forked children keep the parent's layout (they share its memory image)
 *    and the heap switches to random streams of its own, so parent and child
 *    allocate differently from the fork on; the re-randomization thread is
 *    started again in the child, as fork does not copy threads.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "stabilizer/runtime/stabilizer.h"

extern char **environ;

struct stabilizer_config stabilizer_cfg;

static _Atomic int config_state; /* 0 not read, 1 reading, 2 read */
static bool seed_given;
static bool code_running, stack_running;
static struct stabilizer_code_hooks code_hooks; /* from the code library */
static _Atomic bool thread_running;

/* ------------------------------------------------------------ environment */

/* NAME's value from /proc/self/environ (raw system calls, no allocation). */
static bool proc_environ_lookup(const char *name, char *out, size_t size)
{
	size_t name_len = strlen(name), pos = 0, n = 0;
	bool candidate = true, found = false;
	char buf[1024];
	ssize_t got;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/environ", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (!found && (got = syscall(SYS_read, fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < got; i++) {
			char ch = buf[i];

			if (pos > name_len && candidate) { /* copying the value */
				if (ch == '\0') {
					found = true;
					break;
				}
				if (n + 1 < size)
					out[n++] = ch;
			} else if (ch == '\0') {
				pos = 0;
				candidate = true;
				continue;
			} else if (candidate) {
				candidate = pos < name_len ? ch == name[pos] : ch == '=';
			}
			pos++;
		}
	}
	syscall(SYS_close, fd);
	if (found && size)
		out[n] = '\0';
	return found;
}

static bool env_lookup(const char *name, char *out, size_t size)
{
	const char *v;

	if (!environ)
		return proc_environ_lookup(name, out, size);
	v = getenv(name);
	if (!v)
		return false;
	str_copy(out, v, size);
	return true;
}

static bool env_flag(const char *name)
{
	char v[8];

	return env_lookup(name, v, sizeof(v)) && strcmp(v, "1") == 0;
}

static bool env_u64(const char *name, uint64_t *out)
{
	char v[32];

	return env_lookup(name, v, sizeof(v)) && parse_u64_range(v, 0, UINT64_MAX, out);
}

static void read_config(struct stabilizer_config *c)
{
	uint64_t v;

	c->code = env_flag(STABILIZE_ENV_CODE);
	c->stack = env_flag(STABILIZE_ENV_STACK);
	c->heap = env_flag(STABILIZE_ENV_HEAP);
	c->one_time = env_flag(STABILIZE_ENV_ONE_TIME);
	c->interval_ns = STABILIZE_DEFAULT_INTERVAL_NS;
	if (env_u64(STABILIZE_ENV_INTERVAL, &v) && v)
		c->interval_ns = v;
	c->verbose = env_u64(STABILIZE_ENV_VERBOSE, &v) ? (int)(v > 2 ? 2 : v) : 0;
	seed_given = env_u64(STABILIZE_ENV_SEED, &c->seed);
	if (!seed_given)
		c->seed = time_realtime_ns() ^ ((uint64_t)syscall(SYS_getpid) << 32);
}

void stabilizer_config_load(void)
{
	int expected = 0;

	if (atomic_load_explicit(&config_state, memory_order_acquire) == 2)
		return;
	if (atomic_compare_exchange_strong(&config_state, &expected, 1)) {
		read_config(&stabilizer_cfg);
		atomic_store_explicit(&config_state, 2, memory_order_release);
		return;
	}
	while (atomic_load_explicit(&config_state, memory_order_acquire) != 2)
		sched_yield();
}

uint64_t stabilizer_stream_seed(enum stabilizer_stream stream)
{
	struct rng r;

	stabilizer_config_load();
	rng_seed(&r, stabilizer_cfg.seed ^ (0xd1b54a32d192ed03ULL * (uint64_t)stream));
	return rng_next(&r);
}

void stabilizer_rng_init(struct rng *r, enum stabilizer_stream stream)
{
	rng_seed(r, stabilizer_stream_seed(stream));
}

/* ------------------------------------------------------------ re-randomization */

static void *rerandomize_loop(void *arg)
{
	(void)arg;
	for (;;) {
		time_sleep_ns(stabilizer_cfg.interval_ns);
		if (code_running)
			code_hooks.rerandomize();
		if (stack_running)
			stack_pads_rerandomize();
	}
	return NULL;
}

/* Detached, with every signal blocked: signals stay with the program's threads. */
static void start_rerandomizer(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t thread;
	int err;

	if (pthread_attr_init(&attr))
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&thread, &attr, rerandomize_loop, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		fd_printf(2,
			  "lever stabilize: cannot start the re-randomization thread (%s); the "
			  "layout is randomized once\n",
			  strerror(err));
		return;
	}
	atomic_store(&thread_running, true);
}

static void after_fork_in_child(void)
{
	if (atomic_load(&thread_running)) {
		atomic_store(&thread_running, false);
		start_rerandomizer();
	}
}

/* ------------------------------------------------------------ start-up */

/*
 * A part whose hooks this build lacks is reported once per process tree:
 * its setting is turned off for the exec'd children, which load the same
 * library and would only repeat the line.
 */
/* Is part one of the comma-separated words of list? */
static bool list_has_word(const char *list, const char *part)
{
	size_t n = strlen(part);

	for (const char *p = list; (p = strstr(p, part)); p++)
		if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

bool stabilizer_warn_once(const char *part)
{
	const char *warned = getenv(STABILIZE_ENV_WARNED);
	char list[128];

	if (stabilizer_cfg.verbose)
		return true;
	if (warned && list_has_word(warned, part))
		return false;
	fmt_buffer(list, sizeof(list), "%s%s%s", warned ? warned : "", warned && *warned ? "," : "",
		   part);
	setenv(STABILIZE_ENV_WARNED, list, 1);
	return true;
}

static bool start_part(bool wanted, const char *what, const char *env, int (*start)(void),
		       void (*rerandomize)(void))
{
	if (!wanted)
		return false;
	if (!start || !rerandomize) {
		fd_printf(2, "lever stabilize: %s randomization is not available in this build\n",
			  what);
		setenv(env, "0", 1);
		return false;
	}
	return start() == 0;
}

/*
 * The code part's library (stabilizer.h), from the directory this library
 * was loaded from: fills code_hooks, or says why not and returns false.
 * Opened RTLD_LOCAL, so that neither it nor libelf and libdw join the
 * program's symbol scope, and never closed.
 */
static bool load_code_part(void)
{
	stabilizer_code_attach_fn *attach;
	char path[4096];
	const char *slash;
	Dl_info self;
	void *lib;

	if (dladdr((void *)load_code_part, &self) && self.dli_fname &&
	    (slash = strrchr(self.dli_fname, '/')) &&
	    (size_t)(slash + 1 - self.dli_fname) + sizeof(STABILIZER_CODE_LIBRARY) <=
		sizeof(path)) {
		size_t dir = (size_t)(slash + 1 - self.dli_fname);

		memcpy(path, self.dli_fname, dir);
		memcpy(path + dir, STABILIZER_CODE_LIBRARY, sizeof(STABILIZER_CODE_LIBRARY));
	} else {
		str_copy(path, STABILIZER_CODE_LIBRARY, sizeof(path)); /* the loader's search */
	}
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	attach = lib ? (stabilizer_code_attach_fn *)dlsym(lib, STABILIZER_CODE_ATTACH) : NULL;
	if (!attach) {
		fd_printf(2,
			  "lever stabilize: code randomization is not available in this build "
			  "(%s)\n",
			  lib ? "its library has no entry point" : dlerror());
		return false;
	}
	attach(&stabilizer_cfg, stabilizer_warn_once, &code_hooks);
	return code_hooks.start && code_hooks.rerandomize;
}

static bool start_code_part(void)
{
	if (!stabilizer_cfg.code)
		return false;
	if (!load_code_part()) {
		setenv(STABILIZE_ENV_CODE, "0", 1);
		return false;
	}
	return code_hooks.start() == 0;
}

/* Exec'd children get their own seed, derived from ours. */
static void pass_seed_to_children(void)
{
	char seed[24];

	fmt_buffer(seed, sizeof(seed), "%llu",
		   (unsigned long long)stabilizer_stream_seed(STABILIZER_STREAM_CHILDREN));
	setenv(STABILIZE_ENV_SEED, seed, 1);
}

static void report(bool heap_running)
{
	const struct stabilizer_config *c = &stabilizer_cfg;
	char period[48];

	if (!(code_running || stack_running))
		str_copy(period, "no periodic re-randomization", sizeof(period));
	else if (c->one_time)
		str_copy(period, "code and stack randomized once", sizeof(period));
	else
		fmt_buffer(period, sizeof(period), "re-randomized every %llu ms",
			   (unsigned long long)(c->interval_ns / NSEC_PER_MSEC));
	fd_printf(2, "lever stabilize: pid %d seed %llu%s: heap %s, code %s, stack %s; %s\n",
		  (int)getpid(), (unsigned long long)c->seed, seed_given ? "" : " (random)",
		  heap_running ? "shuffled (N=256 per size class)" : "off",
		  code_running ? "on" : "off", stack_running ? "on" : "off", period);
}

__attribute__((constructor)) static void stabilizer_init(void)
{
	bool heap_running;

	stabilizer_config_load();
	if (!stabilizer_cfg.heap && !stabilizer_cfg.code && !stabilizer_cfg.stack)
		return;
	heap_running = stabilizer_cfg.heap && heap_start() == 0;
	code_running = start_code_part();
	stack_running = start_part(stabilizer_cfg.stack, "stack", STABILIZE_ENV_STACK,
				   stack_pads_start, stack_pads_rerandomize);
	if (!stabilizer_cfg.one_time && (code_running || stack_running)) {
		start_rerandomizer();
		pthread_atfork(NULL, NULL, after_fork_in_child);
	}
	pass_seed_to_children();
	if (stabilizer_cfg.verbose)
		report(heap_running);
}
