/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Link-order randomization (`lever cc --randomize-link`): a different object
 * order and a different function order per seed, the baseline the paper
 * measures Stabilizer against ([P 5.2], spec stabilizer.md 3.2 step 2, -Rlink).
 *
 * Objects are shuffled on the command line. Functions, each in its own
 * section (-ffunction-sections), are placed in a random order by the linker:
 * GNU ld 2.40 has no --section-ordering-file, so for it (and lld) a script
 * that INSERTs an output section holding the named input sections in order
 * before .text; gold takes the same list as --section-ordering-file.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "elf/elf.h"
#include "stabilizer/cc/cc.h"

static bool movable(const struct cc_arg *a)
{
	return a->role == CC_ARG_INPUT && !a->link_barrier &&
	       (a->kind == CC_INPUT_OBJECT || a->kind == CC_INPUT_SOURCE ||
		a->kind == CC_INPUT_ASM);
}

/* Fisher-Yates over the movable inputs of v[begin, end). */
static void shuffle_run(struct cc_args *args, size_t begin, size_t end, struct rng *rng)
{
	size_t *idx = malloc((end - begin) * sizeof(*idx)), n = 0;

	if (!idx)
		return;
	for (size_t i = begin; i < end; i++)
		if (movable(&args->v[i]))
			idx[n++] = i;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rng_below(rng, i);
		struct cc_arg tmp = args->v[idx[i - 1]];

		args->v[idx[i - 1]] = args->v[idx[j]];
		args->v[idx[j]] = tmp;
	}
	free(idx);
}

void cc_shuffle_link_inputs(struct cc_args *args, struct rng *rng)
{
	size_t begin = 0;

	for (size_t i = 0; i <= args->n; i++) {
		if (i == args->n || args->v[i].link_barrier) {
			if (i > begin)
				shuffle_run(args, begin, i, rng);
			begin = i + 1;
		}
	}
}

void cc_names_free(struct cc_names *names)
{
	for (size_t i = 0; i < names->n; i++)
		free(names->v[i]);
	free(names->v);
	memset(names, 0, sizeof(*names));
}

static int add_name(struct cc_names *names, const char *name)
{
	char *copy;

	if (names->n == names->cap) {
		size_t cap = names->cap ? names->cap * 2 : 256;
		char **v = realloc(names->v, cap * sizeof(*v));

		if (!v)
			return -1;
		names->v = v;
		names->cap = cap;
	}
	copy = strdup(name);
	if (!copy)
		return -1;
	names->v[names->n++] = copy;
	return 0;
}

/* A function section the random order may move (and that a script can name). */
static bool is_function_section(const char *name)
{
	if (strncmp(name, ".text.", 6) != 0 || !name[6])
		return false;
	if (strncmp(name, ".text.unlikely", 14) == 0 || strncmp(name, ".text.exit", 10) == 0)
		return false;
	for (const char *p = name; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '$'))
			return false;
	}
	return true;
}

static int collect_from_object(Elf *elf, struct cc_names *names)
{
	size_t shstrndx;

	if (elf_kind(elf) != ELF_K_ELF)
		return 0;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -1; /* no section names: nothing could be ordered */
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS ||
		    !(shdr.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_section_name(elf, &shdr);
		if (name && is_function_section(name) && add_name(names, name) < 0)
			return -1;
	}
	return 0;
}

int cc_collect_function_sections(const char *path, struct cc_names *names, char *err,
				 size_t err_size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *archive, *member;
	int rc = 0;

	if (fd < 0) {
		snprintf(err, err_size, "%s: cannot open", path);
		return -1;
	}
	elf_version(EV_CURRENT);
	archive = elf_begin(fd, ELF_C_READ, NULL);
	if (!archive) {
		snprintf(err, err_size, "%s: %s", path, elf_errmsg(-1));
		close(fd);
		return -1;
	}
	if (elf_kind(archive) == ELF_K_AR) {
		Elf_Cmd cmd = ELF_C_READ;

		while (rc == 0 && (member = elf_begin(fd, cmd, archive)) != NULL) {
			rc = collect_from_object(member, names);
			cmd = elf_next(member);
			elf_end(member);
		}
	} else {
		rc = collect_from_object(archive, names);
	}
	if (rc < 0)
		snprintf(err, err_size, "%s: cannot read its sections", path);
	elf_end(archive);
	close(fd);
	return rc;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void cc_names_shuffle(struct cc_names *names, struct rng *rng)
{
	size_t n = 0;

	/* Sorted and unique first, so the order depends on the seed and the set only. */
	qsort(names->v, names->n, sizeof(*names->v), compare_names);
	for (size_t i = 0; i < names->n; i++) {
		if (n > 0 && strcmp(names->v[n - 1], names->v[i]) == 0)
			free(names->v[i]);
		else
			names->v[n++] = names->v[i];
	}
	names->n = n;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rng_below(rng, i);
		char *tmp = names->v[i - 1];

		names->v[i - 1] = names->v[j];
		names->v[j] = tmp;
	}
}

/* The symbol of a function section: .text.NAME, .text.startup.NAME, .text.hot.NAME. */
static const char *section_symbol(const char *section)
{
	const char *name = section + strlen(".text.");

	if (strncmp(name, "startup.", 8) == 0)
		return name + 8;
	if (strncmp(name, "hot.", 4) == 0)
		return name + 4;
	return name;
}

/*
 * The GNU ld script: a .text of its own, before the default one, holding the
 * named sections in order and then everything the default .text would hold,
 * so that the default one is left empty and dropped. The program still has
 * one .text, with every function in it.
 */
static void write_ld_script(FILE *out, const struct cc_names *names)
{
	fprintf(out, "/* lever cc --randomize-link: functions in a random order */\n"
		     "SECTIONS\n{\n  .text :\n  {\n");
	for (size_t i = 0; i < names->n; i++)
		fprintf(out, "    *(%s)\n", names->v[i]);
	fprintf(out, "    /* the rest, as in ld's default script */\n"
		     "    *(.text.unlikely .text.*_unlikely .text.unlikely.*)\n"
		     "    *(.text.exit .text.exit.*)\n"
		     "    *(.text.startup .text.startup.*)\n"
		     "    *(.text.hot .text.hot.*)\n"
		     "    *(SORT(.text.sorted.*))\n"
		     "    *(.text .stub .text.* .gnu.linkonce.t.*)\n"
		     "    *(.gnu.warning)\n"
		     "  }\n}\nINSERT BEFORE .text;\n");
}

int cc_write_section_order(FILE *out, enum cc_linker linker, const struct cc_names *names)
{
	if (linker == CC_LINKER_BFD)
		write_ld_script(out, names);
	for (size_t i = 0; linker != CC_LINKER_BFD && i < names->n; i++)
		fprintf(out, "%s\n",
			linker == CC_LINKER_LLD ? section_symbol(names->v[i]) : names->v[i]);
	return ferror(out) ? -1 : 0;
}
