/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `lever layout export --pprof` (issue 17): the thesis's Table 3.2 record
 * exported, un-gzipped with zlib and decoded with protobuf-c from the same
 * profile.proto: one sample per sampled field with the raw and adjusted
 * counts, labels data_type/field/offset, a two-frame stack (field over
 * struct), the string table starting with "", the build ID on the mapping.
 * (`go tool pprof` is not in Debian's default install here; the decoder is
 * the independent half of the round trip.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "layout/layout.h"
#include "profile.pb-c.h"

static const char record[] = "lever-layout-record\t2\n"
			     "program\t/usr/bin/prog\t00ff\n"
			     "source\tclock\tcpu-clock\n"
			     "period\t16384\n"
			     "struct\tfoo\n"
			     "field\ta\tlong long\t-\t0\t8\t8\n"
			     "field\tb\tstruct bar *\t-\t8\t8\t8\n"
			     "field\tc\tuint64_t\t-\t16\t8\t8\n"
			     "field\td\tint\t-\t24\t4\t4\n"
			     "struct\tcold\n"
			     "field\tx\tint\t-\t0\t4\t4\n"
			     "ref\t0x401000\tfoo\ta\tr\n"
			     "ref\t0x401010\tfoo\tb\tr\n"
			     "ref\t0x401020\tfoo\tc\tr\n"
			     "ref\t0x401030\tfoo\td\tw\n"
			     "block\t0x401000\t0x401010\n"
			     "sample\t0x401000\t111\t1\n"
			     "sample\t0x401010\t15\t1\n"
			     "sample\t0x401020\t19\t1\n"
			     "sample\t0x401030\t128\t1\n";

static unsigned char *gunzip(const unsigned char *in, size_t n, size_t *out_len)
{
	size_t cap = 1 << 16;
	unsigned char *out = malloc(cap);
	z_stream z = {0};

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

static const char *label_str(const Perftools__Profiles__Profile *p,
			     const Perftools__Profiles__Sample *s, const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (strcmp(p->string_table[s->label[i]->key], key) == 0)
			return p->string_table[s->label[i]->str];
	return NULL;
}

static const char *frame_name(const Perftools__Profiles__Profile *p, uint64_t location_id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == location_id) {
			uint64_t fid = p->location[i]->line[0]->function_id;

			for (size_t k = 0; k < p->n_function; k++)
				if (p->function[k]->id == fid)
					return p->string_table[p->function[k]->name];
		}
	return NULL;
}

static void test_round_trip(void **state)
{
	struct layout_record rec;
	char err[256], *gz = NULL;
	size_t gz_len = 0, raw_len;
	unsigned char *raw;
	FILE *f = fmemopen((void *)record, strlen(record), "r");
	Perftools__Profiles__Profile *p;
	bool seen_d = false;

	(void)state;
	assert_int_equal(layout_record_read(f, "t", &rec, err, sizeof(err)), 0);
	fclose(f);
	assert_int_equal(
	    layout_annotate(&rec.program, rec.samples, rec.n_samples, LAYOUT_ADJUST_THESIS), 0);
	f = open_memstream(&gz, &gz_len);
	assert_int_equal(layout_write_pprof(f, &rec, err, sizeof(err)), 0);
	fclose(f);
	/* gzip magic */
	assert_true(gz_len > 2 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b);
	raw = gunzip((unsigned char *)gz, gz_len, &raw_len);
	p = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(p);
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(p->string_table[p->sample_type[0]->type], "samples");
	assert_string_equal(p->string_table[p->sample_type[1]->type], "adjusted-samples");
	assert_string_equal(p->string_table[p->period_type->type], "cpu-clock");
	assert_string_equal(p->string_table[p->period_type->unit], "nanoseconds");
	assert_int_equal(p->period, 16384);
	assert_int_equal(p->n_mapping, 1);
	assert_string_equal(p->string_table[p->mapping[0]->build_id], "00ff");
	/* four sampled fields of foo; the cold struct has no sample */
	assert_int_equal(p->n_sample, 4);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		assert_string_equal(label_str(p, s, "data_type"), "foo");
		assert_int_equal(s->n_location_id, 2);
		assert_string_equal(frame_name(p, s->location_id[1]), "struct foo");
		if (strcmp(label_str(p, s, "field"), "b") == 0) {
			/* Algorithm 3: b (same line, later in a's block) also gets a's 111 */
			assert_int_equal(s->value[0], 15);
			assert_int_equal(s->value[1], 15 + 111);
			assert_string_equal(frame_name(p, s->location_id[0]), "foo.b");
		}
		if (strcmp(label_str(p, s, "field"), "d") == 0) {
			seen_d = true;
			assert_int_equal(s->value[0], 128);
			for (size_t k = 0; k < s->n_label; k++)
				if (strcmp(p->string_table[s->label[k]->key], "offset") == 0) {
					assert_int_equal(s->label[k]->num, 24);
					assert_string_equal(p->string_table[s->label[k]->num_unit],
							    "bytes");
				}
		}
	}
	assert_true(seen_d);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	free(gz);
	layout_record_free(&rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
