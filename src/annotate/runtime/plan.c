/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading the plan that `lever annotate record` wrote
 * (doc/formats/annotate-plan.md), once at start-up: the record to append to,
 * the metrics, the rate, the probe mechanism, the feature programs functions
 * share (the globals of a compilation unit), and per probe its module, the
 * function's file address and size, its symbol index in the record and its
 * feature program (struct ann_op, features.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/runtime/branches.h"
#include "annotate/runtime/runtime.h"

static int hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A feature program: n_ops * sizeof(struct ann_op) bytes as hex digits. */
static int parse_ops(struct ann_op **ops, uint32_t n_ops, const char *hex)
{
	size_t bytes = (size_t)n_ops * sizeof(struct ann_op);
	uint8_t *out;

	if (strlen(hex) != 2 * bytes)
		return -1;
	*ops = malloc(bytes ? bytes : 1);
	out = (uint8_t *)*ops;
	if (!out)
		return -1;
	for (size_t i = 0; i < bytes; i++) {
		int hi = hex_nibble(hex[2 * i]), lo = hex_nibble(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static const char *const probe_names[] = {"auto", "sled", "live", "uprobe", NULL};

static int parse_line(struct ann_plan *plan, char *line)
{
	char word[32], text[130];
	unsigned a, b, c, d;
	unsigned long long x, y, z;
	int n = 0;

	if (sscanf(line, "%31s%n", word, &n) != 1)
		return 0;
	line += n;
	while (*line == ' ')
		line++;
	if (strcmp(word, "record") == 0)
		return snprintf(plan->record, sizeof(plan->record), "%s", line) <
			       (int)sizeof(plan->record)
			   ? 0
			   : -1;
	if (strcmp(word, "metrics") == 0)
		return sscanf(line, "%u", &plan->metrics) == 1 ? 0 : -1;
	if (strcmp(word, "rate") == 0) {
		if (sscanf(line, "%u %llu", &a, &x) != 2)
			return -1;
		plan->rate_n = a;
		plan->period_ns = x * 1000000ull;
		return 0;
	}
	if (strcmp(word, "probe") == 0) {
		for (int i = 0; probe_names[i]; i++)
			if (strcmp(line, probe_names[i]) == 0) {
				plan->probe = (enum ann_probe_kind)i;
				return 0;
			}
		return -1;
	}
	if (strcmp(word, "module") == 0) {
		struct ann_module *m;

		if (sscanf(line, "%u %129s %n", &a, text, &n) != 2 || a != plan->n_modules)
			return -1;
		m = realloc(plan->modules, (a + 1) * sizeof(*m));
		if (!m)
			return -1;
		plan->modules = m;
		m += a;
		*m = (struct ann_module){0};
		if (strcmp(text, "-") != 0)
			memcpy(m->build_id, text, strlen(text) + 1); /* %129s: it fits */
		m->path = strdup(line + n);
		plan->n_modules++;
		return m->path ? 0 : -1;
	}
	if (strcmp(word, "function") == 0) {
		struct ann_probe *p;

		if (sscanf(line, "%u %u %llx %llx %u %n", &a, &b, &x, &y, &c, &n) != 5 ||
		    b >= plan->n_modules || c > ANN_MAX_FEATURES)
			return -1;
		p = realloc(plan->probes, (plan->n_probes + 1) * sizeof(*p));
		if (!p)
			return -1;
		plan->probes = p;
		p += plan->n_probes++;
		memset(p, 0, sizeof(*p));
		p->symbol = a;
		p->module = b;
		p->addr = x;
		p->size = y;
		p->n_features = c;
		p->name = strdup(line + n);
		return p->name ? 0 : -1;
	}
	if (strcmp(word, "ops") == 0) {
		struct ann_probe *p = plan->n_probes ? &plan->probes[plan->n_probes - 1] : NULL;

		if (!p || sscanf(line, "%u %n", &d, &n) != 1 || p->ops)
			return -1;
		p->n_ops = d;
		return parse_ops(&p->ops, p->n_ops, line + n);
	}
	if (strcmp(word, "branch") == 0) {
		struct ann_probe *p = plan->n_probes ? &plan->probes[plan->n_probes - 1] : NULL;
		struct ann_branch *br;
		long long target;

		if (!p || sscanf(line, "%llx %u %u %lld", &x, &a, &b, &target) != 4 || a == 0 ||
		    a > 15 || b >= ANN_BR_N_CONDS || x >= p->size || a > p->size - x ||
		    p->n_branches >= ANN_MAX_BRANCHES)
			return -1;
		br = realloc(p->branches, (p->n_branches + 1) * sizeof(*br));
		if (!br)
			return -1;
		p->branches = br;
		br[p->n_branches] = (struct ann_branch){.offset = x,
							.target = target,
							.len = (uint8_t)a,
							.cond = (uint8_t)b,
							.index = p->n_branches};
		p->n_branches++;
		return 0;
	}
	if (strcmp(word, "globals") == 0) {
		struct ann_program *g;
		struct ann_op *ops = NULL;

		if (sscanf(line, "%u %u %n", &a, &d, &n) != 2 || a != plan->n_shared ||
		    plan->n_probes)
			return -1; /* numbered in order, before the functions */
		g = realloc(plan->shared, (a + 1) * sizeof(*g));
		if (!g)
			return -1;
		plan->shared = g;
		if (parse_ops(&ops, d, line + n)) {
			free(ops);
			return -1;
		}
		g[a] = (struct ann_program){.ops = ops, .n_ops = d};
		plan->n_shared++;
		return 0;
	}
	(void)z;
	return -1;
}

void ann_plan_free(struct ann_plan *plan)
{
	for (uint32_t i = 0; i < plan->n_modules; i++)
		free(plan->modules[i].path);
	for (uint32_t i = 0; i < plan->n_probes; i++) {
		free(plan->probes[i].name);
		free(plan->probes[i].ops);
		free(plan->probes[i].branches);
	}
	for (uint32_t i = 0; i < plan->n_shared; i++)
		free((void *)plan->shared[i].ops);
	free(plan->shared);
	free(plan->modules);
	free(plan->probes);
	memset(plan, 0, sizeof(*plan));
}

int ann_plan_load(const char *path, struct ann_plan *plan)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned version = 0, lineno = 1;
	int rc = 0;

	if (!f) {
		ann_msg("%s: %s", path, strerror(errno));
		return -1;
	}
	if (getline(&line, &cap, f) <= 0 || sscanf(line, ANN_PLAN_MAGIC " %u", &version) != 1 ||
	    version != ANN_PLAN_VERSION) {
		ann_msg("%s: not a version %d annotate plan", path, ANN_PLAN_VERSION);
		rc = -1;
	}
	while (!rc && (len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[len - 1] == '\n')
			line[len - 1] = 0;
		if (line[0] != '#' && parse_line(plan, line)) {
			ann_msg("%s:%u: malformed plan line", path, lineno);
			rc = -1;
		}
	}
	free(line);
	fclose(f);
	if (!rc && !plan->record[0]) {
		ann_msg("%s: the plan names no record", path);
		rc = -1;
	}
	if (rc)
		ann_plan_free(plan);
	else
		ann_features_set_shared(plan->shared, plan->n_shared);
	return rc;
}
