// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Named PMU events from sysfs, as `perf mem` opens them (spec autocpa.md
 * §8.9): /sys/bus/event_source/devices/PMU/type is the perf type,
 * events/NAME holds terms ("event=0xcd,umask=0x1,ldlat=3") and
 * format/TERM says which bits of config, config1 or config2 a term fills
 * ("config:0-7", "config1:0-15", "config:0-7,32-35"). Extra terms (the
 * user's ldlat) override the event's. The directory is a parameter so that
 * the unit tests run it on a synthetic sysfs tree: these machines have no
 * cpu/ PMU at all.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/layout.h"
#include "layout/fail.h"

/* The first line of dir/name into buf, without its newline; -1 if unreadable. */
static int read_line(const char *dir, const char *name, char *buf, size_t size)
{
	char path[4096];
	FILE *f;
	size_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -1;
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)size, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	return 0;
}

/* Deposit value into the bit ranges of a format ("config1:0-15,32"). */
static int apply_format(const char *format, uint64_t value, struct perf_event_attr *attr)
{
	const char *colon = strchr(format, ':');
	__u64 *word;
	const char *p;
	unsigned used = 0;

	if (!colon)
		return -1;
	if (strncmp(format, "config:", 7) == 0)
		word = &attr->config;
	else if (strncmp(format, "config1:", 8) == 0)
		word = &attr->config1;
	else if (strncmp(format, "config2:", 8) == 0)
		word = &attr->config2;
	else
		return -1;
	for (p = colon + 1; *p;) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p)
			return -1;
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			if (end == p + 1)
				return -1;
			p = end;
		}
		if (hi < lo || hi > 63)
			return -1;
		for (unsigned long b = lo; b <= hi; b++, used++) {
			if (used < 64 && (value >> used & 1))
				*word |= 1ull << b;
			else
				*word &= ~(1ull << b);
		}
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	/* a value wider than its field would be silently cut */
	return used < 64 && value >> used ? -1 : 0;
}

static int apply_terms(const char *pmu_dir, char *terms, struct perf_event_attr *attr, char *err,
		       size_t err_size)
{
	for (char *save = NULL, *term = strtok_r(terms, ",", &save); term;
	     term = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(term, '='), *end, format[256], file[300];
		uint64_t value = 1;

		if (eq) {
			*eq = '\0';
			errno = 0;
			value = strtoull(eq + 1, &end, 0);
			if (errno || end == eq + 1 || *end)
				return fail(err, err_size, "%s: term %s: '%s' is not a number",
					    pmu_dir, term, eq + 1);
		}
		snprintf(file, sizeof(file), "format/%s", term);
		if (read_line(pmu_dir, file, format, sizeof(format)))
			return fail(err, err_size, "%s: no format for term '%s'", pmu_dir, term);
		if (apply_format(format, value, attr))
			return fail(err, err_size, "%s: term %s=%llu does not fit format '%s'",
				    pmu_dir, term, (unsigned long long)value, format);
	}
	return 0;
}

int layout_pmu_event_attr(const char *pmu_dir, const char *event, const char *extra_terms,
			  struct perf_event_attr *attr, char *err, size_t err_size)
{
	char line[1024], file[300];
	unsigned long type;
	char *end;

	if (read_line(pmu_dir, "type", line, sizeof(line)))
		return fail(err, err_size, "%s: no such PMU", pmu_dir);
	type = strtoul(line, &end, 10);
	if (end == line || *end)
		return fail(err, err_size, "%s/type: '%s' is not a number", pmu_dir, line);
	attr->type = (uint32_t)type;
	attr->config = attr->config1 = attr->config2 = 0;
	if (event) {
		snprintf(file, sizeof(file), "events/%s", event);
		if (read_line(pmu_dir, file, line, sizeof(line)))
			return fail(err, err_size, "%s: no event %s", pmu_dir, event);
		if (apply_terms(pmu_dir, line, attr, err, err_size))
			return -1;
	}
	if (extra_terms && *extra_terms) {
		if (strlen(extra_terms) >= sizeof(line))
			return fail(err, err_size, "terms too long");
		strcpy(line, extra_terms);
		if (apply_terms(pmu_dir, line, attr, err, err_size))
			return -1;
	}
	return 0;
}
