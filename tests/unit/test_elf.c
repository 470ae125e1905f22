/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the elf module against programs with known answers
 * (tests/programs/symbolize, built by tests/programs/symbolize.cmake with gcc
 * and clang, DWARF 4 and 5, -O0 and -O2, PIE and non-PIE, compressed and
 * separate debug information). Line numbers come from "LINE:<name>" marker
 * comments in the sources; addresses come from the programs' symbol tables,
 * read here with libelf independently of the code under test.
 */
#include "elf/elf.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#define SHORT_PATH 1024
static char bin_dir[SHORT_PATH];  /* built programs */
static char prog_src[SHORT_PATH]; /* prog.c */
static char inl_src[SHORT_PATH];  /* inl.h */
static char self_src[SHORT_PATH]; /* this file */

/* ---------- helpers ---------- */

static void paths_init(void)
{
	const char *b = getenv("LEVER_TEST_BINARY_DIR");
	const char *s = getenv("LEVER_TEST_SOURCE_DIR");

	if (!b || !s) {
		fprintf(stderr, "LEVER_TEST_BINARY_DIR and LEVER_TEST_SOURCE_DIR must be set\n");
		exit(1);
	}
	snprintf(bin_dir, sizeof(bin_dir), "%s/tests/programs/symbolize", b);
	snprintf(prog_src, sizeof(prog_src), "%s/tests/programs/symbolize/prog.c", s);
	snprintf(inl_src, sizeof(inl_src), "%s/tests/programs/symbolize/inl.h", s);
	snprintf(self_src, sizeof(self_src), "%s/tests/unit/test_elf.c", s);
}

/* Line number of the marker comment LINE:name in file. */
static unsigned marker(const char *file, const char *name)
{
	char needle[128], buf[1024];
	unsigned n = 0, found = 0;
	FILE *f = fopen(file, "r");

	assert_non_null(f);
	snprintf(needle, sizeof(needle), "/* LINE:%s */", name);
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, needle)) {
			assert_int_equal(found, 0);
			found = n;
		}
	}
	fclose(f);
	if (!found)
		fail_msg("no marker %s in %s", name, file);
	return found;
}

static bool same_inode(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

struct sym {
	uint64_t value, size;
};

/* Looks name up in .symtab, then .dynsym, of the ELF file at path. */
static bool elf_symbol(const char *path, const char *name, struct sym *out)
{
	bool found = false;
	int fd = open(path, O_RDONLY);
	Elf *elf;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	for (int pass = 0; elf && pass < 2 && !found; pass++) {
		Elf_Scn *scn = NULL;

		while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr shdr;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &shdr) ||
			    shdr.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
				continue;
			data = elf_getdata(scn, NULL);
			for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
				GElf_Sym s;
				const char *n;

				if (!gelf_getsym(data, (int)i, &s) || s.st_value == 0 ||
				    GELF_ST_TYPE(s.st_info) != STT_FUNC)
					continue;
				n = elf_strptr(elf, shdr.sh_link, s.st_name);
				if (n && strcmp(n, name) == 0) {
					out->value = s.st_value;
					out->size = s.st_size;
					found = true;
					break;
				}
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

/* Reads n bytes at file address addr through the section headers. */
static bool elf_section_bytes(const char *path, uint64_t addr, void *buf, size_t n)
{
	bool ok = false;
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !ok && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS ||
		    !(shdr.sh_flags & SHF_ALLOC) || addr < shdr.sh_addr ||
		    addr + n > shdr.sh_addr + shdr.sh_size)
			continue;
		ok = pread(fd, buf, n, (off_t)(shdr.sh_offset + addr - shdr.sh_addr)) == (ssize_t)n;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

static bool path_is_canonical(const char *p)
{
	size_t n = strlen(p);

	return p[0] == '/' && !strstr(p, "//") && !strstr(p, "/./") && !strstr(p, "/../") &&
	       !(n >= 2 && strcmp(p + n - 2, "/.") == 0) &&
	       !(n >= 3 && strcmp(p + n - 3, "/..") == 0) && (n == 1 || p[n - 1] != '/');
}

/* Properties every loaded table must have. */
static void check_table(const struct line_table *t)
{
	assert_non_null(t->line_stmt_addrs);
	assert_true(t->n_ranges > 0);
	for (size_t i = 0; i < t->n_ranges; i++) {
		const struct line_range *r = &t->ranges[i];

		assert_true(r->lo < r->hi);
		assert_true(r->line_id < t->n_lines);
		if (i > 0) {
			assert_true(t->ranges[i - 1].hi <= r->lo);
			/* Touching ranges of one line are merged. */
			assert_false(t->ranges[i - 1].hi == r->lo &&
				     t->ranges[i - 1].line_id == r->line_id);
		}
		assert_ptr_equal(line_table_lookup(t, r->lo), r);
		assert_ptr_equal(line_table_lookup(t, r->hi - 1), r);
	}
	for (size_t i = 0; i < t->n_lines; i++) {
		assert_true(t->lines[i].file_id < t->n_files);
		assert_true(t->lines[i].line > 0);
	}
	for (size_t i = 0; i < t->n_files; i++) {
		if (!path_is_canonical(t->files[i]))
			fail_msg("file name not canonical: %s", t->files[i]);
	}
}

/* File of the line at addr, or NULL. */
static const char *file_at(const struct line_table *t, uint64_t addr, unsigned *line)
{
	const struct line_range *r = line_table_lookup(t, addr);

	*line = 0;
	if (!r)
		return NULL;
	*line = t->lines[r->line_id].line;
	return t->files[t->lines[r->line_id].file_id];
}

/* A filter accepting prog.c only, remembering what it was asked. */
struct scope {
	char asked[64][PATH_MAX];
	unsigned n_asked;
	bool duplicate, relative;
};

static bool only_prog_c(const char *path, void *ctx)
{
	struct scope *s = ctx;

	for (unsigned i = 0; i < s->n_asked; i++)
		if (strcmp(s->asked[i], path) == 0)
			s->duplicate = true;
	if (path[0] != '/')
		s->relative = true;
	if (s->n_asked < 64)
		snprintf(s->asked[s->n_asked++], PATH_MAX, "%s", path);
	return same_inode(path, prog_src);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			n = -1;
	close(in);
	close(out);
	return n < 0 ? -1 : 0;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---------- one compiled variant ---------- */

struct func {
	const char *name;
	const char *begin, *end;
	unsigned lo, hi;
	struct sym sym;
};

static void test_variant(void **state)
{
	const char *variant = *state;
	bool o0 = strstr(variant, "-O0") != NULL;
	struct func funcs[] = {
	    {.name = "sum_squares", .begin = "sum_squares_begin", .end = "sum_squares_end"},
	    {.name = "count_bits", .begin = "count_bits_begin", .end = "count_bits_end"},
	    {.name = "use_mix", .begin = "use_mix_begin", .end = "use_mix_end"},
	    {.name = "main", .begin = "main_begin", .end = "main_end"},
	};
	const struct {
		const char *marker;
		int func;
	} stmts[] = {{"sum_squares_loop", 0}, {"count_bits_loop", 1}, {"main_call", 3}};
	char path[2 * PATH_MAX], err[512] = "", out[2 * PATH_MAX];
	struct line_table *all, *only;
	struct scope *scope = calloc(1, sizeof(*scope));
	unsigned call_mix = marker(prog_src, "call_mix");
	bool have_prog = false, have_inl = false;
	unsigned inlined = 0;

	assert_non_null(scope);
#ifndef LEVER_TEST_HAVE_CLANG
	if (strstr(variant, "clang")) {
		free(scope);
		skip();
	}
#endif
	snprintf(path, sizeof(path), "%s/%s", bin_dir, variant);
	if (access(path, R_OK) != 0)
		fail_msg("test program %s was not built", path);

	all = line_table_load(path, NULL, NULL, NULL, err, sizeof(err));
	if (!all)
		fail_msg("%s: %s", variant, err);
	check_table(all);
	only = line_table_load(path, NULL, only_prog_c, scope, err, sizeof(err));
	if (!only)
		fail_msg("%s (filtered): %s", variant, err);
	check_table(only);
	assert_string_equal(all->debug_path, path);

	/* File names: canonical (the compiler saw symbolize/../symbolize/...). */
	for (size_t i = 0; i < all->n_files; i++) {
		have_prog |= same_inode(all->files[i], prog_src);
		have_inl |= same_inode(all->files[i], inl_src);
	}
	assert_true(have_prog);
	assert_true(have_inl);
	assert_int_equal(only->n_files, 1);
	assert_true(same_inode(only->files[0], prog_src));
	assert_non_null(strstr(only->files[0], "/tests/programs/symbolize/prog.c"));
	/* The filter is asked once per file, with absolute paths. */
	assert_true(scope->n_asked >= 2);
	assert_false(scope->duplicate);
	assert_false(scope->relative);

	/* Every byte of each function maps into that function's lines. */
	for (size_t f = 0; f < sizeof(funcs) / sizeof(funcs[0]); f++) {
		struct func *fn = &funcs[f];
		const char *file;
		unsigned line, mapped = 0;

		fn->lo = marker(prog_src, fn->begin);
		fn->hi = marker(prog_src, fn->end);
		if (!elf_symbol(path, fn->name, &fn->sym))
			fail_msg("%s: no symbol %s", variant, fn->name);
		assert_true(fn->sym.size > 0);
		file = file_at(only, fn->sym.value, &line);
		if (!file)
			fail_msg("%s: entry of %s not mapped", variant, fn->name);
		assert_true(line >= fn->lo && line <= fn->hi);
		/* At -O0 the entry is the signature's line or the brace's. */
		if (o0)
			assert_true(line == fn->lo || line == fn->lo + 1);
		for (uint64_t a = fn->sym.value; a < fn->sym.value + fn->sym.size; a++) {
			if (!file_at(only, a, &line))
				continue;
			if (line < fn->lo || line > fn->hi)
				fail_msg("%s: %s+%#lx maps to line %u, outside %u..%u", variant,
					 fn->name, (unsigned long)(a - fn->sym.value), line, fn->lo,
					 fn->hi);
			mapped++;
		}
		/* clang leaves a few line-0 rows; nearly everything is mapped. */
		if (mapped * 10 < fn->sym.size * 8)
			fail_msg("%s: only %u of %lu bytes of %s mapped", variant, mapped,
				 (unsigned long)fn->sym.size, fn->name);
	}

	/* Statement lines: find_address lands in the right function and maps back. */
	for (size_t s = 0; s < sizeof(stmts) / sizeof(stmts[0]); s++) {
		const struct func *fn = &funcs[stmts[s].func];
		unsigned want = marker(prog_src, stmts[s].marker), line;
		uint64_t a = line_table_find_address(only, "symbolize/prog.c", want);
		long idx = line_table_find_line(only, "prog.c", want);

		if (!a)
			fail_msg("%s: no address for line %u", variant, want);
		assert_true(a >= fn->sym.value && a < fn->sym.value + fn->sym.size);
		assert_int_equal(line_table_find_address(all, "prog.c", want), a);
		assert_non_null(file_at(only, a, &line));
		assert_true(line >= fn->lo && line <= fn->hi);
		if (o0)
			assert_int_equal(line, want);
		assert_true(idx >= 0);
		assert_int_equal(only->lines[idx].line, want);
		assert_int_equal(line_table_find_line(only, only->files[0], want), idx);
		assert_int_equal(line_table_find_line(only, "/prog.c", want), idx);
		assert_int_equal(line_table_find_line(only, "rog.c", want), -1);
		assert_int_equal(line_table_find_address(only, "rog.c", want), 0);
		assert_int_equal(line_table_find_line(only, "inl.h", want), -1);
	}

	/* Inlined header code maps to the call site once the header is out of scope. */
	if (o0) {
		struct sym mix;
		unsigned line;

		/* Not inlined at -O0: an out-of-line static function. */
		assert_true(elf_symbol(path, "mix_bits", &mix));
		assert_true(same_inode(file_at(all, mix.value, &line), inl_src));
		assert_null(line_table_lookup(only, mix.value));
	} else {
		const struct func *fn = &funcs[2];

		for (uint64_t a = fn->sym.value; a < fn->sym.value + fn->sym.size; a++) {
			unsigned line;
			const char *file = file_at(all, a, &line);

			if (!file || !same_inode(file, inl_src))
				continue;
			inlined++;
			file = file_at(only, a, &line);
			if (!file || line != call_mix)
				fail_msg("%s: inlined byte use_mix+%#lx maps to %s:%u, not %u",
					 variant, (unsigned long)(a - fn->sym.value),
					 file ? file : "nothing", line, call_mix);
		}
		assert_true(inlined > 0);
	}

	/* File offsets agree with the section headers. */
	{
		uint64_t off = 0, bad;
		unsigned char want[16], got[16];
		int fd = open(path, O_RDONLY);

		assert_true(elf_address_to_offset(path, funcs[0].sym.value, &off));
		assert_true(elf_section_bytes(path, funcs[0].sym.value, want, sizeof(want)));
		assert_true(fd >= 0);
		assert_int_equal(pread(fd, got, sizeof(got), (off_t)off), sizeof(got));
		close(fd);
		assert_memory_equal(want, got, sizeof(want));
		assert_false(elf_address_to_offset(path, 0x7fff00000000ULL, &bad));
	}

	/* The binary carries its own debug information. */
	assert_true(debug_file_find(path, NULL, out, sizeof(out)));
	assert_string_equal(out, path);

	line_table_free(all);
	line_table_free(only);
	free(scope);
}

/* ---------- separate debug files ---------- */

static struct line_table *load_or_fail(const char *path, const char *root)
{
	char err[512] = "";
	struct line_table *t = line_table_load(path, root, NULL, NULL, err, sizeof(err));

	if (!t)
		fail_msg("%s: %s", path, err);
	check_table(t);
	return t;
}

static void assert_tables_equal(const struct line_table *a, const struct line_table *b)
{
	assert_int_equal(a->n_ranges, b->n_ranges);
	assert_int_equal(a->n_lines, b->n_lines);
	assert_int_equal(a->n_files, b->n_files);
	for (size_t i = 0; i < a->n_ranges; i++) {
		assert_int_equal(a->ranges[i].lo, b->ranges[i].lo);
		assert_int_equal(a->ranges[i].hi, b->ranges[i].hi);
		assert_int_equal(a->ranges[i].line_id, b->ranges[i].line_id);
	}
	for (size_t i = 0; i < a->n_lines; i++) {
		assert_int_equal(a->lines[i].file_id, b->lines[i].file_id);
		assert_int_equal(a->lines[i].line, b->lines[i].line);
		assert_int_equal(a->line_stmt_addrs[i], b->line_stmt_addrs[i]);
	}
	for (size_t i = 0; i < a->n_files; i++)
		assert_string_equal(a->files[i], b->files[i]);
}

static void test_separate_debug(void **state)
{
	char full[PATH_MAX], dbg[PATH_MAX], stripped[PATH_MAX], root[PATH_MAX], empty[PATH_MAX];
	char next_bin[PATH_MAX], next_dbg[PATH_MAX], dot_bin[PATH_MAX], dot_dbg[PATH_MAX];
	char want[2 * PATH_MAX], out[PATH_MAX], err[512] = "";
	char tmp[] = "/tmp/lever-test-elf-XXXXXX", dir[PATH_MAX], real_dir[PATH_MAX];
	char bin[2 * PATH_MAX], tmp_root[PATH_MAX], deep[3 * PATH_MAX], bad[2 * PATH_MAX];
	struct line_table *t_full, *t_id, *t_next, *t_dot;
	struct sym sum;
	unsigned line;
	const char *file;

	snprintf(full, sizeof(full), "%s/split/sym-split.full", bin_dir);
	snprintf(dbg, sizeof(dbg), "%s/split/sym-split.debug", bin_dir);
	snprintf(stripped, sizeof(stripped), "%s/split/buildid/sym-split", bin_dir);
	snprintf(root, sizeof(root), "%s/split/debugroot", bin_dir);
	snprintf(empty, sizeof(empty), "%s/split/emptyroot", bin_dir);
	snprintf(next_bin, sizeof(next_bin), "%s/split/linknext/sym-split", bin_dir);
	snprintf(next_dbg, sizeof(next_dbg), "%s/split/linknext/sym-split.debug", bin_dir);
	snprintf(dot_bin, sizeof(dot_bin), "%s/split/linkdot/sym-split", bin_dir);
	snprintf(dot_dbg, sizeof(dot_dbg), "%s/split/linkdot/.debug/sym-split.debug", bin_dir);

	/* 1. The file itself. */
	assert_true(debug_file_find(full, empty, out, sizeof(out)));
	assert_string_equal(out, full);
	/* 2. Build ID. */
	assert_true(debug_file_find(stripped, root, out, sizeof(out)));
	snprintf(want, sizeof(want), "%s/.build-id/01/23456789abcdef0123456789abcdef01234567.debug",
		 root);
	assert_string_equal(out, want);
	assert_false(debug_file_find(stripped, empty, out, sizeof(out)));
	assert_null(line_table_load(stripped, empty, NULL, NULL, err, sizeof(err)));
	assert_true(strlen(err) > 0);
	/* 3. .gnu_debuglink next to the file and in .debug/. */
	assert_true(debug_file_find(next_bin, empty, out, sizeof(out)));
	assert_true(same_inode(out, next_dbg));
	assert_true(debug_file_find(dot_bin, empty, out, sizeof(out)));
	assert_true(same_inode(out, dot_dbg));
	/* Build ID comes before the debug link. */
	assert_true(debug_file_find(next_bin, root, out, sizeof(out)));
	assert_string_equal(out, want);

	/* The same line table from every place. */
	t_full = load_or_fail(full, empty);
	t_id = load_or_fail(stripped, root);
	t_next = load_or_fail(next_bin, empty);
	t_dot = load_or_fail(dot_bin, empty);
	assert_string_equal(t_id->debug_path, want);
	assert_true(same_inode(t_next->debug_path, next_dbg));
	assert_tables_equal(t_full, t_id);
	assert_tables_equal(t_full, t_next);
	assert_tables_equal(t_full, t_dot);
	assert_true(elf_symbol(stripped, "sum_squares", &sum));
	file = file_at(t_id, sum.value, &line);
	assert_non_null(file);
	assert_true(same_inode(file, prog_src));
	assert_true(line >= marker(prog_src, "sum_squares_begin") &&
		    line <= marker(prog_src, "sum_squares_end"));
	line_table_free(t_full);
	line_table_free(t_id);
	line_table_free(t_next);
	line_table_free(t_dot);

	/* <root><dir>/N, after a candidate next to the file with a bad CRC. */
	assert_non_null(mkdtemp(tmp));
	snprintf(dir, sizeof(dir), "%s/bin", tmp);
	assert_int_equal(mkdir_p(dir), 0);
	assert_non_null(realpath(dir, real_dir));
	snprintf(bin, sizeof(bin), "%s/sym-split", dir);
	assert_int_equal(copy_file(next_bin, bin), 0);
	snprintf(tmp_root, sizeof(tmp_root), "%s/root", tmp);
	snprintf(deep, sizeof(deep), "%s%s", tmp_root, real_dir);
	assert_int_equal(mkdir_p(deep), 0);
	snprintf(deep, sizeof(deep), "%s%s/sym-split.debug", tmp_root, real_dir);
	assert_int_equal(copy_file(dbg, deep), 0);
	snprintf(bad, sizeof(bad), "%s/sym-split.debug", dir);
	assert_int_equal(copy_file(dbg, bad), 0);
	{
		/* Flip one byte of the copy next to the binary. */
		int fd = open(bad, O_RDWR);
		unsigned char c;

		assert_true(fd >= 0);
		assert_int_equal(pread(fd, &c, 1, 100), 1);
		c ^= 0x55;
		assert_int_equal(pwrite(fd, &c, 1, 100), 1);
		close(fd);
	}
	assert_true(debug_file_find(bin, tmp_root, out, sizeof(out)));
	assert_string_equal(out, deep);
	/* Only the corrupted copy left: nothing found. */
	assert_int_equal(unlink(deep), 0);
	assert_false(debug_file_find(bin, tmp_root, out, sizeof(out)));
	/* A good copy next to it is found again. */
	assert_int_equal(copy_file(dbg, bad), 0);
	assert_true(debug_file_find(bin, tmp_root, out, sizeof(out)));
	assert_true(same_inode(out, bad));
	rm_rf(tmp);
}

/* ---------- objects loaded in this process ---------- */

__attribute__((noinline)) int elf_test_marker_function(int x) /* LINE:self_begin */
{
	return x * 3 + 1;
} /* LINE:self_end */

struct objects {
	unsigned calls, mains, libcs;
	bool main_ok, libc_ok, paths_ok;
	char self[PATH_MAX];
	uintptr_t self_bias;
	char bad_path[PATH_MAX];
};

static int objects_cb(const struct loaded_object *o, void *ctx)
{
	struct objects *s = ctx;
	struct sym sym;

	s->calls++;
	if (o->path[0] != '/' || strstr(o->path, "vdso") || !path_is_canonical(o->path))
		snprintf(s->bad_path, sizeof(s->bad_path), "%s", o->path);
	if (o->is_main) {
		uintptr_t f = (uintptr_t)&elf_test_marker_function;

		s->mains++;
		s->self_bias = o->load_bias;
		s->main_ok = strcmp(o->path, s->self) == 0 &&
			     elf_symbol(o->path, "elf_test_marker_function", &sym) &&
			     f - o->load_bias == sym.value && o->exec_lo <= f && f < o->exec_hi;
	}
	if (strstr(o->path, "/libc.so")) {
		uintptr_t f = (uintptr_t)&gnu_get_libc_version;

		s->libcs++;
		s->libc_ok = elf_symbol(o->path, "gnu_get_libc_version", &sym) &&
			     f - o->load_bias == sym.value && o->exec_lo <= f && f < o->exec_hi;
	}
	return 0;
}

static int stop_cb(const struct loaded_object *o, void *ctx)
{
	(*(unsigned *)ctx)++;
	return 42;
}

static void test_loaded_objects(void **state)
{
	struct objects *s = calloc(1, sizeof(*s));
	unsigned calls = 0, line;
	ssize_t n;
	char err[512] = "";
	struct line_table *t;
	const char *file;

	assert_non_null(s);
	n = readlink("/proc/self/exe", s->self, sizeof(s->self) - 1);
	assert_true(n > 0);
	s->self[n] = '\0';
	assert_int_equal(loaded_objects_foreach(objects_cb, s), 0);
	if (s->bad_path[0])
		fail_msg("bad object path %s", s->bad_path);
	assert_int_equal(s->mains, 1);
	assert_true(s->main_ok);
	assert_int_equal(s->libcs, 1);
	assert_true(s->libc_ok);
	assert_true(s->calls >= 3); /* at least us, libc, ld.so */

	assert_int_equal(loaded_objects_foreach(stop_cb, &calls), 42);
	assert_int_equal(calls, 1);

	/* Our own line table maps our own code to this file. */
	t = line_table_load(s->self, NULL, NULL, NULL, err, sizeof(err));
	if (!t)
		fail_msg("%s: %s", s->self, err);
	file = file_at(t, (uintptr_t)&elf_test_marker_function - s->self_bias, &line);
	assert_non_null(file);
	assert_true(same_inode(file, self_src));
	assert_true(line >= marker(self_src, "self_begin") && line <= marker(self_src, "self_end"));
	line_table_free(t);
	free(s);
}

/* ---------- lookups on a table built by hand ---------- */

static void test_hand_table(void **state)
{
	char *files[] = {"/x/a/b.c", "/x/ab.c", "/y/a/b.c"};
	struct source_line lines[] = {{0, 10}, {1, 10}, {0, 11}, {2, 10}};
	struct line_range ranges[] = {
	    {0x100, 0x110, 1}, {0x110, 0x120, 0}, {0x130, 0x140, 2}, {0x150, 0x151, 3}};
	uint64_t stmts[] = {0x118, 0x100, 0x130, 0x150};
	struct line_table t = {
	    .ranges = ranges,
	    .n_ranges = 4,
	    .lines = lines,
	    .n_lines = 4,
	    .files = files,
	    .n_files = 3,
	};
	struct line_table empty = {0};

	assert_null(line_table_lookup(&t, 0xff));
	assert_ptr_equal(line_table_lookup(&t, 0x100), &ranges[0]);
	assert_ptr_equal(line_table_lookup(&t, 0x10f), &ranges[0]);
	assert_ptr_equal(line_table_lookup(&t, 0x110), &ranges[1]);
	assert_null(line_table_lookup(&t, 0x120));
	assert_null(line_table_lookup(&t, 0x12f));
	assert_ptr_equal(line_table_lookup(&t, 0x13f), &ranges[2]);
	assert_ptr_equal(line_table_lookup(&t, 0x150), &ranges[3]);
	assert_null(line_table_lookup(&t, 0x151));
	assert_null(line_table_lookup(&t, UINT64_MAX));
	assert_null(line_table_lookup(&empty, 0x100));

	/* Suffixes match at component boundaries only. */
	assert_int_equal(line_table_find_line(&t, "ab.c", 10), 1);
	assert_int_equal(line_table_find_line(&t, "b.c", 10), 0);
	assert_int_equal(line_table_find_line(&t, "a/b.c", 10), 0);
	assert_int_equal(line_table_find_line(&t, "/x/a/b.c", 10), 0);
	assert_int_equal(line_table_find_line(&t, "x/a/b.c", 10), 0);
	assert_int_equal(line_table_find_line(&t, "y/a/b.c", 10), 3);
	assert_int_equal(line_table_find_line(&t, "b.c", 11), 2);
	assert_int_equal(line_table_find_line(&t, "b.c", 12), -1);
	assert_int_equal(line_table_find_line(&t, "/ab.c", 10), 1);
	assert_int_equal(line_table_find_line(&t, "x/ab.c", 10), 1);
	assert_int_equal(line_table_find_line(&t, "xab.c", 10), -1);
	assert_int_equal(line_table_find_line(&t, "", 10), -1);
	assert_int_equal(line_table_find_line(&t, "/x/a/b.c/", 10), -1);

	/* Without statement addresses: the lowest range of the line. */
	assert_int_equal(line_table_find_address(&t, "x/a/b.c", 10), 0x110);
	/* Several files match: the lowest address over all of them. */
	assert_int_equal(line_table_find_address(&t, "a/b.c", 10), 0x110);
	assert_int_equal(line_table_find_address(&t, "ab.c", 10), 0x100);
	assert_int_equal(line_table_find_address(&t, "b.c", 12), 0);
	t.line_stmt_addrs = stmts;
	assert_int_equal(line_table_find_address(&t, "/x/a/b.c", 10), 0x118);
	assert_int_equal(line_table_find_address(&t, "a/b.c", 10), 0x118);
	assert_int_equal(line_table_find_address(&t, "y/a/b.c", 10), 0x150);
	assert_int_equal(line_table_find_address(&t, "b.c", 11), 0x130);
}

/* ---------- a hand-written line table (symbolize/lines.s) ---------- */

static bool only_hand_c(const char *path, void *ctx)
{
	return strcmp(path, "/lever-test/hand.c") == 0;
}

/* Line at start + off in t: 0 if unmapped, -1 if mapped to another file. */
static long hand_line(const struct line_table *t, uint64_t start, uint64_t off)
{
	unsigned line;
	const char *file = file_at(t, start + off, &line);

	if (!file)
		return 0;
	return strcmp(file, "/lever-test/hand.c") == 0 ? (long)line : -1;
}

static void test_handmade_lines(void **state)
{
	char path[2 * PATH_MAX], err[512] = "";
	struct line_table *all, *only;
	struct sym start;
	uint64_t s;
	unsigned line;
	/* offset from _start -> line (0: nothing, -1: other.h) */
	static const struct {
		uint64_t off;
		long all, only;
	} want[] = {
	    {0x00, 10, 10}, {0x0f, 10, 10}, {0x10, 11, 11}, {0x17, 11, 11}, {0x18, -1, 0},
	    {0x1b, -1, 0},  {0x1c, -1, 20}, {0x1f, -1, 20}, {0x20, 20, 20}, {0x2f, 20, 20},
	    {0x30, 31, 31}, {0x37, 31, 31}, {0x38, 32, 32}, {0x3b, 32, 32}, {0x3c, 0, 0},
	    {0x3f, 0, 0},   {0x40, 32, 32}, {0x44, 33, 33}, {0x4f, 33, 33}, {0x50, 0, 0},
	    {0x6f, 0, 0},   {0x70, 40, 40}, {0x7f, 40, 40}, {0x80, 0, 0},   {0xff, 0, 0},
	};

	snprintf(path, sizeof(path), "%s/hand-lines", bin_dir);
	assert_true(elf_symbol(path, "_start", &start));
	s = start.value;
	assert_true(s > 0x1000);
	all = line_table_load(path, NULL, NULL, NULL, err, sizeof(err));
	if (!all)
		fail_msg("%s: %s", path, err);
	only = line_table_load(path, NULL, only_hand_c, NULL, err, sizeof(err));
	if (!only)
		fail_msg("%s: %s", path, err);
	check_table(all);
	check_table(only);

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (hand_line(all, s, want[i].off) != want[i].all ||
		    hand_line(only, s, want[i].off) != want[i].only)
			fail_msg("_start+%#lx: got %ld/%ld, want %ld/%ld",
				 (unsigned long)want[i].off, hand_line(all, s, want[i].off),
				 hand_line(only, s, want[i].off), want[i].all, want[i].only);
	}
	/* The sequence the linker left at 0 is gone. */
	for (uint64_t a = 0; a < 0x40; a++)
		assert_null(file_at(all, a, &line));
	assert_int_equal(line_table_find_line(all, "hand.c", 99), -1);
	/* "sub/../hand.c" is hand.c; other.h only where unfiltered. */
	assert_int_equal(all->n_files, 2);
	assert_int_equal(only->n_files, 1);
	assert_string_equal(only->files[0], "/lever-test/hand.c");
	/* Touching rows of line 33 became one range. */
	assert_int_equal(line_table_lookup(all, s + 0x44)->lo, s + 0x44);
	assert_int_equal(line_table_lookup(all, s + 0x44)->hi, s + 0x50);
	/* Statement rows: 32's lowest row is not one; 30 only has an empty one. */
	assert_int_equal(line_table_find_address(only, "hand.c", 32), s + 0x40);
	assert_int_equal(line_table_find_address(only, "hand.c", 30), s + 0x30);
	assert_int_equal(line_table_find_address(only, "hand.c", 31), s + 0x30);
	assert_int_equal(line_table_find_address(only, "hand.c", 33), s + 0x44);
	assert_int_equal(line_table_find_address(only, "lever-test/hand.c", 10), s);
	assert_int_equal(line_table_find_address(only, "other.h", 5), 0);
	assert_int_equal(line_table_find_address(all, "other.h", 5), s + 0x18);
	assert_true(line_table_find_line(only, "hand.c", 30) >= 0);
	assert_int_equal(line_table_find_line(only, "and.c", 30), -1);
	line_table_free(all);
	line_table_free(only);
}

static void test_errors(void **state)
{
	char err[512] = "", out[PATH_MAX];
	char path[PATH_MAX];

	assert_null(line_table_load("/nonexistent/lever/file", NULL, NULL, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/lever/file"));
	assert_false(debug_file_find("/nonexistent/lever/file", NULL, out, sizeof(out)));
	/* Not an ELF file. */
	assert_false(debug_file_find(prog_src, NULL, out, sizeof(out)));
	err[0] = '\0';
	assert_null(line_table_load(prog_src, NULL, NULL, NULL, err, sizeof(err)));
	assert_true(strlen(err) > 0);
	assert_false(elf_address_to_offset(prog_src, 0x1000, NULL));
	/* A buffer too small for the answer. */
	snprintf(path, sizeof(path), "%s/sym-gcc-d5-O0-pie", bin_dir);
	assert_false(debug_file_find(path, NULL, out, 4));
	line_table_free(NULL);
}

/* ---------- sections by name ---------- */

/*
 * The section headers of an ELF64 file read by hand with pread (the oracle the
 * libelf-based finder is checked against): names[i] is section i's name.
 */
struct raw_sections {
	Elf64_Shdr shdr[256];
	char names[256][64];
	size_t n;
};

static void raw_sections_read(const char *path, struct raw_sections *raw)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	Elf64_Shdr strtab;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(memcmp(eh.e_ident, ELFMAG, SELFMAG), 0);
	assert_true(eh.e_shnum > 0 && eh.e_shnum <= sizeof(raw->shdr) / sizeof(raw->shdr[0]));
	raw->n = eh.e_shnum;
	for (size_t i = 0; i < raw->n; i++)
		assert_int_equal(pread(fd, &raw->shdr[i], sizeof(Elf64_Shdr),
				       (off_t)(eh.e_shoff + i * eh.e_shentsize)),
				 sizeof(Elf64_Shdr));
	strtab = raw->shdr[eh.e_shstrndx];
	for (size_t i = 0; i < raw->n; i++) {
		ssize_t got = pread(fd, raw->names[i], sizeof(raw->names[i]) - 1,
				    (off_t)(strtab.sh_offset + raw->shdr[i].sh_name));

		assert_true(got > 0);
		raw->names[i][got] = '\0';
	}
	close(fd);
}

static void test_sections_by_name(void **state)
{
	struct raw_sections *raw = calloc(1, sizeof(*raw));
	char path[PATH_MAX];
	const char not_elf[] = "not an ELF file at all, only text\n";
	int fd;
	Elf *elf;
	size_t checked = 0;

	(void)state;
	assert_non_null(raw);
	snprintf(path, sizeof(path), "%s/sym-gcc-d5-O0-pie", bin_dir);
	raw_sections_read(path, raw);
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	for (size_t i = 1; i < raw->n; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_section_by_name(elf, raw->names[i], &sh);
		size_t first = i;

		/* The first section of that name. */
		for (size_t j = 1; j < i; j++)
			if (strcmp(raw->names[j], raw->names[i]) == 0 && first == i)
				first = j;
		assert_non_null(scn);
		assert_int_equal(elf_ndxscn(scn), first);
		assert_int_equal(sh.sh_offset, raw->shdr[first].sh_offset);
		assert_int_equal(sh.sh_size, raw->shdr[first].sh_size);
		assert_int_equal(sh.sh_type, raw->shdr[first].sh_type);
		assert_string_equal(elf_section_name(elf, &sh), raw->names[i]);
		checked++;
	}
	/* A C program linked by gcc has at least these. */
	assert_true(checked >= 20);
	assert_non_null(elf_section_by_name(elf, ".text", NULL));
	assert_non_null(elf_section_by_name(elf, ".debug_line", NULL));
	/* Whole names only: no prefix, no extension, nothing absent. */
	assert_null(elf_section_by_name(elf, ".tex", NULL));
	assert_null(elf_section_by_name(elf, ".text.", NULL));
	assert_null(elf_section_by_name(elf, "", NULL));
	assert_null(elf_section_by_name(elf, "lever_no_such_section", NULL));
	elf_end(elf);
	close(fd);

	/* Not an ELF file: nothing found, nothing crashes. */
	elf = elf_memory((char *)not_elf, sizeof(not_elf));
	assert_non_null(elf);
	assert_null(elf_section_by_name(elf, ".text", NULL));
	elf_end(elf);
	free(raw);
}

#define VARIANT(name) cmocka_unit_test_prestate(test_variant, (void *)(name))
#define VARIANTS(cc)                                                                               \
	VARIANT("sym-" cc "-d4-O0-pie"), VARIANT("sym-" cc "-d4-O0-nopie"),                        \
	    VARIANT("sym-" cc "-d4-O2-pie"), VARIANT("sym-" cc "-d4-O2-nopie"),                    \
	    VARIANT("sym-" cc "-d5-O0-pie"), VARIANT("sym-" cc "-d5-O0-nopie"),                    \
	    VARIANT("sym-" cc "-d5-O2-pie"), VARIANT("sym-" cc "-d5-O2-nopie")

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_table),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_loaded_objects),
	    cmocka_unit_test(test_separate_debug),
	    cmocka_unit_test(test_handmade_lines),
	    cmocka_unit_test(test_sections_by_name),
	    VARIANTS("gcc"),
	    VARIANTS("clang"),
	    VARIANT("sym-gcc-d5-O2-pie-gz"),
	};

	paths_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
