/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stack pads (stack_pads.h): the registry of the slot tables of every module
 * built with `lever cc`, filled with random pads at start and drawn again at
 * each re-randomization.
 *
 * Tables arrive from the stub's constructors, which for the program itself
 * run after this runtime has started (a preloaded library is initialized
 * first), and later from libraries opened with dlopen. So the start hook only
 * switches padding on; each table is filled when it registers.
 */
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "stabilizer/runtime/stabilizer.h"
#include "stabilizer/runtime/stack_pads.h"

#define EXPORT		  __attribute__((visibility("default")))
#define MAX_PAD_TABLES	  1024			/* modules (executable + shared objects) at once */
#define STACK_SEED_STREAM 0x737461636b706164ULL /* "stackpad": this part's stream */

/*
 * init.c owns the configuration; this weak definition only lets the stack
 * part link, and stay off, in a build of the runtime without init.c.
 */
struct stabilizer_config stabilizer_cfg __attribute__((weak));

struct pad_table {
	unsigned char *slots;
	unsigned long count;
};

static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pad_table tables[MAX_PAD_TABLES];
static unsigned n_tables;
static bool padding; /* started: registered tables get random pads */
static bool table_limit_reported;
static bool fork_handlers_installed;
static struct rng pad_rng;

/* Relaxed byte stores: other threads read the slots while we redraw them. */
static void fill_table(const struct pad_table *t)
{
	for (unsigned long i = 0; i < t->count; i++) {
		unsigned char pad = (unsigned char)rng_below(&pad_rng, STACK_PAD_MAX_SLOT + 1);
		__atomic_store_n(&t->slots[i], pad, __ATOMIC_RELAXED);
	}
}

static void fill_all_tables(void)
{
	for (unsigned i = 0; i < n_tables; i++)
		fill_table(&tables[i]);
}

EXPORT void lever_stack_pads_register(unsigned char *slots, unsigned long count)
{
	if (!slots || !count)
		return;
	pthread_mutex_lock(&tables_lock);
	if (n_tables == MAX_PAD_TABLES) {
		if (!table_limit_reported)
			fd_printf(2,
				  "lever stabilize: more than %d modules with stack pads; "
				  "the others run unpadded\n",
				  MAX_PAD_TABLES);
		table_limit_reported = true;
	} else {
		tables[n_tables] = (struct pad_table){slots, count};
		if (padding)
			fill_table(&tables[n_tables]);
		n_tables++;
	}
	pthread_mutex_unlock(&tables_lock);
}

/* From the stub's destructor: the module is about to be unmapped. */
EXPORT void lever_stack_pads_unregister(unsigned char *slots)
{
	pthread_mutex_lock(&tables_lock);
	for (unsigned i = 0; i < n_tables; i++) {
		if (tables[i].slots == slots) {
			tables[i] = tables[--n_tables];
			break;
		}
	}
	pthread_mutex_unlock(&tables_lock);
}

static bool read_at(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/*
 * Does the running executable have a stack pad section (built with lever
 * cc)? Read from its section headers with pread, not libelf: this library
 * is preloaded into every program lever stabilize runs and links nothing
 * but libc (stabilizer.h).
 */
static bool executable_has_pads(void)
{
	static const char want[] = STACK_PADS_SECTION;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strtab;
	uint64_t shnum, shstrndx;
	char name[sizeof(want)];
	bool found = false;

	if (fd < 0)
		return false;
	if (!read_at(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shoff == 0 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !read_at(fd, &sh, sizeof(sh), eh.e_shoff))
		goto out;
	/* Past 0xff00 sections the counts are in section 0's header. */
	shnum = eh.e_shnum ? eh.e_shnum : sh.sh_size;
	shstrndx = eh.e_shstrndx == SHN_XINDEX ? sh.sh_link : eh.e_shstrndx;
	if (shstrndx >= shnum ||
	    !read_at(fd, &strtab, sizeof(strtab), eh.e_shoff + shstrndx * sizeof(Elf64_Shdr)))
		goto out;
	for (uint64_t i = 1; i < shnum && !found; i++) {
		if (!read_at(fd, &sh, sizeof(sh), eh.e_shoff + i * sizeof(Elf64_Shdr)))
			break;
		if (sh.sh_name >= strtab.sh_size || strtab.sh_size - sh.sh_name < sizeof(want))
			continue;
		found = read_at(fd, name, sizeof(name), strtab.sh_offset + sh.sh_name) &&
			memcmp(name, want, sizeof(want)) == 0;
	}
out:
	close(fd);
	return found;
}

static void lock_for_fork(void)
{
	pthread_mutex_lock(&tables_lock);
}

static void unlock_after_fork(void)
{
	pthread_mutex_unlock(&tables_lock);
}

int stack_pads_start(void)
{
	unsigned long slots = 0;
	unsigned modules;

	pthread_mutex_lock(&tables_lock);
	if (n_tables == 0 && !executable_has_pads()) {
		pthread_mutex_unlock(&tables_lock);
		if (stabilizer_should_warn("stack"))
			fd_printf(2, "lever stabilize: stack padding: the program was not built "
				     "with lever cc (no " STACK_PADS_SECTION
				     " section); running without it\n");
		return -1;
	}
	rng_seed(&pad_rng, stabilizer_cfg.seed ^ STACK_SEED_STREAM);
	padding = true;
	fill_all_tables();
	modules = n_tables;
	for (unsigned i = 0; i < n_tables; i++)
		slots += tables[i].count;
	pthread_mutex_unlock(&tables_lock);
	if (!fork_handlers_installed)
		pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
	fork_handlers_installed = true;
	if (stabilizer_cfg.verbose)
		fd_printf(2,
			  "lever stabilize: stack pads 0..%d bytes per frame; %u module(s), "
			  "%lu function(s) registered so far\n",
			  STACK_PAD_MAX_SLOT * STACK_PAD_UNIT, modules, slots);
	return 0;
}

void stack_pads_rerandomize(void)
{
	pthread_mutex_lock(&tables_lock);
	if (padding)
		fill_all_tables();
	pthread_mutex_unlock(&tables_lock);
}
