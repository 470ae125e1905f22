/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The contract between `lever annotate record` (which sets these environment
 * variables) and liblever-annotate.so (which reads them at start-up), as
 * causal/runtime/settings.h is for lever causal. Everything else the runtime
 * needs is in the plan file (doc/formats/annotate-plan.md).
 */
#ifndef LEVER_ANNOTATE_SETTINGS_H
#define LEVER_ANNOTATE_SETTINGS_H

#define ANN_ENV_PLAN	"LEVER_ANNOTATE_PLAN"	 /* the plan file; the runtime idles without it */
#define ANN_ENV_VERBOSE "LEVER_ANNOTATE_VERBOSE" /* "1": what was patched, on stderr */
#define ANN_ENV_SEED	"LEVER_ANNOTATE_SEED"	 /* reservoir RNG seed; default from the clock */
/*
 * The record writer thread (doc/annotate-record.md): "0" none (each thread
 * formats its own records), "idle" as SCHED_IDLE; else at normal priority.
 */
#define ANN_ENV_WRITER "LEVER_ANNOTATE_WRITER"

/* The plan file's first line (magic and version). */
#define ANN_PLAN_MAGIC	 "lever-annotate-plan"
#define ANN_PLAN_VERSION 3

/* Probe mechanisms (the plan's `probe` line and --probe). */
enum ann_probe_kind { ANN_PROBE_AUTO, ANN_PROBE_SLED, ANN_PROBE_LIVE, ANN_PROBE_UPROBE };

/* Bytes of the NOP sled `lever cc --annotate` asks for (-fpatchable-function-entry). */
#define ANN_SLED_BYTES 5

/* The runtime, next to the other runtimes (launch/launch.h). */
#define ANN_RUNTIME_NAME "liblever-annotate.so"

#endif
