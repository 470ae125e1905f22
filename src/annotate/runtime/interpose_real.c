/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Finding the functions the metric interposers wrap (spec/freud.md §5.3.3:
 * the seed hooked malloc and the pthread lock calls through Pin; we are a
 * preloaded library in front of the real ones).
 *
 * dlsym itself may allocate (its error buffer) or, in other C libraries,
 * take locks through the functions we wrap, so a per-thread flag marks a
 * lookup in progress: an interposer reached from inside it must not look up
 * again (interpose_malloc.c then serves the request from its bootstrap
 * buffer). The versioned lookup comes first because dlsym without a version
 * may return an old compatibility version (pthread_cond_wait@GLIBC_2.2.5
 * works on a different structure layout than the default one).
 */
#include <dlfcn.h>

#include "annotate/runtime/metrics_internal.h"

static ANN_TLS bool resolving;

bool ann_resolving(void)
{
	return resolving;
}

void *ann_real_symbol(const char *name, const char *version)
{
	void *p = NULL;

	if (resolving)
		return NULL;
	resolving = true;
	if (version)
		p = dlvsym(RTLD_NEXT, name, version);
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	resolving = false;
	return p;
}
