/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * derive's cross-validation rule (src/annotate/derive.c validate_leaf,
 * doc/annotate.md derive step 6; spec freud.md §4.3): a regression whose
 * in-sample R^2 comes from one call of high leverage -- the shape sqlite3's
 * sqlite3VdbeExec gave in bench/results/annotate-real, where one 35 ms call
 * alone at newTnum = 1 made a three-term fit with R^2 0.9993 and a
 * cross-validated R^2 of -355,000 -- must not be printed as the cost
 * model: the leaf falls back to the constant of its calls, and says so.
 * A regression that does explain the metric is kept (the control).
 */
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "annotate/annotate.h"

static uint64_t lcg_next(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/*
 * 34 calls of exec(a, b): 32 at a = 2 (b 2 or 4) whose time is noise
 * between 10 and 800, one at a = 1, b = 0 taking 35000, one at a = 591,
 * b = 1 taking 2. With the interaction a*b the fit passes through the two
 * lone calls exactly; without either, the refit extrapolates wildly.
 * slope > 0 (the control) makes the two lone calls ordinary ones and adds
 * slope * c to every time: a real linear dependence on a third feature c,
 * spread over all calls.
 */
static char *leverage_record(double slope)
{
	size_t cap = 1 << 14, len = 0;
	char *buf = malloc(cap);
	uint64_t x = 7;

	len += (size_t)snprintf(buf + len, cap - len,
				"lever-annotate-record 1\nS 0 exec(int a, int b, int c)\n"
				"F 0 0 integer a\nF 0 1 integer b\nF 0 2 integer c\n");
	for (int i = 0; i < 34; i++) {
		bool lone = slope == 0 && i < 2;
		int a = !lone ? 2 : i == 0 ? 1 : 591;
		int b = !lone ? 2 + 2 * (int)(lcg_next(&x) % 2) : i == 0 ? 0 : 1;
		int c = (int)(lcg_next(&x) % 1000);
		double t = !lone ? 10 + (double)(lcg_next(&x) % 791) : i == 0 ? 35000 : 2;

		len +=
		    (size_t)snprintf(buf + len, cap - len, "C 0 %d 0 time=%.17g 0=%d 1=%d 2=%d\n",
				     i + 1, t + slope * c, a, b, c);
	}
	return buf;
}

static void derive_text(const char *text, struct annotate_record *rec,
			struct annotate_derivation *d)
{
	struct annotate_params par;
	char err[256];

	assert_int_equal(
	    annotate_record_read_buffer("cv", text, strlen(text), rec, err, sizeof(err)), 0);
	annotate_params_default(&par);
	par.heuristics = false;
	par.clustering = false;
	assert_int_equal(annotate_derive(&rec->symbols[0], ANNOTATE_TIME, &par, d), 0);
}

static void test_leverage_fit_falls_back(void **state)
{
	struct annotate_record rec;
	struct annotate_derivation d;
	struct annotate_annotation a;
	char *text = leverage_record(0), *printed;
	double mean = 0, cv;

	(void)state;
	derive_text(text, &rec, &d);
	assert_int_equal(d.n_leaves, 1);
	assert_true(d.leaves[0].rejected);
	assert_int_equal(d.n_rejected, 1);
	assert_true(d.leaves[0].rejected_cls != ANNOTATE_CONSTANT);
	/* the rejected fit was far worse than the mean, or not refittable */
	assert_true(isnan(d.leaves[0].rejected_cv_r_squared) ||
		    d.leaves[0].rejected_cv_r_squared < 0);
	/* what is printed: the constant, the mean and sample variance */
	assert_int_equal(d.leaves[0].model.cls, ANNOTATE_CONSTANT);
	assert_int_equal(d.leaves[0].model.n_terms, 0);
	for (size_t i = 0; i < rec.symbols[0].n_calls; i++)
		mean += rec.symbols[0].metrics[ANNOTATE_TIME][i];
	mean /= (double)rec.symbols[0].n_calls;
	assert_true(fabs(d.leaves[0].model.intercept - mean) < 1e-6 * mean);
	assert_true(d.leaves[0].model.variance > 0);
	cv = annotate_cross_validate(&d, 10);
	assert_true(cv > -0.5 && cv <= 0);
	assert_int_equal(annotate_derivation_annotation(&d, &a), 0);
	printed = annotate_to_string(&a, 6);
	assert_non_null(printed);
	assert_null(strstr(printed, "*")); /* no term of a or b survives */
	free(printed);
	/* and the HTML page says so under the leaf's heading */
	{
		char *html = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&html, &len);

		assert_non_null(f);
		annotate_derivation_html(f, &d);
		fclose(f);
		assert_non_null(strstr(html, "no better than the calls' mean"));
		free(html);
	}
	annotate_annotation_free(&a);
	annotate_derivation_free(&d);
	annotate_record_free(&rec);
	free(text);
}

/* No lone calls, and a slope in c over all calls: the fit stands. */
static void test_real_dependence_kept(void **state)
{
	struct annotate_record rec;
	struct annotate_derivation d;
	char *text = leverage_record(100);

	(void)state;
	derive_text(text, &rec, &d);
	assert_int_equal(d.n_rejected, 0);
	assert_int_equal(d.n_leaves, 1);
	assert_false(d.leaves[0].rejected);
	assert_true(d.leaves[0].model.n_terms >= 1);
	assert_true(d.leaves[0].model.cv_r_squared > 0.5);
	annotate_derivation_free(&d);
	annotate_record_free(&rec);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_leverage_fit_falls_back),
	    cmocka_unit_test(test_real_dependence_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
