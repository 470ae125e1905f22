/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The layout randomization of lever bench and lever compare runs: checking
 * that the programs can be randomized the way --randomize asks (code and
 * stack only act in programs built by lever cc, link needs a program linked
 * by lever cc --randomize-link), and describing what was randomized, with
 * the seeds, in text, JSON and HTML.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/bench_common.h"
#include "stabilizer/cc/wrapper.h"

/* ------------------------------------------------------------ the program */

/* What lever cc leaves in a program, read from its section headers. */
struct program_marks {
	bool elf;
	bool rela_text;	 /* -Wl,--emit-relocs: functions can be relocated */
	bool stack_pads; /* a lever_stack_pads table */
	bool link_seed;
	uint64_t seed;
};

static bool executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The command's first word, as posix_spawnp would find it, into out. */
static bool find_program(const char *word, char *out)
{
	const char *path = getenv("PATH");
	char candidate[PATH_MAX];

	if (strchr(word, '/'))
		return executable_file(word) && realpath(word, out);
	if (!path || !*path)
		path = "/bin:/usr/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		int n = snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)len,
				 len ? path : ".", word);

		if (n > 0 && (size_t)n < sizeof(candidate) && executable_file(candidate))
			return realpath(candidate, out) != NULL;
		path += len + (path[len] == ':');
	}
	return false;
}

/*
 * The first word of a shell command line, skipping VAR=value assignments:
 * the program checked when the command runs under /bin/sh -c.
 */
static bool shell_first_word(const char *text, char *out, size_t size)
{
	const char *p = text;

	for (;;) {
		size_t len;

		p += strspn(p, " \t\n");
		len = strcspn(p, " \t\n|&;<>()$`'\"\\");
		if (len == 0 || len >= size)
			return false;
		memcpy(out, p, len);
		out[len] = '\0';
		if (!strchr(out, '='))
			return true;
		p += len;
	}
}

static void read_link_seed(Elf_Scn *scn, struct program_marks *m)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t prefix = strlen(CC_LINK_SEED_PREFIX);
	char text[64];

	if (!data || !data->d_buf || data->d_size <= prefix || data->d_size >= sizeof(text))
		return;
	memcpy(text, data->d_buf, data->d_size);
	text[data->d_size] = '\0';
	if (strncmp(text, CC_LINK_SEED_PREFIX, prefix) == 0 &&
	    parse_u64_range(text + prefix, 0, UINT64_MAX, &m->seed))
		m->link_seed = true;
}

static void read_marks(const char *path, struct program_marks *m)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	size_t names;
	Elf *elf;

	memset(m, 0, sizeof(*m));
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && elf_getshdrstrndx(elf, &names) == 0) {
		m->elf = true;
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, names, sh.sh_name)))
				continue;
			if (strcmp(name, ".rela.text") == 0 && sh.sh_type == SHT_RELA)
				m->rela_text = true;
			else if (strcmp(name, "lever_stack_pads") == 0 && sh.sh_size > 0)
				m->stack_pads = true;
			else if (strcmp(name, CC_LINK_SEED_SECTION) == 0 && !m->link_seed)
				read_link_seed(scn, m);
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

static int missing(const char *name, const char *part, const struct bench_command *c,
		   const char *what, const char *how)
{
	fprintf(stderr,
		"%s: --randomize=%s: %s (the program of '%s') %s, so %s would do nothing. %s "
		"(see doc/cc.md).\n",
		name, part, c->program, c->display, what, part, how);
	return 1;
}

static int check_program(const struct bench_options *o, struct bench_command *c, const char *name)
{
	char word[PATH_MAX], path[PATH_MAX];
	struct program_marks m;

	if (c->shell ? !shell_first_word(c->display, word, sizeof(word))
		     : snprintf(word, sizeof(word), "%s", c->argv[0]) >= (int)sizeof(word)) {
		fprintf(stderr,
			"%s: --randomize=code/stack/link: cannot tell which program '%s' "
			"runs; name the program as the command's first word\n",
			name, c->display);
		return 1;
	}
	if (!find_program(word, path)) {
		fprintf(stderr, "%s: cannot find the program '%s' of '%s' (in PATH)\n", name, word,
			c->display);
		return 1;
	}
	c->program = strdup(path);
	if (!c->program)
		return 1;
	read_marks(path, &m);
	if (!m.elf)
		return missing(name,
			       o->randomize_link   ? "link"
			       : o->randomize_code ? "code"
						   : "stack",
			       c, "is not an ELF program (a script?)",
			       "Name the program built with lever cc as the command's first word");
	if (o->randomize_code && !m.rela_text)
		return missing(name, "code", c,
			       "has no .rela.text: it was not linked by lever cc (or was stripped)",
			       "Build it with lever cc, e.g. 'lever cc -O2 prog.c -o prog' or "
			       "'make CC=lever-cc'");
	if (o->randomize_stack && !m.stack_pads)
		return missing(name, "stack", c,
			       "has no lever_stack_pads section: it was not compiled by lever cc "
			       "with stack pads",
			       "Build it with lever cc (without --no-stack-pads)");
	if (o->randomize_link && !m.link_seed)
		return missing(name, "link", c,
			       "records no link seed: it was not linked by lever cc "
			       "--randomize-link",
			       "Link it with 'lever cc --randomize-link[=SEED] ...', one build per "
			       "link order");
	c->link_seed_known = m.link_seed;
	c->link_seed = m.seed;
	return 0;
}

int bench_program_link_seed(const char *path, uint64_t *seed)
{
	struct program_marks m;

	read_marks(path, &m);
	*seed = m.seed;
	return m.link_seed ? 0 : -1;
}

int bench_check_programs(const struct bench_options *o, struct bench_command *commands, size_t k,
			 const char *name)
{
	if (!o->randomize_code && !o->randomize_stack && !o->randomize_link)
		return 0;
	for (size_t i = 0; i < k; i++)
		if (check_program(o, &commands[i], name))
			return 1;
	return 0;
}

/* ------------------------------------------------------------ describing */

static const char *rerandomize_text(const struct bench_options *o, char *buf, size_t size)
{
	char dur[32];

	if (!o->randomize_code && !o->randomize_stack)
		return "";
	if (!o->rerandomize_ns)
		return ", code and stack randomized once per run";
	snprintf(buf, size, ", code and stack re-randomized every %s",
		 report_format_time((double)o->rerandomize_ns / 1e9, dur, sizeof(dur)));
	return buf;
}

/* Distinct link seeds over the runs of r (a --prepare command may relink). */
static size_t distinct_link_seeds(const struct bench_result *r)
{
	size_t distinct = 0;

	for (size_t i = 0; i < r->n; i++) {
		size_t j = 0;

		while (j < i && r->runs[j].link_seed != r->runs[i].link_seed)
			j++;
		distinct += j == i;
	}
	return distinct;
}

static void link_text(const struct bench_options *o, const struct bench_result *r, char *buf,
		      size_t size)
{
	size_t distinct = r && r->n ? distinct_link_seeds(r) : 0;

	buf[0] = '\0';
	if (!o->randomize_link || !r)
		return;
	if (distinct > 1)
		snprintf(buf, size, "; link order seeds: %zu distinct over %zu runs (relinked)",
			 distinct, r->n);
	else if (r->n)
		snprintf(buf, size, "; link order seed %llu",
			 (unsigned long long)r->runs[0].link_seed);
	else if (r->command->link_seed_known)
		snprintf(buf, size, "; link order seed %llu",
			 (unsigned long long)r->command->link_seed);
}

char *bench_layout_text(const struct bench_options *o, const struct bench_result *r, char *buf,
			size_t size)
{
	char again[64], link[96];
	bool per_run = o->randomize_env || bench_options_stabilizer(o);

	link_text(o, r, link, sizeof(link));
	snprintf(
	    buf, size, "%s%s%s%s%s%s%s (--seed %llu%s)",
	    o->randomize_env ? "random environment size per run (0-4095 bytes)"
			     : "fixed environment",
	    bench_options_stabilizer(o) ? "; Stabilizer, fresh seed per run:" : "",
	    o->randomize_heap ? " shuffled heap" : "",
	    o->randomize_code ? (o->randomize_heap ? ", relocated code" : " relocated code") : "",
	    o->randomize_stack ? (o->randomize_heap || o->randomize_code ? ", random stack pads"
									 : " random stack pads")
			       : "",
	    rerandomize_text(o, again, sizeof(again)), link, (unsigned long long)o->seed,
	    per_run ? " repeats it" : "");
	return buf;
}

static void seed_string(struct report_json *j, const char *key, uint64_t v)
{
	char text[24];

	snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
	if (key)
		report_json_kv_string(j, key, text);
	else
		report_json_string(j, text);
}

static void command_json(const struct bench_options *o, const struct bench_result *r,
			 struct report_json *j)
{
	const struct bench_command *c = r->command;

	report_json_object_begin(j);
	report_json_kv_string(j, "command", c->display);
	report_json_key(j, "program");
	if (c->program)
		report_json_string(j, c->program);
	else
		report_json_null(j);
	if (c->link_seed_known) {
		seed_string(j, "link_seed", c->link_seed);
	} else {
		report_json_key(j, "link_seed");
		report_json_null(j);
	}
	report_json_key(j, "link_seeds");
	if (o->randomize_link) {
		report_json_array_begin(j);
		for (size_t i = 0; i < r->n; i++)
			seed_string(j, NULL, r->runs[i].link_seed);
		report_json_array_end(j);
	} else {
		report_json_null(j);
	}
	report_json_key(j, "stabilizer_seeds");
	if (bench_options_stabilizer(o)) {
		report_json_array_begin(j);
		for (size_t i = 0; i < r->n; i++)
			seed_string(j, NULL, r->runs[i].stabilizer_seed);
		report_json_array_end(j);
	} else {
		report_json_null(j);
	}
	report_json_object_end(j);
}

void bench_layout_json(const struct bench_options *o, const struct bench_result *results, size_t k,
		       struct report_json *j)
{
	const struct {
		const char *name;
		bool on;
	} parts[] = {
	    {"env", o->randomize_env},	   {"heap", o->randomize_heap}, {"code", o->randomize_code},
	    {"stack", o->randomize_stack}, {"link", o->randomize_link},
	};

	report_json_object_begin(j);
	report_json_key(j, "randomize");
	report_json_array_begin(j);
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		if (parts[i].on)
			report_json_string(j, parts[i].name);
	report_json_array_end(j);
	report_json_key(j, "rerandomize_ns");
	if (o->randomize_code || o->randomize_stack)
		report_json_integer(j, (long long)o->rerandomize_ns);
	else
		report_json_null(j);
	seed_string(j, "seed", o->seed);
	report_json_key(j, "commands");
	report_json_array_begin(j);
	for (size_t i = 0; i < k; i++)
		command_json(o, &results[i], j);
	report_json_array_end(j);
	report_json_object_end(j);
}

/* "WHAT seeds of the runs of CMD, in order: s1, s2, ..." as one paragraph. */
static void seeds_html(const struct bench_result *r, const char *what, bool link, FILE *f)
{
	size_t size = 96 + strlen(r->command->display) + r->n * 22;
	char *text = malloc(size);
	size_t used;

	if (!text)
		return;
	used = (size_t)snprintf(text, size, "%s seeds of the runs of %s, in order:", what,
				r->command->display);
	for (size_t i = 0; i < r->n && used < size; i++)
		used += (size_t)snprintf(
		    text + used, size - used, "%s %llu", i ? "," : "",
		    (unsigned long long)(link ? r->runs[i].link_seed : r->runs[i].stabilizer_seed));
	report_html_paragraph(f, text);
	free(text);
}

void bench_layout_html(const struct bench_options *o, const struct bench_result *results, size_t k,
		       FILE *f)
{
	char line[512], para[PATH_MAX + 1024];

	report_html_heading(f, 2, "Layout randomization");
	for (size_t i = 0; i < k; i++) {
		const struct bench_command *c = results[i].command;

		snprintf(para, sizeof(para), "%s: %s%s%s", c->display,
			 bench_layout_text(o, &results[i], line, sizeof(line)),
			 c->program ? "; program " : "", c->program ? c->program : "");
		report_html_paragraph(f, para);
		if (bench_options_stabilizer(o))
			seeds_html(&results[i], "Stabilizer", false, f);
		if (o->randomize_link && distinct_link_seeds(&results[i]) > 1)
			seeds_html(&results[i], "Link order", true, f);
	}
}
