/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reader for causal profiles in Coz's legacy tab-separated format (lever
 * profile format 1; doc/formats/profile.md):
 *
 *   RECORD<TAB>key=value<TAB>key=value...
 *
 * and, through profile_jsonl.c, in Coz's JSON Lines format. Which format a
 * file is in is decided by its first non-blank line.
 *
 * Point records belong to the experiment before them in their run; `startup`
 * begins a run, and a record tagged run=ID belongs to that run wherever it
 * lies (runs appending to one file at once interleave). Unknown record types
 * and unknown keys are skipped, so newer writers stay readable. Bad lines are
 * skipped and reported as FILE:LINE: message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causal/profile_reader.h"

/* ------------------------------------------------------------ records */

/*
 * lever's header fields: version (under version_key), sampler, period (ns) and
 * seed, from a `lever` record or from extra keys of `startup`.
 */
static bool read_lever_fields(struct reader *rd, const struct record *rec, const char *type,
			      const char *version_key, struct causal_run *run)
{
	const struct field *sampler = profile_find_field(rec, PROFILE_KEY_SAMPLER);
	const struct field *period = profile_find_field(rec, PROFILE_KEY_PERIOD);
	const struct field *seed = profile_find_field(rec, PROFILE_KEY_SEED);
	uint64_t version, period_ns = 0, seed_value = 0;

	if (!profile_get_unsigned(rd, rec, type, version_key, &version))
		return false;
	if (period && !profile_get_unsigned(rd, rec, type, PROFILE_KEY_PERIOD, &period_ns))
		return false;
	if (seed && !profile_get_unsigned(rd, rec, type, PROFILE_KEY_SEED, &seed_value))
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

/* The run the current record's tag names is the current run's from here on. */
static bool tag_current_run(struct reader *rd)
{
	if (u64_map_put(&rd->run_tags, rd->tag, (uint32_t)rd->run)) {
		profile_out_of_memory(rd);
		return false;
	}
	return true;
}

static void read_startup(struct reader *rd, const struct record *rec)
{
	struct causal_run scratch = {0};
	bool lever = profile_find_field(rec, PROFILE_KEY_LEVER) != NULL;
	uint64_t t;

	if (!profile_get_unsigned(rd, rec, PROFILE_RECORD_STARTUP, PROFILE_KEY_TIME, &t))
		return;
	/* validate lever's keys before starting the run, so a bad line changes nothing */
	if (lever &&
	    !read_lever_fields(rd, rec, PROFILE_RECORD_STARTUP, PROFILE_KEY_LEVER, &scratch))
		return;
	if (profile_start_run(rd, true, t) == NONE ||
	    (rd->tag != UINT32_MAX && !tag_current_run(rd)))
		return;
	if (lever)
		read_lever_fields(rd, rec, PROFILE_RECORD_STARTUP, PROFILE_KEY_LEVER,
				  &rd->p->runs[rd->run]);
	rd->p->stats.records++;
}

static void read_lever_header(struct reader *rd, const struct record *rec)
{
	struct causal_run scratch = {0};
	struct causal_run *run;

	if (!read_lever_fields(rd, rec, PROFILE_RECORD_LEVER, PROFILE_KEY_VERSION, &scratch))
		return;
	run = profile_current_run(rd);
	if (!run)
		return;
	read_lever_fields(rd, rec, PROFILE_RECORD_LEVER, PROFILE_KEY_VERSION, run);
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

	e.selected = profile_get_string(rd, rec, PROFILE_RECORD_EXPERIMENT, PROFILE_KEY_SELECTED);
	if (e.selected == UINT32_MAX || !profile_get_speedup(rd, rec, &e.speedup, &e.speedup_pct) ||
	    !profile_get_signed(rd, rec, PROFILE_RECORD_EXPERIMENT, PROFILE_KEY_DURATION,
				&e.duration))
		goto bad;
	if (profile_find_field(rec, PROFILE_KEY_SELECTED_SAMPLES) &&
	    !profile_get_count(rd, rec, PROFILE_RECORD_EXPERIMENT, PROFILE_KEY_SELECTED_SAMPLES,
			       &e.selected_samples))
		goto bad;
	/* load amplification (AMP): the run's arrival speedup and what arrived */
	if (profile_find_field(rec, PROFILE_KEY_ARRIVAL_SPEEDUP)) {
		if (!profile_get_unsigned(rd, rec, PROFILE_RECORD_EXPERIMENT,
					  PROFILE_KEY_ARRIVAL_SPEEDUP, &e.arrival_speedup_ns))
			goto bad;
		e.has_arrival_speedup = true;
	}
	if (profile_find_field(rec, PROFILE_KEY_ARRIVALS) &&
	    !profile_get_count(rd, rec, PROFILE_RECORD_EXPERIMENT, PROFILE_KEY_ARRIVALS,
			       &e.arrivals))
		goto bad;
	if (profile_find_field(rec, PROFILE_KEY_ARRIVAL_THREADS) &&
	    !profile_get_count(rd, rec, PROFILE_RECORD_EXPERIMENT, PROFILE_KEY_ARRIVAL_THREADS,
			       &e.arrival_threads))
		goto bad;
	run = profile_current_run(rd);
	if (!run)
		return;
	if (e.duration <= 0) {
		p->stats.dropped_duration++;
		rd->experiment = DROPPED;
		return;
	}
	if (GROW(p->experiments, p->n_experiments, p->cap_experiments)) {
		profile_out_of_memory(rd);
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
	uint32_t name = profile_get_string(rd, rec, type, PROFILE_KEY_NAME);

	if (name == UINT32_MAX || !profile_get_count(rd, rec, type, PROFILE_KEY_DELTA, &d.delta))
		return;
	e = profile_point_owner(rd);
	if (!e)
		return;
	d.point = profile_find_point(rd, name, CAUSAL_POINT_THROUGHPUT);
	if (d.point != UINT32_MAX)
		profile_add_delta(rd, e, &d);
}

static void read_latency(struct reader *rd, const struct record *rec)
{
	struct causal_delta d = {0};
	struct causal_experiment *e;
	uint32_t name = profile_get_string(rd, rec, PROFILE_RECORD_LATENCY, PROFILE_KEY_NAME);

	if (name == UINT32_MAX ||
	    !profile_get_count(rd, rec, PROFILE_RECORD_LATENCY, PROFILE_KEY_ARRIVALS,
			       &d.arrivals) ||
	    !profile_get_count(rd, rec, PROFILE_RECORD_LATENCY, PROFILE_KEY_DEPARTURES,
			       &d.departures) ||
	    !profile_get_signed(rd, rec, PROFILE_RECORD_LATENCY, PROFILE_KEY_DIFFERENCE,
				&d.difference))
		return;
	/* lever's time-averaged L x duration (absent in Coz's) */
	if (profile_find_field(rec, PROFILE_KEY_IN_FLIGHT_NS)) {
		if (!profile_get_signed(rd, rec, PROFILE_RECORD_LATENCY, PROFILE_KEY_IN_FLIGHT_NS,
					&d.in_flight_ns))
			return;
		d.has_in_flight = true;
	}
	e = profile_point_owner(rd);
	if (!e)
		return;
	d.point = profile_find_point(rd, name, CAUSAL_POINT_LATENCY);
	if (d.point != UINT32_MAX)
		profile_add_delta(rd, e, &d);
}

static void read_runtime(struct reader *rd, const struct record *rec)
{
	struct causal_run *run;
	int64_t t;

	int64_t delay = 0;

	if (!profile_get_count(rd, rec, PROFILE_RECORD_RUNTIME, PROFILE_KEY_TIME, &t))
		return;
	/* lever's: delay the experiments inserted so far (absent in Coz's) */
	if (profile_find_field(rec, PROFILE_KEY_DELAY) &&
	    !profile_get_count(rd, rec, PROFILE_RECORD_RUNTIME, PROFILE_KEY_DELAY, &delay))
		return;
	run = profile_current_run(rd);
	if (!run)
		return;
	run->has_runtime = true;
	run->runtime_ns = t; /* cumulative: the latest wins */
	if (!profile_find_field(rec, PROFILE_KEY_DELAY))
		delay =
		    run->estimated_delay_ns < 9.2e18 ? (int64_t)run->estimated_delay_ns : INT64_MAX;
	run->delay_ns = delay;
	rd->p->stats.records++;
}

static void read_samples(struct reader *rd, const struct record *rec)
{
	struct causal_profile *p = rd->p;
	uint32_t location =
	    profile_get_string(rd, rec, PROFILE_RECORD_SAMPLES, PROFILE_KEY_LOCATION);
	uint64_t key;
	uint32_t idx;
	int64_t count;

	if (location == UINT32_MAX ||
	    !profile_get_count(rd, rec, PROFILE_RECORD_SAMPLES, PROFILE_KEY_COUNT, &count))
		return;
	if (!profile_current_run(rd))
		return;
	key = (uint64_t)rd->run << 32 | location;
	idx = u64_map_get(&p->tables->samples, key);
	if (idx == UINT32_MAX) {
		if (GROW(p->samples, p->n_samples, p->cap_samples) ||
		    p->n_samples >= UINT32_MAX - 1 ||
		    u64_map_put(&p->tables->samples, key, (uint32_t)p->n_samples)) {
			profile_out_of_memory(rd);
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

	if (!profile_get_unsigned(rd, rec, PROFILE_RECORD_SHUTDOWN, PROFILE_KEY_TIME, &t))
		return;
	if (profile_find_field(rec, PROFILE_KEY_SAMPLES) &&
	    !profile_get_count(rd, rec, PROFILE_RECORD_SHUTDOWN, PROFILE_KEY_SAMPLES, &samples))
		return;
	run = profile_current_run(rd);
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
	profile_add_diagnostic(rd->p, text);
}

/*
 * A record tagged run=ID belongs to that run wherever it lies: runs appending
 * to one file at once interleave their records. An untagged record (Coz's,
 * lever's before the tag) belongs to the run of the last startup.
 */
static bool enter_tagged_run(struct reader *rd, const struct record *rec)
{
	const struct field *f = profile_find_field(rec, PROFILE_KEY_RUN);
	uint32_t run;

	rd->tag = UINT32_MAX;
	if (!f || f->value_len == 0)
		return true;
	rd->tag = string_table_intern(&rd->p->tables->strings, f->value, f->value_len);
	if (rd->tag == UINT32_MAX) {
		profile_out_of_memory(rd);
		return false;
	}
	if (profile_type_is(rec, PROFILE_RECORD_STARTUP))
		return true; /* read_startup starts and tags the run */
	run = u64_map_get(&rd->run_tags, rd->tag);
	if (run != UINT32_MAX) {
		profile_select_run(rd, run);
		return true;
	}
	/* its startup is not in this file (cut off, or edited out): a run of its own */
	return profile_start_run(rd, false, 0) != NONE && tag_current_run(rd);
}

void profile_dispatch_record(struct reader *rd, const struct record *rec)
{
	if (!enter_tagged_run(rd, rec))
		return;
	if (profile_type_is(rec, PROFILE_RECORD_STARTUP))
		read_startup(rd, rec);
	else if (profile_type_is(rec, PROFILE_RECORD_EXPERIMENT))
		read_experiment(rd, rec);
	else if (profile_type_is(rec, PROFILE_RECORD_THROUGHPUT))
		read_throughput(rd, rec, PROFILE_RECORD_THROUGHPUT);
	else if (profile_type_is(rec, PROFILE_RECORD_PROGRESS))
		read_throughput(rd, rec, PROFILE_RECORD_PROGRESS);
	else if (profile_type_is(rec, PROFILE_RECORD_LATENCY))
		read_latency(rd, rec);
	else if (profile_type_is(rec, PROFILE_RECORD_SAMPLES))
		read_samples(rd, rec);
	else if (profile_type_is(rec, PROFILE_RECORD_RUNTIME))
		read_runtime(rd, rec);
	else if (profile_type_is(rec, PROFILE_RECORD_SHUTDOWN))
		read_shutdown(rd, rec);
	else if (profile_type_is(rec, PROFILE_RECORD_LEVER))
		read_lever_header(rd, rec);
	else
		unknown_record(rd, rec);
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

/*
 * Every record a writer finishes ends with a newline, so a last line without
 * one was cut while being written (a full disk, a killed run): its last field
 * may read as a smaller number, so it is dropped whatever it looks like.
 */
static void read_line(struct reader *rd, const char *line, size_t len, bool ended)
{
	struct record rec;

	rd->lineno++;
	rd->p->stats.lines++;
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0 || (rd->format == FORMAT_JSON && is_blank(line, len)))
		return;
	if (!ended) {
		rd->p->stats.cut_records++;
		profile_bad_line(rd, "the last record has no end of line (the profile was cut "
				     "while being written): skipped");
		return;
	}
	if (memchr(line, '\0', len)) {
		profile_bad_line(rd, "NUL byte in line");
		return;
	}
	if (rd->format == FORMAT_UNKNOWN)
		detect_format(rd, line, len);
	if (rd->format == FORMAT_JSON) {
		profile_read_json_line(rd, line, len);
		return;
	}
	if (profile_split_record(rd, line, len, &rec))
		profile_dispatch_record(rd, &rec);
}

/* ------------------------------------------------------------ entry points */
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
			profile_set_error(p, "%s: out of memory", rd->name);
			return -1;
		}
	}
	rd->source = string_table_intern(&p->tables->strings, rd->name, strlen(rd->name));
	if (rd->source == UINT32_MAX) {
		profile_set_error(p, "%s: out of memory", rd->name);
		return -1;
	}
	return 0;
}

static int reader_end(struct reader *rd)
{
	u64_map_free(&rd->run_tags);
	free(rd->run_experiment);
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

		read_line(&rd, buf, n, nl != NULL);
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
		bool ended = len > 0 && line[len - 1] == '\n';

		read_line(&rd, line, len - ended, ended);
	}
	if (!rd.failed && ferror(in)) {
		profile_set_error(p, "%s:%llu: read error: %s", rd.name,
				  (unsigned long long)rd.lineno + 1, strerror(errno));
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
		profile_set_error(p, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	ret = causal_profile_read_stream(p, in, path, opt);
	fclose(in);
	return ret;
}
