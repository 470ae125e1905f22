/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Code randomization (spec stabilizer.md §4.3-4.5, §12.3 option B): the
 * functions of the main executable are copied to random addresses near the
 * text, lazily, on their first call after each re-randomization.
 *
 * What the program must be built with (`lever cc` adds these):
 */
#define CODE_RANDOMIZER_REQUIRED_FLAGS                                                             \
	"-ffunction-sections -fno-omit-frame-pointer -fno-jump-tables -fcf-protection=none "       \
	"-Wl,--emit-relocs"
/*
 *   -ffunction-sections    every call/jump/reference between functions has a
 *                          relocation, and no short jump crosses functions
 *   -fno-omit-frame-pointer frame-pointer chains through copies (gdb, perf -g)
 *   -fno-jump-tables       no tables of addresses into function bodies
 *   -fcf-protection=none   no IBT/shadow-stack marking (the entry jump and the
 *                          trap stubs are indirect jumps)
 *   -Wl,--emit-relocs      the link keeps .rela.text, read at start-up
 * and an unstripped .symtab (function st_value and st_size).
 *
 * The pieces:
 *   code_image.c   ELF symbols and retained relocations, capstone decoding,
 *                  which functions are relocatable and where their
 *                  PC-relative displacements are
 *   code_unwind.c  .eh_frame FDEs of the originals, rebuilt for each copy and
 *                  registered with libgcc (C++ exceptions, backtrace())
 *   code_area.c    the area near the text: slots (RW), trap stubs and copies
 *                  (RX, written only through /proc/self/mem), allocator
 *   code_stop.c    stop-the-world: every other thread parks in a signal
 *                  handler while its stack and registers are scanned
 *   code_trap.c    the assembly trap entry (saves all argument registers)
 *   code_gdb.c     the GDB JIT interface: an in-memory ELF object per copy
 *   code.c         start, re-randomize, relocate on trap, reclaim, logs
 *
 * How a call reaches the current copy: the original entry of every
 * relocatable function is overwritten once, at start, with
 *     [endbr64]  jmp *slot_f(%rip)            (6 bytes, 10 with endbr64)
 * slot_f is an aligned 8-byte word near the text holding either the address
 * of f's trap stub or of f's current copy; switching between them is one
 * atomic store, so no thread ever sees a half-written jump and function
 * pointers (the original addresses) stay valid for ever.
 */
#ifndef LEVER_STABILIZER_CODE_H
#define LEVER_STABILIZER_CODE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CODE_LOG_ENV   "LEVER_STABILIZE_CODE_LOG"   /* file: one line per copy made */
#define CODE_DEBUG_ENV "LEVER_STABILIZE_CODE_DEBUG" /* set: why functions stay, GC rounds */
#define CODE_CACHE_ENV "LEVER_STABILIZE_CACHE"	    /* decode cache directory; "off" */

#define CODE_GRANULE	   16	      /* copy alignment and allocation unit */
#define CODE_ENTRY_JMP_LEN 6	      /* ff 25 rel32 */
#define CODE_ENDBR_LEN	   4	      /* f3 0f 1e fa */
#define CODE_STUB_LEN	   16	      /* per-function trap stub */
#define CODE_OBJECT_SPACE  128	      /* room for libgcc's struct object */
#define CODE_MAX_FUNCTION  (1u << 20) /* larger functions stay in place */

/* Why a function stays in place (counted for -v). */
enum code_skip {
	SKIP_NONE,
	SKIP_TOO_SMALL, /* cannot hold the entry jump */
	SKIP_TOO_LARGE,
	SKIP_UNDECODABLE,      /* capstone stopped before its end */
	SKIP_SHORT_BRANCH_OUT, /* rel8 branch leaving the function */
	SKIP_OWN_LABEL,	       /* takes the address of its own interior */
	SKIP_UNHANDLED_RELOC,  /* a PC-relative relocation at no decoded field */
	SKIP_ENTRY_TARGETED,   /* something jumps into its first bytes */
	SKIP_UNWIND,	       /* an FDE/LSDA this runtime cannot rebuild */
	SKIP_EXCLUDED,	       /* _start and the like */
	SKIP_COUNT
};

struct code_copy {
	uintptr_t addr;
	uint32_t granules;
	uint32_t func;
	uintptr_t eh; /* blob in the eh arena (0: none) */
	uint32_t eh_granules;
	bool marked;		/* found on a stack by the last scan */
	struct code_copy *next; /* in the defunct list or the free pool */
};

/* An original FDE and where its pointers are, for rebuilding it per copy. */
struct code_fde {
	const uint8_t *cie;
	uint32_t cie_len; /* bytes, including the length word */
	int32_t pers_off; /* offset of the personality pointer in the CIE, -1 */
	uint8_t pers_enc;
	const uint8_t *fde;
	uint32_t fde_len;
	uint32_t pc_begin_off; /* offsets inside the FDE */
	uint8_t fde_enc;
	int32_t lsda_off; /* -1 if none */
	uint8_t lsda_enc;
};

struct code_function {
	uintptr_t start; /* run-time address of the original entry */
	uint32_t size;
	uint32_t name_off;    /* into code_image.names */
	uint32_t fixup_first; /* into code_image.fixups */
	uint32_t fixup_count;
	uint8_t entry_len;   /* bytes overwritten at the entry: 6 or 10 */
	uint8_t skip;	     /* enum code_skip */
	uint8_t prefix[16];  /* the original first bytes */
	struct code_fde fde; /* fde.fde == NULL: none */
	/*
	 * The function's home: a fixed place for one copy of it (and of its
	 * unwind blob), used only when the random part of the area is full
	 * (old copies that cannot be freed: a thread blocks the stop signal).
	 * Granule indexes past the random parts of the two arenas.
	 */
	uint32_t home_pos, home_eh_pos;
	/* Under code_lock: */
	uint64_t epoch; /* re-randomization period of the current copy */
	struct code_copy *current;
	struct code_copy *home; /* its copy at home once made; never freed */
};

struct code_image {
	uintptr_t load_bias;
	uintptr_t image_lo, image_hi; /* all PT_LOAD segments */
	uintptr_t eh_frame_hdr;	      /* run-time address, 0 if none */
	/*
	 * .text as in the file, [text_lo, text_hi) at run time: copies are made
	 * from it, never from memory, where a debugger's breakpoints or a
	 * uprobe's int3 may sit.
	 */
	const uint8_t *pristine;
	uintptr_t text_lo, text_hi;
	struct code_function *funcs; /* sorted by start */
	size_t n_funcs;
	uint32_t *fixups; /* offsets of rel32 fields to adjust, per function */
	size_t n_fixups;
	char *names;
	size_t names_len;
	size_t skipped[SKIP_COUNT];
	size_t relocatable;
	uint64_t relocatable_bytes;
	uint32_t max_size;
	bool from_cache; /* the decoder's conclusions came from the decode cache */
};

/* code_image.c */
/* Reads the main executable; fills img (mmap'ed tables). -1 with err set. */
int code_image_load(struct code_image *img, char *err, size_t err_size);
const char *code_skip_name(enum code_skip why);
/* The file's bytes at run-time address addr of .text. */
static inline const uint8_t *code_image_bytes(const struct code_image *img, uintptr_t addr)
{
	return img->pristine + (addr - img->text_lo);
}

/*
 * code_cache.c: the decoder's conclusions (skip reasons, fixups) on disk by
 * build ID. load: true if img's funcs and fixups were filled from a valid
 * cache file; store: writes them (after decoding), silently skipped on error.
 */
struct code_build_id {
	unsigned char bytes[64];
	size_t len; /* 0: none (no caching) */
};
bool code_cache_load(struct code_image *img, const struct code_build_id *id);
void code_cache_store(const struct code_image *img, const struct code_build_id *id);

/* code_unwind.c */
/*
 * Finds f's FDE via the executable's .eh_frame_hdr and checks it can be
 * rebuilt for a copy (pointer encodings, LSDA landing pads inside f).
 * Returns false if not (f must then stay in place).
 */
bool code_unwind_prepare(const struct code_image *img, struct code_function *f);
/* Bytes needed for f's blob (object + CIE + FDE + terminator), 0 if none. */
size_t code_unwind_blob_size(const struct code_function *f);
/* Builds the blob for a copy of f at copy_addr into blob (writable) and registers it. */
void code_unwind_register(const struct code_function *f, uint8_t *blob, uintptr_t copy_addr);
void code_unwind_deregister(const struct code_function *f, uint8_t *blob);

/*
 * code_gdb.c: eh-arena bytes for one copy of f: the unwind blob rounded to a
 * granule (code_unwind_part), then the gdb image; code_eh_len: the CIE+FDE
 * bytes registered with libgcc (0 without an FDE).
 */
size_t code_metadata_size(const struct code_function *f, const char *name);
size_t code_unwind_part(const struct code_function *f);
size_t code_eh_len(const struct code_function *f);

/* code_gdb.c: the GDB JIT interface */
/* Bytes for the gdb entry and image of a function named name with eh_len bytes of .eh_frame. */
size_t code_gdb_image_size(const char *name, size_t eh_len);
/* Builds the image at mem for a copy at addr and tells gdb; eh: the registered CIE+FDE. */
void code_gdb_register(uint8_t *mem, const char *name, uintptr_t addr, uint32_t size,
		       const uint8_t *eh, size_t eh_len);
void code_gdb_unregister(uint8_t *mem);

/* code_area.c */
struct code_area {
	uintptr_t base; /* whole reservation */
	size_t size;
	uint64_t *slots; /* RW, one per function, then the common-entry pointer */
	uintptr_t eh_lo; /* RW arena for unwind blobs */
	size_t eh_granules;
	uintptr_t stubs;     /* RX */
	uintptr_t copies_lo; /* RX arena for copies */
	size_t copies_granules;
	/* The first granules of each arena are placed at random, the rest are
	 * the functions' homes (code_function.home_pos, home_eh_pos). */
	size_t copies_random, eh_random;
	uint64_t *copy_bitmap, *eh_bitmap;
	int mem_fd;  /* /proc/self/mem */
	int mem_pid; /* the process that opened it */
	/*
	 * Fallback when /proc/self/mem cannot be written: [stubs, copies) is a
	 * MAP_SHARED anonymous mapping with a second, read-write view at
	 * rw_alias (W^X by dual mapping); the text is written with mprotect
	 * flips, at start only.
	 */
	uint8_t *rw_alias;
	uintptr_t rx_lo;
	size_t rx_size;
};
/* Reserves the area; assigns every relocatable function its home places. */
int code_area_create(struct code_area *a, struct code_image *img, char *err, size_t err_size);
/* Writes len bytes at addr (any mapping, also read-only) via /proc/self/mem. */
bool code_area_write(struct code_area *a, uintptr_t addr, const void *buf, size_t len);
/* Random placement in [0, total) of n free granules; -1 if none. */
long code_bitmap_alloc_random(uint64_t *bitmap, size_t total, size_t n, uint64_t random);
long code_bitmap_alloc_first(uint64_t *bitmap, size_t total, size_t n);
void code_bitmap_free(uint64_t *bitmap, size_t first, size_t n);
/* After fork, in the child: /proc/self/mem is another process's, and a
 * shared code mapping would still be the parent's. */
void code_area_after_fork(struct code_area *a);
/* Switches to the dual-mapping fallback; false if that fails too. */
bool code_area_use_dual_mapping(struct code_area *a);
#define CODE_WRITE_ENV "LEVER_STABILIZE_CODE_WRITE" /* "dual": force the fallback */

/* code_stop.c */
/*
 * Stops every thread of the process but the caller in a signal handler and
 * calls scan(lo, hi, ctx) for each stopped thread's saved registers and stack
 * words (and the caller's own stack), then lets them go. Returns false (and
 * scans nothing) if some thread could not be stopped within the timeout.
 */
typedef void (*code_scan_fn)(const uintptr_t *words, size_t n, void *ctx);
bool code_stop_and_scan(code_scan_fn scan, void *ctx);
int code_stop_init(void);

/* code_trap.c (symbols the assembly uses are hidden: direct RIP-relative access) */
#define CODE_HIDDEN __attribute__((visibility("hidden")))
extern CODE_HIDDEN char code_trap_entry[];   /* common entry of the per-function stubs */
extern CODE_HIDDEN uint32_t code_xsave_size; /* 0: use fxsave */
extern CODE_HIDDEN uint32_t code_xsave_mask_lo, code_xsave_mask_hi;
void code_trap_detect_xsave(void);
/* Called by code_trap_entry with the function's index; returns where to jump. */
CODE_HIDDEN uintptr_t code_trap_resolve(uint64_t index);

#endif
