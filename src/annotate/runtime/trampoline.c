/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Trampolines of liblever-annotate.so (spec/freud.md §7.5 "entry hook",
 * "exit hook"): the code an instrumented function's entry jumps to, which
 * saves the registers as a struct ann_entry_regs (features.h numbering),
 * calls ann_on_entry and goes on with the function; and the one exit
 * trampoline that replaced return addresses lead to, which reads the TSC
 * (the end of the call's span) as soon as it has saved the registers.
 *
 * Code is written into chunks mapped within ±2 GiB of the module it serves,
 * so that a 5-byte `jmp rel32` reaches it and relocated RIP-relative operands
 * still reach their targets. A chunk is writable while one installation
 * batch fills it and is then made read+execute for good (W^X): code is never
 * rewritten while a thread might run it.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "annotate/runtime/runtime.h"

#define CHUNK_SIZE (64u << 10)
#define MAX_CHUNKS 256
#define REACH	   ((uintptr_t)0x7ff00000u) /* a little under 2 GiB */

struct chunk {
	uintptr_t base;
	size_t used;
	bool sealed;
};

static struct chunk chunks[MAX_CHUNKS];
static unsigned n_chunks;
uintptr_t ann_exit_trampoline;

static bool within_reach(uintptr_t a, uintptr_t b)
{
	return (a > b ? a - b : b - a) < REACH;
}

/* A new chunk near `near`: try page-aligned hints stepping away from it. */
static struct chunk *chunk_new(uintptr_t near)
{
	uintptr_t step = 16u << 20, start = near & ~(uintptr_t)(CHUNK_SIZE - 1);

	if (n_chunks == MAX_CHUNKS)
		return NULL;
	for (uintptr_t d = step; d < REACH - CHUNK_SIZE; d += step) {
		for (int dir = -1; dir <= 1; dir += 2) {
			uintptr_t hint = dir < 0 ? start - d : start + d;
			void *m;

			if ((dir < 0 && start < d) || hint == 0)
				continue;
			m = mmap((void *)hint, CHUNK_SIZE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (m == MAP_FAILED)
				continue;
			if (!within_reach((uintptr_t)m, near)) {
				munmap(m, CHUNK_SIZE);
				continue;
			}
			chunks[n_chunks] = (struct chunk){.base = (uintptr_t)m};
			return &chunks[n_chunks++];
		}
	}
	return NULL;
}

void *ann_code_alloc(uintptr_t near, size_t size)
{
	struct chunk *c = NULL;

	size = (size + 15) & ~(size_t)15;
	for (unsigned i = 0; i < n_chunks && !c; i++)
		if (!chunks[i].sealed && chunks[i].used + size <= CHUNK_SIZE &&
		    within_reach(chunks[i].base, near))
			c = &chunks[i];
	if (!c && !(c = chunk_new(near)))
		return NULL;
	c->used += size;
	return (void *)(c->base + c->used - size);
}

/* After a batch: every chunk filled so far becomes read+execute. */
void ann_code_seal(void)
{
	for (unsigned i = 0; i < n_chunks; i++)
		if (!chunks[i].sealed) {
			mprotect((void *)chunks[i].base, CHUNK_SIZE, PROT_READ | PROT_EXEC);
			chunks[i].sealed = true;
		}
}

static int protect_range(uintptr_t addr, size_t len, int prot)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo = addr & ~(uintptr_t)(page - 1);
	uintptr_t hi = (addr + len + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);

	return mprotect((void *)lo, hi - lo, prot);
}

int ann_code_unprotect(uintptr_t addr, size_t len)
{
	return protect_range(addr, len, PROT_READ | PROT_WRITE | PROT_EXEC);
}

int ann_code_protect(uintptr_t addr, size_t len)
{
	return protect_range(addr, len, PROT_READ | PROT_EXEC);
}

/* ------------------------------------------------------------ a tiny emitter */

struct emit {
	uint8_t *p;
};

static void bytes(struct emit *e, const void *b, size_t n)
{
	memcpy(e->p, b, n);
	e->p += n;
}

static void byte(struct emit *e, uint8_t b)
{
	*e->p++ = b;
}

static void imm32(struct emit *e, uint32_t v)
{
	bytes(e, &v, 4);
}

static void imm64(struct emit *e, uint64_t v)
{
	bytes(e, &v, 8);
}

/* Machine register numbers (ModRM encoding) of the DWARF columns 0..15. */
static const uint8_t dwarf_to_hw[16] = {0, 2, 1, 3, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15};

/* mov [rsp+disp32], reg  /  mov reg, [rsp+disp32] */
static void mov_rsp_mem(struct emit *e, uint8_t hw, uint32_t disp, bool store)
{
	byte(e, 0x48 | (hw >= 8 ? 0x04 : 0)); /* REX.W + REX.R */
	byte(e, store ? 0x89 : 0x8b);
	byte(e, 0x84 | ((hw & 7) << 3)); /* ModRM: mod=10, rm=100 (SIB) */
	byte(e, 0x24);			 /* SIB: base rsp */
	imm32(e, disp);
}

/* movdqu [rsp+disp32], xmmN  /  movdqu xmmN, [rsp+disp32] (N < 16) */
static void movdqu_rsp(struct emit *e, uint8_t x, uint32_t disp, bool store)
{
	byte(e, 0xf3);
	if (x >= 8)
		byte(e, 0x44); /* REX.R */
	byte(e, 0x0f);
	byte(e, store ? 0x7f : 0x6f);
	byte(e, 0x84 | ((x & 7) << 3));
	byte(e, 0x24);
	imm32(e, disp);
}

/* jmp [rip+0]; .quad target: reaches anywhere, 14 bytes. */
static void jmp_abs(struct emit *e, uint64_t target)
{
	bytes(e, (const uint8_t[]){0xff, 0x25, 0, 0, 0, 0}, 6);
	imm64(e, target);
}

/* mov rax, imm64; call rax */
static void call_abs(struct emit *e, uint64_t target)
{
	bytes(e, (const uint8_t[]){0x48, 0xb8}, 2);
	imm64(e, target);
	bytes(e, (const uint8_t[]){0xff, 0xd0}, 2);
}

/*
 * rdtsc; shl rdx, 32; or rdx, rax: the TSC in rdx (rax clobbered), read by
 * the exit trampoline as soon as the registers are saved: the end of the
 * call's span, and the start of the exit handler's window when it is timed.
 */
static void rdtsc_rdx(struct emit *e)
{
	bytes(e, (const uint8_t[]){0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20, 0x48, 0x09, 0xc2}, 9);
}

#define REGS_SIZE ((uint32_t)sizeof(struct ann_entry_regs))
/* the entry frame: the registers, then xmm8-15 */
#define ENTRY_FRAME	(REGS_SIZE + 8 * 16)
#define HIGH_XMM_OFF(i) (REGS_SIZE + 16u * ((i)-8))
#define GPR_OFF(i)	((uint32_t)offsetof(struct ann_entry_regs, gpr) + 8u * (i))
#define XMM_OFF(i)	((uint32_t)offsetof(struct ann_entry_regs, xmm) + 16u * (i))

/*
 * At the function's entry rsp is 8 mod 16 (the return address was just
 * pushed) and nothing below it is live, so the frame is simply carved below
 * it, keeping the call to C 16-byte aligned. Every register but the flags is
 * saved, not only the argument registers: with GCC's -fipa-ra a caller keeps
 * values in call-clobbered registers the callee is known not to touch, so
 * the probe must touch nothing. The x87 stack is left alone by the C code,
 * which is built without AVX, so the upper halves of the ymm registers
 * survive too.
 */
_Static_assert(ENTRY_FRAME % 16 == 8, "the saved frame must realign the stack");

static void emit_prologue_call(struct emit *e, const struct ann_probe *p)
{
	bytes(e, (const uint8_t[]){0x48, 0x81, 0xec}, 3); /* sub rsp, ENTRY_FRAME */
	imm32(e, ENTRY_FRAME);
	for (int i = 0; i < 16; i++)
		if (i != 7)
			mov_rsp_mem(e, dwarf_to_hw[i], GPR_OFF(i), true);
	/*
	 * No TSC read here: the entry's work is a calibrated constant but for
	 * the feature reads, which ann_on_entry times itself (~20 ns a read on
	 * a VM, paid by every call, sampled or not).
	 */
	/* gpr[7]: rsp at entry (lea rax, [rsp+REGS_SIZE]); gpr[16]: the entry */
	bytes(e, (const uint8_t[]){0x48, 0x8d, 0x84, 0x24}, 4);
	imm32(e, ENTRY_FRAME);
	mov_rsp_mem(e, 0, GPR_OFF(7), true);
	bytes(e, (const uint8_t[]){0x48, 0xb8}, 2);
	imm64(e, p->entry);
	mov_rsp_mem(e, 0, GPR_OFF(16), true);
	for (uint8_t x = 0; x < ANN_XMM_COUNT; x++)
		movdqu_rsp(e, x, XMM_OFF(x), true);
	for (uint8_t x = 8; x < 16; x++)
		movdqu_rsp(e, x, HIGH_XMM_OFF(x), true);
	bytes(e, (const uint8_t[]){0x48, 0xbf}, 2); /* mov rdi, p */
	imm64(e, (uint64_t)(uintptr_t)p);
	bytes(e, (const uint8_t[]){0x48, 0x89, 0xe6}, 3); /* mov rsi, rsp */
	call_abs(e, (uint64_t)(uintptr_t)ann_on_entry);
	for (uint8_t x = 0; x < ANN_XMM_COUNT; x++)
		movdqu_rsp(e, x, XMM_OFF(x), false);
	for (uint8_t x = 8; x < 16; x++)
		movdqu_rsp(e, x, HIGH_XMM_OFF(x), false);
	for (int i = 0; i < 16; i++)
		if (i != 7)
			mov_rsp_mem(e, dwarf_to_hw[i], GPR_OFF(i), false);
	bytes(e, (const uint8_t[]){0x48, 0x81, 0xc4}, 3); /* add rsp, ENTRY_FRAME */
	imm32(e, ENTRY_FRAME);
}

/* The entry code before the displaced instructions is under 640 bytes, the jump back 14. */
#define ENTRY_CODE_MAX 768

uint8_t *ann_entry_trampoline_begin(struct ann_probe *p, uintptr_t near, size_t displaced_max,
				    uint8_t **displaced_at)
{
	uint8_t *code = ann_code_alloc(near, ENTRY_CODE_MAX + displaced_max);
	struct emit e = {code};

	if (!code)
		return NULL;
	emit_prologue_call(&e, p);
	if (e.p - code > ENTRY_CODE_MAX - 16)
		__builtin_trap(); /* the constant above is wrong: never let it overflow */
	*displaced_at = e.p;
	return code;
}

void ann_entry_trampoline_end(uint8_t *after_displaced, uintptr_t resume)
{
	struct emit e = {after_displaced};

	jmp_abs(&e, resume);
}

/*
 * The exit trampoline. A probed function has just returned here with `ret`:
 * rsp is its entry rsp + 8 (16-byte aligned), its results are in rax, rdx,
 * xmm0, xmm1 (and st0 for long double, which the C code never touches).
 * Every call-clobbered register is kept, for -fipa-ra callers (see above).
 * ann_on_exit(sp, tsc) returns the real return address, which goes into a slot
 * that the final `ret` pops:
 *
 *   sub rsp, 8 (the slot); sub rsp, EXIT_FRAME; save rax rcx rdx rsi rdi
 *   r8-r11; rsi = rdtsc; save xmm0-15; lea rdi, [rsp+EXIT_FRAME+8];
 *   call ann_on_exit;
 *   mov [rsp+EXIT_FRAME], rax; restore; add rsp, EXIT_FRAME + 8;
 *   jmp [rsp-8]
 */
#define EXIT_FRAME (9 * 8 + 16 * 16)
_Static_assert(EXIT_FRAME % 16 == 8, "the exit frame must realign the stack");

static const uint8_t exit_saved[9] = {0, 1, 2, 6, 7, 8, 9, 10, 11}; /* machine numbers */

static void exit_save_restore(struct emit *e, bool store)
{
	for (uint8_t i = 0; i < 9; i++)
		mov_rsp_mem(e, exit_saved[i], 8u * i, store);
	if (store) {
		rdtsc_rdx(e);					  /* when the probe began */
		bytes(e, (const uint8_t[]){0x48, 0x89, 0xd6}, 3); /* mov rsi, rdx */
	}
	for (uint8_t x = 0; x < 16; x++)
		movdqu_rsp(e, x, 72u + 16u * x, store);
}

int ann_exit_trampoline_init(void)
{
	uint8_t *code = ann_code_alloc((uintptr_t)ann_on_exit, 512);
	struct emit e = {code};

	if (!code)
		return -1;
	bytes(&e, (const uint8_t[]){0x48, 0x83, 0xec, 0x08}, 4); /* sub rsp, 8 */
	bytes(&e, (const uint8_t[]){0x48, 0x81, 0xec}, 3);	 /* sub rsp, EXIT_FRAME */
	imm32(&e, EXIT_FRAME);
	exit_save_restore(&e, true);
	bytes(&e, (const uint8_t[]){0x48, 0x8d, 0xbc, 0x24}, 4); /* lea rdi, [rsp+disp32] */
	imm32(&e, EXIT_FRAME + 8);
	call_abs(&e, (uint64_t)(uintptr_t)ann_on_exit);
	mov_rsp_mem(&e, 0, EXIT_FRAME, true); /* mov [rsp+EXIT_FRAME], rax */
	exit_save_restore(&e, false);
	/*
	 * add rsp, EXIT_FRAME + 8; jmp [rsp-8]: not `ret`. The probed
	 * function's own ret already popped the return-stack buffer's entry
	 * for this call (mispredicted, it came here); a second ret would pop
	 * the caller's entry and leave every return above it mispredicted in
	 * turn. The slot is below rsp only for the jump itself, inside the
	 * 128-byte red zone that signal delivery leaves alone.
	 */
	bytes(&e, (const uint8_t[]){0x48, 0x81, 0xc4}, 3);
	imm32(&e, EXIT_FRAME + 8);
	bytes(&e, (const uint8_t[]){0xff, 0x64, 0x24, 0xf8}, 4);
	ann_exit_trampoline = (uintptr_t)code;
	return 0;
}
