/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `instr` source of `lever layout record` (spec autocpa.md §8.3 item 3,
 * issue 17): the contract between the GCC plugin of `lever cc --layout`
 * (plugin/layout_gcc.cc), the runtime it links into the program
 * (runtime/instr.c) and the collector that replays the trace (instr.c).
 *
 *  - Compiled code: before every load or store of a struct field (a GIMPLE
 *    COMPONENT_REF on a RECORD_TYPE, through pointers and arrays too) the
 *    plugin inserts a decrement of the thread's countdown
 *    (LAYOUT_INSTR_COUNTDOWN, an initial-exec TLS int) and, when it reaches
 *    zero, a call LAYOUT_INSTR_HOOK(site, address). `site` points at the
 *    access's entry in the unit's site table (section LAYOUT_INSTR_SITES),
 *    which the linker concatenates into one array per module.
 *  - The plugin also writes, per struct that has a site, every member in
 *    declaration order (section LAYOUT_INSTR_FIELDS): the layout the report
 *    reorders, cold members included.
 *  - The runtime logs sampled accesses to a trace file (below); the
 *    collector reads the two tables from the program's ELF file.
 *
 * Both tables are arrays of fixed 256-byte entries with NUL-padded names
 * (truncated if longer), so that reading them needs no relocation.
 */
#ifndef LEVER_LAYOUT_RUNTIME_INSTR_FORMAT_H
#define LEVER_LAYOUT_RUNTIME_INSTR_FORMAT_H

#include <stdint.h>

#define LAYOUT_INSTR_SITES	 "lever_layout_sites"
#define LAYOUT_INSTR_FIELDS	 "lever_layout_fields"
#define LAYOUT_INSTR_SITE_SYMBOL "__lever_layout_sites" /* per unit, local */
#define LAYOUT_INSTR_HOOK	 "__lever_layout_access"
#define LAYOUT_INSTR_COUNTDOWN	 "__lever_layout_countdown"
#define LAYOUT_INSTR_RUNTIME	 "lever-layout-rt.o" /* in the runtime directory */

/* Environment the runtime reads at start-up (set by `lever layout record`). */
#define LAYOUT_INSTR_ENV_TRACE	"LEVER_LAYOUT_TRACE"  /* path; "%p" becomes the pid */
#define LAYOUT_INSTR_ENV_PERIOD "LEVER_LAYOUT_PERIOD" /* accesses per sampling window */
#define LAYOUT_INSTR_ENV_BURST	"LEVER_LAYOUT_BURST"  /* accesses logged per window */

/*
 * Sampling: each thread logs BURST consecutive accesses out of every PERIOD
 * (burst sampling, so that the cache model sees runs of real interleaving
 * rather than isolated accesses). PERIOD = BURST logs every access.
 */
#define LAYOUT_INSTR_DEFAULT_PERIOD 65536
#define LAYOUT_INSTR_DEFAULT_BURST  1024

#define LAYOUT_INSTR_NAME_MAX	64
#define LAYOUT_INSTR_FILE_MAX	40
#define LAYOUT_INSTR_TYPE_MAX	84
#define LAYOUT_INSTR_ARRAY_MAX	24
#define LAYOUT_INSTR_ENTRY_SIZE 256

#define LAYOUT_INSTR_SITE_WRITE 1u

struct layout_instr_site {
	char struct_name[LAYOUT_INSTR_NAME_MAX];
	char field_name[LAYOUT_INSTR_NAME_MAX];
	char function[LAYOUT_INSTR_NAME_MAX]; /* assembler name of the function it is in */
	char file[LAYOUT_INSTR_FILE_MAX];     /* the last bytes of a longer path */
	uint32_t line;
	uint32_t offset; /* of the accessed bytes within the struct */
	uint32_t size;	 /* bytes accessed */
	uint32_t flags;	 /* LAYOUT_INSTR_SITE_WRITE */
	uint32_t field_index;
	uint32_t reserved;
};

#define LAYOUT_INSTR_FIELD_FLEXIBLE    1u /* flexible array member */
#define LAYOUT_INSTR_FIELD_UNSUPPORTED 2u /* the struct has bit-fields or nameless members */

struct layout_instr_field {
	char struct_name[LAYOUT_INSTR_NAME_MAX];
	char name[LAYOUT_INSTR_NAME_MAX];
	char type[LAYOUT_INSTR_TYPE_MAX];   /* C, before the name */
	char array[LAYOUT_INSTR_ARRAY_MAX]; /* after the name ("[16]", "[]") or "" */
	uint32_t offset, size, align, flags;
	uint32_t index; /* ordinal among the struct's members: 0 starts a struct */
};

/* The trace: one file per process, a header and then whole records. */
#define LAYOUT_TRACE_MAGIC   "LVLAYTR\n"
#define LAYOUT_TRACE_VERSION 1

struct layout_trace_header {
	char magic[8];
	uint32_t version;
	uint32_t record_size; /* sizeof(struct layout_trace_record) */
	uint32_t period, burst;
	uint32_t pid;
	uint32_t reserved;
	uint64_t sites; /* entries in the module's site table, as the runtime saw it */
};

struct layout_trace_record {
	uint64_t addr; /* data address */
	uint64_t pc;   /* of the hook's return, as a link-time address */
	uint64_t time; /* TSC: orders the threads' records for the cache model */
	uint32_t site; /* index in the module's site table */
	uint32_t tid;
};

#endif
