/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The uprobe fallback (spec/freud.md §7.5 (c)): work in progress, see
 * doc/annotate-record.md. Until it lands, asking for it is refused clearly.
 */
#include <stdio.h>

#include "annotate/runtime/runtime.h"

int ann_probe_uprobe(struct ann_probe *p, const struct ann_module *m, char *why, size_t why_size)
{
	(void)p;
	(void)m;
	snprintf(why, why_size, "the uprobe backend is not in this build");
	return -1;
}

void ann_uprobe_finish(void)
{
}
