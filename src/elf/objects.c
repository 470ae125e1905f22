/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The objects loaded in this process, from dl_iterate_phdr.
 *
 * dl_iterate_phdr runs its callback with the dynamic linker's lock held, so
 * the callback only copies what it needs (bias, executable range, the name)
 * into a buffer obtained with mmap, never malloc. Names are resolved to
 * canonical paths and the caller's function is called after the lock is
 * released, so that function may allocate, dlsym or load line tables.
 */
#include "elf/elf.h"

#include <link.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

struct object_slot {
	uintptr_t load_bias;
	uintptr_t exec_lo, exec_hi;
	size_t name_off;
	bool is_main;
};

struct collect {
	/* Counting pass. */
	bool counting;
	size_t need_slots, need_names;
	/* Filling pass. */
	struct object_slot *slots;
	size_t cap_slots, n_slots;
	char *names;
	size_t cap_names, len_names;
	bool overflow;
	/* Both. */
	size_t seen;
	uintptr_t vdso;
};

/* Decides whether to report an object; sets *is_main. */
static bool object_wanted(struct collect *c, const struct dl_phdr_info *info, bool *is_main)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	bool first = c->seen++ == 0;

	*is_main = first && name[0] == '\0';
	if (*is_main)
		return true;
	/* Nameless objects, and the vDSO ("linux-vdso.so.1": no '/'). */
	if (name[0] == '\0' || !strchr(name, '/'))
		return false;
	if (c->vdso && info->dlpi_addr == c->vdso)
		return false;
	return true;
}

static void exec_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
	*lo = UINTPTR_MAX;
	*hi = 0;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (info->dlpi_addr + ph->p_vaddr < *lo)
			*lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > *hi)
			*hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (*lo > *hi)
		*lo = *hi = 0;
}

static int collect_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct collect *c = data;
	struct object_slot *s;
	bool is_main;
	size_t len;

	if (!object_wanted(c, info, &is_main))
		return 0;
	len = strlen(info->dlpi_name ? info->dlpi_name : "") + 1;
	if (c->counting) {
		c->need_slots++;
		c->need_names += len;
		return 0;
	}
	if (c->n_slots == c->cap_slots || c->len_names + len > c->cap_names) {
		/* Objects were loaded since we counted. */
		c->overflow = true;
		return 1;
	}
	s = &c->slots[c->n_slots++];
	s->load_bias = info->dlpi_addr;
	s->is_main = is_main;
	exec_range(info, &s->exec_lo, &s->exec_hi);
	s->name_off = c->len_names;
	memcpy(c->names + c->len_names, is_main ? "" : info->dlpi_name, len);
	c->len_names += len;
	return 0;
}

/* Fills obj->path with the canonical path of the object; false to skip it. */
static bool object_path(struct loaded_object *obj, const char *name, bool is_main)
{
	if (is_main) {
		ssize_t n = readlink("/proc/self/exe", obj->path, sizeof(obj->path) - 1);

		if (n <= 0)
			return false;
		obj->path[n] = '\0';
		return true;
	}
	if (realpath(name, obj->path))
		return true;
	/* Gone from the file system since it was loaded: keep its name. */
	if (name[0] != '/' || strlen(name) >= sizeof(obj->path))
		return false;
	strcpy(obj->path, name);
	return true;
}

static int report(const struct object_slot *s, const char *name,
		  int (*fn)(const struct loaded_object *obj, void *ctx), void *ctx)
{
	struct loaded_object obj;

	if (!object_path(&obj, name, s->is_main))
		return 0;
	obj.load_bias = s->load_bias;
	obj.exec_lo = s->exec_lo;
	obj.exec_hi = s->exec_hi;
	obj.is_main = s->is_main;
	return fn(&obj, ctx);
}

/* Without a buffer: report from inside the callback (the lock is held). */
struct direct {
	struct collect c;
	int (*fn)(const struct loaded_object *obj, void *ctx);
	void *ctx;
	int rc;
};

static int direct_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct direct *d = data;
	struct object_slot s;
	bool is_main;

	if (!object_wanted(&d->c, info, &is_main))
		return 0;
	s.load_bias = info->dlpi_addr;
	s.is_main = is_main;
	exec_range(info, &s.exec_lo, &s.exec_hi);
	d->rc = report(&s, info->dlpi_name, d->fn, d->ctx);
	return d->rc;
}

int loaded_objects_foreach(int (*fn)(const struct loaded_object *obj, void *ctx), void *ctx)
{
	struct collect c;
	void *map = MAP_FAILED;
	size_t map_size = 0;
	int rc = 0;

	if (!fn)
		return 0;
	for (int attempt = 0; attempt < 4; attempt++) {
		memset(&c, 0, sizeof(c));
		c.vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
		c.counting = true;
		dl_iterate_phdr(collect_cb, &c);

		/* Room for a few objects loaded between the two passes. */
		c.cap_slots = c.need_slots + 16;
		c.cap_names = c.need_names + 16 * 256;
		map_size = c.cap_slots * sizeof(struct object_slot) + c.cap_names;
		map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			   0);
		if (map == MAP_FAILED)
			break;
		c.slots = map;
		c.names = (char *)map + c.cap_slots * sizeof(struct object_slot);
		c.counting = false;
		c.seen = 0;
		dl_iterate_phdr(collect_cb, &c);
		if (!c.overflow)
			break;
		munmap(map, map_size);
		map = MAP_FAILED;
	}
	if (map == MAP_FAILED) {
		struct direct d = {.fn = fn, .ctx = ctx};

		d.c.vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
		dl_iterate_phdr(direct_cb, &d);
		return d.rc;
	}
	for (size_t i = 0; i < c.n_slots && rc == 0; i++)
		rc = report(&c.slots[i], c.names + c.slots[i].name_off, fn, ctx);
	munmap(map, map_size);
	return rc;
}
