/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Installing the plan's probes in the modules this process has loaded: the
 * main program and its libraries at start-up, dlopen'ed libraries when they
 * arrive (interpose.c). A module is matched by its path, and its build ID is
 * checked against the plan's, so that a file rebuilt since `lever annotate
 * record` planned it is refused rather than patched at stale offsets.
 *
 * The mechanism (--probe): sled when the function has the sled of `lever cc
 * --annotate`, else live patching; `auto` picks the best that works and says
 * why a better one did not, once per function.
 */
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotate/runtime/runtime.h"

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

/* The NT_GNU_BUILD_ID of a loaded object, from its PT_NOTE segments, as hex. */
static void loaded_build_id(const struct dl_phdr_info *info, char *hex, size_t size)
{
	hex[0] = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const uint8_t *desc = p + sizeof(*n) + ((n->n_namesz + 3) & ~3u);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(p + sizeof(*n), "GNU", 4) == 0 && 2 * n->n_descsz < size) {
				for (unsigned k = 0; k < n->n_descsz; k++)
					snprintf(hex + 2 * k, 3, "%02x", desc[k]);
				return;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
}

static int match_module(struct dl_phdr_info *info, size_t size, void *ctx)
{
	char path[PATH_MAX], real[PATH_MAX], id[130];
	bool *any = ctx;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0]) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

		if (n <= 0)
			return 0;
		path[n] = 0;
	} else {
		snprintf(path, sizeof(path), "%s", info->dlpi_name);
	}
	if (!realpath(path, real))
		return 0;
	for (uint32_t i = 0; i < ann_plan.n_modules; i++) {
		struct ann_module *m = &ann_plan.modules[i];

		if (m->loaded || strcmp(m->path, real) != 0)
			continue;
		loaded_build_id(info, id, sizeof(id));
		if (m->build_id[0] && strcmp(m->build_id, id) != 0) {
			ann_msg("%s: its build ID changed since the plan was made; its functions "
				"are not probed (run lever annotate record again)",
				m->path);
			m->loaded = m->stale = true;
			continue;
		}
		m->loaded = true;
		m->load_bias = info->dlpi_addr;
		*any = true;
	}
	return 0;
}

static void install_one(struct ann_probe *p)
{
	struct ann_module *m = &ann_plan.modules[p->module];
	uintptr_t entry = m->load_bias + p->addr, sled;
	char why_sled[256] = "", why_live[256] = "";
	enum ann_probe_kind want = ann_plan.probe;

	if (want == ANN_PROBE_UPROBE) {
		if (ann_probe_uprobe(p, m, why_live, sizeof(why_live)) == 0) {
			ann_branches_arm(p); /* says why there are none */
			return;
		}
		ann_msg("%s: no uprobe: %s; not probed", p->name, why_live);
		return;
	}
	if (want == ANN_PROBE_SLED || (want == ANN_PROBE_AUTO && ann_has_sled(entry, &sled))) {
		if (ann_probe_sled(p, entry, why_sled, sizeof(why_sled)) == 0)
			goto done;
		if (want == ANN_PROBE_SLED) {
			ann_msg("%s: cannot use its sled: %s; not probed", p->name, why_sled);
			return;
		}
	}
	if (ann_probe_live(p, entry, why_live, sizeof(why_live)) == 0)
		goto done;
	if (want == ANN_PROBE_AUTO && ann_probe_uprobe(p, m, why_sled, sizeof(why_sled)) == 0) {
		ann_msg("%s: cannot be patched live (%s); using a uprobe (time only)", p->name,
			why_live);
		ann_branches_arm(p);
		return;
	}
	ann_msg("%s: cannot be patched live: %s; not probed", p->name, why_live);
	return;
done:
	if (ann_verbose)
		ann_msg("%s: %s probe at %#lx (%s)", p->name,
			p->installed == ANN_PROBE_SLED ? "sled" : "live", (unsigned long)entry,
			m->path);
	ann_branches_arm(p);
}

void ann_install_probes(void)
{
	bool any = false;

	pthread_mutex_lock(&install_lock);
	dl_iterate_phdr(match_module, &any);
	for (uint32_t i = 0; any && i < ann_plan.n_probes; i++) {
		struct ann_probe *p = &ann_plan.probes[i];
		struct ann_module *m = &ann_plan.modules[p->module];

		if (p->installed == ANN_PROBE_AUTO && m->loaded && !m->stale && !p->tried) {
			p->tried = true;
			install_one(p);
		}
	}
	ann_code_seal();
	pthread_mutex_unlock(&install_lock);
}
