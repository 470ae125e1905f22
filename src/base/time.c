/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t time_monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t time_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

uint64_t time_sleep_ns(uint64_t ns)
{
	uint64_t start = time_monotonic_ns();
	struct timespec req = {.tv_sec = (time_t)(ns / NSEC_PER_SEC),
			       .tv_nsec = (long)(ns % NSEC_PER_SEC)};
	struct timespec rem;

	while (nanosleep(&req, &rem) != 0 && errno == EINTR)
		req = rem;
	return time_monotonic_ns() - start;
}

static bool scale_duration(double value, uint64_t unit_ns, uint64_t *out_ns)
{
	double ns = value * (double)unit_ns + 0.5;

	if (!(ns < 18446744073709551615.0)) /* converting a larger double is undefined */
		return false;
	*out_ns = (uint64_t)ns;
	return true;
}

bool time_parse_duration(const char *text, uint64_t default_unit_ns, uint64_t *out_ns)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {{"ns", 1}, {"us", NSEC_PER_USEC}, {"ms", NSEC_PER_MSEC}, {"s", NSEC_PER_SEC}};
	char *end;
	double value;

	if (!text || !*text)
		return false;
	errno = 0;
	value = strtod(text, &end);
	if (errno || end == text || value < 0 || value != value)
		return false;
	if (*end == '\0')
		return scale_duration(value, default_unit_ns, out_ns);
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (strcmp(end, units[i].suffix) == 0)
			return scale_duration(value, units[i].ns, out_ns);
	return false;
}
