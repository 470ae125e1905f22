/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Planning `lever annotate record` (src/annotate/plan.c) and the runtime's
 * reading of the plan (src/annotate/runtime/plan.c, compiled in): symbol
 * resolution on the probe test programs (C names, globs, mangled and
 * demangled C++ names, the refusals), and a plan written by the analysis
 * side read back by the runtime, feature program bytes included; malformed
 * plans are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "annotate/annotate.h"
#include "annotate/runtime/runtime.h"

/* The runtime's message function, which plan.c uses: kept for the checks. */
static char last_msg[1024];

void ann_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	va_end(ap);
}

/* The interpreter's table of shared programs, which plan.c fills: kept for the checks. */
static const struct ann_program *shared_set;
static uint32_t n_shared_set;

void ann_features_set_shared(const struct ann_program *programs, uint32_t n)
{
	shared_set = programs;
	n_shared_set = n;
}

static const char *program(const char *name)
{
	static char path[4096];
	const char *dir = getenv("LEVER_TEST_BINARY_DIR");

	snprintf(path, sizeof(path), "%s/tests/programs/annotate/%s", dir ? dir : ".", name);
	return path;
}

static int add(struct annotate_plan *plan, const char *spec, char *err)
{
	return annotate_plan_add(plan, spec, err, 512);
}

static void c_names_and_globs(void **state)
{
	struct annotate_plan plan;
	char err[512];

	(void)state;
	assert_int_equal(annotate_plan_init(&plan, program("probe_calls"), err, sizeof(err)), 0);
	assert_int_equal(add(&plan, "fib", err), 1);
	assert_string_equal(plan.functions[0].display, "fib");
	assert_true(plan.functions[0].size > 0);
	/* a glob, and a function already planned is not planned twice */
	assert_int_equal(add(&plan, "fi*", err), 0);
	assert_int_equal(plan.n_functions, 1);
	assert_int_equal(add(&plan, "[lt]*", err), 2); /* leaf, tail */
	assert_int_equal(plan.n_functions, 3);
	assert_int_equal(add(&plan, "no_such_function", err), -ENOENT);
	assert_non_null(strstr(err, "no function matches 'no_such_function'"));
	assert_int_equal(add(&plan, "_start", err), -EPERM);
	assert_non_null(strstr(err, "not entered by a call"));
	/* a glob skips the start-up code instead */
	assert_true(add(&plan, "_*", err) == -ENOENT || plan.n_functions >= 3);
	for (size_t i = 0; i < plan.n_functions; i++)
		assert_string_not_equal(plan.functions[i].name, "_start");
	annotate_plan_free(&plan);
}

static void cxx_names(void **state)
{
	const char *specs[] = {"guard", "guard(int)", "_Z5guardi", "gua*"};
	struct annotate_plan plan;
	char err[512];

	(void)state;
	for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
		assert_int_equal(
		    annotate_plan_init(&plan, program("probe_exceptions"), err, sizeof(err)), 0);
		assert_int_equal(add(&plan, specs[k], err), 1);
		assert_string_equal(plan.functions[0].name, "_Z5guardi");
		assert_string_equal(plan.functions[0].display, "guard(int)");
		annotate_plan_free(&plan);
	}
	/* GCC's cold partition of outer is a FUNC symbol, never a probe */
	assert_int_equal(annotate_plan_init(&plan, program("probe_exceptions"), err, sizeof(err)),
			 0);
	assert_true(add(&plan, "outer*", err) >= 1);
	for (size_t i = 0; i < plan.n_functions; i++)
		assert_null(strstr(plan.functions[i].display, ".cold"));
	annotate_plan_free(&plan);
}

static void library_names(void **state)
{
	struct annotate_plan plan;
	char err[512], spec[4200];

	(void)state;
	assert_int_equal(annotate_plan_init(&plan, program("probe_dlopen"), err, sizeof(err)), 0);
	snprintf(spec, sizeof(spec), "%s:lib_work", program("libprobe_dl.so"));
	assert_int_equal(add(&plan, spec, err), 1);
	assert_int_equal(plan.n_modules, 2);
	assert_int_equal(plan.functions[0].module, 1);
	assert_non_null(strstr(plan.modules[1].path, "libprobe_dl.so"));
	assert_int_equal(add(&plan, "libno_such_library.so:f", err), -ENOENT);
	assert_non_null(strstr(err, "no library 'libno_such_library.so'"));
	annotate_plan_free(&plan);
}

static void write_and_read_back(void **state)
{
	struct ann_op ops[3] = {
	    {.code = 1, .size = 8, .index = 5, .imm = -1},
	    {.code = 7, .size = 4, .index = 0, .imm = 0x123456789abcdefll},
	    {.code = 2, .size = 1, .index = 1, .imm = 0},
	};
	struct annotate_plan plan;
	struct annotate_plan_settings s = {.record = "/tmp/some record",
					   .metrics = 5,
					   .rate_n = 100,
					   .period_ms = 5000,
					   .probe = "live"};
	struct ann_plan rt = {0};
	char err[512], path[] = "/tmp/lever-test-plan-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(annotate_plan_init(&plan, program("probe_calls"), err, sizeof(err)), 0);
	assert_int_equal(add(&plan, "fib", err), 1);
	assert_int_equal(add(&plan, "mix", err), 1);
	plan.functions[1].ops = malloc(sizeof(ops));
	memcpy(plan.functions[1].ops, ops, sizeof(ops));
	plan.functions[1].n_ops = 3;
	plan.functions[1].n_features = 2;
	/* one shared program (a unit's globals), written once before the functions */
	plan.shared = calloc(1, sizeof(*plan.shared));
	plan.shared[0].ops = malloc(2 * sizeof(struct ann_op));
	memcpy(plan.shared[0].ops, ops, 2 * sizeof(struct ann_op));
	plan.shared[0].n_ops = 2;
	plan.n_shared = 1;
	assert_int_equal(annotate_plan_write(&plan, &s, path, err, sizeof(err)), 0);

	assert_int_equal(ann_plan_load(path, &rt), 0);
	assert_string_equal(rt.record, "/tmp/some record");
	assert_int_equal(rt.metrics, 5);
	assert_int_equal(rt.rate_n, 100);
	assert_int_equal(rt.period_ns, 5000000000ull);
	assert_int_equal(rt.probe, ANN_PROBE_LIVE);
	assert_int_equal(rt.n_modules, 1);
	assert_string_equal(rt.modules[0].path, plan.modules[0].path);
	assert_string_equal(rt.modules[0].build_id, plan.modules[0].build_id);
	assert_int_equal(rt.n_probes, 2);
	assert_int_equal(rt.probes[0].addr, plan.functions[0].addr);
	assert_int_equal(rt.probes[0].size, plan.functions[0].size);
	assert_int_equal(rt.probes[0].n_ops, 0);
	assert_string_equal(rt.probes[1].name, "mix");
	assert_int_equal(rt.probes[1].symbol, 1);
	assert_int_equal(rt.probes[1].n_features, 2);
	assert_int_equal(rt.probes[1].n_ops, 3);
	assert_memory_equal(rt.probes[1].ops, ops, sizeof(ops));
	assert_int_equal(rt.n_shared, 1);
	assert_int_equal(rt.shared[0].n_ops, 2);
	assert_memory_equal(rt.shared[0].ops, ops, 2 * sizeof(struct ann_op));
	assert_ptr_equal(shared_set, rt.shared);
	assert_int_equal(n_shared_set, 1);
	ann_plan_free(&rt);
	annotate_plan_free(&plan);
	unlink(path);
}

static int load_text(const char *text)
{
	char path[] = "/tmp/lever-test-plan-XXXXXX";
	int fd = mkstemp(path), rc;
	struct ann_plan rt = {0};

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	rc = ann_plan_load(path, &rt);
	ann_plan_free(&rt);
	unlink(path);
	return rc;
}

static void malformed_plans(void **state)
{
	(void)state;
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nprobe auto\n"), 0);
	assert_int_equal(load_text("lever-annotate-plan 1\nrecord /r\n"), -1);
	assert_non_null(strstr(last_msg, "not a version 3 annotate plan"));
	assert_int_equal(load_text("lever-annotate-plan 3\nprobe auto\n"), -1);
	assert_non_null(strstr(last_msg, "names no record"));
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nprobe fast\n"), -1);
	assert_non_null(strstr(last_msg, ":3: malformed"));
	/* a function of a module not declared */
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nfunction 0 0 10 5 0 f\n"),
			 -1);
	/* ops of the wrong length, and ops before any function */
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nmodule 0 - /bin/true\n"
				   "function 0 0 10 5 1 f\nops 1 00ff\n"),
			 -1);
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nops 0 \n"), -1);
	/* shared programs: numbered from 0, in order, before the functions */
	assert_int_equal(
	    load_text("lever-annotate-plan 3\nrecord /r\nglobals 0 0 \nglobals 1 0 \n"), 0);
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nglobals 1 0 \n"), -1);
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nglobals 0 1 00\n"), -1);
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nmodule 0 - /bin/true\n"
				   "function 0 0 10 5 0 f\nglobals 0 0 \n"),
			 -1);
	/* branches: after a function, inside it, a known condition */
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nmodule 0 - /bin/true\n"
				   "function 0 0 10 20 0 f\nbranch 6 2 14 12\nbranch 1a 6 4 -26\n"),
			 0);
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nbranch 6 2 14 12\n"), -1);
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nmodule 0 - /bin/true\n"
				   "function 0 0 10 20 0 f\nbranch 1f 2 14 12\n"),
			 -1); /* runs past the function's end */
	assert_int_equal(load_text("lever-annotate-plan 3\nrecord /r\nmodule 0 - /bin/true\n"
				   "function 0 0 10 20 0 f\nbranch 6 2 21 12\n"),
			 -1); /* no such condition */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(c_names_and_globs), cmocka_unit_test(cxx_names),
	    cmocka_unit_test(library_names),	 cmocka_unit_test(write_and_read_back),
	    cmocka_unit_test(malformed_plans),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
