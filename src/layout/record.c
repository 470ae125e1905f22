// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Reader and writer of the layout record, versions 1 and 2
 * (doc/formats/layout-record.md): the struct descriptions, the static
 * reference table, the basic blocks and the aggregated samples that
 * `lever layout report` analyses, as tab-separated text lines; version 2
 * adds what `lever layout record` knows (the binaries the pcs belong to,
 * data addresses, the collector's counters). Merging records of one build
 * (spec autocpa.md §2.4, §8.6: by build ID and address) is here too. Every
 * error names the file and line; nothing in the input can crash the reader.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"

#define MAX_COLUMNS 9

struct reader {
	const char *name;
	unsigned line;
	char *err;
	size_t err_size;
	struct layout_record *rec;
	struct layout_struct *open; /* the struct `field` lines add to */
	size_t refs_cap, blocks_cap, samples_cap, accesses_cap, chains_cap;
	size_t module; /* pcs of ref, block, sample, access lines belong to it */
};

static int fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, r->err_size, "%s:%u: ", r->name, r->line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->err_size)
		vsnprintf(r->err + n, r->err_size - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static size_t split_tabs(char *line, char **col, size_t max)
{
	size_t n = 0;

	col[n++] = line;
	for (char *p = line; *p; p++)
		if (*p == '\t') {
			*p = '\0';
			if (n == max)
				return max + 1;
			col[n++] = p + 1;
		}
	return n;
}

static int parse_u64(struct reader *r, const char *text, const char *what, uint64_t max,
		     uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!*text || *text == '-' || *text == '+' || *text == ' ')
		return fail(r, "%s: '%s' is not a number", what, text);
	v = strtoull(text, &end, 0);
	if (errno || *end || v > max)
		return fail(r, "%s: '%s' is not a number up to %llu", what, text,
			    (unsigned long long)max);
	*out = v;
	return 0;
}

/* A pc of the current module, kept as LAYOUT_MODULE_PC(module, pc). */
static int parse_pc(struct reader *r, const char *text, const char *what, uint64_t *out)
{
	if (parse_u64(r, text, what, (1ull << LAYOUT_MODULE_SHIFT) - 1, out))
		return -1;
	*out = LAYOUT_MODULE_PC(r->module, *out);
	return 0;
}

static int grow(void **items, size_t *cap, size_t n, size_t size)
{
	void *grown;
	size_t new_cap;

	if (n < *cap)
		return 0;
	new_cap = *cap ? 2 * *cap : 64;
	grown = realloc(*items, new_cap * size);
	if (!grown)
		return -1;
	*items = grown;
	*cap = new_cap;
	return 0;
}

static int finish_open(struct reader *r)
{
	if (r->open && layout_struct_finish(r->open))
		return fail(r, "struct %s has no fields", r->open->name);
	r->open = NULL;
	return 0;
}

static int read_struct(struct reader *r, char **col, size_t n)
{
	struct layout_program *p = &r->rec->program;
	struct layout_struct **grown, *s;

	if (n != 2 || !*col[1])
		return fail(r, "expected: struct<TAB>NAME");
	if (finish_open(r))
		return -1;
	if (layout_program_struct_index(p, col[1]) >= 0)
		return fail(r, "struct %s defined twice", col[1]);
	grown = realloc(p->structs, (p->n_structs + 1) * sizeof(*grown));
	if (!grown)
		return fail(r, "out of memory");
	p->structs = grown;
	s = layout_struct_new(col[1]);
	if (!s)
		return fail(r, "out of memory");
	p->structs[p->n_structs++] = s;
	r->open = s;
	return 0;
}

static int read_field(struct reader *r, char **col, size_t n)
{
	uint64_t offset, size, align;
	const char *array;

	if (!r->open)
		return fail(r, "field outside a struct (a struct line opens one; "
			       "fields follow it directly)");
	if ((n != 7 && n != 8) || !*col[1] || !*col[2])
		return fail(r, "expected: field<TAB>NAME<TAB>TYPE<TAB>ARRAY|-<TAB>OFFSET<TAB>SIZE"
			       "<TAB>ALIGN[<TAB>pinned]");
	if (parse_u64(r, col[4], "offset", UINT32_MAX / 2, &offset) ||
	    parse_u64(r, col[5], "size", UINT32_MAX / 2, &size) ||
	    parse_u64(r, col[6], "align", LAYOUT_LINE_SIZE, &align))
		return -1;
	if (n == 8 && strcmp(col[7], "pinned") != 0)
		return fail(r, "unknown field flag '%s' (known: pinned)", col[7]);
	if (layout_field_index(r->open, col[1]) >= 0)
		return fail(r, "field %s defined twice in struct %s", col[1], r->open->name);
	array = strcmp(col[3], "-") == 0 ? "" : col[3];
	if (layout_struct_add_field(r->open, col[2], col[1], array, (uint32_t)offset,
				    (uint32_t)size, (uint32_t)align))
		return fail(r,
			    "field %s: offset %llu, size %llu, align %llu do not follow the "
			    "fields before it (natural x86-64 placement; a flexible array member "
			    "has size 0 and comes last)",
			    col[1], (unsigned long long)offset, (unsigned long long)size,
			    (unsigned long long)align);
	if (n == 8)
		r->open->fields[r->open->n_fields - 1].pinned = true;
	return 0;
}

static int read_ref(struct reader *r, char **col, size_t n)
{
	struct layout_program *p = &r->rec->program;
	uint64_t pc;
	long s, f;

	if (n != 5)
		return fail(r, "expected: ref<TAB>PC<TAB>STRUCT<TAB>FIELD<TAB>r|w");
	if (parse_pc(r, col[1], "pc", &pc))
		return -1;
	s = layout_program_struct_index(p, col[2]);
	if (s < 0)
		return fail(r, "ref to undefined struct %s", col[2]);
	f = layout_field_index(p->structs[s], col[3]);
	if (f < 0)
		return fail(r, "struct %s has no field %s", col[2], col[3]);
	if (strcmp(col[4], "r") != 0 && strcmp(col[4], "w") != 0)
		return fail(r, "access '%s' is neither r nor w", col[4]);
	if (grow((void **)&p->refs, &r->refs_cap, p->n_refs, sizeof(*p->refs)))
		return fail(r, "out of memory");
	p->refs[p->n_refs++] = (struct layout_reference){.pc = pc,
							 .struct_index = (uint32_t)s,
							 .field_index = (uint32_t)f,
							 .write = col[4][0] == 'w'};
	return 0;
}

static int read_block(struct reader *r, char **col, size_t n)
{
	struct layout_program *p = &r->rec->program;
	uint64_t lo, hi;

	if (n != 3)
		return fail(r, "expected: block<TAB>FIRST<TAB>LAST");
	if (parse_pc(r, col[1], "block start", &lo) || parse_pc(r, col[2], "block end", &hi))
		return -1;
	if (hi < lo)
		return fail(r, "block ends (%s) before it starts (%s)", col[2], col[1]);
	if (grow((void **)&p->blocks, &r->blocks_cap, p->n_blocks, sizeof(*p->blocks)))
		return fail(r, "out of memory");
	p->blocks[p->n_blocks++] = (struct layout_block){lo, hi};
	return 0;
}

static int read_sample(struct reader *r, char **col, size_t n)
{
	struct layout_record *rec = r->rec;
	uint64_t pc, count, tid = 0;

	if (n != 3 && n != 4)
		return fail(r, "expected: sample<TAB>PC<TAB>COUNT[<TAB>TID]");
	if (parse_pc(r, col[1], "pc", &pc) ||
	    parse_u64(r, col[2], "count", UINT64_MAX / 1024, &count) ||
	    (n == 4 && parse_u64(r, col[3], "tid", UINT32_MAX, &tid)))
		return -1;
	if (grow((void **)&rec->samples, &r->samples_cap, rec->n_samples, sizeof(*rec->samples)))
		return fail(r, "out of memory");
	rec->samples[rec->n_samples++] =
	    (struct layout_sample){.pc = pc, .count = count, .tid = (uint32_t)tid};
	return 0;
}

static int read_period(struct reader *r, char **col, size_t n)
{
	uint64_t period;

	if (n != 2)
		return fail(r, "expected: period<TAB>EVENTS-PER-SAMPLE");
	if (r->rec->period)
		return fail(r, "period given twice");
	if (parse_u64(r, col[1], "period", UINT64_MAX / 2, &period))
		return -1;
	if (!period)
		return fail(r, "period 0: a sample stands for at least one event");
	r->rec->period = period;
	return 0;
}

/* ---- version 2 lines */

static char *dup_or_fail(struct reader *r, const char *text)
{
	char *d = strdup(text);

	if (!d)
		fail(r, "out of memory");
	return d;
}

static bool is_build_id(const char *t)
{
	size_t n = strlen(t);

	if (strcmp(t, "-") == 0)
		return true;
	if (n < 2 || n > 128 || n % 2)
		return false;
	for (; *t; t++)
		if (!((*t >= '0' && *t <= '9') || (*t >= 'a' && *t <= 'f')))
			return false;
	return true;
}

static int add_module(struct reader *r, const char *path, const char *build_id)
{
	struct layout_record *rec = r->rec;
	struct layout_module *grown;

	if (!*path)
		return fail(r, "empty path");
	if (!is_build_id(build_id))
		return fail(r, "build ID '%s' is not lowercase hex (or - for none)", build_id);
	for (size_t i = 0; i < rec->n_modules; i++)
		if (strcmp(rec->modules[i].path, path) == 0 &&
		    strcmp(rec->modules[i].build_id, strcmp(build_id, "-") ? build_id : "") == 0)
			return fail(r, "module %s given twice", path);
	if (rec->n_modules == LAYOUT_MAX_MODULES)
		return fail(r, "more than %d modules", LAYOUT_MAX_MODULES);
	grown = realloc(rec->modules, (rec->n_modules + 1) * sizeof(*grown));
	if (!grown)
		return fail(r, "out of memory");
	rec->modules = grown;
	grown = &rec->modules[rec->n_modules];
	grown->path = dup_or_fail(r, path);
	grown->build_id = dup_or_fail(r, strcmp(build_id, "-") ? build_id : "");
	if (!grown->path || !grown->build_id) {
		free(grown->path);
		free(grown->build_id);
		return -1;
	}
	r->module = rec->n_modules++;
	return 0;
}

static int read_program(struct reader *r, char **col, size_t n)
{
	if (n != 3)
		return fail(r, "expected: program<TAB>PATH<TAB>BUILD-ID");
	if (r->rec->n_modules)
		return fail(r, "program given twice, or after a module line");
	if (r->rec->n_samples || r->rec->program.n_refs || r->rec->program.n_blocks ||
	    r->rec->n_accesses)
		return fail(r, "program comes before the pcs that belong to it");
	return add_module(r, col[1], col[2]);
}

static int read_module(struct reader *r, char **col, size_t n)
{
	if (n != 3)
		return fail(r, "expected: module<TAB>PATH<TAB>BUILD-ID");
	if (!r->rec->n_modules)
		return fail(r, "module before the program line");
	return add_module(r, col[1], col[2]);
}

static int read_source(struct reader *r, char **col, size_t n)
{
	if (n != 3 || !*col[1] || !*col[2])
		return fail(r, "expected: source<TAB>NAME<TAB>EVENT");
	if (r->rec->source)
		return fail(r, "source given twice");
	r->rec->source = dup_or_fail(r, col[1]);
	r->rec->event = dup_or_fail(r, col[2]);
	return r->rec->source && r->rec->event ? 0 : -1;
}

static int read_access(struct reader *r, char **col, size_t n)
{
	struct layout_record *rec = r->rec;
	uint64_t pc, addr, tid, count;

	if (n != 6)
		return fail(r, "expected: access<TAB>PC<TAB>ADDRESS<TAB>TID<TAB>r|w<TAB>COUNT");
	if (parse_pc(r, col[1], "pc", &pc) || parse_u64(r, col[2], "address", UINT64_MAX, &addr) ||
	    parse_u64(r, col[3], "tid", UINT32_MAX, &tid) ||
	    parse_u64(r, col[5], "count", UINT64_MAX / 1024, &count))
		return -1;
	if (strcmp(col[4], "r") != 0 && strcmp(col[4], "w") != 0)
		return fail(r, "access '%s' is neither r nor w", col[4]);
	if (grow((void **)&rec->accesses, &r->accesses_cap, rec->n_accesses,
		 sizeof(*rec->accesses)))
		return fail(r, "out of memory");
	rec->accesses[rec->n_accesses++] = (struct layout_access){.pc = pc,
								  .addr = addr,
								  .count = count,
								  .tid = (uint32_t)tid,
								  .write = col[4][0] == 'w'};
	return 0;
}

static int read_stat(struct reader *r, char **col, size_t n)
{
	uint64_t v;

	if (n != 3 || !*col[1])
		return fail(r, "expected: stat<TAB>NAME<TAB>VALUE");
	for (const char *p = col[1]; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return fail(r, "stat name '%s': lowercase letters, digits and '-' only",
				    col[1]);
	if (parse_u64(r, col[2], "value", UINT64_MAX / 1024, &v))
		return -1;
	for (size_t i = 0; i < r->rec->n_stats; i++)
		if (strcmp(r->rec->stats[i].name, col[1]) == 0)
			return fail(r, "stat %s given twice", col[1]);
	if (layout_record_add_stat(r->rec, col[1], v))
		return fail(r, "out of memory");
	return 0;
}

/* One frame of a chain: K:0xADDR (module K's address) or ? (unknown code). */
static int parse_frame(struct reader *r, char *text, uint64_t *pc)
{
	char *colon = strchr(text, ':');
	uint64_t module, addr;

	if (strcmp(text, "?") == 0) {
		*pc = LAYOUT_CHAIN_UNKNOWN;
		return 0;
	}
	if (!colon)
		return fail(r, "frame '%s' is neither MODULE:ADDRESS nor ?", text);
	*colon = '\0';
	if (parse_u64(r, text, "frame module", LAYOUT_MAX_MODULES - 1, &module) ||
	    parse_u64(r, colon + 1, "frame address", (1ull << LAYOUT_MODULE_SHIFT) - 1, &addr))
		return -1;
	/* modules are numbered by their lines: program 0, then each module line */
	if (module >= (r->rec->n_modules ? r->rec->n_modules : 1))
		return fail(r, "frame of module %llu: only %zu modules above",
			    (unsigned long long)module, r->rec->n_modules ? r->rec->n_modules : 1);
	*pc = LAYOUT_MODULE_PC(module, addr);
	return 0;
}

static int read_chain(struct reader *r, char **col, size_t n)
{
	struct layout_record *rec = r->rec;
	struct layout_chain c = {0};
	uint64_t count, tid;
	char *save = NULL;

	if (n != 4 || !*col[3])
		return fail(r, "expected: chain<TAB>COUNT<TAB>TID<TAB>FRAME,FRAME,...");
	if (parse_u64(r, col[1], "count", UINT64_MAX / 1024, &count) ||
	    parse_u64(r, col[2], "tid", UINT32_MAX, &tid))
		return -1;
	c.count = count;
	c.tid = (uint32_t)tid;
	c.pcs = malloc(LAYOUT_MAX_CHAIN_DEPTH * sizeof(*c.pcs));
	if (!c.pcs)
		return fail(r, "out of memory");
	for (char *f = strtok_r(col[3], ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		if (c.n == LAYOUT_MAX_CHAIN_DEPTH) {
			free(c.pcs);
			return fail(r, "a chain deeper than %d frames", LAYOUT_MAX_CHAIN_DEPTH);
		}
		if (parse_frame(r, f, &c.pcs[c.n++])) {
			free(c.pcs);
			return -1;
		}
	}
	if (!c.n || grow((void **)&rec->chains, &r->chains_cap, rec->n_chains, sizeof(c))) {
		free(c.pcs);
		return fail(r, c.n ? "out of memory" : "a chain without frames");
	}
	rec->chains[rec->n_chains++] = c;
	return 0;
}

static int read_v2_line(struct reader *r, char **col, size_t n)
{
	static const struct {
		const char *name;
		int (*read)(struct reader *r, char **col, size_t n);
	} lines[] = {{"program", read_program}, {"module", read_module}, {"source", read_source},
		     {"access", read_access},	{"stat", read_stat},	 {"chain", read_chain}};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		if (strcmp(col[0], lines[i].name) == 0) {
			if (r->rec->version < 2)
				return fail(r, "'%s' lines need version 2 of the format", col[0]);
			return lines[i].read(r, col, n);
		}
	return fail(r,
		    "unknown record '%s' (known: struct, field, ref, block, sample, period, "
		    "program, module, source, access, stat, chain)",
		    col[0]);
}

static int read_line(struct reader *r, char *line, bool *seen_header)
{
	char *col[MAX_COLUMNS];
	size_t n;

	if (!*line || *line == '#')
		return 0;
	n = split_tabs(line, col, MAX_COLUMNS);
	if (n > MAX_COLUMNS)
		return fail(r, "too many columns");
	if (!*seen_header) {
		if (n != 2 || strcmp(col[0], "lever-layout-record") != 0)
			return fail(r, "not a layout record (expected the line "
				       "'lever-layout-record<TAB>1')");
		if (strcmp(col[1], "1") != 0 && strcmp(col[1], "2") != 0)
			return fail(r,
				    "layout record version %s; this lever reads versions 1 and 2",
				    col[1]);
		r->rec->version = (unsigned)(col[1][0] - '0');
		*seen_header = true;
		return 0;
	}
	if (strcmp(col[0], "field") == 0)
		return read_field(r, col, n);
	/* any other line closes the struct being described */
	if (strcmp(col[0], "struct") == 0)
		return read_struct(r, col, n);
	if (finish_open(r))
		return -1;
	if (strcmp(col[0], "ref") == 0)
		return read_ref(r, col, n);
	if (strcmp(col[0], "block") == 0)
		return read_block(r, col, n);
	if (strcmp(col[0], "sample") == 0)
		return read_sample(r, col, n);
	if (strcmp(col[0], "period") == 0)
		return read_period(r, col, n);
	return read_v2_line(r, col, n);
}

int layout_record_read(FILE *f, const char *name, struct layout_record *rec, char *err,
		       size_t err_size)
{
	struct reader r = {.name = name, .err = err, .err_size = err_size, .rec = rec};
	bool seen_header = false;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	memset(rec, 0, sizeof(*rec));
	while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
		r.line++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if (strlen(line) != (size_t)len)
			rc = fail(&r, "NUL byte in line");
		else
			rc = read_line(&r, line, &seen_header);
	}
	free(line);
	if (rc == 0 && ferror(f))
		rc = fail(&r, "read error");
	if (rc == 0 && !seen_header)
		rc = fail(&r, "empty file: not a layout record");
	if (rc == 0)
		rc = finish_open(&r);
	if (rc)
		layout_record_free(rec);
	return rc;
}

void layout_record_free(struct layout_record *rec)
{
	for (size_t i = 0; i < rec->program.n_structs; i++)
		layout_struct_free(rec->program.structs[i]);
	free(rec->program.structs);
	free(rec->program.refs);
	free(rec->program.blocks);
	free(rec->samples);
	free(rec->source);
	free(rec->event);
	for (size_t i = 0; i < rec->n_modules; i++) {
		free(rec->modules[i].path);
		free(rec->modules[i].build_id);
	}
	free(rec->modules);
	free(rec->accesses);
	for (size_t i = 0; i < rec->n_stats; i++)
		free(rec->stats[i].name);
	free(rec->stats);
	for (size_t i = 0; i < rec->n_chains; i++)
		free(rec->chains[i].pcs);
	free(rec->chains);
	memset(rec, 0, sizeof(*rec));
}

uint64_t layout_record_stat(const struct layout_record *rec, const char *name)
{
	for (size_t i = 0; i < rec->n_stats; i++)
		if (strcmp(rec->stats[i].name, name) == 0)
			return rec->stats[i].value;
	return 0;
}

int layout_record_add_stat(struct layout_record *rec, const char *name, uint64_t value)
{
	struct layout_stat *grown;

	for (size_t i = 0; i < rec->n_stats; i++)
		if (strcmp(rec->stats[i].name, name) == 0) {
			rec->stats[i].value += value;
			return 0;
		}
	grown = realloc(rec->stats, (rec->n_stats + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	rec->stats = grown;
	grown[rec->n_stats].name = strdup(name);
	grown[rec->n_stats].value = value;
	if (!grown[rec->n_stats].name)
		return -1;
	rec->n_stats++;
	return 0;
}
