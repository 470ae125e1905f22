/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reader for causal profiles in Coz's legacy tab-separated format (lever
 * profile format 1; doc/formats/profile.md):
 *
 *   RECORD<TAB>key=value<TAB>key=value...
 *
 * and in Coz's JSON Lines format, one object per line with the record type
 * under "type" and the same fields as keys ("selected_samples" for
 * selected-samples). A JSON line is turned into the legacy record it stands
 * for, so both formats go through the same checks. Which format a file is in
 * is decided by its first non-blank line.
 *
 * Point records belong to the experiment before them; `startup` begins a run.
 * Unknown record types and unknown keys are skipped, so newer writers stay
 * readable. Bad lines are skipped and reported as FILE:LINE: message.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "causal/causal.h"
#include "causal/table.h"

#define NONE	   SIZE_MAX
#define DROPPED	   (SIZE_MAX - 1)
#define MAX_FIELDS 16

struct causal_tables {
	struct string_table strings;
	struct u64_map points;	/* kind << 32 | name id -> point index */
	struct u64_map samples; /* run << 32 | location id -> sample index */
};

struct field {
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
};

struct record {
	const char *type;
	size_t type_len;
	struct field fields[MAX_FIELDS];
	size_t n_fields;
};

struct reader {
	struct causal_profile *p;
	const char *name;
	uint32_t source;
	uint64_t lineno;
	size_t run;	   /* current run, NONE before the first record */
	size_t experiment; /* experiment the next point records belong to */
	bool strict;
	bool failed;
	bool said_unknown;
	char *scratch; /* NUL-terminated copy of a field value */
	size_t scratch_cap;
	enum { FORMAT_UNKNOWN, FORMAT_LEGACY, FORMAT_JSON } format;
	char *json_line; /* a JSON line rewritten as a legacy record */
	size_t json_len, json_cap;
};

/* ------------------------------------------------------------ utilities */

static int grow(void **array, size_t *cap, size_t need, size_t size)
{
	size_t cap_new;
	void *a;

	if (need <= *cap)
		return 0;
	cap_new = *cap ? *cap * 2 : 16;
	while (cap_new < need)
		cap_new *= 2;
	if (cap_new > SIZE_MAX / size)
		return -1;
	a = realloc(*array, cap_new * size);
	if (!a)
		return -1;
	*array = a;
	*cap = cap_new;
	return 0;
}

#define GROW(arr, n, cap) grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)))

static void add_diagnostic(struct causal_profile *p, const char *text)
{
	if (p->n_diagnostics >= CAUSAL_MAX_DIAGS) {
		p->stats.diagnostics_lost++;
		return;
	}
	p->diagnostics[p->n_diagnostics] = strdup(text);
	if (p->diagnostics[p->n_diagnostics])
		p->n_diagnostics++;
}

static void set_error(struct causal_profile *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_error(struct causal_profile *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
	va_end(ap);
}

/* A bad line: a diagnostic, or (strict) the error that ends the read. */
static void bad_line(struct reader *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad_line(struct reader *rd, const char *fmt, ...)
{
	char msg[384];
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(text, sizeof(text), "%s:%llu: %s", rd->name, (unsigned long long)rd->lineno, msg);
	rd->p->stats.malformed++;
	if (rd->strict) {
		set_error(rd->p, "%s", text);
		rd->failed = true;
		return;
	}
	add_diagnostic(rd->p, text);
}

static void out_of_memory(struct reader *rd)
{
	set_error(rd->p, "%s:%llu: out of memory", rd->name, (unsigned long long)rd->lineno);
	rd->failed = true;
}

/* ------------------------------------------------------------ fields */

static bool is_record_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/* Split a line into the record type and its key=value fields. */
static bool split_record(struct reader *rd, const char *line, size_t len, struct record *rec)
{
	const char *end = line + len;
	const char *s = line;
	const char *tab = memchr(s, '\t', len);

	rec->type = s;
	rec->type_len = tab ? (size_t)(tab - s) : len;
	rec->n_fields = 0;
	if (rec->type_len == 0) {
		bad_line(rd, "missing record type");
		return false;
	}
	for (size_t i = 0; i < rec->type_len; i++) {
		if (!is_record_char(s[i])) {
			if (s[0] == '{')
				bad_line(rd, "a JSON line in a tab-separated profile (a file "
					     "is one format or the other)");
			else
				bad_line(rd, "not a profile record");
			return false;
		}
	}
	while (tab && tab < end) {
		const char *f = tab + 1;
		const char *eq;
		size_t flen;

		tab = memchr(f, '\t', (size_t)(end - f));
		flen = tab ? (size_t)(tab - f) : (size_t)(end - f);
		if (flen == 0)
			continue; /* tolerate doubled or trailing tabs */
		eq = memchr(f, '=', flen);
		if (!eq || eq == f) {
			bad_line(rd, "field '%.*s' is not key=value", (int)(flen > 40 ? 40 : flen),
				 f);
			return false;
		}
		if (rec->n_fields == MAX_FIELDS)
			continue; /* more fields than any record has: ignore the rest */
		rec->fields[rec->n_fields++] = (struct field){
		    .key = f,
		    .key_len = (size_t)(eq - f),
		    .value = eq + 1,
		    .value_len = flen - (size_t)(eq - f) - 1,
		};
	}
	return true;
}

static bool type_is(const struct record *rec, const char *name)
{
	return strlen(name) == rec->type_len && memcmp(rec->type, name, rec->type_len) == 0;
}

static const struct field *find_field(const struct record *rec, const char *key)
{
	size_t len = strlen(key);

	for (size_t i = 0; i < rec->n_fields; i++) {
		if (rec->fields[i].key_len == len && memcmp(rec->fields[i].key, key, len) == 0)
			return &rec->fields[i];
	}
	return NULL;
}

static bool missing(struct reader *rd, const char *type, const char *key)
{
	bad_line(rd, "%s record without %s=", type, key);
	return false;
}

/* Digits only, no sign, at most UINT64_MAX. */
static bool parse_digits(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9)
			return false;
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/*
 * A signed 64-bit field. Coz computed durations and differences in unsigned
 * arithmetic, so a negative value may appear wrapped around 2^64: an unsigned
 * value above INT64_MAX is read back as the negative number it stands for.
 */
static bool get_signed(struct reader *rd, const struct record *rec, const char *type,
		       const char *key, int64_t *out)
{
	const struct field *f = find_field(rec, key);
	uint64_t v;

	if (!f)
		return missing(rd, type, key);
	if (f->value_len > 0 && f->value[0] == '-') {
		if (!parse_digits(f->value + 1, f->value_len - 1, &v) ||
		    v > (uint64_t)INT64_MAX + 1)
			goto bad;
		*out = v ? (int64_t)(0 - v) : 0;
		return true;
	}
	if (!parse_digits(f->value, f->value_len, &v))
		goto bad;
	*out = (int64_t)v; /* two's complement wrap, see above */
	return true;
bad:
	bad_line(rd, "%s: %s=%.*s is not an integer", type, key,
		 (int)(f->value_len > 40 ? 40 : f->value_len), f->value);
	return false;
}

static bool get_count(struct reader *rd, const struct record *rec, const char *type,
		      const char *key, int64_t *out)
{
	if (!get_signed(rd, rec, type, key, out))
		return false;
	if (*out < 0) {
		bad_line(rd, "%s: %s= is negative", type, key);
		return false;
	}
	return true;
}

static bool get_unsigned(struct reader *rd, const struct record *rec, const char *type,
			 const char *key, uint64_t *out)
{
	const struct field *f = find_field(rec, key);

	if (!f)
		return missing(rd, type, key);
	if (parse_digits(f->value, f->value_len, out))
		return true;
	bad_line(rd, "%s: %s=%.*s is not an unsigned integer", type, key,
		 (int)(f->value_len > 40 ? 40 : f->value_len), f->value);
	return false;
}

static const char *value_string(struct reader *rd, const struct field *f)
{
	if (grow((void **)&rd->scratch, &rd->scratch_cap, f->value_len + 1, 1))
		return NULL;
	memcpy(rd->scratch, f->value, f->value_len);
	rd->scratch[f->value_len] = '\0';
	return rd->scratch;
}

static bool get_speedup(struct reader *rd, const struct record *rec, double *out, int *pct)
{
	const struct field *f = find_field(rec, "speedup");
	const char *text;
	char *end;
	double v;

	if (!f)
		return missing(rd, "experiment", "speedup");
	text = value_string(rd, f);
	if (!text) {
		out_of_memory(rd);
		return false;
	}
	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end != '\0' || errno || !(v >= -1e-9 && v <= 1.0 + 1e-9)) {
		bad_line(rd, "experiment: speedup=%.40s is not a number in 0..1", text);
		return false;
	}
	*out = v < 0 ? 0 : v > 1 ? 1 : v;
	*pct = (int)(*out * 100.0 + 0.5);
	return true;
}

/* Intern a non-empty string field; UINT32_MAX (after a diagnostic) if absent or empty. */
static uint32_t get_string(struct reader *rd, const struct record *rec, const char *type,
			   const char *key)
{
	const struct field *f = find_field(rec, key);
	uint32_t id;

	if (!f || f->value_len == 0) {
		bad_line(rd, "%s record without %s=", type, key);
		return UINT32_MAX;
	}
	id = string_table_intern(&rd->p->tables->strings, f->value, f->value_len);
	if (id == UINT32_MAX)
		out_of_memory(rd);
	return id;
}

/* ------------------------------------------------------------ model */

static size_t start_run(struct reader *rd, bool has_startup, uint64_t startup_ns)
{
	struct causal_profile *p = rd->p;
	struct causal_run *run;

	if (GROW(p->runs, p->n_runs, p->cap_runs) || p->n_runs >= UINT32_MAX) {
		out_of_memory(rd);
		return NONE;
	}
	run = &p->runs[p->n_runs];
	memset(run, 0, sizeof(*run));
	run->source = rd->source;
	run->lineno = rd->lineno;
	run->has_startup = has_startup;
	run->startup_ns = startup_ns;
	run->first_experiment = p->n_experiments;
	rd->run = p->n_runs++;
	rd->experiment = NONE;
	return rd->run;
}

/* The current run; records before any `startup` get a run of their own. */
static struct causal_run *current_run(struct reader *rd)
{
	if (rd->run == NONE && start_run(rd, false, 0) == NONE)
		return NULL;
	return &rd->p->runs[rd->run];
}

static uint32_t find_point(struct reader *rd, uint32_t name, enum causal_point_kind kind)
{
	struct causal_profile *p = rd->p;
	uint64_t key = (uint64_t)kind << 32 | name;
	uint32_t idx = u64_map_get(&p->tables->points, key);

	if (idx != UINT32_MAX)
		return idx;
	if (GROW(p->points, p->n_points, p->cap_points) || p->n_points >= UINT32_MAX - 1 ||
	    u64_map_put(&p->tables->points, key, (uint32_t)p->n_points)) {
		out_of_memory(rd);
		return UINT32_MAX;
	}
	p->points[p->n_points] = (struct causal_point){.name = name, .kind = kind};
	return (uint32_t)p->n_points++;
}

/* The experiment a point record belongs to, or NULL (counted) if none. */
static struct causal_experiment *point_owner(struct reader *rd)
{
	if (rd->experiment == DROPPED)
		return NULL; /* belongs to an experiment we dropped: drop it too */
	if (rd->experiment == NONE) {
		rd->p->stats.orphan_points++;
		bad_line(rd, "point record with no experiment before it");
		return NULL;
	}
	return &rd->p->experiments[rd->experiment];
}

static void add_delta(struct reader *rd, struct causal_experiment *e, const struct causal_delta *d)
{
	struct causal_profile *p = rd->p;

	if (GROW(p->deltas, p->n_deltas, p->cap_deltas)) {
		out_of_memory(rd);
		return;
	}
	if (e->n_deltas == 0)
		e->first_delta = p->n_deltas;
	p->deltas[p->n_deltas++] = *d;
	e->n_deltas++;
	p->stats.records++;
}

/* ------------------------------------------------------------ records */

/*
 * lever's header fields: version (under version_key), sampler, period (ns) and
 * seed, from a `lever` record or from extra keys of `startup`.
 */
static bool read_lever_fields(struct reader *rd, const struct record *rec, const char *type,
			      const char *version_key, struct causal_run *run)
{
	const struct field *sampler = find_field(rec, "sampler");
	const struct field *period = find_field(rec, "period");
	const struct field *seed = find_field(rec, "seed");
	uint64_t version, period_ns = 0, seed_value = 0;

	if (!get_unsigned(rd, rec, type, version_key, &version))
		return false;
	if (period && !get_unsigned(rd, rec, type, "period", &period_ns))
		return false;
	if (seed && !get_unsigned(rd, rec, type, "seed", &seed_value))
		return false;
	run->has_lever_header = true;
	run->lever_version = version > UINT32_MAX ? UINT32_MAX : (unsigned)version;
	run->period_ns = period_ns;
	run->has_seed = seed != NULL;
	run->seed = seed_value;
	run->sampler[0] = '\0';
	if (sampler) {
		size_t n = sampler->value_len < sizeof(run->sampler) - 1 ? sampler->value_len
									 : sizeof(run->sampler) - 1;

		memcpy(run->sampler, sampler->value, n);
		run->sampler[n] = '\0';
	}
	return true;
}

static void read_startup(struct reader *rd, const struct record *rec)
{
	struct causal_run scratch = {0};
	bool lever = find_field(rec, "lever") != NULL;
	uint64_t t;

	if (!get_unsigned(rd, rec, "startup", "time", &t))
		return;
	/* validate lever's keys before starting the run, so a bad line changes nothing */
	if (lever && !read_lever_fields(rd, rec, "startup", "lever", &scratch))
		return;
	if (start_run(rd, true, t) == NONE)
		return;
	if (lever)
		read_lever_fields(rd, rec, "startup", "lever", &rd->p->runs[rd->run]);
	rd->p->stats.records++;
}

static void read_lever_header(struct reader *rd, const struct record *rec)
{
	struct causal_run scratch = {0};
	struct causal_run *run;

	if (!read_lever_fields(rd, rec, "lever", "version", &scratch))
		return;
	run = current_run(rd);
	if (!run)
		return;
	read_lever_fields(rd, rec, "lever", "version", run);
	rd->p->stats.records++;
}

/* Coz 0.2.2's sampling period (its SamplePeriod; its profiles do not say). */
#define COZ_SAMPLE_PERIOD_NS 1000000.0

/*
 * The delay an experiment inserted, for profiles that do not record it
 * (Coz's, lever's before the `delay` field): each sample of the selected line
 * made the other threads wait speedup x period. Summed per run as the
 * experiments are read; without it the run's runtime includes the pauses and
 * the phase correction's s / T comes out too small (0.85 on bench/causal's
 * critical_path under Coz).
 */
static double estimated_delay(const struct causal_run *run, const struct causal_experiment *e)
{
	double period =
	    run->has_lever_header && run->period_ns ? (double)run->period_ns : COZ_SAMPLE_PERIOD_NS;

	if (e->selected_samples > 0 && e->speedup > 0)
		return (double)e->selected_samples * e->speedup * period;
	return 0;
}

static void read_experiment(struct reader *rd, const struct record *rec)
{
	struct causal_profile *p = rd->p;
	struct causal_experiment e = {0};
	struct causal_run *run;

	e.selected = get_string(rd, rec, "experiment", "selected");
	if (e.selected == UINT32_MAX || !get_speedup(rd, rec, &e.speedup, &e.speedup_pct) ||
	    !get_signed(rd, rec, "experiment", "duration", &e.duration))
		goto bad;
	if (find_field(rec, "selected-samples") &&
	    !get_count(rd, rec, "experiment", "selected-samples", &e.selected_samples))
		goto bad;
	/* load amplification (AMP): the run's arrival speedup and what arrived */
	if (find_field(rec, "arrival-speedup")) {
		if (!get_unsigned(rd, rec, "experiment", "arrival-speedup", &e.arrival_speedup_ns))
			goto bad;
		e.has_arrival_speedup = true;
	}
	if (find_field(rec, "arrivals") &&
	    !get_count(rd, rec, "experiment", "arrivals", &e.arrivals))
		goto bad;
	if (find_field(rec, "arrival-threads") &&
	    !get_count(rd, rec, "experiment", "arrival-threads", &e.arrival_threads))
		goto bad;
	run = current_run(rd);
	if (!run)
		return;
	if (e.duration <= 0) {
		p->stats.dropped_duration++;
		rd->experiment = DROPPED;
		return;
	}
	if (GROW(p->experiments, p->n_experiments, p->cap_experiments)) {
		out_of_memory(rd);
		return;
	}
	e.run = (uint32_t)rd->run;
	e.source = rd->source;
	e.lineno = rd->lineno;
	e.first_delta = p->n_deltas;
	rd->experiment = p->n_experiments;
	p->experiments[p->n_experiments++] = e;
	run->n_experiments++;
	run->estimated_delay_ns += estimated_delay(run, &e);
	p->stats.records++;
	return;
bad:
	/* Its point records must not attach to the experiment before it. */
	rd->experiment = DROPPED;
}

static void read_throughput(struct reader *rd, const struct record *rec, const char *type)
{
	struct causal_delta d = {0};
	struct causal_experiment *e;
	uint32_t name = get_string(rd, rec, type, "name");

	if (name == UINT32_MAX || !get_count(rd, rec, type, "delta", &d.delta))
		return;
	e = point_owner(rd);
	if (!e)
		return;
	d.point = find_point(rd, name, CAUSAL_POINT_THROUGHPUT);
	if (d.point != UINT32_MAX)
		add_delta(rd, e, &d);
}

static void read_latency(struct reader *rd, const struct record *rec)
{
	struct causal_delta d = {0};
	struct causal_experiment *e;
	uint32_t name = get_string(rd, rec, "latency-point", "name");

	if (name == UINT32_MAX || !get_count(rd, rec, "latency-point", "arrivals", &d.arrivals) ||
	    !get_count(rd, rec, "latency-point", "departures", &d.departures) ||
	    !get_signed(rd, rec, "latency-point", "difference", &d.difference))
		return;
	e = point_owner(rd);
	if (!e)
		return;
	d.point = find_point(rd, name, CAUSAL_POINT_LATENCY);
	if (d.point != UINT32_MAX)
		add_delta(rd, e, &d);
}

static void read_runtime(struct reader *rd, const struct record *rec)
{
	struct causal_run *run;
	int64_t t;

	int64_t delay = 0;

	if (!get_count(rd, rec, "runtime", "time", &t))
		return;
	/* lever's: delay the experiments inserted so far (absent in Coz's) */
	if (find_field(rec, "delay") && !get_count(rd, rec, "runtime", "delay", &delay))
		return;
	run = current_run(rd);
	if (!run)
		return;
	run->has_runtime = true;
	run->runtime_ns = t; /* cumulative: the latest wins */
	if (!find_field(rec, "delay"))
		delay =
		    run->estimated_delay_ns < 9.2e18 ? (int64_t)run->estimated_delay_ns : INT64_MAX;
	run->delay_ns = delay;
	rd->p->stats.records++;
}

static void read_samples(struct reader *rd, const struct record *rec)
{
	struct causal_profile *p = rd->p;
	uint32_t location = get_string(rd, rec, "samples", "location");
	uint64_t key;
	uint32_t idx;
	int64_t count;

	if (location == UINT32_MAX || !get_count(rd, rec, "samples", "count", &count))
		return;
	if (!current_run(rd))
		return;
	key = (uint64_t)rd->run << 32 | location;
	idx = u64_map_get(&p->tables->samples, key);
	if (idx == UINT32_MAX) {
		if (GROW(p->samples, p->n_samples, p->cap_samples) ||
		    p->n_samples >= UINT32_MAX - 1 ||
		    u64_map_put(&p->tables->samples, key, (uint32_t)p->n_samples)) {
			out_of_memory(rd);
			return;
		}
		idx = (uint32_t)p->n_samples++;
		p->samples[idx] =
		    (struct causal_sample_count){.run = (uint32_t)rd->run, .location = location};
	}
	p->samples[idx].count = count; /* cumulative: the latest wins */
	p->stats.records++;
}

static void read_shutdown(struct reader *rd, const struct record *rec)
{
	struct causal_run *run;
	uint64_t t;
	int64_t samples = 0;

	if (!get_unsigned(rd, rec, "shutdown", "time", &t))
		return;
	if (find_field(rec, "samples") && !get_count(rd, rec, "shutdown", "samples", &samples))
		return;
	run = current_run(rd);
	if (!run)
		return;
	run->has_shutdown = true;
	run->shutdown_ns = t;
	run->shutdown_samples = samples;
	rd->p->stats.records++;
}

static void unknown_record(struct reader *rd, const struct record *rec)
{
	char text[512];

	rd->p->stats.unknown_records++;
	if (rd->said_unknown)
		return;
	rd->said_unknown = true;
	snprintf(text, sizeof(text), "%s:%llu: skipping records of unknown type '%.*s'", rd->name,
		 (unsigned long long)rd->lineno, (int)(rec->type_len > 40 ? 40 : rec->type_len),
		 rec->type);
	add_diagnostic(rd->p, text);
}

static void dispatch_record(struct reader *rd, const struct record *rec)
{
	if (type_is(rec, "startup"))
		read_startup(rd, rec);
	else if (type_is(rec, "experiment"))
		read_experiment(rd, rec);
	else if (type_is(rec, "throughput-point"))
		read_throughput(rd, rec, "throughput-point");
	else if (type_is(rec, "progress-point"))
		read_throughput(rd, rec, "progress-point");
	else if (type_is(rec, "latency-point"))
		read_latency(rd, rec);
	else if (type_is(rec, "samples"))
		read_samples(rd, rec);
	else if (type_is(rec, "runtime"))
		read_runtime(rd, rec);
	else if (type_is(rec, "shutdown"))
		read_shutdown(rd, rec);
	else if (type_is(rec, "lever"))
		read_lever_header(rd, rec);
	else
		unknown_record(rd, rec);
}

/* ------------------------------------------------------------ JSON Lines */

static bool json_append(struct reader *rd, const char *text, size_t n)
{
	if (grow((void **)&rd->json_line, &rd->json_cap, rd->json_len + n + 1, 1)) {
		out_of_memory(rd);
		return false;
	}
	memcpy(rd->json_line + rd->json_len, text, n);
	rd->json_len += n;
	rd->json_line[rd->json_len] = '\0';
	return true;
}

/* Append a name with '_' written as '-'. */
static bool json_append_dashed(struct reader *rd, const char *name, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = name[i] == '_' ? '-' : name[i];

		if (!json_append(rd, &c, 1))
			return false;
	}
	return true;
}

/* Text that cannot stand in a legacy field: TAB, newline, NUL. */
static bool fits_field(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\0')
			return false;
	}
	return true;
}

/* A JSON scalar as the text of a legacy value; false (after a diagnostic) if it is not one. */
static bool json_value_text(struct reader *rd, const char *key, json_t *v, char *buf, size_t size,
			    const char **text, size_t *len)
{
	if (json_is_string(v)) {
		*text = json_string_value(v);
		*len = json_string_length(v);
		if (!fits_field(*text, *len)) {
			bad_line(rd, "\"%.40s\": string with a control character", key);
			return false;
		}
		return true;
	}
	if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v) && isfinite(json_real_value(v)))
		snprintf(buf, size, "%.17g", json_real_value(v));
	else {
		bad_line(rd, "\"%.40s\" is not a string or a number", key);
		return false;
	}
	*text = buf;
	*len = strlen(buf);
	return true;
}

/* Rewrite one JSON object as the legacy line TYPE<TAB>key=value...; false if malformed. */
static bool json_to_record_line(struct reader *rd, json_t *obj)
{
	json_t *type = json_object_get(obj, "type");
	const char *key;
	json_t *v;

	rd->json_len = 0;
	if (!json_is_string(type) || json_string_length(type) == 0) {
		bad_line(rd, "JSON record without a \"type\" string");
		return false;
	}
	/* Coz's JSON names churned between _ and - (anchors.md §1.6): accept both */
	if (!json_append_dashed(rd, json_string_value(type), json_string_length(type)))
		return false;
	json_object_foreach(obj, key, v)
	{
		char num[64];
		const char *text;
		size_t len, key_len = strlen(key);

		if (strcmp(key, "type") == 0)
			continue;
		if (key_len == 0 || !fits_field(key, key_len) || strchr(key, '=')) {
			bad_line(rd, "JSON key \"%.40s\" cannot be a field name", key);
			return false;
		}
		if (!json_value_text(rd, key, v, num, sizeof(num), &text, &len))
			return false;
		/* selected_samples (JSON) is selected-samples (legacy) */
		if (!json_append(rd, "\t", 1) || !json_append_dashed(rd, key, key_len) ||
		    !json_append(rd, "=", 1) || !json_append(rd, text, len))
			return false;
	}
	return true;
}

static void read_json_line(struct reader *rd, const char *line, size_t len)
{
	json_error_t err;
	json_t *obj = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
	struct record rec;

	if (!obj) {
		bad_line(rd, "not valid JSON (column %d): %.100s", err.column, err.text);
		return;
	}
	if (!json_is_object(obj)) {
		bad_line(rd, "JSON line is not an object");
		json_decref(obj);
		return;
	}
	if (json_to_record_line(rd, obj) && split_record(rd, rd->json_line, rd->json_len, &rec))
		dispatch_record(rd, &rec);
	json_decref(obj);
}

/* ------------------------------------------------------------ lines */

static bool is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	}
	return true;
}

/* The first non-blank line decides: '{' starts a JSON Lines file. */
static void detect_format(struct reader *rd, const char *line, size_t len)
{
	size_t i = 0;

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	rd->format = i < len && line[i] == '{' ? FORMAT_JSON : FORMAT_LEGACY;
}

static void read_line(struct reader *rd, const char *line, size_t len)
{
	struct record rec;

	rd->lineno++;
	rd->p->stats.lines++;
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0 || (rd->format == FORMAT_JSON && is_blank(line, len)))
		return;
	if (memchr(line, '\0', len)) {
		bad_line(rd, "NUL byte in line");
		return;
	}
	if (rd->format == FORMAT_UNKNOWN)
		detect_format(rd, line, len);
	if (rd->format == FORMAT_JSON) {
		read_json_line(rd, line, len);
		return;
	}
	if (split_record(rd, line, len, &rec))
		dispatch_record(rd, &rec);
}

/* ------------------------------------------------------------ entry points */

void causal_profile_init(struct causal_profile *p)
{
	memset(p, 0, sizeof(*p));
}

void causal_profile_free(struct causal_profile *p)
{
	free(p->runs);
	free(p->experiments);
	free(p->deltas);
	free(p->points);
	free(p->samples);
	for (size_t i = 0; i < p->n_diagnostics; i++)
		free(p->diagnostics[i]);
	if (p->tables) {
		string_table_free(&p->tables->strings);
		u64_map_free(&p->tables->points);
		u64_map_free(&p->tables->samples);
		free(p->tables);
	}
	causal_profile_init(p);
}

static int reader_begin(struct reader *rd, struct causal_profile *p, const char *name,
			const struct causal_read_options *opt)
{
	memset(rd, 0, sizeof(*rd));
	rd->p = p;
	rd->name = name ? name : "(profile)";
	rd->run = NONE;
	rd->experiment = NONE;
	rd->strict = opt && opt->strict;
	p->error[0] = '\0';
	if (!p->tables) {
		p->tables = calloc(1, sizeof(*p->tables));
		if (!p->tables) {
			set_error(p, "%s: out of memory", rd->name);
			return -1;
		}
	}
	rd->source = string_table_intern(&p->tables->strings, rd->name, strlen(rd->name));
	if (rd->source == UINT32_MAX) {
		set_error(p, "%s: out of memory", rd->name);
		return -1;
	}
	return 0;
}

static int reader_end(struct reader *rd)
{
	free(rd->scratch);
	free(rd->json_line);
	return rd->failed ? -1 : 0;
}

int causal_profile_read_buffer(struct causal_profile *p, const char *buf, size_t len,
			       const char *name, const struct causal_read_options *opt)
{
	struct reader rd;
	const char *end = buf + len;

	if (reader_begin(&rd, p, name, opt))
		return -1;
	while (buf < end && !rd.failed) {
		const char *nl = memchr(buf, '\n', (size_t)(end - buf));
		size_t n = nl ? (size_t)(nl - buf) : (size_t)(end - buf);

		read_line(&rd, buf, n);
		buf += n + (nl ? 1 : 0);
	}
	return reader_end(&rd);
}

int causal_profile_read_stream(struct causal_profile *p, FILE *in, const char *name,
			       const struct causal_read_options *opt)
{
	struct reader rd;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (reader_begin(&rd, p, name, opt))
		return -1;
	while (!rd.failed && (n = getline(&line, &cap, in)) >= 0) {
		size_t len = (size_t)n;

		if (len > 0 && line[len - 1] == '\n')
			len--;
		read_line(&rd, line, len);
	}
	if (!rd.failed && ferror(in)) {
		set_error(p, "%s:%llu: read error: %s", rd.name, (unsigned long long)rd.lineno + 1,
			  strerror(errno));
		rd.failed = true;
	}
	free(line);
	return reader_end(&rd);
}

int causal_profile_read_file(struct causal_profile *p, const char *path,
			     const struct causal_read_options *opt)
{
	FILE *in = fopen(path, "r");
	int ret;

	if (!in) {
		set_error(p, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	ret = causal_profile_read_stream(p, in, path, opt);
	fclose(in);
	return ret;
}

const char *causal_profile_string(const struct causal_profile *p, uint32_t id)
{
	return p->tables ? string_table_text(&p->tables->strings, id) : "";
}

uint32_t causal_profile_find_string(const struct causal_profile *p, const char *text)
{
	return p->tables ? string_table_find(&p->tables->strings, text, strlen(text)) : UINT32_MAX;
}

static int64_t add_saturated(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

int64_t causal_profile_line_samples(const struct causal_profile *p, uint32_t location)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		if (p->samples[i].location == location)
			sum = add_saturated(sum, p->samples[i].count);
	}
	return sum;
}

int64_t causal_profile_total_runtime(const struct causal_profile *p)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->n_runs; i++) {
		if (p->runs[i].has_runtime)
			sum = add_saturated(sum, p->runs[i].runtime_ns);
	}
	return sum;
}

int64_t causal_run_effective_runtime(const struct causal_run *run)
{
	if (run->delay_ns > 0 && run->delay_ns < run->runtime_ns)
		return run->runtime_ns - run->delay_ns;
	return run->runtime_ns;
}

int64_t causal_profile_line_runtime(const struct causal_profile *p, uint32_t location)
{
	bool *in = calloc(p->n_runs ? p->n_runs : 1, sizeof(*in));
	int64_t sum = 0;

	if (!in)
		return causal_profile_total_runtime(p);
	for (size_t i = 0; i < p->n_samples; i++) {
		if (p->samples[i].location == location)
			in[p->samples[i].run] = true;
	}
	for (size_t i = 0; i < p->n_experiments; i++) {
		if (p->experiments[i].selected == location)
			in[p->experiments[i].run] = true;
	}
	for (size_t i = 0; i < p->n_runs; i++) {
		if (in[i] && p->runs[i].has_runtime)
			sum = add_saturated(sum, causal_run_effective_runtime(&p->runs[i]));
	}
	free(in);
	return sum;
}
