/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Human-readable numbers: times, sizes, p-values. */
#include <math.h>
#include <stdio.h>

#include "report/report.h"
#include "stats/stats.h"

const char *report_time_unit(double seconds, double *scale)
{
	double a = fabs(seconds);

	if (!(a < 1.0) || a == 0.0 || isnan(a)) {
		*scale = 1.0;
		return "s";
	}
	if (a >= 1e-3) {
		*scale = 1e3;
		return "ms";
	}
	if (a >= 1e-6) {
		*scale = 1e6;
		return "us";
	}
	*scale = 1e9;
	return "ns";
}

char *report_format_time_in(double seconds, const char *unit, double scale, char *buf, size_t size)
{
	double v = seconds * scale, a = fabs(v);

	if (isnan(seconds))
		snprintf(buf, size, "n/a");
	else if (a >= 1e5 || (a > 0 && a < 1e-3))
		/* beyond the units (hours of seconds, fractions of a ns): digits, not zeros */
		snprintf(buf, size, "%.4g %s", v, unit);
	else
		snprintf(buf, size, "%.*f %s", a >= 100 ? 1 : (a >= 10 ? 2 : 3), v, unit);
	return buf;
}

char *report_format_time(double seconds, char *buf, size_t size)
{
	double scale;
	const char *unit = report_time_unit(seconds, &scale);

	return report_format_time_in(seconds, unit, scale, buf, size);
}

char *report_format_bytes(double bytes, char *buf, size_t size)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	size_t u = 0;

	if (isnan(bytes)) {
		snprintf(buf, size, "n/a");
		return buf;
	}
	while (fabs(bytes) >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
		bytes /= 1024.0;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
	return buf;
}

char *report_format_p(double p, char *buf, size_t size)
{
	return stats_format_p(p, buf, size);
}
