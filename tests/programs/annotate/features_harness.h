/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The harness of the feature test programs (features_c.c, features_cpp.cc):
 * CALL(label, fn, args...) calls fn through a thunk that captures the
 * registers at fn's entry exactly as a probe would, runs fn's feature
 * program (read from the plan file given on the command line) on them with
 * the runtime's interpreter, prints every feature as
 * "value LABEL EXPR=VALUE", and then jumps to fn with the arguments intact.
 */
#ifndef FEATURES_HARNESS_H
#define FEATURES_HARNESS_H

#ifdef __cplusplus
extern "C" {
#endif

extern void *ann_test_target;
extern const char *ann_test_function;
extern const char *ann_test_label;
void ann_test_thunk(void);
/* Its address, through which calls are made (the compiler cannot see the thunk's type). */
extern void *volatile ann_test_thunk_address;
/* Reads the plan file, calls run_targets(), returns the exit status. */
int ann_test_main(int argc, char **argv);
/* Defined by each program: its calls. */
void run_targets(void);

#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
#define ANN_TYPEOF decltype
#else
#define ANN_TYPEOF __typeof__
#endif

#define CALL(label, fn, ...)                                                                       \
	do {                                                                                       \
		ann_test_target = (void *)&fn;                                                     \
		ann_test_function = #fn;                                                           \
		ann_test_label = label;                                                            \
		((ANN_TYPEOF(&fn))ann_test_thunk_address)(__VA_ARGS__);                            \
	} while (0)

#if defined(__clang__)
#define TARGET __attribute__((noinline, used))
#else
#define TARGET __attribute__((noinline, used, noipa))
#endif

#endif
