/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever-cc-stub.o: `lever cc` links this object into every executable and
 * shared object it links. Its constructor hands the module's stack pad slots
 * (runtime/stack_pads.h) to the stabilizer runtime when the runtime is loaded
 * (`lever stabilize`), and its destructor takes them back before the module
 * is unmapped (dlclose, exit). Without the runtime it does nothing: the slots
 * stay 0 and the program runs unpadded.
 *
 * The section's name is spelled out in the two symbols below; it must stay
 * STACK_PADS_SECTION.
 */
#include <dlfcn.h>

#include "stabilizer/runtime/stack_pads.h"

extern unsigned char __start_lever_stack_pads[] __attribute__((weak, visibility("hidden")));
extern unsigned char __stop_lever_stack_pads[] __attribute__((weak, visibility("hidden")));

typedef void (*pads_register_fn)(unsigned char *slots, unsigned long count);
typedef void (*pads_unregister_fn)(unsigned char *slots);

static pads_unregister_fn unregister_pads;

static void *runtime_function(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

__attribute__((constructor)) static void lever_cc_register_stack_pads(void)
{
	unsigned char *start = __start_lever_stack_pads, *stop = __stop_lever_stack_pads;
	pads_register_fn register_pads;

	if (!start || stop <= start)
		return;
	register_pads = (pads_register_fn)runtime_function(STACK_PADS_REGISTER_FN);
	if (!register_pads)
		return;
	unregister_pads = (pads_unregister_fn)runtime_function(STACK_PADS_UNREGISTER_FN);
	register_pads(start, (unsigned long)(stop - start));
}

__attribute__((destructor)) static void lever_cc_unregister_stack_pads(void)
{
	if (unregister_pads)
		unregister_pads(__start_lever_stack_pads);
}
