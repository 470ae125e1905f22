// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Writing and merging layout records (doc/formats/layout-record.md,
 * version 2). Merging is AutoCPA's fleet half (spec autocpa.md §2.4
 * Algorithm 1, §5.12, §8.6): records of one build — the same program build
 * ID and the same static part of the program — sum their samples, data
 * addresses and counters per (module, pc, thread) and combine the shared
 * objects' static parts; records of different builds are refused, since
 * their pcs mean different instructions.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"
#include "layout/fail.h"

/* ------------------------------------------------------------ writing */

static void write_structs(FILE *f, const struct layout_program *p)
{
	for (size_t i = 0; i < p->n_structs; i++) {
		const struct layout_struct *s = p->structs[i];

		fprintf(f, "struct\t%s\n", s->name);
		for (size_t k = 0; k < s->n_fields; k++) {
			const struct layout_field *fl = &s->fields[k];

			fprintf(f, "field\t%s\t%s\t%s\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "%s\n",
				fl->name, fl->type, *fl->array_suffix ? fl->array_suffix : "-",
				fl->offset, fl->size, fl->align, fl->pinned ? "\tpinned" : "");
		}
	}
}

/* The lines whose pcs belong to module m, pcs written without the module. */
static void write_module_lines(FILE *f, const struct layout_record *rec, size_t m)
{
	const struct layout_program *p = &rec->program;

	for (size_t i = 0; i < p->n_refs; i++)
		if (LAYOUT_PC_MODULE(p->refs[i].pc) == m)
			fprintf(f, "ref\t%#" PRIx64 "\t%s\t%s\t%c\n",
				LAYOUT_PC_ADDRESS(p->refs[i].pc),
				p->structs[p->refs[i].struct_index]->name,
				p->structs[p->refs[i].struct_index]
				    ->fields[p->refs[i].field_index]
				    .name,
				p->refs[i].write ? 'w' : 'r');
	for (size_t i = 0; i < p->n_blocks; i++)
		if (LAYOUT_PC_MODULE(p->blocks[i].lo) == m)
			fprintf(f, "block\t%#" PRIx64 "\t%#" PRIx64 "\n",
				LAYOUT_PC_ADDRESS(p->blocks[i].lo),
				LAYOUT_PC_ADDRESS(p->blocks[i].hi));
	for (size_t i = 0; i < rec->n_samples; i++)
		if (LAYOUT_PC_MODULE(rec->samples[i].pc) == m)
			fprintf(f, "sample\t%#" PRIx64 "\t%" PRIu64 "\t%" PRIu32 "\n",
				LAYOUT_PC_ADDRESS(rec->samples[i].pc), rec->samples[i].count,
				rec->samples[i].tid);
	for (size_t i = 0; i < rec->n_accesses; i++)
		if (LAYOUT_PC_MODULE(rec->accesses[i].pc) == m)
			fprintf(
			    f, "access\t%#" PRIx64 "\t%#" PRIx64 "\t%" PRIu32 "\t%c\t%" PRIu64 "\n",
			    LAYOUT_PC_ADDRESS(rec->accesses[i].pc), rec->accesses[i].addr,
			    rec->accesses[i].tid, rec->accesses[i].write ? 'w' : 'r',
			    rec->accesses[i].count);
}

int layout_record_write(FILE *f, const struct layout_record *rec)
{
	fprintf(f, "lever-layout-record\t%d\n", LAYOUT_RECORD_VERSION);
	if (rec->n_modules)
		fprintf(f, "program\t%s\t%s\n", rec->modules[0].path,
			*rec->modules[0].build_id ? rec->modules[0].build_id : "-");
	if (rec->source)
		fprintf(f, "source\t%s\t%s\n", rec->source, rec->event);
	if (rec->period)
		fprintf(f, "period\t%" PRIu64 "\n", rec->period);
	for (size_t i = 0; i < rec->n_stats; i++)
		fprintf(f, "stat\t%s\t%" PRIu64 "\n", rec->stats[i].name, rec->stats[i].value);
	/* structs come first so that every ref names a struct above it */
	write_structs(f, &rec->program);
	/* module lines switch the pcs' module: the program's lines go before them */
	write_module_lines(f, rec, 0);
	for (size_t m = 1; m < rec->n_modules; m++) {
		fprintf(f, "module\t%s\t%s\n", rec->modules[m].path,
			*rec->modules[m].build_id ? rec->modules[m].build_id : "-");
		write_module_lines(f, rec, m);
	}
	/* chains name their modules by index: after every module line */
	for (size_t i = 0; i < rec->n_chains; i++) {
		const struct layout_chain *c = &rec->chains[i];

		fprintf(f, "chain\t%" PRIu64 "\t%" PRIu32 "\t", c->count, c->tid);
		for (uint32_t k = 0; k < c->n; k++) {
			if (k)
				fputc(',', f);
			if (c->pcs[k] == LAYOUT_CHAIN_UNKNOWN)
				fputc('?', f);
			else
				fprintf(f, "%zu:%#" PRIx64, LAYOUT_PC_MODULE(c->pcs[k]),
					LAYOUT_PC_ADDRESS(c->pcs[k]));
		}
		fputc('\n', f);
	}
	fflush(f);
	return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------ merging */

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_struct(const struct layout_struct *a, const struct layout_struct *b)
{
	if (strcmp(a->name, b->name) || a->n_fields != b->n_fields)
		return false;
	for (size_t k = 0; k < a->n_fields; k++) {
		const struct layout_field *x = &a->fields[k], *y = &b->fields[k];

		if (strcmp(x->name, y->name) || strcmp(x->type, y->type) ||
		    strcmp(x->array_suffix, y->array_suffix) || x->offset != y->offset ||
		    x->size != y->size || x->align != y->align || x->pinned != y->pinned)
			return false;
	}
	return true;
}

/* The module of `acc` that is in's module m (same path and build ID), added if new. */
static long map_module(struct layout_record *acc, const struct layout_module *m)
{
	struct layout_module *grown;

	for (size_t i = 0; i < acc->n_modules; i++)
		if (strcmp(acc->modules[i].path, m->path) == 0 &&
		    strcmp(acc->modules[i].build_id, m->build_id) == 0)
			return (long)i;
	if (acc->n_modules == LAYOUT_MAX_MODULES)
		return -1;
	grown = realloc(acc->modules, (acc->n_modules + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	acc->modules = grown;
	grown[acc->n_modules].path = strdup(m->path);
	grown[acc->n_modules].build_id = strdup(m->build_id);
	if (!grown[acc->n_modules].path || !grown[acc->n_modules].build_id) {
		free(grown[acc->n_modules].path);
		free(grown[acc->n_modules].build_id);
		return -1;
	}
	return (long)acc->n_modules++;
}

static uint64_t remap(uint64_t pc, const long *to)
{
	return LAYOUT_MODULE_PC((uint64_t)to[LAYOUT_PC_MODULE(pc)], LAYOUT_PC_ADDRESS(pc));
}

static int compare_samples(const void *x, const void *y)
{
	const struct layout_sample *a = x, *b = y;

	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid ? 1 : 0;
}

static int compare_accesses(const void *x, const void *y)
{
	const struct layout_access *a = x, *b = y;

	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (int)a->write - (int)b->write;
}

static int compare_chains(const void *x, const void *y)
{
	const struct layout_chain *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	for (uint32_t k = 0; k < a->n; k++)
		if (a->pcs[k] != b->pcs[k])
			return a->pcs[k] < b->pcs[k] ? -1 : 1;
	return 0;
}

static void combine_chains(struct layout_record *r)
{
	size_t n = 0;

	if (r->n_chains) /* qsort(NULL, 0) is undefined */
		qsort(r->chains, r->n_chains, sizeof(*r->chains), compare_chains);
	for (size_t i = 0; i < r->n_chains; i++)
		if (n && compare_chains(&r->chains[n - 1], &r->chains[i]) == 0) {
			r->chains[n - 1].count += r->chains[i].count;
			free(r->chains[i].pcs);
		} else {
			r->chains[n++] = r->chains[i];
		}
	r->n_chains = n;
}

static int append_chains(struct layout_record *acc, const struct layout_record *in, const long *to)
{
	struct layout_chain *grown =
	    realloc(acc->chains, (acc->n_chains + in->n_chains + 1) * sizeof(*grown));

	if (!grown)
		return -1;
	acc->chains = grown;
	for (size_t i = 0; i < in->n_chains; i++) {
		struct layout_chain c = in->chains[i];

		c.pcs = malloc(c.n * sizeof(*c.pcs));
		if (!c.pcs)
			return -1;
		for (uint32_t k = 0; k < c.n; k++)
			c.pcs[k] = in->chains[i].pcs[k] == LAYOUT_CHAIN_UNKNOWN
				       ? LAYOUT_CHAIN_UNKNOWN
				       : remap(in->chains[i].pcs[k], to);
		acc->chains[acc->n_chains++] = c;
	}
	return 0;
}

/* Sort and sum equal keys in place. */
static void combine_samples(struct layout_record *r)
{
	size_t n = 0;

	if (r->n_samples) /* qsort(NULL, 0) is undefined */
		qsort(r->samples, r->n_samples, sizeof(*r->samples), compare_samples);
	for (size_t i = 0; i < r->n_samples; i++)
		if (n && compare_samples(&r->samples[n - 1], &r->samples[i]) == 0)
			r->samples[n - 1].count += r->samples[i].count;
		else
			r->samples[n++] = r->samples[i];
	r->n_samples = n;
}

static void combine_accesses(struct layout_record *r)
{
	size_t n = 0;

	if (r->n_accesses) /* qsort(NULL, 0) is undefined */
		qsort(r->accesses, r->n_accesses, sizeof(*r->accesses), compare_accesses);
	for (size_t i = 0; i < r->n_accesses; i++)
		if (n && compare_accesses(&r->accesses[n - 1], &r->accesses[i]) == 0)
			r->accesses[n - 1].count += r->accesses[i].count;
		else
			r->accesses[n++] = r->accesses[i];
	r->n_accesses = n;
}

/*
 * Each record holds the static part (references and blocks) of the program
 * and of the shared objects it happened to sample with DWARF: a run that
 * caught one sample in ld.so carries ld.so's part, the next run may not.
 * The program's part must be the same in every record of one build; a
 * shared object's part is the same wherever both records hold it, and is
 * taken from whichever record holds it otherwise.
 */

static size_t module_refs(const struct layout_program *p, size_t m)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_refs; i++)
		n += LAYOUT_PC_MODULE(p->refs[i].pc) == m;
	return n;
}

static size_t module_blocks(const struct layout_program *p, size_t m)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_blocks; i++)
		n += LAYOUT_PC_MODULE(p->blocks[i].lo) == m;
	return n;
}

/* The next reference (or block) of module m at or after *i; false at the end. */
static bool next_module_ref(const struct layout_program *p, size_t m, size_t *i)
{
	while (*i < p->n_refs && LAYOUT_PC_MODULE(p->refs[*i].pc) != m)
		++*i;
	return *i < p->n_refs;
}

static bool next_module_block(const struct layout_program *p, size_t m, size_t *i)
{
	while (*i < p->n_blocks && LAYOUT_PC_MODULE(p->blocks[*i].lo) != m)
		++*i;
	return *i < p->n_blocks;
}

static bool same_reference(const struct layout_program *a, const struct layout_reference *x,
			   const struct layout_program *b, const struct layout_reference *y)
{
	return LAYOUT_PC_ADDRESS(x->pc) == LAYOUT_PC_ADDRESS(y->pc) &&
	       x->field_index == y->field_index && x->write == y->write &&
	       same_struct(a->structs[x->struct_index], b->structs[y->struct_index]);
}

static const char *module_name(const struct layout_record *rec, size_t m)
{
	return m < rec->n_modules ? rec->modules[m].path : "the program";
}

/* acc's module am and in's module m hold the same static part. */
static int compare_module_part(const struct layout_record *acc, size_t am,
			       const struct layout_record *in, size_t m, char *err, size_t size)
{
	const struct layout_program *a = &acc->program, *b = &in->program;
	size_t i = 0, k = 0, n = 0;

	if (module_refs(a, am) != module_refs(b, m) || module_blocks(a, am) != module_blocks(b, m))
		return fail(err, size,
			    "the static parts of %s differ (%zu/%zu references, %zu/%zu blocks): "
			    "records of one build have the same",
			    module_name(in, m), module_refs(a, am), module_refs(b, m),
			    module_blocks(a, am), module_blocks(b, m));
	for (; next_module_ref(a, am, &i) && next_module_ref(b, m, &k); i++, k++, n++)
		if (!same_reference(a, &a->refs[i], b, &b->refs[k]))
			return fail(err, size, "reference %zu of %s differs between the records", n,
				    module_name(in, m));
	i = k = n = 0;
	for (; next_module_block(a, am, &i) && next_module_block(b, m, &k); i++, k++, n++)
		if (LAYOUT_PC_ADDRESS(a->blocks[i].lo) != LAYOUT_PC_ADDRESS(b->blocks[k].lo) ||
		    LAYOUT_PC_ADDRESS(a->blocks[i].hi) != LAYOUT_PC_ADDRESS(b->blocks[k].hi))
			return fail(err, size, "block %zu of %s differs between the records", n,
				    module_name(in, m));
	return 0;
}

/* A copy of s's fields (what a record says of a struct), or NULL. */
static struct layout_struct *copy_struct(const struct layout_struct *s)
{
	struct layout_struct *c = layout_struct_new(s->name);

	for (size_t k = 0; c && k < s->n_fields; k++) {
		const struct layout_field *f = &s->fields[k];

		if (layout_struct_add_field(c, f->type, f->name, f->array_suffix, f->offset,
					    f->size, f->align)) {
			layout_struct_free(c);
			return NULL;
		}
		c->fields[k].pinned = f->pinned;
	}
	if (c && layout_struct_finish(c)) {
		layout_struct_free(c);
		return NULL;
	}
	return c;
}

/* acc's index of in's struct s, copied into acc if acc has none of its name; -1: ENOMEM. */
static long adopt_struct(struct layout_program *a, const struct layout_struct *s)
{
	long i = layout_program_struct_index(a, s->name);
	struct layout_struct **grown;

	if (i >= 0)
		return i;
	grown = realloc(a->structs, (a->n_structs + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	a->structs = grown;
	grown[a->n_structs] = copy_struct(s);
	return grown[a->n_structs] ? (long)a->n_structs++ : -1;
}

/* A struct of in's module m whose name acc gives another shape (the part cannot join). */
static const char *clashing_struct(const struct layout_program *a, const struct layout_program *b,
				   size_t m)
{
	for (size_t k = 0; next_module_ref(b, m, &k); k++) {
		const struct layout_struct *s = b->structs[b->refs[k].struct_index];
		long i = layout_program_struct_index(a, s->name);

		if (i >= 0 && !same_struct(a->structs[i], s))
			return s->name;
	}
	return NULL;
}

/* in's module m's static part added to acc as module am's. */
static int adopt_module_part(struct layout_program *a, const struct layout_program *b, size_t m,
			     size_t am)
{
	size_t refs = module_refs(b, m), blocks = module_blocks(b, m);
	void *grown;

	grown = realloc(a->refs, (a->n_refs + refs + 1) * sizeof(*a->refs));
	if (!grown)
		return -1;
	a->refs = grown;
	grown = realloc(a->blocks, (a->n_blocks + blocks + 1) * sizeof(*a->blocks));
	if (!grown)
		return -1;
	a->blocks = grown;
	for (size_t k = 0; next_module_ref(b, m, &k); k++) {
		long s = adopt_struct(a, b->structs[b->refs[k].struct_index]);

		if (s < 0)
			return -1;
		a->refs[a->n_refs] = b->refs[k];
		a->refs[a->n_refs].pc = LAYOUT_MODULE_PC(am, LAYOUT_PC_ADDRESS(b->refs[k].pc));
		a->refs[a->n_refs++].struct_index = (uint32_t)s;
	}
	for (size_t k = 0; next_module_block(b, m, &k); k++)
		a->blocks[a->n_blocks++] =
		    (struct layout_block){LAYOUT_MODULE_PC(am, LAYOUT_PC_ADDRESS(b->blocks[k].lo)),
					  LAYOUT_MODULE_PC(am, LAYOUT_PC_ADDRESS(b->blocks[k].hi))};
	return 0;
}

/*
 * The static parts of acc and in combined into acc; 0 with note[0] set when
 * a shared object's part had to be left out (its structs clash with acc's).
 */
static int merge_static_parts(struct layout_record *acc, const struct layout_record *in,
			      const long *to, char *note, char *err, size_t size)
{
	struct layout_program *a = &acc->program;
	const struct layout_program *b = &in->program;
	size_t left_out = 0;
	const char *clash = NULL;

	if (compare_module_part(acc, 0, in, 0, err, size))
		return -1;
	for (size_t m = 1; m < in->n_modules; m++) {
		size_t am = (size_t)to[m];

		if (!module_refs(b, m) && !module_blocks(b, m))
			continue;
		if (module_refs(a, am) || module_blocks(a, am)) {
			if (compare_module_part(acc, am, in, m, err, size))
				return -1;
			continue;
		}
		clash = clashing_struct(a, b, m);
		if (clash) {
			if (!left_out++)
				snprintf(note, size,
					 "the static part of %s left out: its struct %s is not the "
					 "one of that name in the records before",
					 in->modules[m].path, clash);
			continue;
		}
		if (adopt_module_part(a, b, m, am))
			return fail(err, size, "out of memory");
	}
	if (left_out > 1) {
		size_t len = strlen(note);

		snprintf(note + len, size - len, " (and %zu more shared objects')", left_out - 1);
	}
	return 0;
}

static int check_same_build(const struct layout_record *acc, const struct layout_record *in,
			    char *err, size_t size)
{
	const char *a = acc->n_modules ? acc->modules[0].build_id : "";
	const char *b = in->n_modules ? in->modules[0].build_id : "";

	if (!*a || !*b)
		return fail(err, size,
			    "a record without the program's build ID (a version-1 record, or a "
			    "binary linked without --build-id) cannot be shown to be of the same "
			    "build");
	if (strcmp(a, b))
		return fail(err, size, "different builds: %s (%s) and %s (%s)", a,
			    acc->modules[0].path, b, in->modules[0].path);
	if (!same_text(acc->source, in->source) || !same_text(acc->event, in->event))
		return fail(err, size, "different sources: %s %s and %s %s",
			    acc->source ? acc->source : "-", acc->event ? acc->event : "-",
			    in->source ? in->source : "-", in->event ? in->event : "-");
	if (acc->period != in->period)
		return fail(err, size, "different sampling periods: %llu and %llu",
			    (unsigned long long)acc->period, (unsigned long long)in->period);
	return 0;
}

int layout_record_merge(struct layout_record *acc, const struct layout_record *in, char *err,
			size_t err_size)
{
	long to[LAYOUT_MAX_MODULES + 1];
	void *grown;

	*err = '\0';
	if (check_same_build(acc, in, err, err_size))
		return -1;
	to[0] = 0;
	for (size_t m = 1; m < in->n_modules; m++) {
		to[m] = map_module(acc, &in->modules[m]);
		if (to[m] < 0)
			return fail(err, err_size, "out of memory, or more than %d modules",
				    LAYOUT_MAX_MODULES);
	}
	if (merge_static_parts(acc, in, to, err, err, err_size))
		return -1;
	grown = realloc(acc->samples, (acc->n_samples + in->n_samples + 1) * sizeof(*acc->samples));
	if (!grown)
		return fail(err, err_size, "out of memory");
	acc->samples = grown;
	for (size_t i = 0; i < in->n_samples; i++) {
		acc->samples[acc->n_samples] = in->samples[i];
		acc->samples[acc->n_samples++].pc = remap(in->samples[i].pc, to);
	}
	grown =
	    realloc(acc->accesses, (acc->n_accesses + in->n_accesses + 1) * sizeof(*acc->accesses));
	if (!grown)
		return fail(err, err_size, "out of memory");
	acc->accesses = grown;
	for (size_t i = 0; i < in->n_accesses; i++) {
		acc->accesses[acc->n_accesses] = in->accesses[i];
		acc->accesses[acc->n_accesses++].pc = remap(in->accesses[i].pc, to);
	}
	for (size_t i = 0; i < in->n_stats; i++)
		if (layout_record_add_stat(acc, in->stats[i].name, in->stats[i].value))
			return fail(err, err_size, "out of memory");
	if (append_chains(acc, in, to))
		return fail(err, err_size, "out of memory");
	combine_samples(acc);
	combine_accesses(acc);
	combine_chains(acc);
	return 0;
}
