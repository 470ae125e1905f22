/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Finding the functions we interpose. dlsym can itself call interposed
 * functions (it may allocate and take locks), so a per-thread guard makes a
 * nested lookup return NULL; callers then fall back to a raw syscall or fail
 * softly during start-up.
 */
#include <dlfcn.h>
#include <signal.h>

#include "causal/runtime/runtime.h"

static __thread int resolving __attribute__((tls_model("initial-exec")));

void *real_symbol(const char *name, const char *version)
{
	void *p;

	if (resolving)
		return NULL;
	resolving = 1;
	p = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	resolving = 0;
	return p;
}

/* Our own image, from the ELF header to the end of .bss (GNU ld defines both). */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char _end[] __attribute__((visibility("hidden")));

bool address_in_lever(const void *p)
{
	return (const char *)p >= __ehdr_start && (const char *)p < _end;
}

bool real_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
	    real_symbol("pthread_create", NULL);
	int (*set_mask)(int, const sigset_t *, sigset_t *) = real_symbol("pthread_sigmask", NULL);
	sigset_t all, old;
	bool ok;

	if (!create || !set_mask)
		return false;
	/* the new thread inherits a full mask */
	sigfillset(&all);
	set_mask(SIG_SETMASK, &all, &old);
	ok = create(thread, NULL, fn, arg) == 0;
	set_mask(SIG_SETMASK, &old, NULL);
	return ok;
}
