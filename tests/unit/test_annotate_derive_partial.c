/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * derive with features missing in part of the calls (src/annotate/derive.c
 * pre-processing): the seed's A.18 shape, where each dynamic type has a
 * field the other lacks, so each field is missing ('?') in the other type's
 * calls. The split on the dynamic type must find, per part, a linear model
 * of that part's own field (spec §6.6 A.18), not drop both fields because
 * neither is complete over all calls.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "annotate/annotate.h"

/* 80 calls alternating two types: mem = 2000 - p for type 1, p2 for type 2. */
static char *a18_record(void)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	uint64_t x = 12345;

	len += (size_t)snprintf(buf + len, cap - len,
				"lever-annotate-record 1\nS 0 f(const base *c)\n"
				"F 0 0 dynamic-type typeid(*c)\nF 0 1 integer c->p\n"
				"F 0 2 integer c->p2\n");
	for (int i = 0; i < 80; i++) {
		int v;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		v = (int)((x >> 33) % 1987);
		if (i % 2)
			len += (size_t)snprintf(buf + len, cap - len,
						"C 0 %d 0 mem=%d 0=111 1=%d 2=?\n", i + 1, 2000 - v,
						v);
		else
			len += (size_t)snprintf(buf + len, cap - len,
						"C 0 %d 0 mem=%d 0=222 1=? 2=%d\n", i + 1, v, v);
	}
	return buf;
}

static void test_a18_fields_of_one_type(void **state)
{
	struct annotate_params par;
	struct annotate_record rec;
	struct annotate_derivation d;
	char err[256], *text = a18_record();
	bool seen_p = false, seen_p2 = false;

	(void)state;
	assert_int_equal(
	    annotate_record_read_buffer("a18", text, strlen(text), &rec, err, sizeof(err)), 0);
	annotate_params_default(&par);
	assert_int_equal(annotate_derive(&rec.symbols[0], ANNOTATE_MEM, &par, &d), 0);
	assert_int_equal(d.n_leaves, 2);
	for (size_t l = 0; l < d.n_leaves; l++) {
		const struct annotate_model *m = &d.leaves[l].model;

		assert_int_equal(m->cls, ANNOTATE_LINEAR);
		assert_int_equal(m->n_terms, 1);
		assert_int_equal(d.leaves[l].n_atoms, 1);
		seen_p |= strcmp(d.names[m->terms[0].feature[0]], "c.p") == 0 &&
			  fabs(m->terms[0].coef + 1) < 1e-9;
		seen_p2 |= strcmp(d.names[m->terms[0].feature[0]], "c.p2") == 0 &&
			   fabs(m->terms[0].coef - 1) < 1e-9;
	}
	assert_true(seen_p && seen_p2);
	annotate_derivation_free(&d);
	annotate_record_free(&rec);
	free(text);
}

/* A feature present in too few calls to fit anything is still dropped. */
static void test_nearly_absent_feature_dropped(void **state)
{
	const char text[] =
	    "lever-annotate-record 1\nS 0 g\nF 0 0 integer n\nF 0 1 integer rare\n"
	    "C 0 1 0 mem=10 0=1 1=5\nC 0 2 0 mem=20 0=2 1=?\nC 0 3 0 mem=30 0=3 1=?\n"
	    "C 0 4 0 mem=40 0=4 1=?\nC 0 5 0 mem=50 0=5 1=?\nC 0 6 0 mem=60 0=6 1=?\n"
	    "C 0 7 0 mem=70 0=7 1=?\nC 0 8 0 mem=80 0=8 1=?\n";
	struct annotate_params par;
	struct annotate_record rec;
	struct annotate_derivation d;
	char err[256];

	(void)state;
	assert_int_equal(
	    annotate_record_read_buffer("g", text, strlen(text), &rec, err, sizeof(err)), 0);
	annotate_params_default(&par);
	assert_int_equal(annotate_derive(&rec.symbols[0], ANNOTATE_MEM, &par, &d), 0);
	assert_int_equal(d.n_regressors, 1);
	assert_int_equal(d.n_leaves, 1);
	assert_int_equal(d.leaves[0].model.cls, ANNOTATE_LINEAR);
	annotate_derivation_free(&d);
	annotate_record_free(&rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a18_fields_of_one_type),
	    cmocka_unit_test(test_nearly_absent_feature_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
