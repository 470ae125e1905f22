/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The causal profile format, named once (doc/formats/profile.md; spec/coz.md
 * §12, anchors.md §1.6): record types and keys of lever profile format 1,
 * Coz's legacy tab-separated format. The writer in liblever-causal.so
 * (runtime/output.c, experiment.c, progress.c) and the reader in
 * profile_*.c both spell records through these names, so the two sides
 * cannot drift. Only string literals: the runtime includes this file, and
 * no analysis code may ride along. Literals (not variables) so that the
 * writer can paste them into its format strings at compile time.
 */
#ifndef LEVER_CAUSAL_PROFILE_FORMAT_H
#define LEVER_CAUSAL_PROFILE_FORMAT_H

/* lever's own format version, on `startup` records under PROFILE_KEY_LEVER */
#define PROFILE_FORMAT_VERSION	   1
#define PROFILE_FORMAT_VERSION_STR "1"

/* How a record is laid out: TYPE<TAB>key=value<TAB>key=value...<LF> */
#define PROFILE_SEPARATOR     "\t"
#define PROFILE_END_OF_RECORD "\n"
/* `key=` after a separator, for the writer's format strings */
#define PROFILE_FIELD(key) PROFILE_SEPARATOR key "="

/* ---- record types ---- */
#define PROFILE_RECORD_STARTUP	  "startup"
#define PROFILE_RECORD_LEVER	  "lever" /* reserved: read, never written */
#define PROFILE_RECORD_EXPERIMENT "experiment"
#define PROFILE_RECORD_THROUGHPUT "throughput-point"
#define PROFILE_RECORD_PROGRESS	  "progress-point" /* Coz 2014-15, read only */
#define PROFILE_RECORD_LATENCY	  "latency-point"
#define PROFILE_RECORD_RUNTIME	  "runtime"
#define PROFILE_RECORD_SAMPLES	  "samples"
#define PROFILE_RECORD_SHUTDOWN	  "shutdown" /* Coz 2014, read only */

/* ---- keys on every record ---- */
/* the run a record belongs to (lever only; concurrent runs appending to one file) */
#define PROFILE_KEY_RUN "run"

/* ---- startup (and the reserved `lever` record) ---- */
#define PROFILE_KEY_TIME    "time"
#define PROFILE_KEY_LEVER   "lever"   /* lever's format version, on startup */
#define PROFILE_KEY_VERSION "version" /* the same, on a `lever` record */
#define PROFILE_KEY_SAMPLER "sampler"
#define PROFILE_KEY_PERIOD  "period"
#define PROFILE_KEY_SEED    "seed"

/* ---- experiment ---- */
#define PROFILE_KEY_SELECTED	     "selected"
#define PROFILE_KEY_SPEEDUP	     "speedup"
#define PROFILE_KEY_DURATION	     "duration"
#define PROFILE_KEY_SELECTED_SAMPLES "selected-samples"
#define PROFILE_KEY_ARRIVAL_SPEEDUP  "arrival-speedup"
#define PROFILE_KEY_ARRIVALS	     "arrivals" /* also on latency-point */
#define PROFILE_KEY_ARRIVAL_THREADS  "arrival-threads"

/* ---- throughput-point, progress-point, latency-point ---- */
#define PROFILE_KEY_NAME       "name"
#define PROFILE_KEY_DELTA      "delta"
#define PROFILE_KEY_DEPARTURES "departures"
#define PROFILE_KEY_DIFFERENCE "difference"
/*
 * lever's, on latency-point: the number in flight (begins - ends) averaged
 * over the experiment (sampled every millisecond while it ran) times its
 * duration, in ns: the exact L x duration that difference x duration only
 * approximates from one value at the end. Coz's readers ignore it.
 */
#define PROFILE_KEY_IN_FLIGHT_NS "in-flight-ns"

/* ---- runtime (PROFILE_KEY_TIME, then) ---- */
#define PROFILE_KEY_DELAY "delay"
/*
 * On runtime records once threads past the perf sampler's descriptor budget
 * were sampled by the timer sampler: sampler=PROFILE_SAMPLER_MIXED and how
 * many threads so far (doc/causal.md, --sampler).
 */
#define PROFILE_KEY_TIMER_THREADS "timer-threads"
#define PROFILE_SAMPLER_MIXED	  "perf+timer"

/* ---- samples; shutdown has PROFILE_KEY_TIME and PROFILE_KEY_SAMPLES ---- */
#define PROFILE_KEY_LOCATION "location"
#define PROFILE_KEY_COUNT    "count"
#define PROFILE_KEY_SAMPLES  "samples"

/* ---- Coz's JSON Lines: the record type's key ("selected_samples" = selected-samples) ---- */
#define PROFILE_JSON_KEY_TYPE "type"

#endif
