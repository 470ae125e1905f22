/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The files lever's commands must not replace with a report unless forced
 * (--html, --export-*; issue 14 point 9): data a run produced, a causal
 * profile (doc/formats/profile.md), a samples file (doc/formats/samples.md)
 * or a layout record (doc/formats/layout-record.md).
 * Each format is recognised by its own room; this only names them for the
 * message of report_output_check().
 */
#include <string.h>

#include "causal/causal.h"
#include "cli/commands.h"
#include "stats/stats.h"

const char *cli_data_kind(const char *head)
{
	struct stats_samples samples = {0};
	char err[256];
	bool is_samples;

	if (causal_profile_sniff(head))
		return "a causal profile";
	if (strncmp(head, "lever-layout-record\t", 20) == 0)
		return "a layout record";
	is_samples =
	    stats_samples_read_buffer("", head, strlen(head), &samples, err, sizeof(err)) == 0 &&
	    samples.n > 0;
	stats_samples_free(&samples);
	return is_samples ? "samples" : NULL;
}
