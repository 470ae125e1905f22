/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Planning `lever annotate record` (spec/freud.md §5.2, §7.4 #1; the plan's
 * format: doc/formats/annotate-plan.md): which functions of which modules to
 * probe, found by name in the ELF symbol tables, and their feature programs
 * (from the feature planner, plan_features.c).
 *
 * Names: a C name, a mangled C++ name, the demangled name with or without
 * its parameter list, or a glob (fnmatch) of any of them. A shared library
 * is named `LIB:NAME`, LIB a path or a file name looked up the way the
 * dynamic loader would (the program's RUNPATH/RPATH, LD_LIBRARY_PATH, the
 * system directories), a glob allowed, so that dlopen'ed libraries can be
 * planned too.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotate/annotate.h"
#include "annotate/runtime/features.h"
#include "annotate/runtime/features_ops.h"
#include "annotate/runtime/settings.h"
#include "base/base.h"
#include "elf/elf.h"

/* ------------------------------------------------------------ demangling */

char *annotate_demangle(const char *symbol)
{
	static char *(*demangle)(const char *, char *, size_t *, int *);
	static bool tried;
	int status = 0;
	char *out;

	if (strncmp(symbol, "_Z", 2) != 0)
		return NULL;
	if (!tried) {
		/* libstdc++'s __cxa_demangle, without linking lever against libstdc++ */
		void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);

		tried = true;
		if (h)
			*(void **)&demangle = dlsym(h, "__cxa_demangle");
	}
	if (!demangle)
		return NULL;
	out = demangle(symbol, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* ------------------------------------------------------------ modules */

static int module_index(struct annotate_plan *plan, const char *path, char *err, size_t err_size)
{
	struct annotate_plan_module *m;
	unsigned char id[64];
	char debug[PATH_MAX];
	size_t id_len;
	Elf *elf;
	int fd;

	for (size_t i = 0; i < plan->n_modules; i++)
		if (strcmp(plan->modules[i].path, path) == 0)
			return (int)i;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -errno;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(err, err_size, "%s: not an ELF file", path);
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	m = realloc(plan->modules, (plan->n_modules + 1) * sizeof(*m));
	if (!m) {
		elf_end(elf);
		close(fd);
		return -ENOMEM;
	}
	plan->modules = m;
	m += plan->n_modules;
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	id_len = elf_build_id(elf, id, sizeof(id));
	for (size_t k = 0; k < id_len; k++)
		snprintf(m->build_id + 2 * k, 3, "%02x", id[k]);
	m->has_symtab = elf_section_by_name(elf, ".symtab", NULL) != NULL;
	m->has_debug = debug_file_find(path, NULL, debug, sizeof(debug));
	elf_end(elf);
	close(fd);
	if (!m->path)
		return -ENOMEM;
	return (int)plan->n_modules++;
}

int annotate_plan_init(struct annotate_plan *plan, const char *program, char *err, size_t err_size)
{
	char real[PATH_MAX];
	int rc;

	memset(plan, 0, sizeof(*plan));
	if (!realpath(program, real)) {
		snprintf(err, err_size, "%s: %s", program, strerror(errno));
		return -errno;
	}
	plan->program = strdup(real);
	if (!plan->program)
		return -ENOMEM;
	rc = module_index(plan, real, err, err_size);
	return rc < 0 ? rc : 0;
}

/* RUNPATH/RPATH of the program, $ORIGIN replaced, into dirs (':'-separated). */
static void program_search_path(const char *program, char *dirs, size_t size)
{
	char origin[PATH_MAX];
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	dirs[0] = 0;
	snprintf(origin, sizeof(origin), "%s", program);
	*strrchr(origin, '/') = 0;
	fd = open(program, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn d;
			const char *s;

			if (!gelf_getdyn(data, (int)i, &d) ||
			    (d.d_tag != DT_RUNPATH && d.d_tag != DT_RPATH))
				continue;
			s = elf_strptr(elf, sh.sh_link, d.d_un.d_val);
			for (; s && *s && strlen(dirs) + PATH_MAX < size; s++) {
				if (strncmp(s, "$ORIGIN", 7) == 0) {
					strcat(dirs, origin);
					s += 6;
				} else {
					strncat(dirs, s, 1);
				}
			}
			strcat(dirs, ":");
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

/* A library named `lib` (path, file name or glob), as the dynamic loader would find it. */
static int find_library(const struct annotate_plan *plan, const char *lib, char *out, size_t size)
{
	static const char system_dirs[] =
	    "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib:"
	    "/usr/local/lib";
	char dirs[8192], *save = NULL, *dir;
	const char *env = getenv("LD_LIBRARY_PATH");

	if (strchr(lib, '/'))
		return realpath(lib, out) ? 0 : -errno;
	program_search_path(plan->program, dirs, sizeof(dirs) - sizeof(system_dirs) - 2);
	if (env && strlen(dirs) + strlen(env) + sizeof(system_dirs) + 2 < sizeof(dirs)) {
		strcat(dirs, env);
		strcat(dirs, ":");
	}
	strcat(dirs, system_dirs);
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char pattern[PATH_MAX];
		glob_t g;

		snprintf(pattern, sizeof(pattern), "%s/%s", dir, lib);
		if (glob(pattern, 0, NULL, &g) == 0) {
			bool ok = realpath(g.gl_pathv[0], out) != NULL;

			globfree(&g);
			if (ok)
				return 0;
		}
	}
	(void)size;
	return -ENOENT;
}

/* ------------------------------------------------------------ symbols */

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* The demangled name before its parameter list ("ns::f" of "ns::f(int)"). */
static bool name_matches(const char *spec, const char *name, const char *demangled)
{
	bool glob = is_glob(spec);

	if (glob ? fnmatch(spec, name, 0) == 0 : strcmp(spec, name) == 0)
		return true;
	if (!demangled)
		return false;
	if (glob ? fnmatch(spec, demangled, 0) == 0 : strcmp(spec, demangled) == 0)
		return true;
	{
		const char *paren = strchr(demangled, '(');
		size_t len = paren ? (size_t)(paren - demangled) : strlen(demangled);
		char *base = strndup(demangled, len);
		bool ok = base && (glob ? fnmatch(spec, base, 0) == 0 : strcmp(spec, base) == 0);

		free(base);
		return ok;
	}
}

/*
 * Functions that are not entered by a call, or that run before the runtime
 * or after it has written its last line: the C run-time's start-up and
 * tear-down. A glob skips them; naming one is an error.
 */
static const char *const never_probed[] = {
    "_start",
    "_init",
    "_fini",
    "__libc_csu_init",
    "__libc_csu_fini",
    "deregister_tm_clones",
    "register_tm_clones",
    "__do_global_dtors_aux",
    "frame_dummy",
    "_dl_relocate_static_pie",
    NULL,
};

/*
 * GCC's cold partitions (`f.cold`, `f.cold.1`) are symbols of type FUNC, but
 * they are jumped into from f, never called: probing one would take whatever
 * is at the stack pointer for a return address. They are skipped.
 */
static bool is_cold_part(const char *name)
{
	const char *c = strstr(name, ".cold");

	return c && (c[5] == 0 || c[5] == '.');
}

static bool is_never_probed(const char *name)
{
	for (int i = 0; never_probed[i]; i++)
		if (strcmp(name, never_probed[i]) == 0)
			return true;
	return false;
}

static bool already_planned(const struct annotate_plan *plan, uint32_t module, uint64_t addr)
{
	for (size_t i = 0; i < plan->n_functions; i++)
		if (plan->functions[i].module == module && plan->functions[i].addr == addr)
			return true;
	return false;
}

static int add_function(struct annotate_plan *plan, uint32_t module, const char *name,
			char *demangled, const GElf_Sym *sym)
{
	struct annotate_plan_function *f;

	f = realloc(plan->functions, (plan->n_functions + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	plan->functions = f;
	f += plan->n_functions++;
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	f->display = demangled ? demangled : strdup(name);
	f->module = module;
	f->addr = sym->st_value;
	f->size = sym->st_size;
	return f->name && f->display ? 0 : -ENOMEM;
}

/* Functions of one symbol table matching spec, planned; the count, or a negative error. */
static int scan_table(struct annotate_plan *plan, uint32_t module, Elf *elf, Elf_Scn *scn,
		      const char *spec, bool *matched_planned)
{
	GElf_Shdr sh;
	Elf_Data *data = elf_getdata(scn, NULL);
	int added = 0;

	if (!gelf_getshdr(scn, &sh) || !data || !sh.sh_entsize)
		return 0;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		const char *name;
		char *dem;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_size == 0 ||
		    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)) || !*name)
			continue;
		if (is_cold_part(name))
			continue;
		dem = annotate_demangle(name);
		if (!name_matches(spec, name, dem)) {
			free(dem);
			continue;
		}
		if (already_planned(plan, module, sym.st_value)) {
			free(dem); /* named twice, or an alias: one probe, still a match */
			*matched_planned = true;
			continue;
		}
		if (is_never_probed(name)) {
			free(dem);
			if (!is_glob(spec))
				return -EPERM;
			continue;
		}
		if (add_function(plan, module, name, dem, &sym))
			return -ENOMEM;
		added++;
	}
	return added;
}

static int scan_module(struct annotate_plan *plan, uint32_t module, const char *spec,
		       bool *stripped, bool *matched_planned)
{
	const char *path = plan->modules[module].path;
	Elf_Scn *symtab, *dynsym;
	Elf *elf;
	int fd, n = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return -ENOEXEC;
	}
	symtab = elf_section_by_name(elf, ".symtab", NULL);
	dynsym = elf_section_by_name(elf, ".dynsym", NULL);
	*stripped = !symtab;
	if (symtab)
		n = scan_table(plan, module, elf, symtab, spec, matched_planned);
	if (n >= 0 && dynsym) {
		int m = scan_table(plan, module, elf, dynsym, spec, matched_planned);

		n = m < 0 ? m : n + m;
	}
	elf_end(elf);
	close(fd);
	return n;
}

/* `LIB:NAME`: the colon that is not part of a C++ `::`. */
static const char *library_colon(const char *spec)
{
	for (const char *c = strchr(spec, ':'); c; c = strchr(c + 1, ':')) {
		if (c[1] == ':') {
			c++;
			continue;
		}
		if (c > spec && c[-1] != ':' &&
		    (memmem(spec, (size_t)(c - spec), ".so", 3) ||
		     memchr(spec, '/', (size_t)(c - spec))))
			return c;
	}
	return NULL;
}

int annotate_plan_add(struct annotate_plan *plan, const char *spec, char *err, size_t err_size)
{
	const char *colon = library_colon(spec), *name = colon ? colon + 1 : spec;
	char lib[PATH_MAX];
	bool stripped = false, matched_planned = false;
	int module = 0, n;

	if (colon) {
		char *libname = strndup(spec, (size_t)(colon - spec));
		int rc = libname ? find_library(plan, libname, lib, sizeof(lib)) : -ENOMEM;

		if (rc) {
			snprintf(err, err_size,
				 "%s: no library '%s' (searched the program's "
				 "RUNPATH, LD_LIBRARY_PATH and the system directories)",
				 spec, libname ? libname : "");
			free(libname);
			return rc;
		}
		free(libname);
		if ((module = module_index(plan, lib, err, err_size)) < 0)
			return module;
	}
	if (!*name) {
		snprintf(err, err_size, "%s: no function named", spec);
		return -EINVAL;
	}
	n = scan_module(plan, (uint32_t)module, name, &stripped, &matched_planned);
	if (n == -EPERM) {
		snprintf(err, err_size,
			 "%s: '%s' is the C run-time's start-up or tear-down code, which is "
			 "not entered by a call and cannot be probed",
			 plan->modules[module].path, name);
		return n;
	}
	if (n < 0) {
		snprintf(err, err_size, "%s: %s", plan->modules[module].path, strerror(-n));
		return n;
	}
	if (n == 0 && !matched_planned) {
		if (stripped)
			snprintf(err, err_size,
				 "%s: no function '%s' among its exported symbols, and it is "
				 "stripped (no .symtab): build it with symbols, or name an "
				 "exported function",
				 plan->modules[module].path, name);
		else
			snprintf(err, err_size, "%s: no function matches '%s'",
				 plan->modules[module].path, name);
		return -ENOENT;
	}
	return n;
}

/* ------------------------------------------------------------ features */

/*
 * The shared program of the globals tail of fp (ops from n_param_ops on,
 * emitting at n_param_decls + i): its index in plan->shared, planned once
 * per distinct program (every function of a compilation unit has the same
 * one), or -1 when the tail cannot stand alone (it emits into a
 * parameter's feature, a global named as one) or memory ran out.
 */
static long share_globals(struct annotate_plan *plan, const struct annotate_feature_plan *fp)
{
	uint32_t n = fp->n_ops - fp->n_param_ops;
	size_t bytes = (size_t)n * sizeof(struct ann_op);
	struct annotate_plan_program *grown;
	struct ann_op *tail = malloc(bytes ? bytes : 1);

	if (!tail)
		return -1;
	memcpy(tail, fp->ops + fp->n_param_ops, bytes);
	for (uint32_t i = 0; i < n; i++) {
		if (tail[i].code == ANN_OP_CALL ||
		    (tail[i].code == ANN_OP_EMIT && tail[i].index < fp->n_param_decls)) {
			free(tail);
			return -1;
		}
		if (tail[i].code == ANN_OP_EMIT)
			tail[i].index -= fp->n_param_decls;
	}
	for (size_t k = 0; k < plan->n_shared; k++) {
		if (plan->shared[k].n_ops == n && memcmp(plan->shared[k].ops, tail, bytes) == 0) {
			free(tail);
			return (long)k;
		}
	}
	grown = realloc(plan->shared, (plan->n_shared + 1) * sizeof(*grown));
	if (!grown) {
		free(tail);
		return -1;
	}
	plan->shared = grown;
	plan->shared[plan->n_shared] = (struct annotate_plan_program){.ops = tail, .n_ops = n};
	return (long)plan->n_shared++;
}

/*
 * The function's program: its parameters' ops, then a call of the shared
 * globals program when there is one (spec §5.2.2 "Globals": each function
 * sees its unit's globals; planned once, not copied into every function).
 */
static void take_program(struct annotate_plan *plan, struct annotate_plan_function *f,
			 struct annotate_feature_plan *fp)
{
	long shared = fp->n_ops > fp->n_param_ops ? share_globals(plan, fp) : -1;

	if (shared >= 0) {
		fp->ops[fp->n_param_ops] = (struct ann_op){
		    .code = ANN_OP_CALL, .index = (uint32_t)shared, .imm = fp->n_param_decls};
		fp->n_ops = fp->n_param_ops + 1;
	}
	f->ops = fp->ops;
	f->n_ops = fp->n_ops;
	fp->ops = NULL;
}

int annotate_plan_all_features(struct annotate_plan *plan, unsigned max_depth,
			       unsigned max_features, FILE *notes)
{
	bool *said = calloc(plan->n_modules + 1, sizeof(bool));

	if (!said)
		return -ENOMEM;
	for (size_t i = 0; i < plan->n_functions; i++) {
		struct annotate_plan_function *f = &plan->functions[i];
		const struct annotate_plan_module *m = &plan->modules[f->module];
		struct annotate_feature_plan fp = {0};
		char err[512] = "";
		int rc;

		if (!m->has_debug) {
			if (!said[f->module] && notes)
				fprintf(notes,
					"lever annotate record: %s has no debug information: "
					"its functions get metrics only, no features\n",
					m->path);
			said[f->module] = true;
			continue;
		}
		rc = annotate_plan_features(m->path, f->addr, f->name, max_depth, max_features, &fp,
					    err, sizeof(err));
		if (rc == -ENODATA) {
			if (!said[f->module] && notes)
				fprintf(notes,
					"lever annotate record: %s: %s: its functions get metrics "
					"only, no features\n",
					m->path, err);
			said[f->module] = true;
			continue;
		}
		if (rc) {
			if (notes)
				fprintf(notes, "lever annotate record: %s: no features: %s\n",
					f->display, err);
			continue;
		}
		take_program(plan, f, &fp);
		f->n_features = fp.n_decls;
		f->feature_expr = calloc(fp.n_decls + 1, sizeof(char *));
		f->feature_kind = calloc(fp.n_decls + 1, sizeof(int));
		for (uint32_t k = 0; k < fp.n_decls && f->feature_expr && f->feature_kind; k++) {
			f->feature_expr[k] = fp.decls[k].expr;
			fp.decls[k].expr = NULL;
			f->feature_kind[k] = (int)fp.decls[k].kind;
		}
		annotate_feature_plan_free(&fp);
		if (!f->feature_expr || !f->feature_kind) {
			free(said);
			return -ENOMEM;
		}
	}
	free(said);
	return 0;
}

/* ------------------------------------------------------------ the plan file */

int annotate_plan_write(const struct annotate_plan *plan, const struct annotate_plan_settings *s,
			const char *path, char *err, size_t err_size)
{
	FILE *f = fopen(path, "we");

	if (!f) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "%s %d\n", ANN_PLAN_MAGIC, ANN_PLAN_VERSION);
	fprintf(f, "record %s\n", s->record);
	fprintf(f, "metrics %u\n", s->metrics);
	fprintf(f, "rate %u %llu\n", s->rate_n, (unsigned long long)s->period_ms);
	fprintf(f, "probe %s\n", s->probe);
	for (size_t i = 0; i < plan->n_modules; i++)
		fprintf(f, "module %zu %s %s\n", i,
			plan->modules[i].build_id[0] ? plan->modules[i].build_id : "-",
			plan->modules[i].path);
	for (size_t i = 0; i < plan->n_shared; i++) {
		const uint8_t *ops = plan->shared[i].ops;

		fprintf(f, "globals %zu %u ", i, plan->shared[i].n_ops);
		for (size_t k = 0; k < plan->shared[i].n_ops * sizeof(struct ann_op); k++)
			fprintf(f, "%02x", ops[k]);
		fputc('\n', f);
	}
	for (size_t i = 0; i < plan->n_functions; i++) {
		const struct annotate_plan_function *fn = &plan->functions[i];
		const uint8_t *ops = fn->ops;

		fprintf(f, "function %zu %u %llx %llx %u %s\n", i, fn->module,
			(unsigned long long)fn->addr, (unsigned long long)fn->size, fn->n_features,
			fn->display);
		if (fn->n_ops) {
			fprintf(f, "ops %u ", fn->n_ops);
			for (size_t k = 0; k < fn->n_ops * sizeof(struct ann_op); k++)
				fprintf(f, "%02x", ops[k]);
			fputc('\n', f);
		}
		for (uint32_t k = 0; k < fn->n_branches; k++)
			fprintf(f, "branch %llx %u %u %lld\n",
				(unsigned long long)fn->branches[k].offset, fn->branches[k].len,
				fn->branches[k].cond, (long long)fn->branches[k].target);
	}
	if (fclose(f)) {
		snprintf(err, err_size, "%s: write error", path);
		return -EIO;
	}
	return 0;
}

void annotate_plan_free(struct annotate_plan *plan)
{
	for (size_t i = 0; i < plan->n_modules; i++)
		free(plan->modules[i].path);
	for (size_t i = 0; i < plan->n_functions; i++) {
		struct annotate_plan_function *f = &plan->functions[i];

		free(f->name);
		free(f->display);
		free(f->ops);
		for (uint32_t k = 0; f->feature_expr && k < f->n_features; k++)
			free(f->feature_expr[k]);
		free(f->feature_expr);
		free(f->feature_kind);
		free(f->branches);
	}
	for (size_t i = 0; i < plan->n_shared; i++)
		free(plan->shared[i].ops);
	free(plan->shared);
	free(plan->modules);
	free(plan->functions);
	free(plan->program);
	memset(plan, 0, sizeof(*plan));
}
