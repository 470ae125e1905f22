/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profile writer of liblever-causal.so (doc/formats/profile.md): the
 * records' printf formats, spelled through profile_format.h so that writer
 * and reader share one set of names, and the functions that buffer and
 * append them.
 */
#ifndef LEVER_CAUSAL_OUTPUT_H
#define LEVER_CAUSAL_OUTPUT_H

#include <stdbool.h>

#include "causal/profile_format.h"

/*
 * Each format is one whole record. output_line() adds the run tag
 * (PROFILE_KEY_RUN) before the end of every record.
 */
/* clang-format off */
#define OUTPUT_FORMAT_STARTUP                                                  \
	PROFILE_RECORD_STARTUP                                                 \
	PROFILE_FIELD(PROFILE_KEY_TIME) "%llu"                                 \
	PROFILE_FIELD(PROFILE_KEY_LEVER) PROFILE_FORMAT_VERSION_STR           \
	PROFILE_FIELD(PROFILE_KEY_SAMPLER) "%s"                                \
	PROFILE_FIELD(PROFILE_KEY_PERIOD) "%llu"                               \
	PROFILE_FIELD(PROFILE_KEY_SEED) "%llu"                                 \
	PROFILE_END_OF_RECORD

#define OUTPUT_FIELDS_EXPERIMENT                                               \
	PROFILE_RECORD_EXPERIMENT                                              \
	PROFILE_FIELD(PROFILE_KEY_SELECTED) "%s:%u"                            \
	PROFILE_FIELD(PROFILE_KEY_SPEEDUP) "%u.%02u"                           \
	PROFILE_FIELD(PROFILE_KEY_DURATION) "%lld"                             \
	PROFILE_FIELD(PROFILE_KEY_SELECTED_SAMPLES) "%llu"

#define OUTPUT_FORMAT_EXPERIMENT OUTPUT_FIELDS_EXPERIMENT PROFILE_END_OF_RECORD

/* load amplification: the run's arrival speedup, arrivals, arriving threads */
#define OUTPUT_FORMAT_AMP_EXPERIMENT                                           \
	OUTPUT_FIELDS_EXPERIMENT                                               \
	PROFILE_FIELD(PROFILE_KEY_ARRIVAL_SPEEDUP) "%llu"                      \
	PROFILE_FIELD(PROFILE_KEY_ARRIVALS) "%llu"                             \
	PROFILE_FIELD(PROFILE_KEY_ARRIVAL_THREADS) "%u"                        \
	PROFILE_END_OF_RECORD

#define OUTPUT_FORMAT_THROUGHPUT                                               \
	PROFILE_RECORD_THROUGHPUT                                              \
	PROFILE_FIELD(PROFILE_KEY_NAME) "%s"                                   \
	PROFILE_FIELD(PROFILE_KEY_DELTA) "%llu"                                \
	PROFILE_END_OF_RECORD

#define OUTPUT_FORMAT_LATENCY                                                  \
	PROFILE_RECORD_LATENCY                                                 \
	PROFILE_FIELD(PROFILE_KEY_NAME) "%s"                                   \
	PROFILE_FIELD(PROFILE_KEY_ARRIVALS) "%llu"                             \
	PROFILE_FIELD(PROFILE_KEY_DEPARTURES) "%llu"                           \
	PROFILE_FIELD(PROFILE_KEY_DIFFERENCE) "%lld"                           \
	PROFILE_FIELD(PROFILE_KEY_IN_FLIGHT_NS) "%lld"                         \
	PROFILE_END_OF_RECORD

#define OUTPUT_FORMAT_RUNTIME                                                  \
	PROFILE_RECORD_RUNTIME                                                 \
	PROFILE_FIELD(PROFILE_KEY_TIME) "%llu"                                 \
	PROFILE_FIELD(PROFILE_KEY_DELAY) "%llu"                                \
	PROFILE_END_OF_RECORD

/* the same once threads fell back from perf to the timer sampler (sampler.c) */
#define OUTPUT_FORMAT_RUNTIME_MIXED_SAMPLER                                    \
	PROFILE_RECORD_RUNTIME                                                 \
	PROFILE_FIELD(PROFILE_KEY_TIME) "%llu"                                 \
	PROFILE_FIELD(PROFILE_KEY_DELAY) "%llu"                                \
	PROFILE_FIELD(PROFILE_KEY_SAMPLER) PROFILE_SAMPLER_MIXED               \
	PROFILE_FIELD(PROFILE_KEY_TIMER_THREADS) "%llu"                        \
	PROFILE_END_OF_RECORD

#define OUTPUT_FORMAT_SAMPLES                                                  \
	PROFILE_RECORD_SAMPLES                                                 \
	PROFILE_FIELD(PROFILE_KEY_LOCATION) "%s:%u"                            \
	PROFILE_FIELD(PROFILE_KEY_COUNT) "%llu"                                \
	PROFILE_END_OF_RECORD
/* clang-format on */

/* Open (append) the profile at path; false, after one line on stderr, if it cannot be. */
bool output_open(const char *path);
/* Queue one whole record (ending in PROFILE_END_OF_RECORD); whole records per write(2). */
void output_line(const char *line);
void output_emit(const char *line, void *ctx);
void output_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void output_flush(void);
void output_close(void);
void output_forget(void);
/*
 * True once a write, or the close, failed: the profile lacks records. The
 * failure was reported on stderr when it happened; the runtime then makes a
 * successful exit status non-zero (OUTPUT_EXIT_FAILED).
 */
bool output_failed(void);
#define OUTPUT_EXIT_FAILED 1 /* as `lever causal` when the profile cannot be written */

#endif
