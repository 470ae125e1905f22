/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * DWARF line tables: address ranges -> (source file, line), read with libdw.
 *
 * Loading walks every line-number program once with dwarf_next_lines(). libdw
 * hands each program back sorted by address, with an end_sequence row placed
 * before a normal row at the same address, and otherwise in program order. So
 * a row's range ends at the next greater address in its program, and of
 * several rows at one address the last non-end row is the one that describes
 * the instruction there (the others are empty). Only rows whose file passes
 * the filter become ranges; the rest still end the ranges before them. The
 * sorted rows do not say which sequence a row came from, so two sequences of
 * one program that overlap cut each other's ranges short; compilers emit
 * that only for code the linker discarded, which the next rule drops.
 *
 * Rows outside every executable section (code the linker discarded, left at
 * address 0) are dropped, and ranges are clipped to their section. Files are
 * interned in a hash table, lines in per-file pages indexed by line number.
 * The ranges are radix-sorted by address; where two overlap (different
 * programs covering the same code), the one that starts lower wins.
 *
 * If the filter rejected some file, the DIE trees are walked as well (also of
 * split-DWARF units libdw finds): code inlined from an out-of-scope function
 * at an in-scope call site is mapped to the call site's line wherever no
 * in-scope row covers it; deeper inline call sites win over the ones they are
 * nested in.
 */
#include "elf/elf.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

#define NO_ADDR		UINT64_MAX
#define FILE_UNRESOLVED (-2)
#define FILE_NONE	(-1)
#define PATH_BUF_SIZE	8192

struct span {
	uint64_t lo, hi;
};

struct inline_range {
	uint64_t lo, hi;
	uint32_t line_id;
	uint32_t depth;
};

/*
 * Line ids of one file by line number, in pages of PAGE_LINES allocated on
 * first use: rows of a unit cluster by file and line, so this stays in cache
 * where a hash table over all lines would not. Lines from PAGED_LINES up
 * (absurd, but possible with #line) go to a hash table.
 */
#define PAGE_BITS   8
#define PAGE_LINES  (1u << PAGE_BITS)
#define PAGED_LINES (1u << 24)

struct file_lines {
	uint32_t **pages; /* pages[line / PAGE_LINES][line % PAGE_LINES] = id + 1 */
	size_t n_pages;
};

struct builder {
	source_filter_fn filter;
	void *filter_ctx;

	/* Interned source files (all of them, in scope or not), by file id. */
	struct string_table files;
	bool *file_in_scope;
	struct file_lines *file_lines;
	size_t n_files, cap_files; /* set entries of file_in_scope and file_lines */

	/* Interned (file, line) pairs of in-scope files. */
	struct source_line *lines;
	uint64_t *stmt_lo;	 /* lowest non-empty statement row */
	uint64_t *stmt_lo_empty; /* lowest empty statement row */
	size_t n_lines, cap_lines;
	uint32_t *line_slots; /* line id + 1; 0 = empty; lines >= PAGED_LINES only */
	size_t line_slots_size, n_hashed_lines;
	uint64_t last_line_key;
	uint32_t last_line_id;

	struct line_range *ranges;
	size_t n_ranges, cap_ranges;

	struct inline_range *inl;
	size_t n_inl, cap_inl;

	/* Executable sections, sorted and merged. */
	struct span *exec;
	size_t n_exec, exec_hint;

	/* File index of the current unit -> file id (or FILE_*). */
	int32_t *unit_files;
	size_t n_unit_files, cap_unit_files;
	Dwarf_CU *unit_cu;

	bool any_rejected;
	bool oom;
	char join[PATH_BUF_SIZE];
	char path[PATH_BUF_SIZE];
};

static void set_error(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_error(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (!err || !err_size)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
}

/* Grows *p (elements of elem bytes, capacity *cap) to hold need elements. */
static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return true;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return false;
		n *= 2;
	}
	q = realloc(*p, n * elem);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

/* ---------- paths ---------- */

/* True if an absolute path has no empty, "." or ".." component. */
static bool path_is_clean(const char *p)
{
	const char *c = p + 1;

	if (p[0] != '/')
		return false;
	if (*c == '\0')
		return true;
	for (;;) {
		/* c is at the start of a component. */
		if (*c == '/' || *c == '\0')
			return false;
		if (c[0] == '.' && (c[1] == '/' || c[1] == '\0'))
			return false;
		if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == '\0'))
			return false;
		c = strchrnul(c, '/');
		if (*c == '\0')
			return true;
		c++;
	}
}

/*
 * Lexically normalizes path into out: collapses "//" and ".", resolves ".."
 * against the previous component (".." at the root stays at the root, a
 * relative path keeps the ".." it cannot resolve). Does not touch the file
 * system. Returns the length, or 0 if it does not fit.
 */
static size_t path_normalize(const char *path, char *out, size_t size)
{
	bool absolute = path[0] == '/';
	size_t n = 0;			 /* bytes written */
	size_t floor = absolute ? 1 : 0; /* ".." cannot remove out[0..floor) */

	if (size < 2)
		return 0;
	if (absolute)
		out[n++] = '/';
	for (const char *c = path; *c;) {
		const char *e;
		size_t len, sep;

		while (*c == '/')
			c++;
		if (*c == '\0')
			break;
		e = strchrnul(c, '/');
		len = (size_t)(e - c);
		if (len == 1 && c[0] == '.') {
			c = e;
			continue;
		}
		if (len == 2 && c[0] == '.' && c[1] == '.') {
			if (n > floor) {
				/* Drop the last component and its separator. */
				while (n > floor && out[n - 1] != '/')
					n--;
				if (n > floor)
					n--;
				c = e;
				continue;
			}
			if (absolute) {
				c = e;
				continue;
			}
		}
		sep = n > 0 && out[n - 1] != '/';
		if (n + sep + len + 1 > size)
			return 0;
		if (sep)
			out[n++] = '/';
		memcpy(out + n, c, len);
		n += len;
		if (len == 2 && c[0] == '.' && c[1] == '.')
			floor = n;
		c = e;
	}
	if (n == 0)
		out[n++] = '.';
	out[n] = '\0';
	return n;
}

/* ---------- interning ---------- */

/* Interns the canonical path (len bytes); returns its id or FILE_NONE. */
static int32_t file_intern(struct builder *b, const char *path, size_t len)
{
	size_t known = b->files.n, cap_lines = b->cap_files;
	uint32_t id = string_table_intern(&b->files, path, len);

	if (id == UINT32_MAX || id >= INT32_MAX)
		goto oom;
	if (id < known)
		return (int32_t)id;
	/* A new file: its scope and its (empty) pages of lines. */
	if (!grow((void **)&b->file_lines, &cap_lines, id + 1, sizeof(struct file_lines)) ||
	    !grow((void **)&b->file_in_scope, &b->cap_files, id + 1, sizeof(bool)))
		goto oom;
	b->file_lines[id].pages = NULL;
	b->file_lines[id].n_pages = 0;
	b->file_in_scope[id] =
	    b->filter ? b->filter(string_table_text(&b->files, id), b->filter_ctx) : true;
	if (!b->file_in_scope[id])
		b->any_rejected = true;
	b->n_files = (size_t)id + 1;
	return (int32_t)id;
oom:
	b->oom = true;
	return FILE_NONE;
}

/* Canonicalizes name (relative to comp_dir unless absolute) and interns it. */
static int32_t file_resolve(struct builder *b, const char *comp_dir, const char *name)
{
	const char *p = name;
	size_t len;

	if (name[0] != '/' && comp_dir && comp_dir[0]) {
		int n = snprintf(b->join, sizeof(b->join), "%s/%s", comp_dir, name);

		if (n < 0 || (size_t)n >= sizeof(b->join))
			return FILE_NONE;
		p = b->join;
	}
	if (path_is_clean(p))
		return file_intern(b, p, strlen(p));
	len = path_normalize(p, b->path, sizeof(b->path));
	if (!len)
		return FILE_NONE;
	return file_intern(b, b->path, len);
}

static const char *files_comp_dir(Dwarf_Files *files)
{
	const char *const *dirs;
	size_t ndirs;

	if (dwarf_getsrcdirs(files, &dirs, &ndirs) != 0 || ndirs == 0)
		return NULL;
	return dirs[0];
}

static bool unit_begin(struct builder *b, Dwarf_CU *cu, size_t nfiles)
{
	if (!grow((void **)&b->unit_files, &b->cap_unit_files, nfiles ? nfiles : 1,
		  sizeof(int32_t))) {
		b->oom = true;
		return false;
	}
	for (size_t i = 0; i < nfiles; i++)
		b->unit_files[i] = FILE_UNRESOLVED;
	b->n_unit_files = nfiles;
	b->unit_cu = cu;
	return true;
}

/* File id of file index idx of the current unit, or FILE_NONE. */
static int32_t unit_file(struct builder *b, Dwarf_Files *files, size_t idx)
{
	const char *name;
	int32_t id;

	if (idx < b->n_unit_files && b->unit_files[idx] != FILE_UNRESOLVED)
		return b->unit_files[idx];
	name = dwarf_filesrc(files, idx, NULL, NULL);
	id = name ? file_resolve(b, files_comp_dir(files), name) : FILE_NONE;
	if (idx < b->n_unit_files)
		b->unit_files[idx] = id;
	return id;
}

static bool line_slots_rehash(struct builder *b, size_t size)
{
	uint32_t *slots = calloc(size, sizeof(*slots));

	if (!slots)
		return false;
	for (size_t id = 0; id < b->n_lines; id++) {
		uint64_t key = (uint64_t)b->lines[id].file_id << 32 | b->lines[id].line;
		size_t i = hash_u64(key) & (size - 1);

		if (b->lines[id].line < PAGED_LINES)
			continue;
		while (slots[i])
			i = (i + 1) & (size - 1);
		slots[i] = (uint32_t)id + 1;
	}
	free(b->line_slots);
	b->line_slots = slots;
	b->line_slots_size = size;
	return true;
}

/* Adds the line (file_id, line); returns its id or UINT32_MAX. */
static uint32_t line_new(struct builder *b, uint32_t file_id, uint32_t line)
{
	size_t cap_a = b->cap_lines, cap_b = b->cap_lines;
	uint32_t id;

	if (b->n_lines >= UINT32_MAX - 1)
		return UINT32_MAX;
	if (!grow((void **)&b->stmt_lo, &cap_a, b->n_lines + 1, sizeof(uint64_t)) ||
	    !grow((void **)&b->stmt_lo_empty, &cap_b, b->n_lines + 1, sizeof(uint64_t)) ||
	    !grow((void **)&b->lines, &b->cap_lines, b->n_lines + 1, sizeof(struct source_line)))
		return UINT32_MAX;
	id = (uint32_t)b->n_lines++;
	b->lines[id].file_id = file_id;
	b->lines[id].line = line;
	b->stmt_lo[id] = NO_ADDR;
	b->stmt_lo_empty[id] = NO_ADDR;
	return id;
}

/* Id of the line with a number from PAGED_LINES up, or UINT32_MAX. */
static uint32_t line_intern_hashed(struct builder *b, uint32_t file_id, uint32_t line)
{
	uint64_t key = (uint64_t)file_id << 32 | line;
	size_t mask, i;
	uint32_t id;

	if ((b->n_hashed_lines + 1) * 2 > b->line_slots_size &&
	    !line_slots_rehash(b, b->line_slots_size ? b->line_slots_size * 2 : 64))
		return UINT32_MAX;
	mask = b->line_slots_size - 1;
	for (i = hash_u64(key) & mask; b->line_slots[i]; i = (i + 1) & mask) {
		id = b->line_slots[i] - 1;
		if (b->lines[id].file_id == file_id && b->lines[id].line == line)
			return id;
	}
	id = line_new(b, file_id, line);
	if (id != UINT32_MAX) {
		b->line_slots[i] = id + 1;
		b->n_hashed_lines++;
	}
	return id;
}

/* Interns (file_id, line); returns its id or UINT32_MAX when out of memory. */
static uint32_t line_intern(struct builder *b, uint32_t file_id, uint32_t line)
{
	uint64_t key = (uint64_t)file_id << 32 | line;
	struct file_lines *fl = &b->file_lines[file_id];
	size_t page = line >> PAGE_BITS;
	uint32_t *slot, id;

	if (b->n_lines && key == b->last_line_key)
		return b->last_line_id;
	if (line >= PAGED_LINES) {
		id = line_intern_hashed(b, file_id, line);
		goto out;
	}
	if (page >= fl->n_pages) {
		size_t n = fl->n_pages ? fl->n_pages : 4;
		uint32_t **pages;

		while (n <= page)
			n *= 2;
		pages = realloc(fl->pages, n * sizeof(*pages));
		if (!pages)
			goto oom;
		memset(pages + fl->n_pages, 0, (n - fl->n_pages) * sizeof(*pages));
		fl->pages = pages;
		fl->n_pages = n;
	}
	if (!fl->pages[page] && !(fl->pages[page] = calloc(PAGE_LINES, sizeof(uint32_t))))
		goto oom;
	slot = &fl->pages[page][line & (PAGE_LINES - 1)];
	if (!*slot) {
		id = line_new(b, file_id, line);
		if (id == UINT32_MAX)
			goto oom;
		*slot = id + 1;
	}
	id = *slot - 1;
out:
	if (id == UINT32_MAX)
		goto oom;
	b->last_line_key = key;
	b->last_line_id = id;
	return id;
oom:
	b->oom = true;
	return UINT32_MAX;
}

/* ---------- executable sections ---------- */

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static bool exec_add(struct builder *b, uint64_t lo, uint64_t hi, size_t *cap)
{
	if (hi <= lo)
		return true;
	if (!grow((void **)&b->exec, cap, b->n_exec + 1, sizeof(struct span)))
		return false;
	b->exec[b->n_exec].lo = lo;
	b->exec[b->n_exec].hi = hi;
	b->n_exec++;
	return true;
}

/*
 * Collects the address ranges of executable sections (or, without section
 * headers, executable segments). Separate debug files keep the section
 * headers of the stripped file, as SHT_NOBITS.
 */
static bool exec_collect(struct builder *b, Elf *elf)
{
	size_t cap = b->n_exec;
	Elf_Scn *scn = NULL;
	size_t nphdr, out;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		if ((shdr.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
			continue;
		if (!exec_add(b, shdr.sh_addr, shdr.sh_addr + shdr.sh_size, &cap))
			return false;
	}
	if (b->n_exec == 0 && elf_getphdrnum(elf, &nphdr) == 0) {
		for (size_t i = 0; i < nphdr; i++) {
			GElf_Phdr phdr;

			if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD ||
			    !(phdr.p_flags & PF_X))
				continue;
			if (!exec_add(b, phdr.p_vaddr, phdr.p_vaddr + phdr.p_memsz, &cap))
				return false;
		}
	}
	if (b->n_exec == 0)
		return true;
	qsort(b->exec, b->n_exec, sizeof(*b->exec), span_cmp);
	out = 0;
	for (size_t i = 0; i < b->n_exec; i++) {
		if (out && b->exec[i].lo <= b->exec[out - 1].hi) {
			if (b->exec[i].hi > b->exec[out - 1].hi)
				b->exec[out - 1].hi = b->exec[i].hi;
		} else {
			b->exec[out++] = b->exec[i];
		}
	}
	b->n_exec = out;
	return true;
}

/* The executable span containing addr, or NULL. No spans: everything is. */
static const struct span *exec_find(struct builder *b, uint64_t addr)
{
	static const struct span everything = {0, UINT64_MAX};
	size_t lo = 0, hi = b->n_exec;
	const struct span *s;

	if (b->n_exec == 0)
		return &everything;
	s = &b->exec[b->exec_hint];
	if (addr >= s->lo && addr < s->hi)
		return s;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->exec[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == b->n_exec || addr < b->exec[lo].lo)
		return NULL;
	b->exec_hint = lo;
	return &b->exec[lo];
}

/* ---------- line-number programs ---------- */

struct row {
	uint64_t addr;
	size_t file;
	int line;
	bool stmt;
};

static void range_append(struct builder *b, uint64_t lo, uint64_t hi, uint32_t line_id)
{
	struct line_range *last;

	if (b->n_ranges) {
		last = &b->ranges[b->n_ranges - 1];
		if (last->hi == lo && last->line_id == line_id) {
			last->hi = hi;
			return;
		}
	}
	if (!grow((void **)&b->ranges, &b->cap_ranges, b->n_ranges + 1, sizeof(*b->ranges))) {
		b->oom = true;
		return;
	}
	b->ranges[b->n_ranges].lo = lo;
	b->ranges[b->n_ranges].hi = hi;
	b->ranges[b->n_ranges].line_id = line_id;
	b->n_ranges++;
}

/* Line id of an in-scope row in an executable section, or UINT32_MAX. */
static uint32_t row_line(struct builder *b, Dwarf_Files *files, const struct row *r,
			 const struct span **sec)
{
	int32_t fid;

	if (r->line <= 0)
		return UINT32_MAX;
	*sec = exec_find(b, r->addr);
	if (!*sec)
		return UINT32_MAX;
	fid = unit_file(b, files, r->file);
	if (fid < 0 || !b->file_in_scope[fid])
		return UINT32_MAX;
	return line_intern(b, (uint32_t)fid, (uint32_t)r->line);
}

/* Row r describes [r->addr, hi). */
static void row_emit(struct builder *b, Dwarf_Files *files, const struct row *r, uint64_t hi)
{
	const struct span *sec;
	uint32_t id = row_line(b, files, r, &sec);

	if (id == UINT32_MAX)
		return;
	if (hi > sec->hi)
		hi = sec->hi;
	if (r->stmt && r->addr < b->stmt_lo[id])
		b->stmt_lo[id] = r->addr;
	range_append(b, r->addr, hi, id);
}

/* Row r is followed by another row at the same address: it covers nothing. */
static void row_empty(struct builder *b, Dwarf_Files *files, const struct row *r)
{
	const struct span *sec;
	uint32_t id;

	if (!r->stmt)
		return;
	id = row_line(b, files, r, &sec);
	if (id != UINT32_MAX && r->addr < b->stmt_lo_empty[id])
		b->stmt_lo_empty[id] = r->addr;
}

static void unit_lines(struct builder *b, Dwarf_CU *cu, Dwarf_Files *files, size_t nfiles,
		       Dwarf_Lines *lines, size_t nlines)
{
	struct row pending = {0};
	bool have = false;

	if (!unit_begin(b, cu, nfiles))
		return;
	for (size_t i = 0; i < nlines && !b->oom; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		Dwarf_Files *lf;
		bool end = false, stmt = false;
		int line = 0;
		size_t idx = 0;

		if (!l || dwarf_lineaddr(l, &addr) != 0)
			continue;
		if (have && addr > pending.addr) {
			row_emit(b, files, &pending, addr);
			have = false;
		}
		dwarf_lineendsequence(l, &end);
		if (end) {
			/* Only ends sequences; one at the pending row's address empties it. */
			if (have)
				row_empty(b, files, &pending);
			have = false;
			continue;
		}
		if (have)
			row_empty(b, files, &pending);
		dwarf_lineno(l, &line);
		dwarf_linebeginstatement(l, &stmt);
		if (dwarf_line_file(l, &lf, &idx) != 0)
			idx = SIZE_MAX;
		pending.addr = addr;
		pending.file = idx;
		pending.line = line;
		pending.stmt = stmt;
		have = true;
	}
	/* A last row without end_sequence has no known end: dropped. */
}

static int read_line_programs(struct builder *b, Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	Dwarf_CU *cu = NULL;
	size_t units = 0;
	int rc;

	for (;;) {
		Dwarf_Files *files;
		Dwarf_Lines *lines;
		size_t nfiles, nlines;

		rc = dwarf_next_lines(dw, off, &next, &cu, &files, &nfiles, &lines, &nlines);
		if (rc != 0)
			break;
		unit_lines(b, cu, files, nfiles, lines, nlines);
		if (b->oom)
			return -1;
		units++;
		off = next;
	}
	/* An error after some units: keep what was read. */
	if (rc < 0 && units == 0)
		return -1;
	return (int)(units > 0);
}

/* ---------- sorting and overlap ---------- */

/*
 * Stable LSD radix sort of ranges by lo (equal lo keep their order), with
 * passes only over the digits in which the addresses differ.
 */
static bool ranges_sort(struct line_range *r, size_t n)
{
	enum { BITS = 11, BUCKETS = 1 << BITS, PASSES = (64 + BITS - 1) / BITS };
	size_t(*count)[BUCKETS];
	struct line_range *tmp, *src = r, *dst;
	uint64_t varying = 0;
	bool sorted = true, pass[PASSES];

	for (size_t i = 1; i < n; i++) {
		varying |= r[i].lo ^ r[0].lo;
		if (r[i].lo < r[i - 1].lo)
			sorted = false;
	}
	if (sorted)
		return true;
	count = calloc(PASSES, sizeof(*count));
	tmp = malloc(n * sizeof(*tmp));
	if (!count || !tmp) {
		free(count);
		free(tmp);
		return false;
	}
	dst = tmp;
	for (int p = 0; p < PASSES; p++)
		pass[p] = (varying >> (p * BITS)) & (BUCKETS - 1);
	for (int p = 0; p < PASSES; p++) {
		size_t sum = 0;

		if (!pass[p])
			continue;
		for (size_t i = 0; i < n; i++)
			count[p][(src[i].lo >> (p * BITS)) & (BUCKETS - 1)]++;
		for (size_t d = 0; d < BUCKETS; d++) {
			size_t c = count[p][d];

			count[p][d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[p][(src[i].lo >> (p * BITS)) & (BUCKETS - 1)]++] = src[i];
		struct line_range *t = src;

		src = dst;
		dst = t;
	}
	if (src != r)
		memcpy(r, src, n * sizeof(*r));
	free(count);
	free(tmp);
	return true;
}

/*
 * Makes sorted ranges non-overlapping (a range starting lower keeps the
 * overlap) and merges touching ranges of the same line. Returns the count.
 */
static size_t ranges_resolve(struct line_range *r, size_t n)
{
	size_t out = 0;
	uint64_t end = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t lo = r[i].lo, hi = r[i].hi;
		uint32_t id = r[i].line_id;

		if (out && lo < end)
			lo = end;
		if (lo >= hi)
			continue;
		if (out && r[out - 1].hi == lo && r[out - 1].line_id == id) {
			r[out - 1].hi = hi;
		} else {
			r[out].lo = lo;
			r[out].hi = hi;
			r[out].line_id = id;
			out++;
		}
		end = hi;
	}
	return out;
}

/* ---------- inlined subroutines ---------- */

static void inline_add(struct builder *b, uint64_t lo, uint64_t hi, uint32_t line_id,
		       unsigned depth)
{
	const struct span *sec = exec_find(b, lo);

	if (!sec || hi <= lo)
		return;
	if (hi > sec->hi)
		hi = sec->hi;
	if (!grow((void **)&b->inl, &b->cap_inl, b->n_inl + 1, sizeof(*b->inl))) {
		b->oom = true;
		return;
	}
	b->inl[b->n_inl].lo = lo;
	b->inl[b->n_inl].hi = hi;
	b->inl[b->n_inl].line_id = line_id;
	b->inl[b->n_inl].depth = depth;
	b->n_inl++;
}

/* In-scope state of decl_file of a DIE: 1 in scope, 0 out, -1 unknown. */
static int decl_in_scope(struct builder *b, Dwarf_Files *unit_files, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	Dwarf_Die cudie;
	Dwarf_Files *files;
	size_t nfiles;
	const char *name;
	int32_t fid;

	if (!dwarf_attr_integrate(die, DW_AT_decl_file, &attr) || dwarf_formudata(&attr, &idx) != 0)
		return -1;
	if (attr.cu == b->unit_cu) {
		fid = unit_file(b, unit_files, idx);
	} else {
		/* Declared in another unit (LTO, partial units). */
		if (!dwarf_cu_die(attr.cu, &cudie, NULL, NULL, NULL, NULL, NULL, NULL) ||
		    dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0)
			return -1;
		name = dwarf_filesrc(files, idx, NULL, NULL);
		fid = name ? file_resolve(b, files_comp_dir(files), name) : FILE_NONE;
	}
	if (fid < 0)
		return -1;
	return b->file_in_scope[fid];
}

static void inline_visit(struct builder *b, Dwarf_Files *files, Dwarf_Die *die, unsigned depth)
{
	Dwarf_Attribute attr;
	Dwarf_Word call_file, call_line;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int32_t fid;
	uint32_t id;

	if (!dwarf_attr(die, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &call_file) != 0)
		return;
	if (!dwarf_attr(die, DW_AT_call_line, &attr) || dwarf_formudata(&attr, &call_line) != 0 ||
	    call_line == 0 || call_line > UINT32_MAX)
		return;
	fid = unit_file(b, files, call_file);
	if (fid < 0 || !b->file_in_scope[fid])
		return;
	if (decl_in_scope(b, files, die) == 1)
		return;
	id = line_intern(b, (uint32_t)fid, (uint32_t)call_line);
	if (id == UINT32_MAX)
		return;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0 && !b->oom)
		inline_add(b, start, end, id, depth);
}

static void die_walk(struct builder *b, Dwarf_Files *files, Dwarf_Die *parent, unsigned depth)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_inlined_subroutine:
			inline_visit(b, files, &child, depth);
			die_walk(b, files, &child, depth + 1);
			break;
		case DW_TAG_subprogram:
			if (dwarf_hasattr(&child, DW_AT_declaration))
				break;
			/* fallthrough */
		case DW_TAG_lexical_block:
		case DW_TAG_namespace:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_module:
			die_walk(b, files, &child, depth);
			break;
		default:
			break;
		}
	} while (!b->oom && dwarf_siblingof(&child, &child) == 0);
}

static void read_inlines(struct builder *b, Dwarf *dw)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;

	while (!b->oom &&
	       dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
		Dwarf_Die *top = &cudie;
		Dwarf_Files *files;
		size_t nfiles;

		/* Split DWARF: the DIEs are in the .dwo unit, if libdw found it. */
		if (unit_type == DW_UT_skeleton)
			top = &subdie;
		else if (unit_type != DW_UT_compile)
			continue;
		if (dwarf_tag(top) != DW_TAG_compile_unit)
			continue;
		if (dwarf_getsrcfiles(top, &files, &nfiles) != 0)
			continue;
		if (!unit_begin(b, top->cu, nfiles))
			return;
		die_walk(b, files, top, 0);
	}
}

static int inline_cmp(const void *a, const void *b)
{
	const struct inline_range *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth > y->depth ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->line_id < y->line_id ? -1 : x->line_id > y->line_id;
}

/*
 * Adds the inline ranges where nothing covers them yet, deepest call sites
 * first. b->ranges must be sorted and non-overlapping; it stays so.
 */
static bool inlines_apply(struct builder *b)
{
	struct line_range *pieces = NULL, *merged = NULL;
	size_t cap_pieces = 0, cap_merged = 0;
	size_t g0 = 0;

	qsort(b->inl, b->n_inl, sizeof(*b->inl), inline_cmp);
	while (g0 < b->n_inl) {
		size_t g1 = g0, n_pieces = 0, ci = 0, n_cov = b->n_ranges, i = 0, j = 0, n = 0;
		const struct line_range *cov = b->ranges;
		uint64_t claimed = 0;
		bool any = false;

		while (g1 < b->n_inl && b->inl[g1].depth == b->inl[g0].depth)
			g1++;
		for (size_t k = g0; k < g1; k++) {
			uint64_t lo = b->inl[k].lo, hi = b->inl[k].hi, cur;

			if (any && lo < claimed)
				lo = claimed;
			if (lo >= hi)
				continue;
			any = true;
			claimed = hi;
			while (ci < n_cov && cov[ci].hi <= lo)
				ci++;
			cur = lo;
			for (size_t c = ci; cur < hi;) {
				uint64_t next;

				if (c < n_cov && cov[c].lo <= cur) {
					if (cov[c].hi > cur)
						cur = cov[c].hi;
					c++;
					continue;
				}
				next = c < n_cov && cov[c].lo < hi ? cov[c].lo : hi;
				if (!grow((void **)&pieces, &cap_pieces, n_pieces + 1,
					  sizeof(*pieces)))
					goto oom;
				pieces[n_pieces].lo = cur;
				pieces[n_pieces].hi = next;
				pieces[n_pieces].line_id = b->inl[k].line_id;
				n_pieces++;
				cur = next;
			}
		}
		if (n_pieces) {
			if (!grow((void **)&merged, &cap_merged, n_cov + n_pieces, sizeof(*merged)))
				goto oom;
			while (i < n_cov || j < n_pieces) {
				if (j == n_pieces || (i < n_cov && cov[i].lo < pieces[j].lo))
					merged[n++] = cov[i++];
				else
					merged[n++] = pieces[j++];
			}
			/* Swap buffers: merged becomes the ranges. */
			struct line_range *old = b->ranges;
			size_t old_cap = b->cap_ranges;

			b->ranges = merged;
			b->cap_ranges = cap_merged;
			b->n_ranges = n;
			merged = old;
			cap_merged = old_cap;
		}
		g0 = g1;
	}
	free(pieces);
	free(merged);
	b->n_ranges = ranges_resolve(b->ranges, b->n_ranges);
	return true;
oom:
	free(pieces);
	free(merged);
	return false;
}

/* ---------- building the table ---------- */

static void file_lines_free(struct builder *b)
{
	for (size_t i = 0; b->file_lines && i < b->n_files; i++) {
		for (size_t p = 0; p < b->file_lines[i].n_pages; p++)
			free(b->file_lines[i].pages[p]);
		free(b->file_lines[i].pages);
	}
	free(b->file_lines);
	b->file_lines = NULL;
}

static void builder_free(struct builder *b)
{
	string_table_free(&b->files);
	free(b->file_in_scope);
	file_lines_free(b);
	free(b->lines);
	free(b->stmt_lo);
	free(b->stmt_lo_empty);
	free(b->line_slots);
	free(b->ranges);
	free(b->inl);
	free(b->exec);
	free(b->unit_files);
	free(b);
}

/* Moves the results into a table, keeping only files that lines refer to. */
static struct line_table *builder_finish(struct builder *b, const char *debug_path)
{
	struct line_table *t = calloc(1, sizeof(*t));
	size_t n_files;
	char **files = string_table_release(&b->files, &n_files);
	uint32_t *remap = calloc(n_files ? n_files : 1, sizeof(*remap));
	size_t n = 0;

	file_lines_free(b);
	if (!t || !remap) {
		for (size_t f = 0; f < n_files; f++)
			free(files[f]);
		free(files);
		free(t);
		free(remap);
		return NULL;
	}
	for (size_t l = 0; l < b->n_lines; l++)
		remap[b->lines[l].file_id] = 1;
	for (size_t f = 0; f < n_files; f++) {
		if (remap[f]) {
			files[n] = files[f];
			remap[f] = (uint32_t)n++;
		} else {
			free(files[f]);
		}
	}
	for (size_t l = 0; l < b->n_lines; l++) {
		b->lines[l].file_id = remap[b->lines[l].file_id];
		b->stmt_lo[l] = b->stmt_lo[l] != NO_ADDR	 ? b->stmt_lo[l]
				: b->stmt_lo_empty[l] != NO_ADDR ? b->stmt_lo_empty[l]
								 : 0;
	}
	free(remap);

	t->ranges = b->ranges;
	t->n_ranges = b->n_ranges;
	t->lines = b->lines;
	t->n_lines = b->n_lines;
	t->files = files;
	t->n_files = n;
	t->line_stmt_addrs = b->stmt_lo;
	/* Give back the slack of the big arrays. */
	if (t->n_ranges) {
		void *p = realloc(t->ranges, t->n_ranges * sizeof(*t->ranges));

		if (p)
			t->ranges = p;
	}
	snprintf(t->debug_path, sizeof(t->debug_path), "%s", debug_path);
	b->ranges = NULL;
	b->lines = NULL;
	b->stmt_lo = NULL;
	return t;
}

struct line_table *line_table_load(const char *path, const char *debug_root,
				   source_filter_fn filter, void *filter_ctx, char *err,
				   size_t err_size)
{
	char debug_path[4096];
	struct line_table *table = NULL;
	struct builder *b = NULL;
	Elf *elf = NULL, *orig = NULL;
	Dwarf *dw = NULL;
	int fd = -1, orig_fd = -1;
	int rc;

	orig_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (orig_fd < 0) {
		set_error(err, err_size, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (!debug_file_find(path, debug_root, debug_path, sizeof(debug_path))) {
		set_error(err, err_size,
			  "%s: no debug information (no .debug_line, no build-id or "
			  ".gnu_debuglink file under %s)",
			  path, debug_root ? debug_root : "/usr/lib/debug");
		goto out;
	}
	elf_version(EV_CURRENT);
	fd = open(debug_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		set_error(err, err_size, "%s: %s", debug_path, strerror(errno));
		goto out;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		set_error(err, err_size, "%s: not an ELF file", debug_path);
		goto out;
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw) {
		set_error(err, err_size, "%s: %s", debug_path, dwarf_errmsg(-1));
		goto out;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		goto oom;
	b->filter = filter;
	b->filter_ctx = filter_ctx;
	if (!exec_collect(b, elf))
		goto oom;
	if (b->n_exec == 0) {
		orig = elf_begin(orig_fd, ELF_C_READ_MMAP, NULL);
		if (orig && !exec_collect(b, orig))
			goto oom;
	}
	rc = read_line_programs(b, dw);
	if (b->oom)
		goto oom;
	if (rc <= 0) {
		set_error(err, err_size, "%s: no line information%s%s", debug_path,
			  rc < 0 ? ": " : "", rc < 0 ? dwarf_errmsg(-1) : "");
		goto out;
	}
	if (!ranges_sort(b->ranges, b->n_ranges))
		goto oom;
	b->n_ranges = ranges_resolve(b->ranges, b->n_ranges);
	if (b->any_rejected) {
		read_inlines(b, dw);
		if (b->oom)
			goto oom;
		if (b->n_inl && !inlines_apply(b))
			goto oom;
	}
	table = builder_finish(b, debug_path);
	if (!table)
		goto oom;
	goto out;
oom:
	set_error(err, err_size, "%s: out of memory reading line tables", path);
out:
	if (b)
		builder_free(b);
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	if (orig)
		elf_end(orig);
	if (fd >= 0)
		close(fd);
	close(orig_fd);
	return table;
}

void line_table_free(struct line_table *table)
{
	if (!table)
		return;
	for (size_t i = 0; i < table->n_files; i++)
		free(table->files[i]);
	free(table->files);
	free(table->lines);
	free(table->ranges);
	free(table->line_stmt_addrs);
	free(table);
}

/* ---------- queries ---------- */

const struct line_range *line_table_lookup(const struct line_table *table, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!table)
		return NULL;
	hi = table->n_ranges;
	/* First range with hi > addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (table->ranges[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < table->n_ranges && table->ranges[lo].lo <= addr)
		return &table->ranges[lo];
	return NULL;
}

/* path ends with suffix, and the match starts at a path-component boundary. */
static bool path_has_suffix(const char *path, const char *suffix)
{
	size_t pl = strlen(path), sl = strlen(suffix);

	if (sl == 0 || sl > pl)
		return false;
	if (strcmp(path + pl - sl, suffix) != 0)
		return false;
	return sl == pl || suffix[0] == '/' || path[pl - sl - 1] == '/';
}

long line_table_find_line(const struct line_table *table, const char *file_suffix, unsigned line)
{
	if (!table || !file_suffix)
		return -1;
	for (size_t l = 0; l < table->n_lines; l++) {
		if (table->lines[l].line == line &&
		    path_has_suffix(table->files[table->lines[l].file_id], file_suffix))
			return (long)l;
	}
	return -1;
}

uint64_t line_table_find_address(const struct line_table *table, const char *file_suffix,
				 unsigned line)
{
	uint64_t best = 0;

	if (!table || !file_suffix)
		return 0;
	for (size_t l = 0; l < table->n_lines; l++) {
		uint64_t a = 0;

		if (table->lines[l].line != line ||
		    !path_has_suffix(table->files[table->lines[l].file_id], file_suffix))
			continue;
		if (table->line_stmt_addrs) {
			a = table->line_stmt_addrs[l];
		} else {
			/* A table built by hand: the lowest range of the line. */
			for (size_t r = 0; r < table->n_ranges; r++) {
				if (table->ranges[r].line_id == l) {
					a = table->ranges[r].lo;
					break;
				}
			}
		}
		if (a && (!best || a < best))
			best = a;
	}
	return best;
}
