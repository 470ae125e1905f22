/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The address -> source line map of the in-scope binaries. Built once at
 * start-up (on the profiler thread, so the program is not held up, unless a
 * setting needs lines before main), extended when the program dlopens a
 * library, and read without locks from signal handlers: objects are appended
 * to a fixed table and published by a release store of the count; nothing is
 * freed until exit.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "causal/runtime/fd_guard.h"
#include "causal/runtime/linemap.h"
#include "elf/elf.h"

#define MAX_OBJECTS  256
#define MAX_PATTERNS 64

struct scope {
	char *patterns[MAX_PATTERNS];
	size_t n;
};

static struct mapped_object objects[MAX_OBJECTS];
static _Atomic size_t n_objects;
static struct scope binary_scope, source_scope;
static char main_exe[PATH_MAX];
static _Atomic int map_ready;
static _Atomic int rescan_requested;
static size_t objects_without_debug;
static char first_missing_debug[PATH_MAX];

static void scope_parse(struct scope *s, const char *list, const char *fallback)
{
	char *copy = strdup(list && *list ? list : fallback);
	char *save = NULL;

	if (!copy)
		return;
	for (char *tok = strtok_r(copy, "\t", &save); tok && s->n < MAX_PATTERNS;
	     tok = strtok_r(NULL, "\t", &save)) {
		if (strcmp(tok, "MAIN") == 0)
			s->patterns[s->n++] = strdup(main_exe);
		else
			s->patterns[s->n++] = strdup(tok);
	}
	free(copy);
}

static bool scope_matches(const struct scope *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->patterns[i] && wildcard_match(s->patterns[i], path))
			return true;
	return false;
}

static bool source_in_scope(const char *path, void *ctx)
{
	return scope_matches(&source_scope, path);
}

void linemap_configure(const char *binary_scope_list, const char *source_scope_list)
{
	ssize_t n = readlink("/proc/self/exe", main_exe, sizeof(main_exe) - 1);

	main_exe[n > 0 ? n : 0] = '\0';
	scope_parse(&binary_scope, binary_scope_list, "MAIN");
	scope_parse(&source_scope, source_scope_list, "%");
}

struct pending_object {
	char path[PATH_MAX];
	uintptr_t bias, lo, hi;
};

struct scan {
	struct pending_object *list;
	size_t n, cap;
};

static bool already_mapped(uintptr_t lo)
{
	size_t n = atomic_load_explicit(&n_objects, memory_order_acquire);

	for (size_t i = 0; i < n; i++)
		if (objects[i].lo == lo)
			return true;
	return false;
}

/* Runs under the loader lock: only collect, build tables afterwards. */
static int collect_object(const struct loaded_object *obj, void *ctx)
{
	struct scan *s = ctx;

	if (s->n == s->cap || !obj->exec_hi || already_mapped(obj->exec_lo))
		return 0;
	if (!scope_matches(&binary_scope, obj->path))
		return 0;
	str_copy(s->list[s->n].path, obj->path, PATH_MAX);
	s->list[s->n].bias = obj->load_bias;
	s->list[s->n].lo = obj->exec_lo;
	s->list[s->n].hi = obj->exec_hi;
	s->n++;
	return 0;
}

static void add_object(const struct pending_object *p, const char *debug_root)
{
	char err[512] = "";
	struct line_table *table;
	struct line_info *infos;
	size_t idx = atomic_load(&n_objects);

	if (idx >= MAX_OBJECTS)
		return;
	table = line_table_load(p->path, debug_root, source_in_scope, NULL, err, sizeof(err));
	if (!table || table->n_ranges == 0) {
		if (objects_without_debug++ == 0)
			str_copy(first_missing_debug, p->path, sizeof(first_missing_debug));
		LOG_INFO("no in-scope line information in %s%s%s\n", p->path, err[0] ? ": " : "",
			 err);
		if (table)
			line_table_free(table);
		return;
	}
	infos = calloc(table->n_lines ? table->n_lines : 1, sizeof(*infos));
	if (!infos) {
		line_table_free(table);
		return;
	}
	for (size_t i = 0; i < table->n_lines; i++) {
		infos[i].object = (uint32_t)idx;
		infos[i].line = table->lines[i].line;
		infos[i].file = table->files[table->lines[i].file_id];
	}
	objects[idx].table = table;
	objects[idx].infos = infos;
	objects[idx].bias = p->bias;
	objects[idx].lo = p->lo;
	objects[idx].hi = p->hi;
	str_copy(objects[idx].path, p->path, sizeof(objects[idx].path));
	atomic_store_explicit(&n_objects, idx + 1, memory_order_release);
	LOG_INFO("mapped %s: %zu lines in %zu files (debug info: %s)\n", p->path, table->n_lines,
		 table->n_files, table->debug_path);
}

static void scan_objects(void *debug_root)
{
	struct scan s = {.cap = MAX_OBJECTS};

	s.list = calloc(s.cap, sizeof(*s.list));
	if (!s.list)
		return;
	loaded_objects_foreach(collect_object, &s);
	for (size_t i = 0; i < s.n; i++)
		add_object(&s.list[i], debug_root);
	free(s.list);
}

/* The files are read with a descriptor table of their own: the program may be closing ours. */
void linemap_scan(const char *debug_root)
{
	fd_guard_run_private(scan_objects, (void *)debug_root);
	atomic_store_explicit(&map_ready, 1, memory_order_release);
}

bool linemap_ready(void)
{
	return atomic_load_explicit(&map_ready, memory_order_acquire);
}

void linemap_request_rescan(void)
{
	atomic_store(&rescan_requested, 1);
}

bool linemap_take_rescan(void)
{
	return atomic_exchange(&rescan_requested, 0);
}

struct line_info *linemap_lookup(uintptr_t ip)
{
	size_t n = atomic_load_explicit(&n_objects, memory_order_acquire);

	for (size_t i = 0; i < n; i++) {
		const struct mapped_object *o = &objects[i];
		const struct line_range *r;

		if (ip < o->lo || ip >= o->hi)
			continue;
		r = line_table_lookup(o->table, ip - o->bias);
		return r ? &o->infos[r->line_id] : NULL;
	}
	return NULL;
}

struct line_info *linemap_find(const char *file, unsigned line)
{
	size_t n = atomic_load_explicit(&n_objects, memory_order_acquire);

	for (size_t i = 0; i < n; i++) {
		long id = line_table_find_line(objects[i].table, file, line);

		if (id >= 0)
			return &objects[i].infos[id];
	}
	return NULL;
}

uintptr_t linemap_find_address(const char *file, unsigned line, char *object_path, size_t path_size,
			       uint64_t *file_addr)
{
	size_t n = atomic_load_explicit(&n_objects, memory_order_acquire);

	for (size_t i = 0; i < n; i++) {
		uint64_t a = line_table_find_address(objects[i].table, file, line);

		if (a) {
			str_copy(object_path, objects[i].path, path_size);
			*file_addr = a;
			return (uintptr_t)a + objects[i].bias;
		}
	}
	return 0;
}

void linemap_foreach_line(void (*fn)(struct line_info *li, void *ctx), void *ctx)
{
	size_t n = atomic_load_explicit(&n_objects, memory_order_acquire);

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < objects[i].table->n_lines; j++)
			fn(&objects[i].infos[j], ctx);
}

struct line_info *linemap_first_line(void)
{
	size_t n = atomic_load_explicit(&n_objects, memory_order_acquire);

	for (size_t i = 0; i < n; i++)
		if (objects[i].table->n_lines)
			return &objects[i].infos[0];
	return NULL;
}

size_t linemap_object_count(void)
{
	return atomic_load(&n_objects);
}

size_t linemap_missing_debug(const char **first)
{
	*first = first_missing_debug;
	return objects_without_debug;
}

const char *linemap_main_exe(void)
{
	return main_exe;
}

/* dlopen: map newly loaded in-scope libraries (on the profiler thread). */
LEVER_EXPORT void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	void *h;

	if (!real)
		real = real_symbol("dlopen", NULL);
	if (!real)
		return NULL;
	h = real(file, mode);
	if (h && atomic_load(&rt.enabled))
		linemap_request_rescan();
	return h;
}
