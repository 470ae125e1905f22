/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The contract between `lever causal` (which sets these environment variables)
 * and liblever-causal.so (which reads them at start-up). Lists are
 * tab-separated. Every variable is optional; the defaults are the paper's.
 */
#ifndef LEVER_CAUSAL_SETTINGS_H
#define LEVER_CAUSAL_SETTINGS_H

#define LEVER_ENV_OUTPUT "LEVER_CAUSAL_OUTPUT" /* profile path; default profile.coz */
#define LEVER_ENV_BINARY_SCOPE                                                                     \
	"LEVER_CAUSAL_BINARY_SCOPE" /* patterns, '%' wildcard, MAIN; default MAIN */
#define LEVER_ENV_SOURCE_SCOPE	"LEVER_CAUSAL_SOURCE_SCOPE" /* patterns; default % */
#define LEVER_ENV_PROGRESS	"LEVER_CAUSAL_PROGRESS" /* FILE:LINE counted (breakpoint) points */
#define LEVER_ENV_SAMPLED	"LEVER_CAUSAL_SAMPLED_PROGRESS" /* FILE:LINE sampled points */
#define LEVER_ENV_END_TO_END	"LEVER_CAUSAL_END_TO_END"	/* "1": one experiment per run */
#define LEVER_ENV_FIXED_LINE	"LEVER_CAUSAL_FIXED_LINE"	/* FILE:LINE */
#define LEVER_ENV_FIXED_SPEEDUP "LEVER_CAUSAL_FIXED_SPEEDUP"	/* 0..100 */
#define LEVER_ENV_ARRIVAL_SPEEDUP                                                                  \
	"LEVER_CAUSAL_ARRIVAL_SPEEDUP"		 /* ns per arrival (AMP); set = recorded, even 0 */
#define LEVER_ENV_SAMPLER "LEVER_CAUSAL_SAMPLER" /* perf (default, falls back) | timer | none */
#define LEVER_ENV_VERBOSE "LEVER_CAUSAL_VERBOSE" /* "1" */
#define LEVER_ENV_PAUSE	  "LEVER_CAUSAL_PAUSE"	 /* auto (default) | sleep | spin */
#define LEVER_ENV_FOLLOW_CHILDREN                                                                  \
	"LEVER_CAUSAL_FOLLOW_CHILDREN" /* "1": profile children, per-pid files */
#define LEVER_ENV_ZERO_PROB    "LEVER_CAUSAL_ZERO_PROBABILITY" /* P(speedup 0); default 0.5 */
#define LEVER_ENV_SPEEDUP_STEP "LEVER_CAUSAL_SPEEDUP_STEP"     /* percent; default 5 */
#define LEVER_ENV_EXPERIMENT_MS                                                                    \
	"LEVER_CAUSAL_EXPERIMENT_MS"		       /* initial experiment length; default 250 */
#define LEVER_ENV_COOLOFF_MS "LEVER_CAUSAL_COOLOFF_MS" /* default 10 */
#define LEVER_ENV_MIN_VISITS "LEVER_CAUSAL_MIN_VISITS" /* default 5 */
#define LEVER_ENV_PERIOD_US  "LEVER_CAUSAL_SAMPLE_PERIOD_US" /* default 1000 */
#define LEVER_ENV_BATCH	     "LEVER_CAUSAL_BATCH"	     /* samples per batch; default 10 */
#define LEVER_ENV_SEED	     "LEVER_CAUSAL_SEED"	     /* RNG seed; default from the clock */
#define LEVER_ENV_DEBUG_ROOT "LEVER_CAUSAL_DEBUG_ROOT"	     /* default /usr/lib/debug */
#define LEVER_ENV_ROOT_PID                                                                         \
	"LEVER_CAUSAL_ROOT_PID" /* launcher's pid: other processes write OUTPUT.<pid> */
#define LEVER_ENV_EXEC_NS                                                                          \
	"LEVER_CAUSAL_EXEC_NS" /* launcher's CLOCK_MONOTONIC ns just before exec */
#define LEVER_ENV_BREAKPOINTS                                                                      \
	"LEVER_CAUSAL_BREAKPOINTS" /* auto (default) | uprobe: counted points */
#define LEVER_ENV_ACTIVE                                                                           \
	"LEVER_CAUSAL_ACTIVE" /* set by the launcher; the runtime stays idle without it */

#endif
