/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cli: the `lever` command. Each command is one file in src/cli with an entry
 * point int cmd_NAME(int argc, char **argv) (argv[0] is the command name) and
 * a one-line summary for `lever help`. Add a command by adding a line here.
 */
#ifndef LEVER_CLI_COMMANDS_H
#define LEVER_CLI_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

/* X(name, function, summary) */
#define LEVER_COMMANDS(X)                                                                          \
	X("causal", cmd_causal,                                                                    \
	  "causal profiling: which lines, if sped up, speed up the program (Coz)")                 \
	X("bench", cmd_bench, "run a command repeatedly and describe its running time")            \
	X("compare", cmd_compare, "is B faster than A? commands, sample files or a suite")         \
	X("stabilize", cmd_stabilize,                                                              \
	  "run a program with its memory layout randomized (Stabilizer)")                          \
	X("stats", cmd_stats, "descriptive statistics and normality of samples in files")          \
	X("layout", cmd_layout,                                                                    \
	  "struct layouts: which fields to move, and what it saves (AutoCPA)")                     \
	X("cc", cmd_cc, "C compiler for Stabilizer: stack pads, relocatable code, random link")    \
	X("c++", cmd_cxx, "C++ compiler for Stabilizer (as lever cc)")                             \
	X("annotate", cmd_annotate,                                                                \
	  "performance annotations: how a function's cost depends on its inputs (Freud)")

#define DECLARE_COMMAND(name, fn, summary) int fn(int argc, char **argv);
LEVER_COMMANDS(DECLARE_COMMAND)
#undef DECLARE_COMMAND

/* `lever causal report` (causal_report.c), reached through `lever causal`. */
int cmd_causal_report(int argc, char **argv);
/* `lever causal sweep` (causal_sweep.c): runs at several arrival speedups. */
int cmd_causal_sweep(int argc, char **argv);
/* A --arrival-speedup value (causal.c): a time, bare numbers in ns, at most 1h. */
bool causal_parse_arrival_speedup(const char *text, uint64_t *ns);

/* `lever layout refs` (layout_refs.c): the static reference table of a binary. */
int cmd_layout_refs(int argc, char **argv);

/*
 * What an existing file holds if it is data a run produced (a causal profile,
 * samples), for report_output_check(); NULL for anything else (data_files.c).
 */
const char *cli_data_kind(const char *head);

#endif
