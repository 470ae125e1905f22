/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The decode cache: what code_image.c's decoder concluded about an
 * executable (which functions stay in place and why, and every function's
 * fixups), kept on disk by build ID so that later runs of the same binary
 * skip the decoding. Capstone formats every instruction's text even when
 * only its operands are wanted: decoding sqlite3's 1 MB of code takes ~80 ms
 * of each run's start-up, while a benchmark runs one binary 30 times or more.
 *
 *   $LEVER_STABILIZE_CACHE    the directory ("off" or empty: no cache);
 *                             default $XDG_CACHE_HOME/lever/stabilizer, else
 *                             $HOME/.cache/lever/stabilizer
 *
 * File NAME = <build-id hex>.code; contents: a header (magic, format version,
 * capstone version, the text's offset and size, counts), one record per
 * function, the fixups, and an FNV-1a hash of everything before it. A file
 * that does not match this binary in every one of those is ignored (and
 * rewritten). Written to a temporary name and renamed: concurrent runs never
 * read half a file. Binaries without a build ID are decoded every time.
 */
#include "stabilizer/runtime/code.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

#define CACHE_MAGIC   "LVRCODE1"
#define CACHE_VERSION 1 /* bump when the decoder's conclusions may change */

struct cache_header {
	char magic[8];
	uint32_t version;
	uint32_t capstone; /* cs_version() */
	uint64_t text_off, text_size;
	uint64_t n_funcs, n_fixups;
};

struct cache_function {
	uint64_t start_off;
	uint32_t size;
	uint32_t fixup_first;
	uint32_t fixup_count;
	uint32_t skip;
};

/* The cache file's path for the program with build ID id in buf; false if there is none. */
static bool cache_path(const struct code_build_id *id, char *buf, size_t size, char *dir,
		       size_t dir_size)
{
	const char *env = getenv(CODE_CACHE_ENV), *base;
	int n;

	if (env && (!*env || strcmp(env, "off") == 0))
		return false;
	if (!id->len)
		return false;
	if (env)
		n = fmt_buffer(dir, dir_size, "%s", env);
	else if ((base = getenv("XDG_CACHE_HOME")) && *base == '/')
		n = fmt_buffer(dir, dir_size, "%s/lever/stabilizer", base);
	else if ((base = getenv("HOME")) && *base == '/')
		n = fmt_buffer(dir, dir_size, "%s/.cache/lever/stabilizer", base);
	else
		return false;
	if (n < 0 || (size_t)n >= dir_size)
		return false;
	n = fmt_buffer(buf, size, "%s/", dir);
	for (size_t i = 0; i < id->len && n > 0 && (size_t)n + 3 < size; i++)
		n += fmt_buffer(buf + n, size - (size_t)n, "%02x", id->bytes[i]);
	if (n < 0 || (size_t)n + 6 >= size)
		return false;
	n += fmt_buffer(buf + n, size - (size_t)n, ".code");
	return true;
}

static void expected_header(const struct code_image *img, struct cache_header *h)
{
	int major, minor;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, CACHE_MAGIC, sizeof(h->magic));
	h->version = CACHE_VERSION;
	cs_version(&major, &minor);
	h->capstone = (uint32_t)(major << 16 | minor);
	h->text_off = img->text_lo - img->load_bias;
	h->text_size = img->text_hi - img->text_lo;
	h->n_funcs = img->n_funcs;
}

static bool write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t put = write(fd, p, n);

		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
			return false;
		p += put;
		n -= (size_t)put;
	}
	return true;
}

/* Checks a mapped cache file against img and applies it. */
static bool apply(struct code_image *img, const uint8_t *file, size_t size)
{
	struct cache_header want, h;
	const struct cache_function *cf;
	const uint32_t *fixups;
	uint64_t hash;
	size_t body;

	if (size < sizeof(h) + sizeof(hash))
		return false;
	memcpy(&h, file, sizeof(h));
	expected_header(img, &want);
	want.n_fixups = h.n_fixups;
	if (memcmp(&h, &want, sizeof(h)) != 0 || h.n_fixups > UINT32_MAX)
		return false;
	body = sizeof(h) + h.n_funcs * sizeof(*cf) + h.n_fixups * sizeof(*fixups);
	if (size != body + sizeof(hash))
		return false;
	memcpy(&hash, file + body, sizeof(hash));
	if (hash != fnv1a(FNV1A_INIT, file, body))
		return false;
	cf = (const struct cache_function *)(file + sizeof(h));
	fixups = (const uint32_t *)(cf + h.n_funcs);
	for (size_t i = 0; i < img->n_funcs; i++)
		if (cf[i].start_off != img->funcs[i].start - img->load_bias ||
		    cf[i].size != img->funcs[i].size || cf[i].skip >= SKIP_COUNT ||
		    (uint64_t)cf[i].fixup_first + cf[i].fixup_count > h.n_fixups)
			return false;
	img->fixups = mmap(NULL, h.n_fixups * sizeof(*fixups) + 1, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (img->fixups == MAP_FAILED) {
		img->fixups = NULL;
		return false;
	}
	memcpy(img->fixups, fixups, h.n_fixups * sizeof(*fixups));
	img->n_fixups = h.n_fixups;
	for (size_t i = 0; i < img->n_funcs; i++) {
		img->funcs[i].skip = (uint8_t)cf[i].skip;
		img->funcs[i].fixup_first = cf[i].fixup_first;
		img->funcs[i].fixup_count = cf[i].fixup_count;
	}
	return true;
}

bool code_cache_load(struct code_image *img, const struct code_build_id *id)
{
	char path[512], dir[400];
	struct stat st;
	void *file;
	bool ok;
	int fd;

	if (getenv(CODE_DEBUG_ENV) || !cache_path(id, path, sizeof(path), dir, sizeof(dir)))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || st.st_size <= 0) {
		close(fd);
		return false;
	}
	file = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (file == MAP_FAILED)
		return false;
	ok = apply(img, file, (size_t)st.st_size);
	munmap(file, (size_t)st.st_size);
	return ok;
}

/* mkdir -p of an absolute path; true if it exists as a directory after. */
static bool make_dirs(char *dir)
{
	struct stat st;

	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(dir, 0755);
		*p = '/';
	}
	mkdir(dir, 0755);
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

void code_cache_store(const struct code_image *img, const struct code_build_id *id)
{
	char path[512], dir[400], tmp[560];
	struct cache_header h;
	uint64_t hash;
	bool ok;
	int fd;

	if (!cache_path(id, path, sizeof(path), dir, sizeof(dir)) || !make_dirs(dir))
		return;
	fmt_buffer(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	expected_header(img, &h);
	h.n_fixups = img->n_fixups;
	hash = fnv1a(FNV1A_INIT, &h, sizeof(h));
	ok = write_all(fd, &h, sizeof(h));
	for (size_t i = 0; i < img->n_funcs && ok; i++) {
		const struct code_function *f = &img->funcs[i];
		struct cache_function cf = {.start_off = f->start - img->load_bias,
					    .size = f->size,
					    .fixup_first = f->fixup_first,
					    .fixup_count = f->fixup_count,
					    .skip = f->skip};

		hash = fnv1a(hash, &cf, sizeof(cf));
		ok = write_all(fd, &cf, sizeof(cf));
	}
	if (ok && img->n_fixups) {
		hash = fnv1a(hash, img->fixups, img->n_fixups * sizeof(*img->fixups));
		ok = write_all(fd, img->fixups, img->n_fixups * sizeof(*img->fixups));
	}
	ok = ok && write_all(fd, &hash, sizeof(hash));
	if (close(fd) != 0 || !ok || rename(tmp, path) != 0)
		unlink(tmp);
}
