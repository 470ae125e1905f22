/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A stand-in for "some other LD_PRELOAD library": it interposes a few of the
 * functions lever interposes too, forwards them with dlsym(RTLD_NEXT), and
 * otherwise does nothing. If NOOP_PRELOAD_MARK names a file, it writes the
 * number of calls it forwarded there at exit, to prove it was in the chain.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_ulong forwarded;

__attribute__((visibility("default"))) int pthread_mutex_lock(pthread_mutex_t *m)
{
	static int (*next)(pthread_mutex_t *);

	if (!next)
		next = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
	atomic_fetch_add(&forwarded, 1);
	return next(m);
}

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
						     struct sigaction *old)
{
	static int (*next)(int, const struct sigaction *, struct sigaction *);

	if (!next)
		next = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(
		    RTLD_NEXT, "sigaction");
	atomic_fetch_add(&forwarded, 1);
	return next(sig, act, old);
}

__attribute__((destructor)) static void noop_preload_report(void)
{
	const char *path = getenv("NOOP_PRELOAD_MARK");
	char buf[64];
	int fd, n;

	if (!path || !*path || (fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644)) < 0)
		return;
	n = snprintf(buf, sizeof(buf), "%d %lu\n", (int)getpid(), atomic_load(&forwarded));
	if (write(fd, buf, (size_t)n) < 0)
		n = 0;
	close(fd);
}
