/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Synthetic records with a known answer, for tests and benchmarks:
 *  - "appendix-a": the twenty functions of the seed's Appendix A (spec
 *    §6.6), with the features the seed names and costs shaped like its code
 *    (a usleep per loop iteration, the driver's input ranges: t = 0, 2, ...,
 *    300; rand() % 21 for branch selectors, ...), plus timer-like noise;
 *  - "wide": one function with many candidate features of which three
 *    matter, and branches, the shape of the seed's MySQL and x264 cases
 *    (Table 5.5), for timing the analysis.
 * All randomness comes from one GSL generator seeded by the caller.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "annotate/annotate.h"

struct synth {
	struct annotate_writer *w;
	gsl_rng *rng;
	uint64_t next_id;
};

/* Timer noise: a fixed probe cost plus jitter growing with the duration. */
static double noisy(struct synth *s, double cost)
{
	return fmax(0.0, cost + 20.0 + gsl_ran_gaussian(s->rng, 8.0 + 0.001 * fabs(cost)));
}

static unsigned uniform(struct synth *s, unsigned n)
{
	return (unsigned)gsl_rng_uniform_int(s->rng, n);
}

struct fn {
	const char *name;
	int n_features;
	struct {
		enum annotate_feature_kind kind;
		const char *expr;
	} features[6];
	/* fills the feature values (and branch outcomes) of call i, returns the cost */
	double (*call)(struct synth *s, size_t i, double *v);
};

static double t_of(size_t i)
{
	return (double)(2 * (i % 151));
}

static double linear_int(struct synth *s, size_t i, double *v)
{
	(void)s;
	v[0] = t_of(i);
	return 370.0 * v[0];
}

static double linear_float(struct synth *s, size_t i, double *v)
{
	v[0] = t_of(i) + 0.5 * gsl_rng_uniform(s->rng);
	return 371.0 * floor(v[0]);
}

static double global_feature(struct synth *s, size_t i, double *v)
{
	(void)i;
	v[0] = uniform(s, 100);
	return 33.0 + 142.0 * v[0];
}

static double charptr(struct synth *s, size_t i, double *v)
{
	(void)s;
	v[0] = t_of(i);
	return 173.0 * v[0];
}

static double with_useless(struct synth *s, size_t i, double *v)
{
	v[0] = t_of(i);
	v[1] = uniform(s, 1u << 30);
	return 222.0 * v[0];
}

static double vector_size(struct synth *s, size_t i, double *v)
{
	double start = 94000000000000.0 + 4096.0 * uniform(s, 1000);
	double size = t_of(i);

	v[0] = start;
	v[1] = start + 4 * size;
	v[2] = v[1] + 4 * uniform(s, 64);
	v[3] = size;
	return 375.0 * size;
}

static double derived_class(struct synth *s, size_t i, double *v)
{
	(void)i;
	v[0] = 1234567890;
	v[1] = uniform(s, 1987);
	return 100.0 + 1.01 * v[1];
}

static double quad_int(struct synth *s, size_t i, double *v)
{
	(void)s;
	v[0] = t_of(i);
	return 63.5 * v[0] + 1.07 * v[0] * v[0];
}

static double nlogn_int(struct synth *s, size_t i, double *v)
{
	(void)s;
	v[0] = 50 * t_of(i);
	return 2585.0 + (v[0] > 0 ? 1.03 * v[0] * log2(v[0]) : 0);
}

static double quad_int_wn(struct synth *s, size_t i, double *v)
{
	double t = t_of(i);

	v[0] = t;
	v[1] = 7;
	/* usleep(t + rand() % t * 100) t times: t^2 + 50 t^2 on average */
	return t * t + 50.0 * t * t +
	       (t > 0 ? gsl_ran_gaussian(s->rng, 100.0 * t * sqrt(t / 12.0)) : 0);
}

static double interaction(struct synth *s, size_t i, double *v)
{
	(void)i;
	v[0] = uniform(s, 20);
	v[1] = uniform(s, 20);
	return 155.1 * v[0] + 15.5 * v[1] * v[1] - 7.6 * v[1] + 17.95 * v[0] * v[1] * v[1] -
	       51.5 * v[0] * v[1];
}

static double branches(struct synth *s, size_t i, double *v)
{
	(void)i;
	v[0] = uniform(s, 21);
	v[1] = uniform(s, 1000);
	v[2] = uniform(s, 1000);
	v[3] = v[0] > 10; /* if (a > 10) */
	return v[0] > 10 ? 17744.0 + 1.14 * v[1] * v[1] : 587.0 * v[2] - 392.0;
}

static double branches_one_f(struct synth *s, size_t i, double *v)
{
	(void)i;
	v[0] = uniform(s, 21);
	v[1] = uniform(s, 1000);
	v[2] = uniform(s, 1000);
	v[3] = v[0] < 10; /* if (a < 10) */
	return v[0] < 10 ? 430.0 * (10 - v[0]) : 4000.0 + 430.0 * (v[0] - 10);
}

static double multi_enum(struct synth *s, size_t i, double *v)
{
	v[0] = (double)(i % 3);
	v[1] = uniform(s, 1000);
	switch ((int)v[0]) {
	case 0:
		return 100000.0;
	case 1:
		return 354.0 + 171.5 * v[1];
	default:
		return 19358.0 + 1.14 * v[1] * v[1];
	}
}

static double grand_derived(struct synth *s, size_t i, double *v)
{
	bool grand = i % 2 == 0;

	v[0] = grand ? 1844335335.0 : 2935104773.0;
	v[1] = uniform(s, 1987);
	v[2] = uniform(s, 1987);
	return grand ? 2123.0 - 1.01 * v[1] : 116.0 + 1.01 * v[2];
}

static double main_component(struct synth *s, size_t i, double *v)
{
	unsigned p = uniform(s, 100);

	(void)i;
	v[0] = uniform(s, 10);
	if (p < 25)
		return 10000.0 + uniform(s, 1500);
	if (p < 50)
		return uniform(s, 100);
	return 65.0 + 1042.0 * v[0];
}

static double random_clustering(struct synth *s, size_t i, double *v)
{
	unsigned r = uniform(s, 100);

	(void)i;
	v[0] = uniform(s, 1000);
	v[1] = uniform(s, 1000);
	return r < 30 ? 900.0 : r < 70 ? 600.0 : 300.0;
}

static const struct fn appendix_a[] = {
    {"test_linear_int(int t)", 1, {{ANNOTATE_INTEGER, "t"}}, linear_int},
    {"test_linear_int_pointer(int *t)", 1, {{ANNOTATE_INTEGER, "*t"}}, linear_int},
    {"test_linear_float(float t)", 1, {{ANNOTATE_FLOAT, "t"}}, linear_float},
    {"test_global_feature()", 1, {{ANNOTATE_INTEGER, "global_feature"}}, global_feature},
    {"test_linear_charptr(char *str)", 1, {{ANNOTATE_STRING_LENGTH, "str"}}, charptr},
    {"test_linear_structs(struct basic_structure *bs)",
     2,
     {{ANNOTATE_INTEGER, "bs->useful"}, {ANNOTATE_INTEGER, "bs->useless"}},
     with_useless},
    {"test_linear_classes(basic_class *bc)",
     2,
     {{ANNOTATE_INTEGER, "bc->private_field"}, {ANNOTATE_INTEGER, "bc->other_field"}},
     with_useless},
    {"test_linear_fitinregister(fit_in_register fir)",
     2,
     {{ANNOTATE_INTEGER, "fir.single_int"}, {ANNOTATE_INTEGER, "fir.padding"}},
     with_useless},
    {"test_linear_vector(std::vector<int> *t)",
     4,
     {{ANNOTATE_INTEGER, "t->_M_impl._M_start"},
      {ANNOTATE_INTEGER, "t->_M_impl._M_finish"},
      {ANNOTATE_INTEGER, "t->_M_impl._M_end_of_storage"},
      {ANNOTATE_CONTAINER_SIZE, "t.artificial.size"}},
     vector_size},
    {"test_derived_class(const abstract_class_1 &c)",
     2,
     {{ANNOTATE_DYNAMIC_TYPE, "c._vptr.abstract_class_1"}, {ANNOTATE_INTEGER, "c.private_value"}},
     derived_class},
    {"test_quad_int(int t)", 1, {{ANNOTATE_INTEGER, "t"}}, quad_int},
    {"test_nlogn_int(int t)", 1, {{ANNOTATE_INTEGER, "t"}}, nlogn_int},
    {"test_quad_int_wn(int t, int nlevel)",
     2,
     {{ANNOTATE_INTEGER, "t"}, {ANNOTATE_INTEGER, "nlevel"}},
     quad_int_wn},
    {"test_interaction_linear_quad(int a, int b)",
     2,
     {{ANNOTATE_INTEGER, "a"}, {ANNOTATE_INTEGER, "b"}},
     interaction},
    {"test_linear_branches(int a, int b, int c)",
     4,
     {{ANNOTATE_INTEGER, "a"},
      {ANNOTATE_INTEGER, "b"},
      {ANNOTATE_INTEGER, "c"},
      {ANNOTATE_BRANCH, "test_linear_branches+0x1d"}},
     branches},
    {"test_linear_branches_one_f(int a, int b, int c)",
     4,
     {{ANNOTATE_INTEGER, "a"},
      {ANNOTATE_INTEGER, "b"},
      {ANNOTATE_INTEGER, "c"},
      {ANNOTATE_BRANCH, "test_linear_branches_one_f+0x11"}},
     branches_one_f},
    {"test_multi_enum(enum command c, int a)",
     2,
     {{ANNOTATE_ENUM, "c"}, {ANNOTATE_INTEGER, "a"}},
     multi_enum},
    {"test_grand_derived_class2(const abstract_class_2 *c)",
     3,
     {{ANNOTATE_DYNAMIC_TYPE, "c->_vptr.abstract_class_2"},
      {ANNOTATE_INTEGER, "c->private_value"},
      {ANNOTATE_INTEGER, "c->private_value2"}},
     grand_derived},
    {"test_linear_main_component(int a)", 1, {{ANNOTATE_INTEGER, "a"}}, main_component},
    {"test_random_clustering(int a)",
     2,
     {{ANNOTATE_INTEGER, "a"}, {ANNOTATE_INTEGER, "global_variable"}},
     random_clustering},
};

static int synth_fn(struct synth *s, const struct fn *fn, size_t calls)
{
	int sym = annotate_writer_symbol(s->w, fn->name), rc = 0;
	double v[6], metrics[ANNOTATE_N_METRICS];

	if (sym < 0)
		return sym;
	for (int f = 0; f < fn->n_features; f++)
		if ((rc = annotate_writer_feature(s->w, (uint32_t)sym, fn->features[f].kind,
						  fn->features[f].expr)) < 0)
			return rc;
	for (size_t i = 0; i < calls; i++) {
		double cost = fn->call(s, i, v);

		for (int m = 0; m < ANNOTATE_N_METRICS; m++)
			metrics[m] = NAN;
		metrics[ANNOTATE_TIME] = noisy(s, cost);
		metrics[ANNOTATE_MEM] = 0;
		rc = annotate_writer_call(s->w, (uint32_t)sym, ++s->next_id, 0, metrics, v, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * One function of the wide shape: j->items->len, j->depth and j->weight
 * matter (linear, with an interaction); the other features are noise of
 * assorted distributions; a few branches run once per call.
 */
static int synth_wide(struct synth *s, size_t calls, size_t features)
{
	int sym = annotate_writer_symbol(s->w, "process_job(struct job *j)");
	size_t n_branches = 13, total = features + n_branches;
	double *v = malloc(total * sizeof(double)), metrics[ANNOTATE_N_METRICS];
	int rc = 0;

	if (sym < 0 || !v) {
		free(v);
		return sym < 0 ? sym : -ENOMEM;
	}
	for (size_t f = 0; f < total && rc >= 0; f++) {
		char name[64];
		enum annotate_feature_kind kind = f < features ? ANNOTATE_INTEGER : ANNOTATE_BRANCH;

		if (f == 0)
			snprintf(name, sizeof(name), "j->items->len");
		else if (f == 1)
			snprintf(name, sizeof(name), "j->depth");
		else if (f == 2)
			snprintf(name, sizeof(name), "j->weight");
		else if (f < features)
			snprintf(name, sizeof(name), "j->field%zu", f);
		else
			snprintf(name, sizeof(name), "process_job+0x%zx",
				 0x40 + 8 * (f - features));
		rc = annotate_writer_feature(s->w, (uint32_t)sym, kind, name);
	}
	if (rc < 0) {
		free(v);
		return rc;
	}
	rc = 0;
	for (size_t i = 0; i < calls && !rc; i++) {
		for (size_t f = 0; f < features; f++) {
			switch (f % 4) {
			case 0:
				v[f] = uniform(s, 5000);
				break;
			case 1:
				v[f] = uniform(s, 64);
				break;
			case 2:
				v[f] = floor(gsl_ran_exponential(s->rng, 300.0));
				break;
			default:
				v[f] = uniform(s, 2);
			}
		}
		for (size_t b = 0; b < n_branches; b++)
			v[features + b] = uniform(s, 2);
		for (int m = 0; m < ANNOTATE_N_METRICS; m++)
			metrics[m] = NAN;
		metrics[ANNOTATE_TIME] = noisy(s, 40.0 + 3.0 * v[0] + 0.5 * v[0] * v[1] +
						      2.0 * (features > 2 ? v[2] : 0));
		rc = annotate_writer_call(s->w, (uint32_t)sym, ++s->next_id, 0, metrics, v, NULL);
	}
	free(v);
	return rc;
}

int annotate_synth(struct annotate_writer *w, const char *shape, size_t calls, size_t features,
		   uint64_t seed)
{
	struct synth s = {.w = w};
	int rc = 0;

	if (calls == 0)
		return -EINVAL;
	s.rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (!s.rng)
		return -ENOMEM;
	gsl_rng_set(s.rng, (unsigned long)seed);
	if (strcmp(shape, "appendix-a") == 0) {
		for (size_t i = 0; i < sizeof(appendix_a) / sizeof(appendix_a[0]) && !rc; i++)
			rc = synth_fn(&s, &appendix_a[i], calls);
	} else if (strcmp(shape, "wide") == 0 && features >= 3) {
		rc = synth_wide(&s, calls, features);
	} else {
		rc = -EINVAL;
	}
	gsl_rng_free(s.rng);
	return rc;
}
