/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ELF files on disk: sections by name, finding the separate debug file the
 * way gdb does, and converting file addresses to file offsets.
 */
#include "elf/elf.h"

#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
#define BUILD_ID_MAX	   64

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

struct elf_facts {
	bool has_debug;
	unsigned char build_id[BUILD_ID_MAX];
	size_t build_id_len;
	bool has_link;
	char link[NAME_MAX + 1];
	uint32_t link_crc;
};

static Elf *elf_open(const char *path, int *fd_out)
{
	int fd;
	Elf *elf;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return NULL;
	}
	*fd_out = fd;
	return elf;
}

static void elf_close(Elf *elf, int fd)
{
	elf_end(elf);
	close(fd);
}

const char *elf_section_name(Elf *elf, const GElf_Shdr *shdr)
{
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	return elf_strptr(elf, shstrndx, shdr->sh_name);
}

Elf_Scn *elf_section_by_name(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	/* An archive or a non-ELF file has no sections of its own. */
	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *s;

		if (!gelf_getshdr(scn, &sh))
			continue;
		s = elf_strptr(elf, shstrndx, sh.sh_name);
		if (s && strcmp(s, name) == 0) {
			if (shdr)
				*shdr = sh;
			return scn;
		}
	}
	return NULL;
}

/* The NT_GNU_BUILD_ID note of a translated note buffer into out; its length, 0 if none. */
static size_t notes_scan(Elf_Data *data, unsigned char *out, size_t size)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nhdr;

	while (data && (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    memcmp(name, "GNU", 4) == 0 && nhdr.n_descsz > 0 && nhdr.n_descsz <= size) {
			memcpy(out, (const char *)data->d_buf + desc_off, nhdr.n_descsz);
			return nhdr.n_descsz;
		}
		off = next;
	}
	return 0;
}

size_t elf_build_id(Elf *elf, unsigned char *out, size_t size)
{
	Elf_Scn *scn = NULL;
	size_t len = 0, nphdr;

	while (len == 0 && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_NOTE)
			len = notes_scan(elf_getdata(scn, NULL), out, size);
	}
	/* No section headers (or no note section): the PT_NOTE segments. */
	if (len == 0 && elf_getphdrnum(elf, &nphdr) == 0) {
		for (size_t i = 0; i < nphdr && len == 0; i++) {
			GElf_Phdr phdr;

			if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_NOTE)
				continue;
			len = notes_scan(
			    elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz,
						 phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR),
			    out, size);
		}
	}
	return len;
}

/* Sections whose presence (with contents) makes a file its own debug file. */
static bool has_debug_section(Elf *elf)
{
	static const char *const names[] = {".debug_line", ".debug_info", ".zdebug_line",
					    ".zdebug_info"};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		GElf_Shdr shdr;

		if (elf_section_by_name(elf, names[i], &shdr) && shdr.sh_type != SHT_NOBITS &&
		    shdr.sh_size > 0)
			return true;
	}
	return false;
}

/* The .gnu_debuglink name and CRC: a NUL-terminated name, padding to 4, a CRC-32. */
static void debuglink_read(Elf *elf, struct elf_facts *f)
{
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	Elf_Scn *scn = elf_section_by_name(elf, ".gnu_debuglink", &shdr);
	Elf_Data *d;
	const unsigned char *p;
	size_t len, crc_off;

	if (!scn || shdr.sh_type == SHT_NOBITS || !gelf_getehdr(elf, &ehdr))
		return;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return;
	p = d->d_buf;
	len = strnlen((const char *)p, d->d_size);
	crc_off = (len + 4) & ~(size_t)3;
	if (len == 0 || len >= sizeof(f->link) || crc_off + 4 > d->d_size)
		return;
	memcpy(f->link, p, len);
	f->link[len] = '\0';
	if (ehdr.e_ident[EI_DATA] == ELFDATA2MSB)
		f->link_crc = (uint32_t)p[crc_off] << 24 | (uint32_t)p[crc_off + 1] << 16 |
			      (uint32_t)p[crc_off + 2] << 8 | p[crc_off + 3];
	else
		f->link_crc = (uint32_t)p[crc_off + 3] << 24 | (uint32_t)p[crc_off + 2] << 16 |
			      (uint32_t)p[crc_off + 1] << 8 | p[crc_off];
	f->has_link = strchr(f->link, '/') == NULL;
}

/* Reads what debug_file_find needs to know about an ELF file. */
static bool elf_facts_read(const char *path, struct elf_facts *f)
{
	int fd;
	Elf *elf = elf_open(path, &fd);

	memset(f, 0, sizeof(*f));
	if (!elf)
		return false;
	f->has_debug = has_debug_section(elf);
	debuglink_read(elf, f);
	f->build_id_len = elf_build_id(elf, f->build_id, sizeof(f->build_id));
	elf_close(elf, fd);
	return true;
}

/* ---------- CRC-32 (IEEE 802.3, reflected), as .gnu_debuglink uses ---------- */

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (c & 1 ? 0xedb88320u : 0);
		crc_table[0][i] = c;
	}
	for (int t = 1; t < 8; t++)
		for (int i = 0; i < 256; i++)
			crc_table[t][i] =
			    (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t len)
{
	pthread_once(&crc_once, crc_init);
	crc = ~crc;
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);
		uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			      (uint32_t)p[7] << 24;

		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

/* CRC-32 of a whole file; false if it cannot be read. */
static bool file_crc32(const char *path, uint32_t *crc)
{
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	if (st.st_size == 0) {
		close(fd);
		*crc = 0;
		return true;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return false;
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	*crc = crc32_update(0, map, (size_t)st.st_size);
	munmap(map, (size_t)st.st_size);
	return true;
}

/* ---------- debug_file_find ---------- */

static bool put_path(char *out, size_t out_size, const char *path)
{
	size_t len = strlen(path);

	if (len >= out_size)
		return false;
	memcpy(out, path, len + 1);
	return true;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static bool build_id_candidate(const char *root, const struct elf_facts *f, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	struct elf_facts cand;
	size_t n;
	int len;

	if (f->build_id_len < 2)
		return false;
	len = snprintf(buf, size, "%s/.build-id/%c%c/", root, hex[f->build_id[0] >> 4],
		       hex[f->build_id[0] & 15]);
	if (len < 0 || (size_t)len + 2 * f->build_id_len + sizeof(".debug") > size)
		return false;
	n = (size_t)len;
	for (size_t i = 1; i < f->build_id_len; i++) {
		buf[n++] = hex[f->build_id[i] >> 4];
		buf[n++] = hex[f->build_id[i] & 15];
	}
	memcpy(buf + n, ".debug", sizeof(".debug"));
	if (access(buf, R_OK) != 0 || !elf_facts_read(buf, &cand))
		return false;
	/* The file there must carry the same build ID. */
	return cand.build_id_len == f->build_id_len &&
	       memcmp(cand.build_id, f->build_id, f->build_id_len) == 0;
}

static bool debuglink_candidate(const char *path, const char *cand, uint32_t crc)
{
	uint32_t got;

	if (access(cand, R_OK) != 0 || same_file(path, cand))
		return false;
	return file_crc32(cand, &got) && got == crc;
}

bool debug_file_find(const char *path, const char *debug_root, char *out, size_t out_size)
{
	struct elf_facts f;
	char real[PATH_MAX], dir[PATH_MAX], cand[PATH_MAX + 2 * NAME_MAX];
	const char *root = debug_root && debug_root[0] ? debug_root : DEFAULT_DEBUG_ROOT;
	char *slash;
	int len;

	if (!path || !out || !out_size || !elf_facts_read(path, &f))
		return false;
	if (f.has_debug)
		return put_path(out, out_size, path);
	if (build_id_candidate(root, &f, cand, sizeof(cand)))
		return put_path(out, out_size, cand);
	if (!f.has_link)
		return false;

	/* The directory of the file itself, symbolic links resolved. */
	if (!realpath(path, real) && !put_path(real, sizeof(real), path))
		return false;
	put_path(dir, sizeof(dir), real);
	slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		put_path(dir, sizeof(dir), ".");
	if (strcmp(dir, "/") == 0)
		dir[0] = '\0'; /* avoid "//" below */

	len = snprintf(cand, sizeof(cand), "%s/%s", dir[0] ? dir : "", f.link);
	if (len > 0 && (size_t)len < sizeof(cand) && debuglink_candidate(real, cand, f.link_crc))
		return put_path(out, out_size, cand);
	len = snprintf(cand, sizeof(cand), "%s/.debug/%s", dir, f.link);
	if (len > 0 && (size_t)len < sizeof(cand) && debuglink_candidate(real, cand, f.link_crc))
		return put_path(out, out_size, cand);
	len = snprintf(cand, sizeof(cand), "%s%s/%s", root, dir, f.link);
	if (len > 0 && (size_t)len < sizeof(cand) && debuglink_candidate(real, cand, f.link_crc))
		return put_path(out, out_size, cand);
	return false;
}

/* ---------- addresses ---------- */

bool elf_address_to_offset(const char *path, uint64_t addr, uint64_t *offset)
{
	size_t nphdr;
	bool found = false;
	int fd;
	Elf *elf = elf_open(path, &fd);

	if (!elf)
		return false;
	if (elf_getphdrnum(elf, &nphdr) == 0) {
		for (size_t i = 0; i < nphdr; i++) {
			GElf_Phdr phdr;

			if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
				continue;
			if (addr >= phdr.p_vaddr && addr - phdr.p_vaddr < phdr.p_filesz) {
				if (offset)
					*offset = addr - phdr.p_vaddr + phdr.p_offset;
				found = true;
				break;
			}
		}
	}
	elf_close(elf, fd);
	return found;
}
