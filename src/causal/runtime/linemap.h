/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Address -> line map of in-scope binaries, for the causal runtime. */
#ifndef LEVER_CAUSAL_LINEMAP_H
#define LEVER_CAUSAL_LINEMAP_H

#include "causal/runtime/runtime.h"

struct line_info {
	_Atomic uint64_t samples; /* whole-run samples attributed to the line */
	/* AMP guard rail: samples taken in threads with / without arrivals */
	_Atomic uint64_t arrival_samples;
	_Atomic uint64_t other_samples;
	const char *file;
	uint32_t line;
	uint32_t object;
};

struct mapped_object {
	struct line_table *table;
	struct line_info *infos;
	uintptr_t bias, lo, hi;
	char path[4096];
};

void linemap_configure(const char *binary_scope_list, const char *source_scope_list);
/* Maps every loaded in-scope object not mapped yet; allocates. */
void linemap_scan(const char *debug_root);
bool linemap_ready(void);
void linemap_request_rescan(void);
bool linemap_take_rescan(void);
/* Line of a run-time address, or NULL. Async-signal-safe. */
struct line_info *linemap_lookup(uintptr_t ip);
struct line_info *linemap_find(const char *file, unsigned line);
/* Run-time address of the first instruction of a line, or 0. */
uintptr_t linemap_find_address(const char *file, unsigned line, char *object_path, size_t path_size,
			       uint64_t *file_addr);
void linemap_foreach_line(void (*fn)(struct line_info *li, void *ctx), void *ctx);
/* Any in-scope line (the first mapped), or NULL before the map has one. */
struct line_info *linemap_first_line(void);
size_t linemap_object_count(void);
size_t linemap_missing_debug(const char **first);
const char *linemap_main_exe(void);

#endif
