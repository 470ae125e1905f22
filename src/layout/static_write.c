// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * layout_static_write(): the static half of a layout record for a binary
 * (spec autocpa.md §2.5 and §8.5; doc/layout-refs.md) — struct layouts from
 * DWARF, the reference table {pc → struct, field, read/write} and the basic
 * blocks that hold references, as `struct`, `field`, `ref` and `block`
 * lines (doc/formats/layout-record.md). The thesis ran Ghidra once per
 * binary because it is slow; here the result is cached by ELF build ID
 * under $XDG_CACHE_HOME/lever/layout/ (spec §7 "cached by build-id"),
 * keyed also by lever's own build ID and the options.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "elf/elf.h"
#include "layout/static.h"
#include "layout/fail.h"

/* Bump when the output for the same binary changes: old cache entries go stale. */
#define STATIC_REVISION 1

/*
 * The build ID of the running program (lever itself): a lever rebuilt from
 * other sources under the same version number must not read what an older
 * one cached. Its length, 0 if there is none.
 */
static size_t own_build_id(unsigned char *out, size_t size)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	Elf *elf;
	size_t n = 0;

	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf)
		n = elf_build_id(elf, out, size);
	if (elf)
		elf_end(elf);
	close(fd);
	return n;
}

struct input {
	int fd, debug_fd;
	Elf *elf, *debug_elf;
	Dwarf *dw;
	struct st_code *code;
	size_t n_code;
	struct st_symbol *syms;
	size_t n_syms;
	unsigned char build_id[64];
	size_t build_id_len;
};

static void close_input(struct input *in)
{
	if (in->dw)
		dwarf_end(in->dw);
	if (in->debug_elf)
		elf_end(in->debug_elf);
	if (in->elf)
		elf_end(in->elf);
	if (in->debug_fd >= 0)
		close(in->debug_fd);
	if (in->fd >= 0)
		close(in->fd);
	free(in->code);
	free(in->syms);
}

static int collect_code(struct input *in)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(in->elf, scn))) {
		Elf_Data *d;
		struct st_code *grown;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		grown = realloc(in->code, (in->n_code + 1) * sizeof(*grown));
		if (!grown)
			return -1;
		in->code = grown;
		in->code[in->n_code++] = (struct st_code){sh.sh_addr, d->d_buf, d->d_size};
	}
	return 0;
}

static bool in_code(const struct input *in, uint64_t addr)
{
	for (size_t i = 0; i < in->n_code; i++)
		if (addr >= in->code[i].addr && addr < in->code[i].addr + in->code[i].size)
			return true;
	return false;
}

static int add_symbol(struct input *in, size_t *cap, uint64_t lo, uint64_t hi)
{
	if (in->n_syms == *cap) {
		size_t n = *cap ? 2 * *cap : 256;
		struct st_symbol *p = realloc(in->syms, n * sizeof(*p));

		if (!p)
			return -1;
		in->syms = p;
		*cap = n;
	}
	in->syms[in->n_syms++] = (struct st_symbol){lo, hi};
	return 0;
}

/*
 * Function symbols of .symtab; without one (a stripped binary whose DWARF
 * is in a separate file), DWARF's functions, which include the static ones
 * .dynsym lacks, and .dynsym's.
 */
static int collect_functions(struct input *in, const struct st_vars *v)
{
	size_t cap = 0;

	for (int pass = 0; pass < 2 && in->n_syms == 0; pass++) {
		if (pass == 1)
			for (size_t i = 0; i < v->n_functions; i++)
				if (in_code(in, v->functions[i].lo) &&
				    add_symbol(in, &cap, v->functions[i].lo, v->functions[i].hi))
					return -1;
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while ((scn = elf_nextscn(in->elf, scn))) {
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) ||
			    !(d = elf_getdata(scn, NULL)) || !sh.sh_entsize)
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;

				if (!gelf_getsym(d, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
				    sym.st_shndx == SHN_UNDEF || !in_code(in, sym.st_value))
					continue;
				if (add_symbol(in, &cap, sym.st_value, sym.st_value + sym.st_size))
					return -1;
			}
		}
	}
	return 0;
}

static int open_input(const char *binary, struct input *in, char *err, size_t err_size)
{
	char debug_path[4096];
	GElf_Ehdr eh;

	elf_version(EV_CURRENT);
	in->fd = open(binary, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0)
		return fail(err, err_size, "%s: %s", binary, strerror(errno));
	in->elf = elf_begin(in->fd, ELF_C_READ_MMAP, NULL);
	if (!in->elf || elf_kind(in->elf) != ELF_K_ELF || !gelf_getehdr(in->elf, &eh))
		return fail(err, err_size, "%s: not an ELF file", binary);
	if (eh.e_machine != EM_X86_64)
		return fail(err, err_size, "%s: not an x86-64 binary (machine %u)", binary,
			    eh.e_machine);
	in->build_id_len = elf_build_id(in->elf, in->build_id, sizeof(in->build_id));
	if (!debug_file_find(binary, NULL, debug_path, sizeof(debug_path)))
		return fail(err, err_size,
			    "%s has no DWARF debug information (build it with -g, or install its "
			    "debug symbols: the -dbgsym package)",
			    binary);
	if (strcmp(debug_path, binary) == 0) {
		in->dw = dwarf_begin_elf(in->elf, DWARF_C_READ, NULL);
	} else {
		in->debug_fd = open(debug_path, O_RDONLY | O_CLOEXEC);
		if (in->debug_fd >= 0)
			in->debug_elf = elf_begin(in->debug_fd, ELF_C_READ_MMAP, NULL);
		if (in->debug_elf)
			in->dw = dwarf_begin_elf(in->debug_elf, DWARF_C_READ, NULL);
	}
	if (!in->dw)
		return fail(err, err_size, "%s: cannot read DWARF from %s: %s", binary, debug_path,
			    dwarf_errmsg(-1));
	if (collect_code(in))
		return fail(err, err_size, "out of memory");
	return 0;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct st_ref *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return (x->member > y->member) - (x->member < y->member);
}

static int cmp_block(const void *a, const void *b)
{
	const struct st_block *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int cmp_struct_name(const void *a, const void *b, void *ctx)
{
	const struct st_types *t = ctx;

	return strcmp(t->s[*(const int32_t *)a].name, t->s[*(const int32_t *)b].name);
}

static bool name_wanted(const struct layout_static_options *o, const char *name)
{
	for (size_t i = 0; i < o->n_structs; i++)
		if (strcmp(o->structs[i], name) == 0)
			return true;
	return false;
}

/* Which structs are written: the referenced ones, or the ones named. */
static int choose_structs(struct st_types *t, struct st_result *r,
			  const struct layout_static_options *o, char *err, size_t err_size)
{
	for (size_t i = 0; i < r->n_refs; i++)
		r->refs[i].s = t->s[r->refs[i].s].canon;
	for (size_t i = 0; i < o->n_structs; i++) {
		bool found = false;

		for (size_t k = 0; k < t->n && !found; k++)
			found = t->s[k].name && t->s[k].canon == (int32_t)k &&
				strcmp(t->s[k].name, o->structs[i]) == 0;
		if (!found)
			return fail(err, err_size,
				    "no struct, class or typedef'd struct named '%s' "
				    "in the DWARF",
				    o->structs[i]);
	}
	for (size_t i = 0; i < t->n; i++)
		if (t->s[i].name && t->s[i].canon == (int32_t)i) {
			if (o->n_structs)
				t->s[i].wanted = name_wanted(o, t->s[i].name);
			else if (o->all_structs)
				t->s[i].wanted = true;
		}
	for (size_t i = 0; i < r->n_refs; i++) {
		struct st_struct *s = &t->s[r->refs[i].s];

		if (!o->n_structs && s->name)
			s->wanted = true;
	}
	/* system types only when asked for by name or with --all-structs */
	for (size_t i = 0; i < t->n; i++)
		if (t->s[i].wanted && t->s[i].system[0] && !o->n_structs && !o->all_structs &&
		    !t->s[i].unsupported[0])
			snprintf(t->s[i].unsupported, sizeof(t->s[i].unsupported),
				 "%s, not the program's to reorder (--struct %s keeps it)",
				 t->s[i].system, t->s[i].name);
	return 0;
}

static void write_field(FILE *f, const struct st_member *m)
{
	fprintf(f, "field\t%s\t%s\t%s\t%u\t%u\t%u%s\n", m->name, *m->type ? m->type : "?",
		*m->array ? m->array : "-", m->offset, m->size, m->align,
		m->pinned ? "\tpinned" : "");
}

static int write_structs(FILE *f, const struct st_types *t, struct layout_static_stats *stats)
{
	int32_t *order = calloc(t->n ? t->n : 1, sizeof(*order));
	size_t n = 0;

	if (!order)
		return -1;
	for (size_t i = 0; i < t->n; i++)
		if (t->s[i].wanted)
			order[n++] = (int32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_struct_name, (void *)t);
	for (size_t i = 0; i < n; i++) {
		const struct st_struct *s = &t->s[order[i]];

		if (s->unsupported[0]) {
			fprintf(f, "# struct %s left out: %s\n", s->name, s->unsupported);
			stats->unsupported++;
			continue;
		}
		fprintf(f, "struct\t%s\n", s->name);
		for (size_t k = 0; k < s->n; k++)
			write_field(f, &s->m[k]);
		stats->structs++;
	}
	free(order);
	return 0;
}

static void write_refs(FILE *f, const struct st_types *t, struct st_result *r,
		       struct layout_static_stats *stats)
{
	if (r->n_refs)
		qsort(r->refs, r->n_refs, sizeof(*r->refs), cmp_ref);
	for (size_t i = 0; i < r->n_refs;) {
		const struct st_ref *ref = &r->refs[i];
		const struct st_struct *s = &t->s[ref->s];
		bool write = false;
		size_t j = i;

		/* one line per (pc, struct, member): a read-modify-write is a write */
		for (; j < r->n_refs && cmp_ref(&r->refs[j], ref) == 0; j++)
			write |= r->refs[j].write;
		if (s->wanted && !s->unsupported[0]) {
			fprintf(f, "ref\t0x%llx\t%s\t%s\t%c\n", (unsigned long long)ref->pc,
				s->name, s->m[ref->member].name, write ? 'w' : 'r');
			stats->refs++;
		}
		i = j;
	}
	if (r->n_blocks)
		qsort(r->blocks, r->n_blocks, sizeof(*r->blocks), cmp_block);
	for (size_t i = 0; i < r->n_blocks; i++)
		fprintf(f, "block\t0x%llx\t0x%llx\n", (unsigned long long)r->blocks[i].lo,
			(unsigned long long)r->blocks[i].hi);
	stats->blocks = r->n_blocks;
}

static int analyse(struct input *in, const struct layout_static_options *o, FILE *body,
		   struct layout_static_stats *stats, char *err, size_t err_size)
{
	struct st_types t;
	struct st_vars v;
	struct st_result r = {0};
	int rc;

	if (st_types_load(in->dw, &t, err, err_size))
		return -1;
	if (st_vars_load(in->dw, in->elf, &t, &v, err, err_size)) {
		st_types_free(&t);
		return -1;
	}
	rc = collect_functions(in, &v) ? fail(err, err_size, "out of memory") : 0;
	if (rc == 0)
		rc = st_refs_find(&t, &v, in->code, in->n_code, in->syms, in->n_syms, &r, err,
				  err_size);
	if (rc == 0)
		rc = choose_structs(&t, &r, o, err, err_size);
	if (rc == 0) {
		stats->functions = r.functions;
		stats->instructions = r.instructions;
		stats->memory_operands = r.memory_operands;
		stats->typed_operands = r.typed_operands;
		fprintf(body,
			"# %zu functions, %zu instructions, %zu memory operands, %zu resolved to "
			"a struct field\n",
			stats->functions, stats->instructions, stats->memory_operands,
			stats->typed_operands);
		rc = write_structs(body, &t, stats) ? fail(err, err_size, "out of memory") : 0;
	}
	if (rc == 0)
		write_refs(body, &t, &r, stats);
	st_result_free(&r);
	st_vars_free(&v);
	st_types_free(&t);
	return rc;
}

/* $XDG_CACHE_HOME/lever/layout/BUILDID-KEY.refs, or false without a build ID or home. */
static bool cache_path(const struct input *in, const struct layout_static_options *o, char *out,
		       size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char dir[4096], id[129];
	uint64_t key = fnv1a(0, "lever-layout-static", 19);
	int rev = STATIC_REVISION;
	unsigned char self[64];

	if (!in->build_id_len)
		return false;
	if (xdg && *xdg == '/')
		snprintf(dir, sizeof(dir), "%s/lever/layout", xdg);
	else if (home && *home)
		snprintf(dir, sizeof(dir), "%s/.cache/lever/layout", home);
	else
		return false;
	key = fnv1a(key, &rev, sizeof(rev));
	key = fnv1a(key, LEVER_VERSION, strlen(LEVER_VERSION));
	key = fnv1a(key, self, own_build_id(self, sizeof(self)));
	for (size_t i = 0; i < o->n_structs; i++)
		key = fnv1a(key, o->structs[i], strlen(o->structs[i]) + 1);
	key = fnv1a(key, &o->all_structs, sizeof(o->all_structs));
	for (size_t i = 0; i < in->build_id_len; i++)
		snprintf(id + 2 * i, 3, "%02x", in->build_id[i]);
	return snprintf(out, size, "%s/%s-%016llx.refs", dir, id, (unsigned long long)key) <
	       (int)size;
}

static void make_dirs(const char *path)
{
	char buf[4096];

	str_copy(buf, path, sizeof(buf));
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
}

/* The stats line of a cached body, so a cache hit reports the same numbers. */
static void parse_stats(const char *body, struct layout_static_stats *stats)
{
	const char *line;

	sscanf(body, "# %zu functions, %zu instructions, %zu memory operands, %zu resolved",
	       &stats->functions, &stats->instructions, &stats->memory_operands,
	       &stats->typed_operands);
	for (line = body; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, "struct\t", 7) == 0)
			stats->structs++;
		else if (strncmp(line, "ref\t", 4) == 0)
			stats->refs++;
		else if (strncmp(line, "block\t", 6) == 0)
			stats->blocks++;
		else if (strncmp(line, "# struct ", 9) == 0)
			stats->unsupported++;
	}
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	*len = 0;
	for (;;) {
		size_t got;

		if (cap - *len < 65536) {
			char *p = realloc(buf, cap + 65536 + 1);

			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
			cap += 65536;
		}
		got = fread(buf + *len, 1, cap - *len, f);
		*len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		buf = NULL;
	} else {
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

static void write_cache(const char *path, const char *body, size_t len)
{
	char tmp[4400];
	FILE *f;

	make_dirs(path);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return; /* a cache we cannot write is only slower next time */
	if (fwrite(body, 1, len, f) != len || fclose(f) != 0 || rename(tmp, path) != 0)
		unlink(tmp);
}

int layout_static_write(const char *binary, const struct layout_static_options *o, FILE *out,
			struct layout_static_stats *stats, char *err, size_t err_size)
{
	struct input in = {.fd = -1, .debug_fd = -1};
	struct layout_static_stats local;
	struct layout_static_options none = {0};
	char path[4300], *body = NULL;
	size_t len = 0;
	bool cacheable;
	FILE *mem;
	int rc;

	if (!stats)
		stats = &local;
	if (!o)
		o = &none;
	memset(stats, 0, sizeof(*stats));
	if (open_input(binary, &in, err, err_size)) {
		close_input(&in);
		return -1;
	}
	cacheable = o->cache && cache_path(&in, o, path, sizeof(path));
	if (cacheable && (body = read_file(path, &len)) && strncmp(body, "# ", 2) == 0) {
		stats->from_cache = true;
		parse_stats(body, stats);
	} else {
		free(body);
		body = NULL;
		mem = open_memstream(&body, &len);
		if (!mem) {
			close_input(&in);
			return fail(err, err_size, "out of memory");
		}
		rc = analyse(&in, o, mem, stats, err, err_size);
		if (fclose(mem) != 0 && rc == 0)
			rc = fail(err, err_size, "out of memory");
		if (rc) {
			free(body);
			close_input(&in);
			return -1;
		}
		if (cacheable)
			write_cache(path, body, len);
	}
	fprintf(out, "# static references of %s\n", binary);
	rc = fwrite(body, 1, len, out) == len ? 0 : fail(err, err_size, "write error");
	free(body);
	close_input(&in);
	return rc;
}
