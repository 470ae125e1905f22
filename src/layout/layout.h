/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * layout: the analysis core of `lever layout` (AutoCPA, spec autocpa.md).
 *
 * - The data model of spec §2.6: struct descriptions (fields with offset,
 *   size, alignment, flexible array member, user pins), per-field sampled
 *   misses (raw and basic-block adjusted), per-field thread weights, and the
 *   per-struct access-pattern table.
 * - The algorithms of spec §2.7: A (annotation, thesis Algorithm 2), B
 *   (basic-block adjustment, Algorithm 3), C (access pattern and ordering),
 *   D (reordering by misses), E (saved-misses estimate), F (multithreading
 *   grouping), G (best suggestion per struct, ranking), under the ABI
 *   constraints a flexible array member and user pins impose.
 * - The cache model of spec §8.4 (private L1/L2 per core, shared LLC, LRU,
 *   coherence with false/true sharing classification).
 * - Output as pahole prints layouts, the suggestion as a C struct, JSON.
 *
 * Struct descriptions are built in memory (by tests, or by a reader of a
 * record file); layout_static_write() writes them, with the reference
 * table, from a binary's DWARF.
 */
#ifndef LEVER_LAYOUT_H
#define LEVER_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LAYOUT_LINE_SIZE 64u
/* Distinct threads remembered per field (more are folded into the last). */
#define LAYOUT_MAX_THREADS 16

/* ------------------------------------------------------------ data model (§2.6) */

struct layout_thread_weight {
	uint32_t tid;
	uint64_t weight; /* adjusted samples credited from this thread */
	uint64_t writes; /* of which by write references */
};

struct layout_field {
	char *name;
	char *type;	    /* C type as written before the name: "long long", "struct bar *" */
	char *array_suffix; /* after the name: "[16]", "[]" for a flexible member; "" otherwise */
	uint32_t offset;    /* in the original layout */
	uint32_t size;	    /* 0 for a flexible array member */
	uint32_t align;
	bool flexible;	/* flexible array member: stays last (ABI, spec §5.6) */
	bool pinned;	/* the user fixes its position (spec §8.7 `T::fixed(f)`) */
	bool at_offset; /* ... and its offset (constraint file `fixed`): checked after placing */

	/* statistics, filled by layout_annotate() */
	uint64_t raw;	  /* samples at references to this field (Algorithm 2) */
	uint64_t adj;	  /* raw + basic-block credit (Algorithm 3) */
	double order_sum; /* Σ rank-in-block × samples: mean access order = order_sum / adj */
	size_t n_threads;
	struct layout_thread_weight threads[LAYOUT_MAX_THREADS];
};

/*
 * What one thread did to one field of one object, from the samples' data
 * addresses (`access` lines): algorithm F and the false-sharing pairs judge
 * sharing per object, since two threads touching one field of *different*
 * objects share no line. The object is keyed by the data address minus the
 * field's offset; an access inside an array or nested member may key its
 * object apart from the others, which can hide sharing but never invent it.
 */
struct layout_object_access {
	uint64_t object;
	uint32_t field;
	uint32_t tid;
	uint64_t weight; /* samples with this (object, field, thread) */
	uint64_t writes; /* of which by write references */
};

/* One access pattern: the set of fields touched together in a block scan. */
struct layout_pattern {
	uint64_t *bits; /* one bit per field ordinal */
	uint64_t count; /* samples */
};

struct layout_struct {
	char *name;
	uint32_t size;	/* sizeof in the original layout */
	uint32_t align; /* alignof */
	size_t n_fields;
	struct layout_field *fields; /* in original (offset) order */
	size_t n_patterns;
	struct layout_pattern *patterns;
	uint64_t total_raw; /* samples attributed to the struct */
	/*
	 * Why the struct must keep its layout (ABI: another binary's code uses
	 * it, or the user's constraint file says so); NULL: it may be reordered.
	 */
	char *frozen;
	/* per-object accesses, sorted by (object, field, tid) by layout_struct_objects_finish */
	size_t n_objects, objects_cap;
	struct layout_object_access *objects;
};

/*
 * Build a struct by adding fields in declaration order; the offsets given
 * are checked against the SysV placement of size/alignment so that a
 * description that lies about its padding is refused (returns -1).
 */
struct layout_struct *layout_struct_new(const char *name);
int layout_struct_add_field(struct layout_struct *s, const char *type, const char *name,
			    const char *array_suffix, uint32_t offset, uint32_t size,
			    uint32_t align);
/* Finish: computes size and alignment; -1 if a flexible member is not last. */
int layout_struct_finish(struct layout_struct *s);
/* Index of a field by name, or -1. */
long layout_field_index(const struct layout_struct *s, const char *name);
/* Pin a field at its position; -1 if unknown. */
int layout_pin_field(struct layout_struct *s, const char *name);
void layout_struct_free(struct layout_struct *s);
/*
 * Add COUNT samples of thread tid at data address `object + offset of field`
 * (so `object` is the object's address); then finish: sort and merge.
 * -1 on ENOMEM or an unknown field.
 */
int layout_struct_add_object_access(struct layout_struct *s, uint64_t object, uint32_t field,
				    uint32_t tid, uint64_t count, bool write);
void layout_struct_objects_finish(struct layout_struct *s);

/*
 * Lay out the fields in `order` (a permutation of the field indexes) with
 * the x86-64 SysV rules: each field at the next multiple of its alignment;
 * a field whose index has line_start[i] set begins a fresh 64-byte line
 * (NULL: none); the size is rounded up to the struct's alignment (64 when
 * a line start was forced). offsets[k] is the offset of order[k].
 */
uint32_t layout_place(const struct layout_struct *s, const uint32_t *order, const bool *line_start,
		      uint32_t *offsets);

/* ------------------------------------------------------------ profile input */

/* The instruction at pc reads or writes a field (the thesis's "reference"). */
struct layout_reference {
	uint64_t pc;
	uint32_t struct_index;
	uint32_t field_index;
	bool write;
};

/* A basic block [lo, hi] (hi: its last instruction's address). */
struct layout_block {
	uint64_t lo, hi;
};

/* One aggregated profile entry (Algorithm 1's output, with the tid). */
struct layout_sample {
	uint64_t pc;
	uint64_t count;
	uint32_t tid; /* 0: unknown */
};

/* A program: the structs, the static reference table and the blocks. */
struct layout_program {
	size_t n_structs;
	struct layout_struct **structs;
	size_t n_refs;
	struct layout_reference *refs; /* sorted by pc by layout_annotate */
	size_t n_blocks;
	struct layout_block *blocks; /* sorted by lo by layout_annotate */
	uint64_t unattributed;	     /* samples without a reference (dropped) */
};

/* Index of a struct of p by name, or -1. */
long layout_program_struct_index(const struct layout_program *p, const char *name);

enum layout_adjust_mode {
	/* Algorithm 3 as the thesis writes it: references later in the block,
	 * of the sample's struct, on the sample's cache line. */
	LAYOUT_ADJUST_THESIS,
	/* the thesis-era code (spec §2.7B [R]): no line filter, and every
	 * later reference credits its own struct. */
	LAYOUT_ADJUST_REPO_QUIRKS,
	/* Algorithm 2 only. */
	LAYOUT_ADJUST_NONE,
};

/*
 * Algorithms A, B and C over all samples, adding to the counts the structs
 * already hold (so several batches of samples accumulate). -1 on a
 * reference to a struct or field that does not exist, or ENOMEM.
 */
int layout_annotate(struct layout_program *p, const struct layout_sample *samples, size_t n_samples,
		    enum layout_adjust_mode mode);

/* ------------------------------------------------------------ record file */

/*
 * Version 2 of the record (layout-record, issue 17): the binaries the pcs
 * belong to, data addresses per sample and the collector's counters.
 * A pc of module k > 0 is kept as LAYOUT_MODULE_PC(k, pc) so that every
 * module has its own address space in one reference table.
 */
#define LAYOUT_MODULE_SHIFT	56
#define LAYOUT_MODULE_PC(k, pc) (((uint64_t)(k) << LAYOUT_MODULE_SHIFT) | (pc))
#define LAYOUT_PC_MODULE(pc)	((size_t)((pc) >> LAYOUT_MODULE_SHIFT))
#define LAYOUT_PC_ADDRESS(pc)	((uint64_t)((pc) & ((1ull << LAYOUT_MODULE_SHIFT) - 1)))
#define LAYOUT_RECORD_VERSION	2
#define LAYOUT_MAX_MODULES	255

struct layout_module {
	char *path;
	char *build_id; /* lowercase hex; "" when the file has none */
};

/* COUNT samples at pc (module-qualified) by tid touched data address addr. */
struct layout_access {
	uint64_t pc, addr, count;
	uint32_t tid;
	bool write;
};

/*
 * COUNT samples by tid with this user call chain: pcs[0] the sampled pc,
 * then return addresses, each module-qualified (LAYOUT_MODULE_PC);
 * LAYOUT_CHAIN_UNKNOWN for a frame outside known code.
 */
#define LAYOUT_CHAIN_UNKNOWN   UINT64_MAX
#define LAYOUT_MAX_CHAIN_DEPTH 256
struct layout_chain {
	uint64_t count;
	uint32_t tid;
	uint32_t n;
	uint64_t *pcs;
};

/* A collector's counter: samples, lost, throttled, no-memory-operand... */
struct layout_stat {
	char *name;
	uint64_t value;
};

/* A layout record (doc/formats/layout-record.md): structs, references, blocks, samples. */
struct layout_record {
	struct layout_program program;
	size_t n_samples;
	struct layout_sample *samples;
	uint64_t period; /* events per sample; 0: not given */
	/* ---- version 2 (layout-record, issue 17): what a collector records */
	unsigned version;
	char *source, *event; /* "clock", "cpu-clock"; NULL: not given */
	size_t n_modules;     /* modules[0] is the program (`program` line) */
	struct layout_module *modules;
	size_t n_accesses;
	struct layout_access *accesses;
	size_t n_stats;
	struct layout_stat *stats;
	size_t n_chains;
	struct layout_chain *chains;
};
/*
 * Read a record; `name` is the file name used in messages. On error
 * returns -1 with "NAME:LINE: what is wrong" in err, and rec empty.
 */
int layout_record_read(FILE *f, const char *name, struct layout_record *rec, char *err,
		       size_t err_size);
void layout_record_free(struct layout_record *rec);

/* ------------------------------------------------------------ suggestions (D–G) */

enum layout_algorithm {
	LAYOUT_ALGO_ORIGINAL, /* no change is better */
	LAYOUT_ALGO_MISSES,   /* D */
	LAYOUT_ALGO_THREADS,  /* F */
};

struct layout_params {
	/* D, enhanced: counts within this fraction of a group's top count tie,
	 * and ties go by mean access order (0: exact counts only). */
	double tolerance;
	/* F: a thread holding at least this share of a field's weight owns it. */
	double dominant_share;
	/* G: structs saving no more than this are not suggested. */
	uint64_t threshold;
	/*
	 * D: fill holes with fields that have no samples, as pahole's
	 * --reorganize does (spec §8.7 "padding-aware packing"); a move is
	 * kept only if it neither grows the struct nor raises the modelled
	 * misses. Off by default: the thesis's order is printed as it is.
	 */
	bool pack_holes;
	/*
	 * G: a count of n samples has a Poisson standard error of √n; a
	 * change is suggested only when its benefit B exceeds `sigmas`·√B
	 * (with 2: B > 4), and a reorder that grows the struct only when the
	 * modelled misses drop by more than `sigmas`·√(M_before + M_after).
	 */
	double sigmas;
	/*
	 * False sharing (per-struct pairs and data lines): reported only with
	 * at least this many samples and this share of the struct's samples
	 * (of all addressed samples, for data lines); the rest are counted.
	 */
	uint64_t sharing_min_samples;
	double sharing_min_share;
};
void layout_params_default(struct layout_params *params);

/* Why G keeps the current layout (LAYOUT_ALGO_ORIGINAL), printed with it. */
enum layout_keep_reason {
	LAYOUT_KEEP_NOTHING,	 /* a change is suggested */
	LAYOUT_KEEP_NO_MOVE,	 /* D leaves every field where it is, F has no per-object sharing */
	LAYOUT_KEEP_BELOW_NOISE, /* D's benefit is not above its noise (params->sigmas) */
	LAYOUT_KEEP_WOULD_GROW,	 /* D grows the struct and the modelled misses do not drop */
	LAYOUT_KEEP_FROZEN,	 /* s->frozen: ABI or the user's constraints */
	LAYOUT_KEEP_MOVES_FIXED, /* D would move a field whose offset is fixed */
};

struct layout_suggestion {
	const struct layout_struct *s;
	enum layout_algorithm algorithm;
	enum layout_keep_reason keep;
	/* D's order as considered, when G kept the original (for the reason's numbers) */
	uint32_t rejected_size;
	uint64_t rejected_saved, rejected_modelled;
	uint64_t noise;	      /* the noise floor the rejected benefit had to exceed */
	uint32_t moved_field; /* LAYOUT_KEEP_MOVES_FIXED: the fixed field D would move */
	/* F as considered: per-object sharing avoided (0: none, or no data addresses) */
	bool threads_considered;
	uint64_t threads_avoided;
	uint64_t threads_rise; /* ... and the rise of the modelled misses its lines cost */
	uint32_t *order;       /* n_fields field indexes */
	bool *line_start;      /* per field index: starts a fresh line (F) */
	uint32_t *offsets;     /* per position, as layout_place */
	uint32_t size;
	uint64_t saved;		  /* E on the suggested layout, raw samples */
	uint64_t original_saved;  /* E on the original layout */
	uint64_t modelled_before; /* M(original) = Σ lines max adj */
	uint64_t modelled_after;  /* M(suggested) */
	uint64_t sharing_before;  /* F's cross-thread sharing weight, original */
	uint64_t sharing_after;	  /* and suggested */
	uint64_t benefit;	  /* what G ranks by */
};

/* D: the order by adjusted misses under the constraints; order has n_fields entries. */
void layout_order_by_misses(const struct layout_struct *s, const struct layout_params *params,
			    uint32_t *order);
/* E: saved misses (raw samples) of the fields in `order` laid out with line_start. */
uint64_t layout_estimate_saved(const struct layout_struct *s, const uint32_t *order,
			       const bool *line_start);
/* M(L): Σ over lines of the largest adjusted count in the line (spec §2.7E critique). */
uint64_t layout_modelled_misses(const struct layout_struct *s, const uint32_t *order,
				const bool *line_start);
/*
 * F's sharing weight, per object: Σ objects Σ lines Σ thread pairs, one of
 * them writing the object's line, of min(w_t, w_u); 0 without data addresses.
 */
uint64_t layout_sharing_weight(const struct layout_struct *s, const uint32_t *order,
			       const bool *line_start);
/* F: thread groups, each on fresh lines; false if the struct has < 2 threads. */
bool layout_order_by_threads(const struct layout_struct *s, const struct layout_params *params,
			     uint32_t *order, bool *line_start);

/*
 * False sharing (the brief of algorithm F, spec §8.7 "false-sharing
 * report"): two different fields on one line of the given layout, one
 * written by thread t, the other touched by a thread u != t.
 */
struct layout_false_sharing {
	uint32_t line;
	uint32_t written_field, other_field; /* field indexes */
	uint32_t writer_tid, other_tid;
	/* Σ over objects of min(t's writes to the written field, u's samples on the other) */
	uint64_t weight;
	uint64_t objects; /* objects in which the pair was seen */
};
/*
 * Judged per object (struct layout_object_access): no data addresses, no
 * pairs. Fills up to max pairs, heaviest first (then line, field, thread);
 * returns how many exist, or 0 on ENOMEM.
 */
size_t layout_find_false_sharing(const struct layout_struct *s, const uint32_t *order,
				 const bool *line_start, struct layout_false_sharing *out,
				 size_t max);

/*
 * ABI constraints (spec §5.6, §7 "user constraint file"; issue 17).
 * layout_mark_shared_structs freezes every struct that the code of another
 * binary of the record (a `module`: a shared object the program links)
 * references: its layout is that binary's ABI too. Then
 * layout_constraints_read applies a constraint file
 * (doc/formats/layout-constraints.md): `keep` freezes a struct, `reorder`
 * unfreezes a shared one, `fixed` keeps a field at its offset, `first` and
 * `last` keep a field first or last. A struct the record does not have is
 * noted on `notes` (may be NULL) and skipped. -1 with "FILE:LINE: why" in err.
 */
int layout_mark_shared_structs(struct layout_record *rec);
/*
 * Casts the code probably makes, guessed from the types alone (issue 17):
 * two structs whose first fields (at least 3, 16 bytes, 2 of them with the
 * same names) sit at the same offsets with the same sizes are taken to be
 * cast into each other (memcached's item, chunk and crawler headers), and
 * those fields keep their offsets in both; a struct whose first member is a
 * struct or union keeps it first (container_of, a "base" member). Notes go
 * to `notes` (may be NULL) for structs with samples. A constraint file's
 * `unpin STRUCT`, read after, undoes it. Returns 0.
 */
int layout_pin_likely_casts(struct layout_program *p, FILE *notes);
int layout_constraints_read(FILE *f, const char *name, struct layout_program *p, FILE *notes,
			    char *err, size_t err_size);

/* G for one struct: fills *out (free with layout_suggestion_clear). -1 on ENOMEM. */
int layout_suggest(const struct layout_struct *s, const struct layout_params *params,
		   struct layout_suggestion *out);
void layout_suggestion_clear(struct layout_suggestion *sg);
/* G across structs: sorts by benefit (descending, then name); returns how many pass the threshold.
 */
size_t layout_rank(struct layout_suggestion *sg, size_t n, const struct layout_params *params);

/* ------------------------------------------------------------ output */

/*
 * What the counts of a record are, by its source (issue 17 B4): `pmu`
 * samples sampled misses (loads over the latency threshold, stores),
 * `clock` samples CPU time (a sample is not a miss), `instr` counts the
 * cache model's simulated misses; a record that does not say: samples.
 * `scaled` names count × period: events, nanoseconds of CPU, misses.
 */
struct layout_units {
	const char *source; /* NULL: not given */
	const char *count;  /* "sampled misses", "samples", "simulated misses" */
	const char *scaled; /* "events", "ns of CPU time", "misses" */
	uint64_t period;    /* 0: not given */
};
void layout_units_for(const char *source, uint64_t period, struct layout_units *u);

/* pahole-style layout of the original struct with counts per field. */
void layout_print_annotated(FILE *f, const struct layout_struct *s, const struct layout_units *u);
/* "keep the current layout: WHY" of a suggestion G kept (LAYOUT_ALGO_ORIGINAL), no newline. */
void layout_print_keep_reason(FILE *f, const struct layout_suggestion *sg,
			      const struct layout_units *u);
/* The suggestion as a ready-to-paste C struct, or why the layout is kept. */
void layout_print_suggestion(FILE *f, const struct layout_suggestion *sg,
			     const struct layout_units *u);
/*
 * G's ranked list: "In struct S you will save N <unit>", in the order
 * given; with a sampling period above 1, also what it stands for
 * (count × period, spec §2.2 "actual misses").
 */
void layout_print_ranking(FILE *f, const struct layout_suggestion *sg, size_t n,
			  const struct layout_units *u);
/*
 * The false-sharing pairs of the original layout above params' significance
 * rule, one line each, then one line counting those left out ("" if none).
 */
void layout_print_false_sharing(FILE *f, const struct layout_struct *s,
				const struct layout_params *params, const struct layout_units *u);
/* Everything as one JSON document (array of structs with their suggestion). */
void layout_write_json(FILE *f, const struct layout_suggestion *sg, size_t n,
		       const struct layout_units *u);

/* ------------------------------------------------------------ cache model (§8.4) */

struct layout_cache_level_config {
	uint32_t size; /* bytes */
	uint32_t ways;
};

struct layout_cache_config {
	uint32_t cores; /* 1..64 */
	struct layout_cache_level_config l1, l2, llc;
};
/* The thesis machine (Kaby Lake E3-1245 v6): 32K/8, 256K/4, 8M/16. */
void layout_cache_config_default(struct layout_cache_config *c);

struct layout_cache_counts {
	uint64_t accesses;
	uint64_t l1_load_miss, l1_store_miss;
	uint64_t l2_miss, llc_miss;
	uint64_t cold_miss;	     /* L1 misses on a line this core never held */
	uint64_t coherence_miss;     /* L1 misses on a line another core's write took away */
	uint64_t false_sharing_miss; /* ... whose bytes did not overlap this core's */
	uint64_t true_sharing_miss;
	uint64_t hitm;	/* coh.hitm: found Modified in another core */
	uint64_t inval; /* coh.inval: copies invalidated in other cores */
};

struct layout_cache_event {
	uint32_t core;
	uint64_t addr;
	uint32_t size;
	bool write;
	int32_t struct_index; /* -1: not a field access */
	int32_t field_index;
};

struct layout_cache;
/* NULL if the configuration is not valid (powers of two, sizes, cores). */
struct layout_cache *layout_cache_new(const struct layout_cache_config *c);
void layout_cache_free(struct layout_cache *m);
/* -1 on a bad event (core out of range, size 0) or ENOMEM. */
int layout_cache_access(struct layout_cache *m, const struct layout_cache_event *e);
const struct layout_cache_counts *layout_cache_totals(const struct layout_cache *m);
/* Counts of events that carried (struct, field); all zero if none did. */
struct layout_cache_counts layout_cache_field_counts(const struct layout_cache *m,
						     uint32_t struct_index, uint32_t field_index);

/* ============================================================ layout-record (issue 17)
 * Collection (`lever layout record`), record writing and merging, the HTML
 * heat map and the pprof export. Owner: layout-record.
 */

/* Write rec as a version-2 record (everything the reader keeps). */
int layout_record_write(FILE *f, const struct layout_record *rec);
/* A counter by name (0 if absent) and adding to one (creating it). */
uint64_t layout_record_stat(const struct layout_record *rec, const char *name);
int layout_record_add_stat(struct layout_record *rec, const char *name, uint64_t value);
/*
 * Merge `in` into `acc` (spec §2.4 Algorithm 1, by (build ID, address)):
 * the same program build and static part of the program are required;
 * samples, accesses and counters are summed per (module, pc, tid); a shared
 * object's static part, held by either record, is kept (the same where both
 * hold it). -1 with why in err; 0 with err empty, or saying what static part
 * was left out (a shared object's struct that clashes by name with acc's).
 */
int layout_record_merge(struct layout_record *acc, const struct layout_record *in, char *err,
			size_t err_size);

/* ---- perf_event bytes (collect_perf.c) */
#define LAYOUT_PERF_REGS   24 /* perf's x86-64 user registers, AX..R15 */
#define LAYOUT_PERF_REG_AX 0
#define LAYOUT_PERF_REG_BX 1
#define LAYOUT_PERF_REG_CX 2
#define LAYOUT_PERF_REG_DX 3
#define LAYOUT_PERF_REG_SI 4
#define LAYOUT_PERF_REG_DI 5
#define LAYOUT_PERF_REG_BP 6
#define LAYOUT_PERF_REG_SP 7
#define LAYOUT_PERF_REG_IP 8
#define LAYOUT_PERF_REG_R8 16
/* The general registers (no flags, no segments: 64-bit user ABI refuses DS..GS). */
#define LAYOUT_PERF_REGS_GENERAL 0x00ff01ffull

struct perf_event_header;
struct perf_event_attr;

struct layout_perf_sample {
	uint16_t misc;
	uint64_t id, ip, time, addr, period, weight, data_src;
	uint32_t pid, tid, cpu;
	uint64_t n_callchain;
	const void *callchain; /* n_callchain u64, maybe unaligned: layout_perf_callchain_at */
	uint32_t raw_size;
	const void *raw;
	uint64_t regs_abi;   /* PERF_SAMPLE_REGS_ABI_*; NONE: no registers */
	uint64_t regs_valid; /* bit r: regs[r] was sampled */
	uint64_t regs[LAYOUT_PERF_REGS];
};
/* Decode one PERF_RECORD_SAMPLE of `size` bytes; -1 if malformed or of an unknown type. */
int layout_perf_parse_sample(const void *record, size_t size, uint64_t sample_type,
			     uint64_t regs_mask, struct layout_perf_sample *s);
uint64_t layout_perf_callchain_at(const struct layout_perf_sample *s, uint64_t i);
/* The time in the sample_id trailer of a non-sample record (sample_id_all). */
int layout_perf_record_time(const void *record, size_t size, uint64_t sample_type, uint64_t *time);
/*
 * Call fn on each record of a ring buffer's data area (data_size bytes, a
 * power of two) between *tail and head, advancing *tail; a record that wraps
 * the end is copied whole into scratch (64 KiB). Returns the number of
 * records, -1 on a malformed buffer or when fn returns nonzero.
 */
long layout_perf_ring_read(const unsigned char *data, uint64_t data_size, uint64_t *tail,
			   uint64_t head, unsigned char *scratch,
			   int (*fn)(const struct perf_event_header *h, void *ctx), void *ctx);
/*
 * A named event of a sysfs PMU directory (".../devices/cpu", "mem-loads")
 * into attr->type/config/config1/config2, then extra_terms ("ldlat=30") on
 * top; event NULL: the PMU's type with config 0 (AMD's ibs_op). -1 with why.
 */
int layout_pmu_event_attr(const char *pmu_dir, const char *event, const char *extra_terms,
			  struct perf_event_attr *attr, char *err, size_t err_size);

/* ---- instructions and their data addresses (collect_decode.c) */
#define LAYOUT_MEM_BASE_RIP (-2)
struct layout_mem_operand {
	bool has_memory; /* a data access (lea, nop, prefetch are not) */
	bool read, write;
	bool narrow;	       /* 32-bit address registers */
	bool unknown_register; /* a base or index perf does not sample (a vector index) */
	bool clobbers_address; /* the instruction overwrites its base or index */
	int segment;	       /* 0, 1 = fs, 2 = gs */
	int base, index;       /* perf register index, LAYOUT_MEM_BASE_RIP, or -1 */
	unsigned scale, size, length;
	int64_t disp;
};
struct layout_decoder;
struct layout_decoder *layout_decoder_new(void);
void layout_decoder_free(struct layout_decoder *d);
/* Decode the instruction at code[0..n) (at address addr); -1 if invalid. */
int layout_decode_memory(struct layout_decoder *d, const uint8_t *code, size_t n, uint64_t addr,
			 struct layout_mem_operand *out);
/* base + index * scale + disp from sampled registers; -1 when they cannot tell. */
int layout_effective_address(const struct layout_mem_operand *op, uint64_t insn_addr,
			     const uint64_t *regs, uint64_t regs_valid, uint64_t *ea);

/* An ELF file's code on disk: segments, function starts, build ID. */
struct layout_code;
struct layout_code *layout_code_open(const char *path);
void layout_code_free(struct layout_code *c);
const char *layout_code_build_id(const struct layout_code *c);
int layout_code_offset_to_vaddr(const struct layout_code *c, uint64_t offset, uint64_t *vaddr);
int layout_code_decode(const struct layout_code *c, struct layout_decoder *d, uint64_t vaddr,
		       struct layout_mem_operand *op);
/* The instruction that ends where vaddr starts, decoded from its function's start; -1 if unknown.
 */
int layout_code_previous(const struct layout_code *c, struct layout_decoder *d, uint64_t vaddr,
			 uint64_t *previous);

/* ---- `lever layout record` (collect.c) */
enum layout_source { LAYOUT_SOURCE_CLOCK, LAYOUT_SOURCE_PMU, LAYOUT_SOURCE_INSTR };
enum layout_skid { LAYOUT_SKID_PREVIOUS, LAYOUT_SKID_NONE };

struct layout_collect_options {
	const char *who; /* "lever layout record" */
	enum layout_source source;
	bool source_given; /* --source=pmu given: no fallback to clock */
	bool system_wide;
	bool per_task;	 /* clock: per-task events even where cpu-wide ones open */
	uint64_t period; /* events (pmu) or nanoseconds (clock); 0: freq */
	uint64_t freq;	 /* samples per second */
	bool callchain;
	enum layout_skid skid;
	unsigned ring_pages;	 /* per CPU, a power of two */
	const char *pmu_root;	 /* /sys/bus/event_source/devices */
	const char *output_name; /* for messages */
	char *const *argv;	 /* PROGRAM [ARGS] */
};
/*
 * Run argv under perf_event_open and write a version-2 record to out.
 * Returns 0 with the program's wait status in *wait_status; -1 after
 * printing why (nothing could be recorded); or, PROGRAM not found or not
 * executable, LAUNCH_EXIT_NOT_FOUND (127) or LAUNCH_EXIT_CANNOT_EXEC (126).
 */
int layout_collect(const struct layout_collect_options *o, FILE *out, int *wait_status);

/* ---- lines shared between threads, from data addresses (sharing.c) */
struct layout_line_thread {
	uint32_t tid;
	uint64_t count, writes;
	uint64_t bytes, written; /* byte masks of the line: touched, written */
	bool has_field;		 /* a pc of its accesses references a field: */
	uint32_t struct_index, field_index;
};
struct layout_shared_line {
	uint64_t line; /* its address */
	uint64_t count;
	size_t n_threads;
	struct layout_line_thread threads[LAYOUT_MAX_THREADS];
	uint64_t sharing;   /* Σ thread pairs, one writing, of min(count): what is significant */
	bool shared;	    /* two threads, one of them writes */
	bool false_sharing; /* ... and no writer's bytes meet another thread's */
};
/* Shared lines of rec's accesses, most samples first: up to max into out; returns how many. */
size_t layout_find_shared_lines(const struct layout_record *rec, struct layout_shared_line *out,
				size_t max);
/*
 * One line each: "false sharing of data line 0x...: thread T bytes a-b (S.f), ...",
 * up to max of the lines with at least params->sharing_min_samples samples
 * and params->sharing_min_share of all addressed samples; then how many
 * were left out.
 */
void layout_print_shared_lines(FILE *f, const struct layout_record *rec, size_t max,
			       const struct layout_params *params);
/*
 * Per-object accesses of every struct (struct layout_object_access) from
 * rec's `access` lines, through the references at their pcs (refs sorted
 * by pc, as layout_annotate leaves them). -1 on ENOMEM.
 */
int layout_record_objects(struct layout_record *rec);

/* ---- outputs of a record (html.c, pprof.c) */
/*
 * The heat map: per struct, fields by cache line coloured by samples, the
 * suggestion beside (or why the layout is kept); the shared data lines that
 * pass params' significance rule (NULL: the defaults).
 */
int layout_write_html(FILE *f, const char *title, const struct layout_record *rec,
		      const struct layout_suggestion *sg, size_t n,
		      const struct layout_params *params);
/* Per-field samples as a gzipped pprof profile.proto; -1 with why. */
int layout_write_pprof(FILE *f, const struct layout_record *rec, char *err, size_t err_size);
/* ============================================================ end layout-record */
/* ------------------------------------------------------------ static references (layout-static) */
/*
 * What `lever layout refs` and the collectors (`lever layout record`) need
 * from a binary: the `struct`, `field`, `ref` and `block` lines of a layout
 * record (doc/formats/layout-record.md), found without running it (spec
 * autocpa.md §2.5, §8.5; the thesis's Ghidra "Data Type Reference Finder").
 * Struct layouts come from DWARF (libdw); references from decoding every
 * function (capstone) and typing the base register of each memory operand
 * from DWARF variable locations, propagated through moves, loads of
 * pointer fields, lea, add/sub of constants and call return types.
 * PCs are the binary's link-time addresses (as in DWARF and objdump), not
 * run-time ones: a collector subtracts the load bias of a PIE or library.
 * Implemented in src/layout/static*.c and dwarf*.c; doc/layout-refs.md.
 */
struct layout_static_options {
	const char *const *structs; /* names to keep (struct/class/typedef name) */
	size_t n_structs;	    /* 0: every struct some instruction references */
	bool all_structs; /* every struct of the DWARF, referenced or not (with n_structs 0) */
	bool cache; /* read/write the result under $XDG_CACHE_HOME/lever/layout/ by build ID */
};

struct layout_static_stats {
	size_t functions;	/* functions decoded */
	size_t instructions;	/* instructions decoded */
	size_t memory_operands; /* of which with a memory operand (lea, nop, prefetch excluded) */
	size_t typed_operands;	/* ... whose address resolved to a struct field */
	size_t refs;		/* ref lines written */
	size_t blocks;		/* block lines written */
	size_t structs;		/* struct lines written */
	size_t
	    unsupported; /* referenced structs left out: bitfields, packed (a comment says why) */
	bool from_cache; /* the output was the cached result */
};

/*
 * Write the struct, field, ref and block lines (no header line, no samples:
 * the caller writes `lever-layout-record 1` first and samples after) for
 * the ELF file `binary` (its DWARF may live in a separate debug file, found
 * as gdb finds it). Structs the record format cannot describe (bitfields,
 * packed or over-aligned placement) are left out with a `#` comment naming
 * them and the reason, and their references dropped. stats may be NULL.
 * Returns 0, or -1 with a message in err (no DWARF, not x86-64, I/O).
 */
int layout_static_write(const char *binary, const struct layout_static_options *o, FILE *out,
			struct layout_static_stats *stats, char *err, size_t err_size);
/* ------------------------------------------------------------ end of layout-static */

/* ============================================================ layout-instr (issue 17)
 * The `instr` source of `lever layout record` (instr.c; contract
 * layout/runtime/instr_format.h): a trace written by a program built with
 * `lever cc --layout`, replayed through the cache model above into a layout
 * record. Owner: layout-instr.
 */

/* Which of the model's events the record's samples count. */
enum layout_instr_event {
	LAYOUT_INSTR_EVENT_L1,	      /* L1 load and store misses (default) */
	LAYOUT_INSTR_EVENT_L1_LOAD,   /* L1 load misses: the thesis's mem_load_retired.l1_miss */
	LAYOUT_INSTR_EVENT_L2,	      /* L2 misses */
	LAYOUT_INSTR_EVENT_LLC,	      /* LLC misses */
	LAYOUT_INSTR_EVENT_COHERENCE, /* L1 misses caused by another core's write */
};
/* "l1", "l1-load", "l2", "llc", "coherence", NULL: indexed by the enum. */
extern const char *const layout_instr_event_names[];

struct layout_instr_options {
	struct layout_cache_config cache; /* thread k runs on core k mod cores */
	enum layout_instr_event event;
};
void layout_instr_options_default(struct layout_instr_options *o);

struct layout_instr_summary {
	size_t records; /* accesses in the trace */
	size_t threads;
	size_t partial_bytes;	      /* a record cut short at the end of the trace */
	uint64_t bad_sites;	      /* records naming no site of the binary (dropped) */
	uint64_t unrecorded_accesses; /* replayed, but of structs the record cannot hold */
	uint32_t period, burst;	      /* the runtime logged burst of every period accesses */
	struct layout_cache_counts model;
};

/*
 * Replay `trace` (one process's trace) of `binary` (the program that wrote
 * it: its site and member tables) and write a version-2 layout record to
 * out: `program`, `source instr model-EVENT`, the replay's counters as
 * `stat` lines, the structs with sampled sites, one `ref` per site at the pc it was
 * logged at, `sample` lines with the model's misses per site and thread, and
 * `period` (period / burst) when the runtime sampled. -1 with a message in
 * err (file and what is wrong).
 */
int layout_instr_collect(const char *trace, const char *binary, FILE *out,
			 const struct layout_instr_options *o, struct layout_instr_summary *sum,
			 char *err, size_t err_size);
/* One line of what was replayed (and lines for a cut trace, dropped records). */
void layout_instr_print_summary(FILE *f, const char *who, const struct layout_instr_summary *s);
/*
 * The plugin's ground truth for static references: every (function, struct,
 * field) whose access it instrumented, one "FUNCTION<TAB>STRUCT<TAB>FIELD"
 * line each, sorted and unique (tests/e2e/lib/layout_static_score.py
 * --truth reads it). A clone's suffix (".constprop.0") is dropped. -1 with
 * a message in err.
 */
int layout_instr_write_truth(const char *binary, FILE *out, char *err, size_t err_size);
/* Does binary hold the site table of `lever cc --layout`? */
bool layout_instr_has_sites(const char *binary);

/* Running a program for the record (instr_run.c). */
struct layout_instr_run {
	const char *who;	/* "lever layout record": prefixes messages */
	uint32_t period, burst; /* log burst of every period accesses per thread */
	struct layout_instr_options replay;
	char *const *argv; /* PROGRAM [ARGS] */
};
void layout_instr_run_default(struct layout_instr_run *run);
/*
 * Run argv with its layout runtime recording, replay its trace and write
 * the record to out. Returns 0 with the program's wait status in
 * *wait_status, or -1 after printing why (nothing was recorded).
 */
int layout_instr_record(const struct layout_instr_run *run, FILE *out, int *wait_status);

#endif
