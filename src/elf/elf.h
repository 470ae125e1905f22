/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * elf: loaded objects, sections by name, debug-file lookup and DWARF line
 * tables (libdw/libelf).
 *
 * Addresses in a line_table are *file* addresses (the st_value / DWARF
 * addresses of the object on disk); add an object's load_bias to get a
 * run-time address. Building a table allocates; looking it up does not, and
 * is async-signal-safe once the table is built.
 */
#ifndef LEVER_ELF_H
#define LEVER_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

/* ---------- loaded objects (in the calling process) ---------- */

struct loaded_object {
	char path[4096];     /* canonical absolute path of the file mapped */
	uintptr_t load_bias; /* run-time address = file address + load_bias */
	uintptr_t exec_lo;   /* lowest run-time address of an executable PT_LOAD */
	uintptr_t exec_hi;   /* one past the highest */
	bool is_main;	     /* the main executable */
};

/*
 * Calls fn for every object currently loaded in this process (main
 * executable, shared libraries, dlopen'ed ones), via dl_iterate_phdr. The vDSO
 * and objects without a file are skipped. Stops early if fn returns nonzero
 * and returns that value; returns 0 otherwise.
 */
int loaded_objects_foreach(int (*fn)(const struct loaded_object *obj, void *ctx), void *ctx);

/* ---------- debug files ---------- */

/*
 * Finds the file holding DWARF line information for the ELF file at path, the
 * way gdb does: the file itself if it has .debug_line (or .debug_info); else
 * <debug_root>/.build-id/xx/rest.debug from the NT_GNU_BUILD_ID note; else the
 * .gnu_debuglink name N (CRC checked) in <dir>/N, <dir>/.debug/N and
 * <debug_root><dir>/N. debug_root is normally "/usr/lib/debug" (NULL means that).
 * Writes the path to out and returns true, or returns false if none exists.
 */
bool debug_file_find(const char *path, const char *debug_root, char *out, size_t out_size);

/* ---------- sections of an open ELF file (libelf) ---------- */

/*
 * The name of the section whose header is shdr, from elf's section name table;
 * NULL if elf has no such table or the name is out of its bounds.
 */
const char *elf_section_name(Elf *elf, const GElf_Shdr *shdr);

/*
 * The first section of elf named name, with its header copied to *shdr (if
 * shdr is not NULL); NULL if there is none, or elf is not an ELF object (an
 * archive, say). Neither function allocates memory of its own; libelf does,
 * once, when it first reads the section headers. So both serve the runtimes
 * at start-up (never in a signal handler) as well as the analysis side.
 */
Elf_Scn *elf_section_by_name(Elf *elf, const char *name, GElf_Shdr *shdr);

/*
 * The NT_GNU_BUILD_ID of an open ELF file (from its note sections, else its
 * PT_NOTE segments) into out; its length, 0 if it has none or it is longer
 * than size.
 */
size_t elf_build_id(Elf *elf, unsigned char *out, size_t size);

/* ---------- line tables ---------- */

struct line_range {
	uint64_t lo, hi;  /* [lo, hi) file addresses */
	uint32_t line_id; /* index into line_table.lines */
};

struct source_line {
	uint32_t file_id; /* index into line_table.files */
	uint32_t line;
};

struct line_table {
	struct line_range *ranges; /* sorted by lo, non-overlapping */
	size_t n_ranges;
	struct source_line *lines; /* unique (file, line) pairs */
	size_t n_lines;
	char **files; /* canonical absolute source paths */
	size_t n_files;
	char debug_path[4096]; /* the file the DWARF came from */
	/*
	 * Parallel to lines: the lowest address of a statement row of each
	 * line, 0 if it has none. May be NULL in a table built by hand.
	 */
	uint64_t *line_stmt_addrs;
};

/* Decides whether a source file (canonical absolute path) is in scope. */
typedef bool (*source_filter_fn)(const char *path, void *ctx);

/*
 * Reads the DWARF line tables (DWARF 4 and 5) of the ELF file at path, or of
 * its separate debug file (debug_file_find with debug_root). Only rows whose
 * file passes filter (NULL: all) are kept. Code inlined from an out-of-scope
 * function at an in-scope call site is attributed to the call site's line
 * (DW_AT_call_file/DW_AT_call_line), following abstract_origin/specification.
 * Returns NULL with a message in err if the file cannot be read or has no
 * line information.
 */
struct line_table *line_table_load(const char *path, const char *debug_root,
				   source_filter_fn filter, void *filter_ctx, char *err,
				   size_t err_size);
void line_table_free(struct line_table *table);

/* Range containing file address addr, or NULL. Async-signal-safe. */
const struct line_range *line_table_lookup(const struct line_table *table, uint64_t addr);

/*
 * Lowest file address of a statement row for the given line of a source file
 * whose path ends with file_suffix (at a path-component boundary), or 0.
 */
uint64_t line_table_find_address(const struct line_table *table, const char *file_suffix,
				 unsigned line);

/* Index of the line (file_suffix, line) in table->lines, or -1. */
long line_table_find_line(const struct line_table *table, const char *file_suffix, unsigned line);

/*
 * Converts a file address of the ELF file at path into a file offset (for
 * uprobes), using its PT_LOAD headers. Returns false if not in a segment.
 */
bool elf_address_to_offset(const char *path, uint64_t addr, uint64_t *offset);

#endif
