/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The seed's Appendix A micro-benchmark (spec/freud.md §6.6): what the C
 * half (appendix_a.c: the driver and the C functions) and the C++ half
 * (appendix_a_cxx.cc: the functions on classes, vectors and dynamic types)
 * share.
 */
#ifndef LEVER_TESTS_APPENDIX_A_H
#define LEVER_TESTS_APPENDIX_A_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The unit of cost every function spends where the seed calls usleep(us):
 * with --cost=sleep, usleep(us) as in the seed; with --cost=mem, one
 * allocation of `us` bytes (freed at once), which makes the mem metric an
 * exact, load-independent image of the same cost model.
 */
void appendix_a_cost(unsigned long us);

/* 1 if the driver is to call the function `name` (--only). */
int appendix_a_wanted(const char *name);

/* The C++ functions (A.7-A.10, A.18) for one round of the driver, at t. */
void appendix_a_cxx_round(int t);

#ifdef __cplusplus
}
#endif

#endif
