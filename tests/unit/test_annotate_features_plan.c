/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The feature planner and the interpreter joined, without the probes (issue
 * 15, spec §4.2.3): annotate_plan_features() plans every function of the
 * test programs tests/programs/annotate/features_{c.c,cpp.cc} (built with gcc
 * and clang-14, -O0 and -O2, DWARF 4 and 5); the program captures each
 * function's entry registers with its thunk, runs the plan with the runtime's
 * interpreter and prints the values, and this test checks every one against
 * the value the program passed, by the feature's name, which must read as
 * the program's expression. NULL, freed and unmapped pointers must give
 * missing values. Also: the plan cache (hit, corrupt file ignored and
 * rewritten), a binary without debug information, an unknown function.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "annotate/annotate.h"
#include "annotate/runtime/features.h"
#include "annotate/runtime/features_ops.h"

struct fn {
	const char *key, *symbol;
};

static const struct fn c_functions[] = {{"f_int", "f_int"},	    {"f_int_ptr", "f_int_ptr"},
					{"f_float", "f_float"},	    {"f_many", "f_many"},
					{"f_charptr", "f_charptr"}, {"f_struct", "f_struct"},
					{"f_small", "f_small"},	    {"f_pair", "f_pair"},
					{"f_mixed", "f_mixed"},	    {"f_big", "f_big"},
					{"f_enum", "f_enum"},	    {"f_sret", "f_sret"},
					{"f_global", "f_global"},   {"f_split", "f_split"},
					{"f_complex", "f_complex"}, {NULL, NULL}};

static const struct fn cpp_functions[] = {
    {"f_vector", "f_vector"},
    {"f_vector_ref", "f_vector_ref"},
    {"f_list", "f_list"},
    {"f_map", "f_map"},
    {"f_string", "f_string"},
    {"f_string_val", "f_string_val"},
    {"f_poly", "f_poly(abstract_class const*)"},
    {"f_poly_ref", "_Z10f_poly_refRK14abstract_class"},
    {"f_class", "f_class"},
    {"basic_class_get", "_ZNK11basic_class3getEi"},
    {NULL, NULL},
};

struct expect {
	const char *label, *expr;
	double value;	  /* NAN: must be missing */
	const char *type; /* dynamic-type features: the typeinfo name */
};

static const struct expect c_expect[] = {
    {"int", "t", 42, NULL},
    {"int_ptr", "*t", -3, NULL},
    {"int_ptr_null", "*t", NAN, NULL},
    {"float", "t", 2.5, NULL},
    {"many", "a", 1, NULL},
    {"many", "b", 2.5, NULL},
    {"many", "c", 3, NULL},
    {"many", "d", 4.5, NULL},
    {"many", "e", 200, NULL},
    {"many", "f", -6, NULL},
    {"many", "g", 'x', NULL},
    {"many", "h", 8, NULL},
    {"many", "i", 9, NULL}, /* the 7th integer: on the stack */
    {"many", "j", 10.5, NULL},
    {"charptr", "strlen(str)", 5, NULL},
    {"charptr_null", "strlen(str)", NAN, NULL},
    {"charptr_freed", "strlen(str)", NAN, NULL},
    {"struct", "j->id", 7, NULL},
    {"struct", "j->kind", 7, NULL},
    {"struct", "j->items->len", 3, NULL},
    {"struct", "j->items->weight", 0.75, NULL},
    {"struct", "strlen(j->name)", 4, NULL},
    {"struct", "j->flags", 200, NULL},
    {"struct", "j->urgent", 1, NULL},
    {"struct", "countof(j->arr)", 4, NULL},
    {"struct", "sum(j->arr)", 10, NULL},
    {"struct", "j->ratio", 0.5, NULL},
    {"struct", "j->end - j->begin", 5, NULL},
    {"struct_no_items", "j->id", 7, NULL},
    {"struct_no_items", "j->items->len", NAN, NULL},
    {"struct_no_items", "strlen(j->name)", 4, NULL},
    {"struct_unmapped", "j->id", NAN, NULL},
    {"struct_unmapped", "j->items->len", NAN, NULL},
    {"small", "s.a", 5, NULL},
    {"small", "s.b", 1.5, NULL},
    {"pair", "p.x", 1.25, NULL},
    {"pair", "p.y", -2.5, NULL},
    {"mixed", "m.n", -11, NULL},
    {"mixed", "m.d", 3.25, NULL},
    {"big", "countof(b.v)", 3, NULL},
    {"big", "sum(b.v)", 6, NULL},
    {"big", "b.tail", 4, NULL},
    {"big", "after", 99, NULL},
    {"enum", "k", -2, NULL},
    {"enum", "flag", 1, NULL},
    {"sret", "x", 13, NULL},
    {"global", "global_counter", 17, NULL},
    {"global", "global_scale", 2.5, NULL},
    {"global", "file_static", -9, NULL},
    {"split", "t", 5, NULL},	/* a function in a hot and a cold part */
    {"complex", "a", 44, NULL}, /* after complex numbers (SSE class) */
    {"complex", "b", 5.5, NULL},
    {"int", "global_counter", 17, NULL}, /* every function of the unit sees them */
    {NULL, NULL, 0, NULL},
};

static const struct expect cpp_expect[] = {
    {"vector", "t->size()", 6, NULL},
    {"vector_ref", "v.size()", 3, NULL},
    {"list", "l.size()", 4, NULL},
    {"map", "m.size()", 2, NULL},
    {"string", "s.length()", 40, NULL},
    {"string_val", "s.length()", 3, NULL},
    {"poly_derived", "typeid(*c)", 0, "13derived_class"},
    {"poly_derived", "c->base_value", 1, NULL},
    {"poly_derived", "c->private_value", 21, NULL},
    {"poly_derived", "c->extra", NAN, NULL},
    {"poly_grand", "typeid(*c)", 0, "13grand_derived"},
    {"poly_grand", "c->private_value", 5, NULL},
    {"poly_grand", "c->extra", 6, NULL},
    {"poly_multi", "typeid(*c)", 0, "5multi"},
    {"poly_multi", "c->m_value", 71, NULL}, /* through offset-to-top */
    {"poly_multi", "c->other", 70, NULL},
    {"poly_multi", "c->private_value", NAN, NULL},
    {"poly_ns", "typeid(*c)", 0, "N8whatever9nsderivedE"},
    {"poly_ns", "c->w", 0.5, NULL},
    {"poly_null", "typeid(*c)", NAN, NULL},
    {"poly_null", "c->base_value", NAN, NULL},
    {"poly_ref", "typeid(c)", 0, "13derived_class"},
    {"poly_ref", "c.base_value", 1, NULL},
    {"poly_ref", "c.private_value", 21, NULL},
    {"class", "bc->private_field", 33, NULL},
    {"method", "this->private_field", 33, NULL},
    {"method", "k", 4, NULL},
    {NULL, NULL, 0, NULL},
};

static char tmpdir[] = "/tmp/lever-features-XXXXXX";

static void plan_file_add(FILE *f, const char *key, const struct annotate_feature_plan *p)
{
	fprintf(f, "plan %s %u %u\n", key, p->n_ops, p->n_decls);
	for (uint32_t i = 0; i < p->n_ops; i++)
		fprintf(f, "op %u %u %u %lld\n", p->ops[i].code, p->ops[i].size, p->ops[i].index,
			(long long)p->ops[i].imm);
	for (uint32_t i = 0; i < p->n_decls; i++)
		fprintf(f, "decl %s %s\n", annotate_feature_kind_name(p->decls[i].kind),
			p->decls[i].expr);
}

/* The line "value LABEL EXPR=VALUE" for label and expr, or NULL. */
static const char *find_value(char **lines, size_t n, const char *label, const char *expr)
{
	char prefix[512];

	snprintf(prefix, sizeof(prefix), "value %s %s=", label, expr);
	for (size_t i = 0; i < n; i++)
		if (strncmp(lines[i], prefix, strlen(prefix)) == 0)
			return lines[i] + strlen(prefix);
	return NULL;
}

static int check_program(const char *name, const struct fn *fns, const struct expect *ex)
{
	const char *bin_dir = getenv("LEVER_TEST_BINARY_DIR");
	char bin[4096], plan_path[4200], cmd[8600], line[4096];
	char *lines[2048];
	size_t n = 0;
	int failures = 0;
	FILE *f, *out;

	snprintf(bin, sizeof(bin), "%s/tests/programs/annotate/%s", bin_dir ? bin_dir : ".", name);
	snprintf(plan_path, sizeof(plan_path), "%s/%s.plan", tmpdir, name);
	f = fopen(plan_path, "w");
	assert_non_null(f);
	for (const struct fn *fn = fns; fn->key; fn++) {
		struct annotate_feature_plan p;
		char err[512];
		int rc = annotate_plan_features(bin, 0, fn->symbol, 3, 512, &p, err, sizeof(err));

		if (rc != 0) {
			print_error("%s: %s: %s\n", name, fn->symbol, err);
			failures++;
			continue;
		}
		plan_file_add(f, fn->key, &p);
		annotate_feature_plan_free(&p);
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' '%s'", bin, plan_path);
	out = popen(cmd, "r");
	assert_non_null(out);
	while (n < 2048 && fgets(line, sizeof(line), out)) {
		line[strcspn(line, "\n")] = 0;
		lines[n++] = strdup(line);
		if (strncmp(line, "value ", 6) != 0) {
			print_error("%s: %s\n", name, line);
			failures++;
		}
	}
	if (pclose(out) != 0) {
		print_error("%s: the program failed\n", name);
		failures++;
	}
	for (const struct expect *e = ex; e->label; e++) {
		const char *v = find_value(lines, n, e->label, e->expr);
		double want = e->type ? (double)ann_type_hash(e->type) : e->value;

		if (!v) {
			print_error("%s: %s: no feature named %s\n", name, e->label, e->expr);
			failures++;
		} else if (isnan(want) ? strcmp(v, "nan") != 0 : strtod(v, NULL) != want) {
			print_error("%s: %s: %s = %s, want %.17g\n", name, e->label, e->expr, v,
				    want);
			failures++;
		}
	}
	if (failures) {
		for (size_t i = 0; i < n; i++)
			print_message("  %s\n", lines[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	return failures;
}

static const char *const compilers[] = {"gcc", "clang"};
static const char *const opts[] = {"O0", "O2"};
static const int dwarfs[] = {4, 5};

static void every_variant(const char *lang, const struct fn *fns, const struct expect *ex)
{
	int failures = 0;

	for (int c = 0; c < 2; c++)
		for (int o = 0; o < 2; o++)
			for (int d = 0; d < 2; d++) {
				char name[128];

				snprintf(name, sizeof(name), "features-%s-%s-d%d-%s", lang,
					 compilers[c], dwarfs[d], opts[o]);
				failures += check_program(name, fns, ex);
			}
	assert_int_equal(failures, 0);
}

static void c_features_at_entry(void **state)
{
	every_variant("c", c_functions, c_expect);
}

static void cpp_features_at_entry(void **state)
{
	every_variant("cpp", cpp_functions, cpp_expect);
}

static bool same_plan(const struct annotate_feature_plan *a, const struct annotate_feature_plan *b)
{
	if (a->n_ops != b->n_ops || a->n_decls != b->n_decls ||
	    memcmp(a->ops, b->ops, a->n_ops * sizeof(struct ann_op)) != 0)
		return false;
	for (uint32_t i = 0; i < a->n_decls; i++)
		if (strcmp(a->decls[i].expr, b->decls[i].expr) != 0 ||
		    a->decls[i].kind != b->decls[i].kind)
			return false;
	return true;
}

/* The one cache file in the cache directory, or "" */
static void cache_file(char *out, size_t size)
{
	char dir[4200];
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s/cache/lever/annotate", tmpdir);
	out[0] = 0;
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".features"))
			snprintf(out, size, "%s/%s", dir, e->d_name);
	closedir(d);
}

static void plans_are_cached_by_build_id(void **state)
{
	const char *bin_dir = getenv("LEVER_TEST_BINARY_DIR");
	char bin[4096], cache[4096], cpath[8400], err[512];
	struct annotate_feature_plan a, b, c;
	FILE *f;

	snprintf(bin, sizeof(bin), "%s/tests/programs/annotate/features-c-gcc-d5-O2",
		 bin_dir ? bin_dir : ".");
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
	setenv("XDG_CACHE_HOME", cache, 1);
	assert_int_equal(annotate_plan_features(bin, 0, "f_struct", 3, 512, &a, err, sizeof(err)),
			 0);
	cache_file(cpath, sizeof(cpath));
	assert_true(cpath[0] != 0);
	assert_int_equal(annotate_plan_features(bin, 0, "f_struct", 3, 512, &b, err, sizeof(err)),
			 0);
	assert_true(same_plan(&a, &b));
	/* a corrupt cache file is ignored, and rewritten */
	f = fopen(cpath, "r+b");
	assert_non_null(f);
	fseek(f, 40, SEEK_SET);
	fputs("garbage", f);
	fclose(f);
	assert_int_equal(annotate_plan_features(bin, 0, "f_struct", 3, 512, &c, err, sizeof(err)),
			 0);
	assert_true(same_plan(&a, &c));
	annotate_feature_plan_free(&c);
	assert_int_equal(annotate_plan_features(bin, 0, "f_struct", 3, 512, &c, err, sizeof(err)),
			 0);
	assert_true(same_plan(&a, &c));
	/* a truncated one too */
	assert_int_equal(truncate(cpath, 20), 0);
	annotate_feature_plan_free(&c);
	assert_int_equal(annotate_plan_features(bin, 0, "f_struct", 3, 512, &c, err, sizeof(err)),
			 0);
	assert_true(same_plan(&a, &c));
	/* the limits are part of the key */
	annotate_feature_plan_free(&c);
	assert_int_equal(annotate_plan_features(bin, 0, "f_struct", 1, 512, &c, err, sizeof(err)),
			 0);
	assert_true(c.n_decls < a.n_decls);
	annotate_feature_plan_free(&a);
	annotate_feature_plan_free(&b);
	annotate_feature_plan_free(&c);
}

static bool has_decl(const struct annotate_feature_plan *p, const char *expr)
{
	for (uint32_t i = 0; i < p->n_decls; i++)
		if (strcmp(p->decls[i].expr, expr) == 0)
			return true;
	return false;
}

static void limits_and_errors(void **state)
{
	const char *bin_dir = getenv("LEVER_TEST_BINARY_DIR");
	char bin[4096], stripped[4200], cmd[9000], err[512];
	struct annotate_feature_plan p;

	snprintf(bin, sizeof(bin), "%s/tests/programs/annotate/features-c-gcc-d5-O2",
		 bin_dir ? bin_dir : ".");
	/* depth 1: j's own fields, not j->items->len */
	assert_int_equal(annotate_plan_features(bin, 0, "f_struct", 1, 512, &p, err, sizeof(err)),
			 0);
	assert_true(has_decl(&p, "j->id"));
	assert_false(has_decl(&p, "j->items->len"));
	assert_false(has_decl(&p, "strlen(j->name)"));
	annotate_feature_plan_free(&p);
	/* max_features is per variable */
	assert_int_equal(annotate_plan_features(bin, 0, "f_struct", 3, 2, &p, err, sizeof(err)), 0);
	assert_true(has_decl(&p, "j->id") && has_decl(&p, "j->kind"));
	assert_false(has_decl(&p, "j->items->len"));
	assert_true(has_decl(&p, "global_counter")); /* another variable */
	annotate_feature_plan_free(&p);
	/* by entry address */
	assert_int_equal(
	    annotate_plan_features(bin, 0, "nonexistent_function", 3, 512, &p, err, sizeof(err)),
	    -ENOENT);
	assert_non_null(strstr(err, "nonexistent_function"));
	/* no debug information: a clear error, once */
	snprintf(stripped, sizeof(stripped), "%s/stripped", tmpdir);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug '%s' '%s'", bin, stripped);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(
	    annotate_plan_features(stripped, 0, "f_struct", 3, 512, &p, err, sizeof(err)),
	    -ENODATA);
	assert_non_null(strstr(err, "no DWARF debug information"));
	assert_int_equal(
	    annotate_plan_features("/nonexistent", 0, "f", 3, 512, &p, err, sizeof(err)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(c_features_at_entry),
	    cmocka_unit_test(cpp_features_at_entry),
	    cmocka_unit_test(plans_are_cached_by_build_id),
	    cmocka_unit_test(limits_and_errors),
	};
	char cache[4096];
	int rc;

	if (!mkdtemp(tmpdir))
		return 1;
	/* never the user's own cache */
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
	setenv("XDG_CACHE_HOME", cache, 1);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cache, sizeof(cache), "rm -rf '%s'", tmpdir);
	if (system(cache) != 0)
		rc = rc ? rc : 1;
	return rc;
}
