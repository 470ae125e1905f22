/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The entry of liblever-stabilizer-code.so (stabilizer.h): the code part is
 * a library of its own so that only a run with code randomization maps
 * libelf, libdw and libgcc_s. liblever-stabilizer.so opens it from its
 * constructor when the part is on and calls lever_stabilizer_code_attach,
 * which gives this library the configuration init.c read (code.c reads
 * stabilizer_cfg, its own copy here) and init.c's warn-once function, and
 * returns the part's hooks. The start-up is init.c's as before: the attach
 * only hands things over, start runs the part.
 */
#include <stddef.h>

#include "stabilizer/runtime/code.h"
#include "stabilizer/runtime/stabilizer.h"

static bool (*core_warn_once)(const char *part);

/*
 * stabilizer_should_warn's warn-once in this library: init.c's, which keeps
 * the record of the warnings given in the environment for the whole run.
 * Without it (the test driver, which links code*.c alone) every warning is
 * printed.
 */
bool stabilizer_warn_once(const char *part)
{
	return !core_warn_once || core_warn_once(part);
}

__attribute__((visibility("default"))) void
lever_stabilizer_code_attach(const struct stabilizer_config *cfg,
			     bool (*warn_once)(const char *part),
			     struct stabilizer_code_hooks *hooks)
{
	stabilizer_cfg = *cfg;
	core_warn_once = warn_once;
	hooks->start = code_randomizer_start;
	hooks->rerandomize = code_randomizer_rerandomize;
}

/* The prototype the caller uses (a mismatch fails the build here). */
static stabilizer_code_attach_fn *const attach_has_the_contract_type __attribute__((unused)) =
    lever_stabilizer_code_attach;
