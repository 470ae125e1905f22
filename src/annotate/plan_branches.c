/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The conditional branches of the planned functions (`lever annotate record
 * --branches`, spec/freud.md §4.2.4, §5.2.3; doc/annotate-record.md
 * "Branches"): each function's bytes, read from its file, are disassembled
 * with capstone from its entry to its end (st_size), and every instruction
 * that runtime/branches.h decodes as a conditional branch becomes a branch
 * feature, named FUNCTION+0xOFFSET as Freud names them. The runtime checks
 * each against the bytes it finds before it arms it.
 *
 * A linear sweep is exact for compiler output on x86-64, whose functions hold
 * no data (jump tables live in .rodata); should some bytes not decode, the
 * instruction boundaries after them are unsure, and an int3 written at a
 * wrong boundary would corrupt the program, so such a function gets no
 * branches at all.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotate/annotate.h"
#include "annotate/runtime/branches.h"
#include "elf/elf.h"

/* The function's bytes from its file; NULL with a reason. */
static uint8_t *function_bytes(const char *path, uint64_t addr, uint64_t size, const char **why)
{
	uint64_t off;
	uint8_t *buf;
	ssize_t n;
	int fd;

	if (size == 0 || size > (64u << 20)) {
		*why = "its size is unusable";
		return NULL;
	}
	if (!elf_address_to_offset(path, addr, &off)) {
		*why = "its code is not in the file";
		return NULL;
	}
	buf = malloc(size);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!buf || fd < 0) {
		*why = buf ? "the file cannot be opened" : "out of memory";
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	n = pread(fd, buf, size, (off_t)off);
	close(fd);
	if (n != (ssize_t)size) {
		*why = "its code cannot be read";
		free(buf);
		return NULL;
	}
	return buf;
}

/* The branches of one function into f->branches; 0, -ENOMEM, or -EINVAL with a reason. */
static int plan_one(csh cs, const char *path, struct annotate_plan_function *f, const char **why,
		    uint32_t *over)
{
	uint8_t *code = function_bytes(path, f->addr, f->size, why);
	const uint8_t *at = code;
	size_t left = f->size;
	uint64_t addr = f->addr;
	cs_insn *insn;
	struct annotate_plan_branch *list = NULL;
	uint32_t n = 0, cap = 0;
	int rc = 0;

	if (!code)
		return -EINVAL;
	insn = cs_malloc(cs);
	if (!insn) {
		free(code);
		return -ENOMEM;
	}
	while (left && !rc) {
		struct ann_branch_insn b;
		uint64_t here = addr;

		if (!cs_disasm_iter(cs, &at, &left, &addr, insn)) {
			*why = "some of its bytes do not decode as instructions";
			rc = -EINVAL;
			break;
		}
		if (!ann_branch_decode(insn->bytes, insn->size, &b) || b.len != insn->size)
			continue;
		if (n == ANN_MAX_BRANCHES) {
			++*over; /* the first ones are kept */
			continue;
		}
		if (n == cap) {
			struct annotate_plan_branch *grown;

			cap = cap ? 2 * cap : 16;
			grown = realloc(list, cap * sizeof(*list));
			if (!grown) {
				rc = -ENOMEM;
				break;
			}
			list = grown;
		}
		list[n++] = (struct annotate_plan_branch){
		    .offset = here - f->addr,
		    .len = b.len,
		    .cond = b.cond,
		    .target = (int64_t)(here - f->addr) + b.len + b.rel,
		};
	}
	cs_free(insn, 1);
	free(code);
	if (rc) {
		free(list);
		return rc;
	}
	f->branches = list;
	f->n_branches = n;
	return 0;
}

int annotate_plan_all_branches(struct annotate_plan *plan, FILE *notes)
{
	csh cs;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		if (notes)
			fprintf(notes,
				"lever annotate record: capstone cannot start: no branches\n");
		return 0;
	}
	for (size_t i = 0; i < plan->n_functions; i++) {
		struct annotate_plan_function *f = &plan->functions[i];
		const char *why = "";
		uint32_t over = 0;
		int rc = plan_one(cs, plan->modules[f->module].path, f, &why, &over);

		if (rc == -ENOMEM) {
			cs_close(&cs);
			return rc;
		}
		if (rc && notes)
			fprintf(notes, "lever annotate record: %s: no branch outcomes: %s\n",
				f->display, why);
		if (over && notes)
			fprintf(notes,
				"lever annotate record: %s: %u conditional branches past the "
				"first %d are not recorded\n",
				f->display, over, ANN_MAX_BRANCHES);
	}
	cs_close(&cs);
	return 0;
}
