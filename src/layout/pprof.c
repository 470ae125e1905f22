// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * `lever layout export --pprof`: a record's per-field samples as a pprof
 * profile (profile.proto, gzipped), the format continuous-profiling
 * services (Parca, Grafana Pyroscope) and `go tool pprof` aggregate across
 * a fleet (issue 17, spec autocpa.md §1 goal I). One Sample per field with
 * samples: values raw and adjusted counts (Algorithms 2 and 3), labels
 * data_type and field (strings) and offset (bytes); its stack is two
 * frames, the field ("foo.b") over its struct ("struct foo"), so a flame
 * graph groups fields under their struct. Encoding by protobuf-c from
 * profile.proto, compression by zlib.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/base.h"
#include "layout/layout.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Mapping Mapping;

/* Everything a profile points into, freed at once. */
struct builder {
	struct string_table strings;
	size_t n_samples, n_functions, n_locations;
	Sample *samples, **sample_ptrs;
	Label *labels, **label_ptrs;
	Function *functions, **function_ptrs;
	Location *locations, **location_ptrs;
	Line *lines, **line_ptrs;
	uint64_t *location_ids;
	int64_t *values;
};

static int64_t str(struct builder *b, const char *s)
{
	return (int64_t)string_table_intern(&b->strings, s, strlen(s));
}

static void free_builder(struct builder *b)
{
	string_table_free(&b->strings);
	free(b->samples);
	free(b->sample_ptrs);
	free(b->labels);
	free(b->label_ptrs);
	free(b->functions);
	free(b->function_ptrs);
	free(b->locations);
	free(b->location_ptrs);
	free(b->lines);
	free(b->line_ptrs);
	free(b->location_ids);
	free(b->values);
}

/* A frame named `name`: one function, one location (ids are 1-based). */
static uint64_t add_frame(struct builder *b, const char *name)
{
	size_t i = b->n_functions++;

	perftools__profiles__function__init(&b->functions[i]);
	b->functions[i].id = i + 1;
	b->functions[i].name = str(b, name);
	b->functions[i].system_name = b->functions[i].name;
	b->function_ptrs[i] = &b->functions[i];
	perftools__profiles__line__init(&b->lines[i]);
	b->lines[i].function_id = i + 1;
	b->line_ptrs[i] = &b->lines[i];
	perftools__profiles__location__init(&b->locations[i]);
	b->locations[i].id = i + 1;
	b->locations[i].mapping_id = 1;
	b->locations[i].n_line = 1;
	b->locations[i].line = &b->line_ptrs[i];
	b->location_ptrs[i] = &b->locations[i];
	b->n_locations++;
	return i + 1;
}

#define LABELS_PER_SAMPLE 3

static void add_sample(struct builder *b, const struct layout_struct *s, size_t k,
		       uint64_t struct_location)
{
	const struct layout_field *f = &s->fields[k];
	size_t i = b->n_samples++;
	char name[512];
	Label *l = &b->labels[i * LABELS_PER_SAMPLE];

	snprintf(name, sizeof(name), "%s.%s", s->name, f->name);
	b->location_ids[2 * i] = add_frame(b, name);
	b->location_ids[2 * i + 1] = struct_location;
	b->values[2 * i] = (int64_t)f->raw;
	b->values[2 * i + 1] = (int64_t)f->adj;
	for (size_t j = 0; j < LABELS_PER_SAMPLE; j++) {
		perftools__profiles__label__init(&l[j]);
		b->label_ptrs[i * LABELS_PER_SAMPLE + j] = &l[j];
	}
	l[0].key = str(b, "data_type");
	l[0].str = str(b, s->name);
	l[1].key = str(b, "field");
	l[1].str = str(b, f->name);
	l[2].key = str(b, "offset");
	l[2].num = f->offset;
	l[2].num_unit = str(b, "bytes");
	perftools__profiles__sample__init(&b->samples[i]);
	b->samples[i].n_location_id = 2;
	b->samples[i].location_id = &b->location_ids[2 * i];
	b->samples[i].n_value = 2;
	b->samples[i].value = &b->values[2 * i];
	b->samples[i].n_label = LABELS_PER_SAMPLE;
	b->samples[i].label = &b->label_ptrs[i * LABELS_PER_SAMPLE];
	b->sample_ptrs[i] = &b->samples[i];
}

static int allocate(struct builder *b, size_t n_fields, size_t n_structs)
{
	size_t frames = n_fields + n_structs + 1;

	b->samples = calloc(n_fields + 1, sizeof(*b->samples));
	b->sample_ptrs = calloc(n_fields + 1, sizeof(*b->sample_ptrs));
	b->labels = calloc((n_fields + 1) * LABELS_PER_SAMPLE, sizeof(*b->labels));
	b->label_ptrs = calloc((n_fields + 1) * LABELS_PER_SAMPLE, sizeof(*b->label_ptrs));
	b->functions = calloc(frames, sizeof(*b->functions));
	b->function_ptrs = calloc(frames, sizeof(*b->function_ptrs));
	b->locations = calloc(frames, sizeof(*b->locations));
	b->location_ptrs = calloc(frames, sizeof(*b->location_ptrs));
	b->lines = calloc(frames, sizeof(*b->lines));
	b->line_ptrs = calloc(frames, sizeof(*b->line_ptrs));
	b->location_ids = calloc(2 * (n_fields + 1), sizeof(*b->location_ids));
	b->values = calloc(2 * (n_fields + 1), sizeof(*b->values));
	return b->samples && b->sample_ptrs && b->labels && b->label_ptrs && b->functions &&
		       b->function_ptrs && b->locations && b->location_ptrs && b->lines &&
		       b->line_ptrs && b->location_ids && b->values
		   ? 0
		   : -1;
}

/* gzip (RFC 1952) of buf into f. */
static int write_gzip(FILE *f, const uint8_t *buf, size_t n)
{
	z_stream z = {0};
	unsigned char out[1 << 14];
	int zr;

	if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)n;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR ||
		    fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			deflateEnd(&z);
			return -1;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

int layout_write_pprof(FILE *f, const struct layout_record *rec, char *err, size_t err_size)
{
	const struct layout_program *p = &rec->program;
	struct builder b = {0};
	Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	ValueType types[2], period_type, *type_ptrs[2] = {&types[0], &types[1]};
	Mapping mapping = PERFTOOLS__PROFILES__MAPPING__INIT, *mapping_ptr = &mapping;
	size_t n_fields = 0, packed_size;
	uint8_t *packed = NULL;
	int rc = -1;

	string_table_init(&b.strings);
	str(&b, ""); /* entry 0 is the empty string, as the format requires */
	for (size_t i = 0; i < p->n_structs; i++)
		n_fields += p->structs[i]->n_fields;
	if (allocate(&b, n_fields, p->n_structs)) {
		snprintf(err, err_size, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < 2; i++)
		perftools__profiles__value_type__init(&types[i]);
	types[0].type = str(&b, "samples");
	types[0].unit = str(&b, "count");
	types[1].type = str(&b, "adjusted-samples");
	types[1].unit = str(&b, "count");
	perftools__profiles__value_type__init(&period_type);
	period_type.type = str(&b, rec->event ? rec->event : "samples");
	period_type.unit =
	    str(&b, rec->source && strcmp(rec->source, "clock") == 0 ? "nanoseconds" : "count");
	mapping.id = 1;
	mapping.filename = str(&b, rec->n_modules ? rec->modules[0].path : "");
	mapping.build_id = str(&b, rec->n_modules ? rec->modules[0].build_id : "");
	mapping.has_functions = true;
	for (size_t i = 0; i < p->n_structs; i++) {
		const struct layout_struct *s = p->structs[i];
		char name[512];
		uint64_t struct_location;

		if (!s->total_raw)
			continue;
		snprintf(name, sizeof(name), "struct %s", s->name);
		struct_location = add_frame(&b, name);
		for (size_t k = 0; k < s->n_fields; k++)
			if (s->fields[k].raw || s->fields[k].adj)
				add_sample(&b, s, k, struct_location);
	}
	prof.n_sample_type = 2;
	prof.sample_type = type_ptrs;
	prof.n_sample = b.n_samples;
	prof.sample = b.sample_ptrs;
	prof.n_mapping = 1;
	prof.mapping = &mapping_ptr;
	prof.n_location = b.n_locations;
	prof.location = b.location_ptrs;
	prof.n_function = b.n_functions;
	prof.function = b.function_ptrs;
	prof.period_type = &period_type;
	prof.period = (int64_t)rec->period;
	prof.string_table = string_table_release(&b.strings, &prof.n_string_table);
	string_table_init(&b.strings);
	if (!prof.string_table) {
		snprintf(err, err_size, "out of memory");
		goto out;
	}
	packed_size = perftools__profiles__profile__get_packed_size(&prof);
	packed = malloc(packed_size ? packed_size : 1);
	if (!packed) {
		snprintf(err, err_size, "out of memory");
	} else if (perftools__profiles__profile__pack(&prof, packed) != packed_size ||
		   write_gzip(f, packed, packed_size)) {
		snprintf(err, err_size, "cannot encode or write the profile");
	} else {
		rc = 0;
	}
	for (size_t i = 0; i < prof.n_string_table; i++)
		free(prof.string_table[i]);
	free(prof.string_table);
out:
	free(packed);
	free_builder(&b);
	return rc;
}
