/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `instr` source of `lever layout record` (spec autocpa.md §8.3 item 3,
 * §8.4; issue 17): replays the trace that a program built with
 * `lever cc --layout` wrote (layout/runtime/instr_format.h) through the
 * cache model, and writes a layout record (doc/formats/layout-record.md)
 * whose samples are the model's misses at each access site, per thread —
 * exact ground truth for the other sources when every access is logged.
 *
 * The structs, their members and the sites come from the program's own
 * sections (the plugin wrote them), so no DWARF is needed. The threads'
 * records are merged by TSC (each thread's buffer reaches the file whole,
 * not in time order), thread k runs on simulated core k mod cores.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf.h"
#include "layout/layout.h"
#include "layout/runtime/instr_format.h"
#include "layout/fail.h"

/* A struct of the program, as the field table gives it. */
struct instr_struct {
	const struct layout_instr_field *fields; /* n consecutive entries */
	size_t n;
	bool supported;
};

struct instr_program {
	struct layout_instr_site *sites;
	size_t n_sites;
	struct layout_instr_field *fields;
	size_t n_fields;
	struct instr_struct *structs;
	size_t n_structs;
	int32_t *site_struct; /* per site: struct index, -1 when not recorded */
	char build_id[2 * 64 + 1];
};

/* Per site: the pc it was seen at, its misses per thread. */
struct instr_site_stats {
	uint64_t pc; /* 0: never logged */
	uint64_t accesses;
	uint64_t *misses; /* per thread index */
};

struct instr_threads {
	uint32_t *tids; /* in order of first appearance */
	size_t n, cap;
};

const char *const layout_instr_event_names[] = {"l1", "l1-load", "l2", "llc", "coherence", NULL};

void layout_instr_options_default(struct layout_instr_options *o)
{
	memset(o, 0, sizeof(*o));
	layout_cache_config_default(&o->cache);
	o->event = LAYOUT_INSTR_EVENT_L1;
}

static void program_free(struct instr_program *p)
{
	free(p->sites);
	free(p->fields);
	free(p->structs);
	free(p->site_struct);
	memset(p, 0, sizeof(*p));
}

/* A copy of a section's bytes (NULL and *size 0 if the section is absent). */
static void *section_copy(Elf *elf, const char *name, size_t *size)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = elf_section_by_name(elf, name, &shdr);
	Elf_Data *data;
	void *copy;

	*size = 0;
	if (!scn || shdr.sh_type == SHT_NOBITS)
		return NULL;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return NULL;
	copy = malloc(data->d_size);
	if (!copy)
		return NULL;
	memcpy(copy, data->d_buf, data->d_size);
	*size = data->d_size;
	return copy;
}

/* Names in the tables are fixed-size; one that fills its array is cut here. */
static void terminate_names(struct instr_program *p)
{
	for (size_t i = 0; i < p->n_sites; i++) {
		struct layout_instr_site *s = &p->sites[i];

		s->struct_name[sizeof(s->struct_name) - 1] = '\0';
		s->field_name[sizeof(s->field_name) - 1] = '\0';
		s->function[sizeof(s->function) - 1] = '\0';
		s->file[sizeof(s->file) - 1] = '\0';
	}
	for (size_t i = 0; i < p->n_fields; i++) {
		struct layout_instr_field *f = &p->fields[i];

		f->struct_name[sizeof(f->struct_name) - 1] = '\0';
		f->name[sizeof(f->name) - 1] = '\0';
		f->type[sizeof(f->type) - 1] = '\0';
		f->array[sizeof(f->array) - 1] = '\0';
	}
}

static long find_struct(const struct instr_program *p, const char *name)
{
	for (size_t i = 0; i < p->n_structs; i++)
		if (strcmp(p->structs[i].fields[0].struct_name, name) == 0)
			return (long)i;
	return -1;
}

/*
 * Group the member table into structs: every unit that used a struct wrote
 * all its members; the first copy is kept, and a later copy that differs
 * (two structs of one name in different units) makes it unsupported.
 */
static int group_structs(struct instr_program *p, char *err, size_t err_size)
{
	p->structs = calloc(p->n_fields ? p->n_fields : 1, sizeof(*p->structs));
	if (!p->structs)
		return fail(err, err_size, "out of memory");
	for (size_t i = 0; i < p->n_fields;) {
		const char *name = p->fields[i].struct_name;
		size_t n = 1;
		long known;

		while (i + n < p->n_fields && p->fields[i + n].index != 0)
			n++;
		known = find_struct(p, name);
		if (known < 0) {
			struct instr_struct *s = &p->structs[p->n_structs++];

			s->fields = &p->fields[i];
			s->n = n;
			s->supported = !(p->fields[i].flags & LAYOUT_INSTR_FIELD_UNSUPPORTED);
		} else {
			struct instr_struct *s = &p->structs[known];

			if (s->n != n || memcmp(s->fields, &p->fields[i], n * sizeof(*s->fields)))
				s->supported = false;
		}
		i += n;
	}
	return 0;
}

static int link_sites(struct instr_program *p)
{
	p->site_struct = malloc((p->n_sites ? p->n_sites : 1) * sizeof(*p->site_struct));
	if (!p->site_struct)
		return -1;
	for (size_t i = 0; i < p->n_sites; i++) {
		const struct layout_instr_site *site = &p->sites[i];
		long k = find_struct(p, site->struct_name);

		p->site_struct[i] = -1;
		if (k < 0 || !p->structs[k].supported || site->field_index >= p->structs[k].n ||
		    strcmp(p->structs[k].fields[site->field_index].name, site->field_name) != 0)
			continue;
		p->site_struct[i] = (int32_t)k;
	}
	return 0;
}

static int read_program(const char *binary, struct instr_program *p, char *err, size_t err_size)
{
	int fd = open(binary, O_RDONLY | O_CLOEXEC);
	size_t sites_size, fields_size;
	unsigned char id[64];
	size_t id_len;
	Elf *elf;

	memset(p, 0, sizeof(*p));
	if (fd < 0)
		return fail(err, err_size, "%s: %s", binary, strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return fail(err, err_size, "%s: not an ELF file", binary);
	}
	p->sites = section_copy(elf, LAYOUT_INSTR_SITES, &sites_size);
	p->fields = section_copy(elf, LAYOUT_INSTR_FIELDS, &fields_size);
	id_len = elf_build_id(elf, id, sizeof(id));
	for (size_t i = 0; i < id_len; i++)
		snprintf(p->build_id + 2 * i, 3, "%02x", id[i]);
	elf_end(elf);
	close(fd);
	if (!p->sites || !p->fields) {
		program_free(p);
		return fail(err, err_size,
			    "%s: no field-access sites (section %s): build it with "
			    "lever cc --layout (GCC)",
			    binary, LAYOUT_INSTR_SITES);
	}
	if (sites_size % LAYOUT_INSTR_ENTRY_SIZE || fields_size % LAYOUT_INSTR_ENTRY_SIZE) {
		program_free(p);
		return fail(err, err_size, "%s: the layout tables are not whole %u-byte entries",
			    binary, LAYOUT_INSTR_ENTRY_SIZE);
	}
	p->n_sites = sites_size / LAYOUT_INSTR_ENTRY_SIZE;
	p->n_fields = fields_size / LAYOUT_INSTR_ENTRY_SIZE;
	terminate_names(p);
	if (group_structs(p, err, err_size) < 0 || link_sites(p) < 0) {
		program_free(p);
		return err[0] ? -1 : fail(err, err_size, "out of memory");
	}
	return 0;
}

bool layout_instr_has_sites(const char *binary)
{
	struct instr_program p;
	char err[256];

	if (read_program(binary, &p, err, sizeof(err)) < 0)
		return false;
	program_free(&p);
	return true;
}

/* One truth line: FUNCTION (without a clone's ".constprop.0"), STRUCT, FIELD. */
static int format_truth(const struct layout_instr_site *s, char *line, size_t size)
{
	size_t len = strcspn(s->function, ".");

	return snprintf(line, size, "%.*s\t%s\t%s\n", (int)len, s->function, s->struct_name,
			s->field_name);
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int layout_instr_write_truth(const char *binary, FILE *out, char *err, size_t err_size)
{
	struct instr_program p;
	char **lines;
	size_t n = 0;
	int rc = 0;

	if (read_program(binary, &p, err, err_size) < 0)
		return -1;
	lines = calloc(p.n_sites ? p.n_sites : 1, sizeof(*lines));
	for (size_t i = 0; lines && i < p.n_sites; i++) {
		char line[3 * LAYOUT_INSTR_NAME_MAX + 4];

		format_truth(&p.sites[i], line, sizeof(line));
		if (!(lines[n++] = strdup(line)))
			rc = -1;
	}
	if (!lines || rc < 0) {
		rc = fail(err, err_size, "out of memory");
	} else {
		qsort(lines, n, sizeof(*lines), by_text);
		for (size_t i = 0; i < n; i++)
			if (i == 0 || strcmp(lines[i], lines[i - 1]) != 0)
				fputs(lines[i], out);
		if (ferror(out))
			rc = fail(err, err_size, "cannot write the truth");
	}
	for (size_t i = 0; lines && i < n; i++)
		free(lines[i]);
	free(lines);
	program_free(&p);
	return rc;
}

/* ------------------------------------------------------------ the trace */

struct trace {
	struct layout_trace_header header;
	struct layout_trace_record *records;
	size_t n;
	size_t partial_bytes; /* a record cut short at the end (a crash) */
};

static int read_trace(const char *path, struct trace *t, char *err, size_t err_size)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 0, got;
	long end;

	memset(t, 0, sizeof(*t));
	if (!f)
		return fail(err, err_size, "%s: %s", path, strerror(errno));
	if (fread(&t->header, sizeof(t->header), 1, f) != 1 ||
	    memcmp(t->header.magic, LAYOUT_TRACE_MAGIC, sizeof(t->header.magic)) != 0) {
		fclose(f);
		return fail(err, err_size, "%s: not a lever layout trace (bad header)", path);
	}
	if (t->header.version != LAYOUT_TRACE_VERSION ||
	    t->header.record_size != sizeof(struct layout_trace_record)) {
		fclose(f);
		return fail(err, err_size,
			    "%s: trace version %" PRIu32 " with %" PRIu32
			    "-byte records; this lever reads version %d with %zu-byte records",
			    path, t->header.version, t->header.record_size, LAYOUT_TRACE_VERSION,
			    sizeof(struct layout_trace_record));
	}
	if (fseek(f, 0, SEEK_END) == 0 && (end = ftell(f)) >= (long)sizeof(t->header)) {
		size_t body = (size_t)end - sizeof(t->header);

		cap = body / sizeof(*t->records);
		t->partial_bytes = body % sizeof(*t->records);
	}
	fseek(f, (long)sizeof(t->header), SEEK_SET);
	t->records = malloc((cap ? cap : 1) * sizeof(*t->records));
	if (!t->records) {
		fclose(f);
		return fail(err, err_size, "%s: out of memory for %zu records", path, cap);
	}
	got = fread(t->records, sizeof(*t->records), cap, f);
	fclose(f);
	if (got != cap) {
		free(t->records);
		return fail(err, err_size, "%s: read error at record %zu", path, got);
	}
	t->n = cap;
	return 0;
}

/* TSC order; records of one thread keep their file order on equal times. */
static int by_time(const void *a, const void *b)
{
	const struct layout_trace_record *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return 0;
}

static long thread_index(struct instr_threads *th, uint32_t tid)
{
	for (size_t i = 0; i < th->n; i++)
		if (th->tids[i] == tid)
			return (long)i;
	if (th->n == th->cap) {
		size_t cap = th->cap ? 2 * th->cap : 16;
		uint32_t *v = realloc(th->tids, cap * sizeof(*v));

		if (!v)
			return -1;
		th->tids = v;
		th->cap = cap;
	}
	th->tids[th->n] = tid;
	return (long)th->n++;
}

static uint64_t event_count(const struct layout_cache_counts *c, enum layout_instr_event event)
{
	switch (event) {
	case LAYOUT_INSTR_EVENT_L1_LOAD:
		return c->l1_load_miss;
	case LAYOUT_INSTR_EVENT_L2:
		return c->l2_miss;
	case LAYOUT_INSTR_EVENT_LLC:
		return c->llc_miss;
	case LAYOUT_INSTR_EVENT_COHERENCE:
		return c->coherence_miss;
	case LAYOUT_INSTR_EVENT_L1:
	default:
		return c->l1_load_miss + c->l1_store_miss;
	}
}

/* ------------------------------------------------------------ replay */

/* A miss at a data address: the record's `access` lines, so that report judges sharing per object.
 */
struct instr_miss {
	uint64_t addr, count;
	uint32_t site, thread;
};

struct replay {
	const struct instr_program *p;
	struct instr_site_stats *stats;
	struct instr_threads threads;
	struct layout_cache *cache;
	struct layout_instr_summary *sum;
	struct instr_miss *misses;
	size_t n_misses, misses_cap;
};

static void replay_free(struct replay *r)
{
	if (r->stats)
		for (size_t i = 0; i < r->p->n_sites; i++)
			free(r->stats[i].misses);
	free(r->stats);
	free(r->misses);
	free(r->threads.tids);
	layout_cache_free(r->cache);
}

/* Every thread, in order of first appearance, before the replay allocates per-thread counts. */
static int collect_threads(struct replay *r, const struct trace *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (thread_index(&r->threads, t->records[i].tid) < 0)
			return -1;
	for (size_t i = 0; i < r->p->n_sites; i++) {
		r->stats[i].misses = calloc(r->threads.n ? r->threads.n : 1, sizeof(uint64_t));
		if (!r->stats[i].misses)
			return -1;
	}
	return 0;
}

static int add_miss(struct replay *r, const struct layout_trace_record *rec, uint32_t thread,
		    uint64_t count)
{
	if (r->n_misses == r->misses_cap) {
		size_t cap = r->misses_cap ? 2 * r->misses_cap : 1024;
		struct instr_miss *g = realloc(r->misses, cap * sizeof(*g));

		if (!g)
			return -1;
		r->misses = g;
		r->misses_cap = cap;
	}
	r->misses[r->n_misses++] = (struct instr_miss){
	    .addr = rec->addr, .count = count, .site = (uint32_t)rec->site, .thread = thread};
	return 0;
}

static int replay_record(struct replay *r, const struct layout_trace_record *rec,
			 const struct layout_instr_options *o)
{
	const struct instr_program *p = r->p;
	const struct layout_instr_site *site;
	struct layout_cache_event e;
	uint64_t before;
	long k, thread;

	if (rec->site >= p->n_sites) {
		r->sum->bad_sites++;
		return 0;
	}
	site = &p->sites[rec->site];
	k = p->site_struct[rec->site];
	thread = thread_index(&r->threads, rec->tid);
	e = (struct layout_cache_event){
	    .core = (uint32_t)thread % o->cache.cores,
	    .addr = rec->addr,
	    .size = site->size ? site->size : 1,
	    .write = site->flags & LAYOUT_INSTR_SITE_WRITE,
	    .struct_index = k >= 0 ? (int32_t)k : -1,
	    .field_index = k >= 0 ? (int32_t)site->field_index : -1,
	};
	before = event_count(layout_cache_totals(r->cache), o->event);
	if (layout_cache_access(r->cache, &e) < 0)
		return -1;
	struct instr_site_stats *st = &r->stats[rec->site];
	uint64_t missed = event_count(layout_cache_totals(r->cache), o->event) - before;

	st->misses[thread] += missed;
	if (missed && k >= 0 && add_miss(r, rec, (uint32_t)thread, missed) < 0)
		return -1;
	st->accesses++;
	if (!st->pc || (rec->pc && rec->pc < st->pc))
		st->pc = rec->pc;
	if (k < 0)
		r->sum->unrecorded_accesses++;
	return 0;
}

/* ------------------------------------------------------------ the record */

static void write_struct(FILE *out, const struct instr_struct *s)
{
	fprintf(out, "struct\t%s\n", s->fields[0].struct_name);
	for (size_t i = 0; i < s->n; i++) {
		const struct layout_instr_field *f = &s->fields[i];

		fprintf(out, "field\t%s\t%s\t%s\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\n", f->name,
			f->type, f->array[0] ? f->array : "-", f->offset, f->size, f->align);
	}
}

static bool struct_was_sampled(const struct replay *r, size_t k)
{
	for (size_t i = 0; i < r->p->n_sites; i++)
		if (r->p->site_struct[i] == (int32_t)k && r->stats[i].accesses)
			return true;
	return false;
}

/* The counters of the replay, as `stat` lines (names: lowercase, digits, '-'). */
static void write_stats(FILE *out, const struct replay *r, const struct trace *t,
			const struct layout_cache_counts *tot)
{
	const struct {
		const char *name;
		uint64_t value;
	} stats[] = {
	    {"samples", t->n},
	    {"no-site", r->sum->bad_sites},
	    {"unrecordable-struct", r->sum->unrecorded_accesses},
	    {"cut-bytes", t->partial_bytes},
	    {"model-accesses", tot->accesses},
	    {"model-l1-load-miss", tot->l1_load_miss},
	    {"model-l1-store-miss", tot->l1_store_miss},
	    {"model-l2-miss", tot->l2_miss},
	    {"model-llc-miss", tot->llc_miss},
	    {"model-coherence-miss", tot->coherence_miss},
	    {"model-false-sharing-miss", tot->false_sharing_miss},
	    {"model-true-sharing-miss", tot->true_sharing_miss},
	    {"model-hitm", tot->hitm},
	    {"model-inval", tot->inval},
	};

	for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++)
		fprintf(out, "stat\t%s\t%" PRIu64 "\n", stats[i].name, stats[i].value);
}

static int compare_misses(const void *x, const void *y)
{
	const struct instr_miss *a = x, *b = y;

	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->thread < b->thread ? -1 : a->thread > b->thread;
}

/* The misses per (site, address, thread), as `access` lines. */
static void write_accesses(FILE *out, const struct replay *r)
{
	if (r->n_misses)
		qsort(r->misses, r->n_misses, sizeof(*r->misses), compare_misses);
	for (size_t i = 0; i < r->n_misses;) {
		const struct instr_miss *m = &r->misses[i];
		uint64_t count = 0;

		for (; i < r->n_misses && !compare_misses(m, &r->misses[i]); i++)
			count += r->misses[i].count;
		fprintf(out, "access\t0x%" PRIx64 "\t0x%" PRIx64 "\t%" PRIu32 "\t%c\t%" PRIu64 "\n",
			r->stats[m->site].pc, m->addr, r->threads.tids[m->thread],
			r->p->sites[m->site].flags & LAYOUT_INSTR_SITE_WRITE ? 'w' : 'r', count);
	}
}

static void write_record(FILE *out, const struct replay *r, const struct trace *t,
			 const char *trace_path, const char *binary,
			 const struct layout_instr_options *o)
{
	const struct instr_program *p = r->p;
	const struct layout_cache_counts *tot = layout_cache_totals(r->cache);
	char path[PATH_MAX];

	/* version 2 (doc/formats/layout-record.md): program, source and counters */
	fprintf(out, "lever-layout-record\t2\n");
	fprintf(out, "program\t%s\t%s\n", realpath(binary, path) ? path : binary,
		p->build_id[0] ? p->build_id : "-");
	fprintf(out, "source\tinstr\tmodel-%s\n", layout_instr_event_names[o->event]);
	fprintf(out, "# %s replayed through the cache model\n", trace_path);
	fprintf(out,
		"# event %s; cores %" PRIu32 "; L1 %" PRIu32 "/%" PRIu32 ", L2 %" PRIu32 "/%" PRIu32
		", LLC %" PRIu32 "/%" PRIu32 " (bytes/ways)\n",
		layout_instr_event_names[o->event], o->cache.cores, o->cache.l1.size,
		o->cache.l1.ways, o->cache.l2.size, o->cache.l2.ways, o->cache.llc.size,
		o->cache.llc.ways);
	fprintf(out,
		"# logged %" PRIu32 " of every %" PRIu32 " accesses per thread; %zu records, %zu "
		"threads\n",
		t->header.burst, t->header.period, t->n, r->threads.n);
	fprintf(out,
		"# model: accesses %" PRIu64 " l1-load-miss %" PRIu64 " l1-store-miss %" PRIu64
		" l2-miss %" PRIu64 " llc-miss %" PRIu64 " coherence %" PRIu64
		" false-sharing %" PRIu64 " true-sharing %" PRIu64 "\n",
		tot->accesses, tot->l1_load_miss, tot->l1_store_miss, tot->l2_miss, tot->llc_miss,
		tot->coherence_miss, tot->false_sharing_miss, tot->true_sharing_miss);
	write_stats(out, r, t, tot);
	for (size_t k = 0; k < p->n_structs; k++)
		if (struct_was_sampled(r, k))
			write_struct(out, &p->structs[k]);
	for (size_t i = 0; i < p->n_sites; i++) {
		const struct layout_instr_site *s = &p->sites[i];

		if (p->site_struct[i] < 0 || !r->stats[i].accesses)
			continue;
		fprintf(out, "# site %zu: %s:%" PRIu32 " %s.%s, %" PRIu32 " bytes at %" PRIu32 "\n",
			i, s->file, s->line, s->struct_name, s->field_name, s->size, s->offset);
		fprintf(out, "ref\t0x%" PRIx64 "\t%s\t%s\t%c\n", r->stats[i].pc, s->struct_name,
			s->field_name, s->flags & LAYOUT_INSTR_SITE_WRITE ? 'w' : 'r');
	}
	for (size_t i = 0; i < p->n_sites; i++) {
		if (p->site_struct[i] < 0 || !r->stats[i].accesses)
			continue;
		for (size_t th = 0; th < r->threads.n; th++)
			if (r->stats[i].misses[th])
				fprintf(out, "sample\t0x%" PRIx64 "\t%" PRIu64 "\t%" PRIu32 "\n",
					r->stats[i].pc, r->stats[i].misses[th],
					r->threads.tids[th]);
	}
	write_accesses(out, r);
	if (t->header.burst && t->header.period / t->header.burst > 1)
		fprintf(out, "period\t%" PRIu32 "\n", t->header.period / t->header.burst);
}

int layout_instr_collect(const char *trace_path, const char *binary, FILE *out,
			 const struct layout_instr_options *o, struct layout_instr_summary *sum,
			 char *err, size_t err_size)
{
	struct instr_program p;
	struct trace t;
	struct replay r = {.p = &p, .sum = sum};
	int rc = -1;

	memset(sum, 0, sizeof(*sum));
	err[0] = '\0';
	if (read_program(binary, &p, err, err_size) < 0)
		return -1;
	if (read_trace(trace_path, &t, err, err_size) < 0) {
		program_free(&p);
		return -1;
	}
	if (t.header.sites && t.header.sites != p.n_sites) {
		fail(err, err_size,
		     "%s: written by a program with %" PRIu64 " access sites, %s has %zu: not "
		     "this build",
		     trace_path, t.header.sites, binary, p.n_sites);
		goto out;
	}
	r.stats = calloc(p.n_sites, sizeof(*r.stats));
	r.cache = layout_cache_new(&o->cache);
	if (!r.cache) {
		fail(err, err_size, "the cache model's configuration is not valid");
		goto out;
	}
	if (!r.stats || collect_threads(&r, &t) < 0) {
		fail(err, err_size, "out of memory");
		goto out;
	}
	qsort(t.records, t.n, sizeof(*t.records), by_time);
	for (size_t i = 0; i < t.n; i++)
		if (replay_record(&r, &t.records[i], o) < 0) {
			fail(err, err_size, "%s: record %zu: the cache model refused it",
			     trace_path, i);
			goto out;
		}
	write_record(out, &r, &t, trace_path, binary, o);
	sum->records = t.n;
	sum->threads = r.threads.n;
	sum->partial_bytes = t.partial_bytes;
	sum->period = t.header.period;
	sum->burst = t.header.burst;
	sum->model = *layout_cache_totals(r.cache);
	rc = ferror(out) ? fail(err, err_size, "cannot write the record") : 0;
out:
	replay_free(&r);
	free(t.records);
	program_free(&p);
	return rc;
}
