/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unwind information for copies (spec stabilizer.md §9 item 1, §12.3
 * "Unwinding"): each copy gets its own .eh_frame fragment, the original's CIE
 * and FDE with the pointers that depend on where they sit recomputed, and is
 * registered with libgcc's __register_frame_info. libgcc searches registered
 * objects before the loaded files, so C++ exceptions, backtrace() and
 * _Unwind_Backtrace walk through copies.
 *
 * Call-site tables of the LSDA are offsets from the function start, so they
 * stay valid for a copy when every landing pad lies inside the function;
 * functions whose LSDA says otherwise stay in place.
 */
#include "stabilizer/runtime/code.h"

#include <string.h>

#define DW_EH_PE_omit	  0xff
#define DW_EH_PE_absptr	  0x00
#define DW_EH_PE_uleb128  0x01
#define DW_EH_PE_udata4	  0x03
#define DW_EH_PE_udata8	  0x04
#define DW_EH_PE_sdata4	  0x0b
#define DW_EH_PE_sdata8	  0x0c
#define DW_EH_PE_pcrel	  0x10
#define DW_EH_PE_datarel  0x30
#define DW_EH_PE_indirect 0x80

/* libgcc (unwind-dw2-fde.h): the object is opaque to callers. */
void __register_frame_info(const void *begin, void *object);
void *__deregister_frame_info(const void *begin);

static uint64_t read_uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t read_sleb(const uint8_t **p, const uint8_t *end)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (*p < end) {
		b = *(*p)++;
		if (shift < 64)
			v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

/* Size of an encoded value, 0 if this runtime does not handle the format. */
static unsigned encoded_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	default:
		return 0;
	}
}

static bool encoding_supported(uint8_t enc, bool allow_indirect)
{
	uint8_t app = enc & 0x70;

	if (enc == DW_EH_PE_omit)
		return true;
	if ((enc & DW_EH_PE_indirect) && !allow_indirect)
		return false;
	return encoded_size(enc) != 0 && (app == 0 || app == DW_EH_PE_pcrel);
}

static int64_t read_raw(const uint8_t *p, uint8_t enc)
{
	int32_t s4;
	uint32_t u4;
	int64_t v8;

	switch (enc & 0x0f) {
	case DW_EH_PE_udata4:
		memcpy(&u4, p, 4);
		return u4;
	case DW_EH_PE_sdata4:
		memcpy(&s4, p, 4);
		return s4;
	default:
		memcpy(&v8, p, 8);
		return v8;
	}
}

static bool write_raw(uint8_t *p, uint8_t enc, int64_t v)
{
	int32_t s4 = (int32_t)v;
	uint32_t u4 = (uint32_t)v;

	switch (enc & 0x0f) {
	case DW_EH_PE_udata4:
		if ((uint64_t)v > UINT32_MAX)
			return false;
		memcpy(p, &u4, 4);
		return true;
	case DW_EH_PE_sdata4:
		if (v != s4)
			return false;
		memcpy(p, &s4, 4);
		return true;
	default:
		memcpy(p, &v, 8);
		return true;
	}
}

/* The address an encoded pointer at p designates (indirection not followed). */
static uintptr_t decode_pointer(const uint8_t *p, uint8_t enc, uintptr_t datarel_base)
{
	int64_t v = read_raw(p, enc);

	switch (enc & 0x70) {
	case DW_EH_PE_pcrel:
		return (uintptr_t)p + (uintptr_t)v;
	case DW_EH_PE_datarel:
		return datarel_base + (uintptr_t)v;
	default:
		return (uintptr_t)v;
	}
}

/* Writes the pointer to target at p (in its final place) with encoding enc. */
static bool encode_pointer(uint8_t *p, uint8_t enc, uintptr_t target)
{
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		return write_raw(p, enc, (int64_t)(target - (uintptr_t)p));
	return write_raw(p, enc, (int64_t)target);
}

/* FDE of the function starting at pc, by binary search of .eh_frame_hdr. */
static const uint8_t *find_fde(uintptr_t hdr_addr, uintptr_t pc)
{
	const uint8_t *hdr = (const uint8_t *)hdr_addr, *p = hdr + 4;
	uint8_t ptr_enc = hdr[1], count_enc = hdr[2], table_enc = hdr[3];
	size_t count, lo = 0, hi;

	if (hdr[0] != 1 || table_enc != (DW_EH_PE_datarel | DW_EH_PE_sdata4) ||
	    !encoding_supported(ptr_enc, false) || !encoding_supported(count_enc, false) ||
	    (count_enc & 0x70) != 0)
		return NULL;
	p += encoded_size(ptr_enc);
	count = (size_t)read_raw(p, count_enc);
	p += encoded_size(count_enc);
	hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int32_t loc, fde;

		memcpy(&loc, p + mid * 8, 4);
		memcpy(&fde, p + mid * 8 + 4, 4);
		if (hdr_addr + (uintptr_t)(intptr_t)loc == pc)
			return hdr + fde;
		if (hdr_addr + (uintptr_t)(intptr_t)loc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Parses the CIE's augmentation into d. */
static bool parse_cie(struct code_fde *d)
{
	const uint8_t *cie = d->cie, *end, *p, *aug;
	uint32_t len, id;
	uint8_t version;

	memcpy(&len, cie, 4);
	memcpy(&id, cie + 4, 4);
	if (len == 0xffffffff || id != 0)
		return false;
	d->cie_len = len + 4;
	end = cie + d->cie_len;
	version = cie[8];
	aug = cie + 9;
	p = aug + strlen((const char *)aug) + 1;
	if (version != 1 && version != 3)
		return false;
	read_uleb(&p, end);
	read_sleb(&p, end);
	if (version == 1)
		p++;
	else
		read_uleb(&p, end);
	d->pers_off = -1;
	d->fde_enc = DW_EH_PE_absptr;
	d->lsda_enc = DW_EH_PE_omit;
	if (aug[0] != 'z')
		return aug[0] == '\0';
	read_uleb(&p, end);
	for (const uint8_t *a = aug + 1; *a; a++) {
		switch (*a) {
		case 'L':
			d->lsda_enc = *p++;
			break;
		case 'R':
			d->fde_enc = *p++;
			break;
		case 'P':
			d->pers_enc = *p++;
			if (!encoding_supported(d->pers_enc, true))
				return false;
			d->pers_off = (int32_t)(p - cie);
			p += encoded_size(d->pers_enc);
			break;
		case 'S':
		case 'B':
			break;
		default:
			return false;
		}
	}
	return p <= end && encoding_supported(d->fde_enc, false) &&
	       encoding_supported(d->lsda_enc, false);
}

/* Every call site and landing pad of the LSDA lies inside [0, size). */
static bool lsda_inside(const uint8_t *lsda, uint32_t size)
{
	const uint8_t *p = lsda, *end;
	uint8_t lpstart_enc = *p++, ttype_enc = *p++, cs_enc;
	uint64_t cs_len;

	if (lpstart_enc != DW_EH_PE_omit)
		return false;
	if (ttype_enc != DW_EH_PE_omit)
		read_uleb(&p, p + 16);
	cs_enc = *p++;
	cs_len = read_uleb(&p, p + 16);
	end = p + cs_len;
	while (p < end) {
		uint64_t start, len, pad;

		if (cs_enc == DW_EH_PE_uleb128) {
			start = read_uleb(&p, end);
			len = read_uleb(&p, end);
			pad = read_uleb(&p, end);
		} else if (cs_enc == DW_EH_PE_udata4) {
			start = (uint64_t)read_raw(p, cs_enc);
			len = (uint64_t)read_raw(p + 4, cs_enc);
			pad = (uint64_t)read_raw(p + 8, cs_enc);
			p += 12;
		} else {
			return false;
		}
		read_uleb(&p, end); /* action */
		if (start + len > size || (pad != 0 && pad >= size))
			return false;
	}
	return true;
}

bool code_unwind_prepare(const struct code_image *img, struct code_function *f)
{
	struct code_fde *d = &f->fde;
	const uint8_t *fde, *p;
	uint32_t len, cie_ptr;
	uintptr_t pc_begin;
	uint64_t pc_range;

	d->fde = NULL;
	if (!img->eh_frame_hdr)
		return true;
	fde = find_fde(img->eh_frame_hdr, f->start);
	if (!fde)
		return true; /* no unwind info: a copy has none either */
	memcpy(&len, fde, 4);
	memcpy(&cie_ptr, fde + 4, 4);
	if (len == 0xffffffff || cie_ptr == 0)
		return false;
	d->fde = fde;
	d->fde_len = len + 4;
	d->cie = fde + 4 - cie_ptr;
	if (!parse_cie(d))
		return false;
	d->pc_begin_off = 8;
	pc_begin = decode_pointer(fde + 8, d->fde_enc, 0);
	pc_range = (uint64_t)read_raw(fde + 8 + encoded_size(d->fde_enc), d->fde_enc & 0x0f);
	if (pc_begin != f->start || pc_range > f->size)
		return false;
	d->lsda_off = -1;
	p = fde + 8 + 2 * encoded_size(d->fde_enc);
	if (d->lsda_enc != DW_EH_PE_omit) {
		uintptr_t lsda;

		read_uleb(&p, fde + d->fde_len);
		d->lsda_off = (int32_t)(p - fde);
		if (read_raw(p, d->lsda_enc) == 0)
			return true; /* a null LSDA */
		lsda = decode_pointer(p, d->lsda_enc, 0);
		if (!lsda_inside((const uint8_t *)lsda, f->size))
			return false;
	}
	return true;
}

size_t code_unwind_blob_size(const struct code_function *f)
{
	if (!f->fde.fde)
		return 0;
	return CODE_OBJECT_SPACE + f->fde.cie_len + f->fde.fde_len + 4;
}

void code_unwind_register(const struct code_function *f, uint8_t *blob, uintptr_t copy_addr)
{
	const struct code_fde *d = &f->fde;
	uint8_t *cie = blob + CODE_OBJECT_SPACE, *fde = cie + d->cie_len;
	uint32_t cie_ptr, zero = 0;

	memset(blob, 0, CODE_OBJECT_SPACE);
	memcpy(cie, d->cie, d->cie_len);
	memcpy(fde, d->fde, d->fde_len);
	memcpy(fde + d->fde_len, &zero, 4);
	if (d->pers_off >= 0)
		encode_pointer(cie + d->pers_off, d->pers_enc,
			       decode_pointer(d->cie + d->pers_off, d->pers_enc, 0));
	cie_ptr = (uint32_t)(fde + 4 - cie);
	memcpy(fde + 4, &cie_ptr, 4);
	encode_pointer(fde + d->pc_begin_off, d->fde_enc, copy_addr);
	if (d->lsda_off >= 0 && read_raw(d->fde + d->lsda_off, d->lsda_enc) != 0)
		encode_pointer(fde + d->lsda_off, d->lsda_enc,
			       decode_pointer(d->fde + d->lsda_off, d->lsda_enc, 0));
	__register_frame_info(cie, blob);
}

void code_unwind_deregister(const struct code_function *f, uint8_t *blob)
{
	if (f->fde.fde)
		__deregister_frame_info(blob + CODE_OBJECT_SPACE);
}
