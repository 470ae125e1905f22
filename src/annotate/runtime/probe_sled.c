/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Probes on the NOP sleds of -fpatchable-function-entry=5 (`lever cc
 * --annotate`, spec/freud.md §7.5 (a)): the five one-byte NOPs at the entry
 * (after an endbr64 when the code is built with -fcf-protection) become a
 * `jmp rel32` to the probe's entry trampoline, which resumes after the sled.
 * Nothing of the function's own code moves.
 *
 * Patching happens before the program's threads exist (the constructor, see
 * init.c) or, for dlopen'ed code, before dlopen returns the library to its
 * caller, so no thread can be executing the five bytes being rewritten.
 */
#include <stdio.h>
#include <string.h>

#include "annotate/runtime/runtime.h"

static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};

bool ann_has_sled(uintptr_t entry, uintptr_t *sled)
{
	const uint8_t *code = (const uint8_t *)entry;

	if (memcmp(code, endbr64, sizeof(endbr64)) == 0)
		code += sizeof(endbr64);
	for (int i = 0; i < ANN_SLED_BYTES; i++)
		if (code[i] != 0x90)
			return false;
	*sled = (uintptr_t)code;
	return true;
}

/* Write `jmp target` (5 bytes) at at; the range must be patchable. */
int ann_write_jmp(uintptr_t at, uintptr_t target, size_t pad_to)
{
	uint8_t jmp[16];
	int64_t rel = (int64_t)target - (int64_t)(at + 5);

	if (rel != (int32_t)rel || pad_to > sizeof(jmp))
		return -1;
	jmp[0] = 0xe9;
	memcpy(jmp + 1, &(int32_t){(int32_t)rel}, 4);
	memset(jmp + 5, 0xcc, pad_to > 5 ? pad_to - 5 : 0); /* never executed */
	if (ann_code_unprotect(at, pad_to))
		return -1;
	memcpy((void *)at, jmp, pad_to < 5 ? 5 : pad_to);
	__builtin___clear_cache((char *)at, (char *)at + pad_to);
	return ann_code_protect(at, pad_to);
}

int ann_probe_sled(struct ann_probe *p, uintptr_t entry, char *why, size_t why_size)
{
	uintptr_t sled;
	uint8_t *code, *after;

	if (!ann_has_sled(entry, &sled)) {
		snprintf(why, why_size,
			 "no -fpatchable-function-entry sled (build with lever cc "
			 "--annotate)");
		return -1;
	}
	p->entry = entry;
	code = ann_entry_trampoline_begin(p, sled, 0, &after);
	if (!code) {
		snprintf(why, why_size, "no memory for a trampoline within 2 GiB");
		return -1;
	}
	ann_entry_trampoline_end(after, sled + ANN_SLED_BYTES);
	p->trampoline = code;
	if (ann_write_jmp(sled, (uintptr_t)code, ANN_SLED_BYTES)) {
		snprintf(why, why_size, "cannot write the sled (mprotect refused)");
		return -1;
	}
	p->installed = ANN_PROBE_SLED;
	return 0;
}
