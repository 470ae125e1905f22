/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stack padding (Stabilizer T-S, spec stabilizer.md 3.3; option C of 12.3):
 * the contract between the code `lever cc` compiles, the stub it links into
 * every executable and shared object, and the runtime.
 *
 *  - Compiled code (plugins/stack_pads_{gcc,llvm}.cc): every function has one
 *    byte, its slot, in a table local to its object file, placed in section
 *    STACK_PADS_SECTION. On entry the function reads its slot and allocates
 *    slot * STACK_PAD_UNIT bytes on the stack (alloca), so the frames of
 *    everything it calls sit that much lower. Slots start at 0: a program
 *    that runs without the runtime is unpadded.
 *  - The linker concatenates the tables of a module into one section, which
 *    __start_/__stop_STACK_PADS_SECTION delimit. The stub (cc/stub.c) hands
 *    that range to the runtime from a constructor, if the runtime is loaded,
 *    and takes it back from a destructor (dlclose).
 *  - The runtime (runtime/stack.c) fills the slots with random values in
 *    0..STACK_PAD_MAX_SLOT, and draws them again at each re-randomization.
 *
 * The pad between two frames is thus 0..4080 bytes in steps of 16 (the
 * x86-64 stack alignment), the paper's range ("up to a page", [P 3.4]).
 */
#ifndef LEVER_STABILIZER_STACK_PADS_H
#define LEVER_STABILIZER_STACK_PADS_H

#define STACK_PADS_SECTION   "lever_stack_pads"
#define STACK_PADS_SYMBOL    "__lever_stack_pads" /* the per-object table (local) */
#define STACK_PAD_UNIT	     16
#define STACK_PAD_UNIT_SHIFT 4
#define STACK_PAD_MAX_SLOT   255 /* largest slot value: 255 * 16 = 4080 bytes */

/* Exported by the runtime, looked up by the stub with dlsym(RTLD_DEFAULT). */
#define STACK_PADS_REGISTER_FN	 "lever_stack_pads_register"
#define STACK_PADS_UNREGISTER_FN "lever_stack_pads_unregister"

#ifdef __cplusplus
extern "C" {
#endif
void lever_stack_pads_register(unsigned char *slots, unsigned long count);
void lever_stack_pads_unregister(unsigned char *slots);
#ifdef __cplusplus
}
#endif

#endif
