/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * capstone, loaded only when code randomization needs it (spec §4.3: the
 * runtime decodes every function before relocating it).
 *
 * liblever-stabilizer.so is preloaded into every program lever stabilize
 * runs, --heap or --stack alone included. Linked directly, libcapstone.so.4
 * is mapped and relocated at start-up: its instruction tables are pointer
 * arrays that the dynamic loader rewrites, about 3.2 MiB of resident memory
 * in every such process (issue 14 point 14: the shuffled heap's run of
 * malloc_heavy had 12 MiB where glibc's had 4.4, and 3.2 of the difference
 * was this). So the runtime is not linked with capstone: these functions,
 * with the names and types of capstone.h, open the library on the first
 * call (code randomization's start-up, before any thread of the program
 * runs) and forward to it. Without the library, cs_open fails and the code
 * part reports that it cannot decode, as it would for any capstone error.
 */
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <pthread.h>

#define STR2(x)		#x
#define STR(x)		STR2(x)
#define CAPSTONE_SONAME "libcapstone.so." STR(CS_API_MAJOR)

static struct {
	unsigned (*version)(int *, int *);
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*close)(csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	cs_insn *(*malloc)(csh);
	void (*free)(cs_insn *, size_t);
	bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
	bool (*insn_group)(csh, const cs_insn *, unsigned);
} capstone;
static bool capstone_loaded;
static pthread_once_t capstone_once = PTHREAD_ONCE_INIT;

/* Every entry point or none: a half-resolved library is not used. */
static void load_capstone(void)
{
	void *lib = dlopen(CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		lib = dlopen("libcapstone.so", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return;
	*(void **)&capstone.version = dlsym(lib, "cs_version");
	*(void **)&capstone.open = dlsym(lib, "cs_open");
	*(void **)&capstone.close = dlsym(lib, "cs_close");
	*(void **)&capstone.option = dlsym(lib, "cs_option");
	*(void **)&capstone.malloc = dlsym(lib, "cs_malloc");
	*(void **)&capstone.free = dlsym(lib, "cs_free");
	*(void **)&capstone.disasm_iter = dlsym(lib, "cs_disasm_iter");
	*(void **)&capstone.insn_group = dlsym(lib, "cs_insn_group");
	capstone_loaded = capstone.version && capstone.open && capstone.close && capstone.option &&
			  capstone.malloc && capstone.free && capstone.disasm_iter &&
			  capstone.insn_group;
}

static bool have_capstone(void)
{
	pthread_once(&capstone_once, load_capstone);
	return capstone_loaded;
}

unsigned int cs_version(int *major, int *minor)
{
	if (have_capstone())
		return capstone.version(major, minor);
	*major = 0;
	*minor = 0;
	return 0;
}

cs_err cs_open(cs_arch arch, cs_mode mode, csh *handle)
{
	return have_capstone() ? capstone.open(arch, mode, handle) : CS_ERR_MEM;
}

/* The rest are only called with a handle cs_open gave, so the library is there. */
cs_err cs_close(csh *handle)
{
	return capstone.close(handle);
}

cs_err cs_option(csh handle, cs_opt_type type, size_t value)
{
	return capstone.option(handle, type, value);
}

cs_insn *cs_malloc(csh handle)
{
	return capstone.malloc(handle);
}

void cs_free(cs_insn *insn, size_t count)
{
	capstone.free(insn, count);
}

bool cs_disasm_iter(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
		    cs_insn *insn)
{
	return capstone.disasm_iter(handle, code, size, address, insn);
}

bool cs_insn_group(csh handle, const cs_insn *insn, unsigned int group_id)
{
	return capstone.insn_group(handle, insn, group_id);
}
