// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Ground truth for the static reference finder (`lever layout refs`,
 * spec autocpa.md §8.5 step 8): each function named
 * touch__S__F[__S__F...] accesses exactly the struct fields its name lists,
 * and nothing else of a struct, so the expected {function → struct.field}
 * set comes from the source, at every optimisation level and compiler
 * (tests/e2e/layout_static_refs.sh, bench/layout_static/). The functions
 * are external and noinline: the compiler may not move their accesses into
 * a caller. They cover parameters, pointer chasing, loops over lists and
 * arrays of structs, globals, nested structs, returned pointers,
 * read-modify-write and structs on the stack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TOUCH __attribute__((noinline))

struct node {
	struct node *next;
	long key;
	int value;
	char tag;
};

struct point {
	int x, y, z;
};

struct vec2 {
	double dx, dy;
};

struct object {
	int id;
	struct vec2 pos;
	struct point *points;
	unsigned npoints;
	struct node *list;
};

struct config {
	int threshold;
	long limit;
	char name[16];
	unsigned flags;
};

struct counter {
	unsigned long hits;
	unsigned long misses;
	struct counter *parent;
};

struct msg {
	int len;
	int kind;
	char body[]; /* flexible array member */
};

struct config g_config = {3, 100, "cfg", 1};
struct counter g_counters[4];
struct node *g_head;
struct node *g_buckets[8];

struct table {
	struct node **slots;
	unsigned size;
};
struct object g_object;

/* parameters: one field read or written */
TOUCH long touch__node__key(const struct node *n)
{
	return n->key;
}

TOUCH int touch__node__value(const struct node *n)
{
	return n->value;
}

TOUCH void touch__node__tag(struct node *n, char t)
{
	n->tag = t;
}

TOUCH int touch__point__y(const struct point *p)
{
	return p->y;
}

TOUCH void touch__point__z(struct point *p, int v)
{
	p->z = v;
}

TOUCH double touch__vec2__dy(const struct vec2 *v)
{
	return v->dy;
}

TOUCH unsigned touch__object__npoints(const struct object *o)
{
	return o->npoints;
}

TOUCH void touch__counter__misses(struct counter *c)
{
	c->misses++;
}

/* pointer chasing: a loaded pointer field types the next access */
TOUCH long touch__node__next__node__key(const struct node *n)
{
	return n->next->next->key;
}

TOUCH int touch__object__list__node__value(const struct object *o)
{
	return o->list->value;
}

TOUCH unsigned long touch__counter__parent__counter__hits(const struct counter *c)
{
	return c->parent->hits;
}

/* loops over a list */
TOUCH long touch__node__next__node__key_sum(const struct node *n)
{
	long s = 0;

	for (; n; n = n->next)
		s += n->key;
	return s;
}

TOUCH int touch__node__next__node__tag_count(const struct node *n, char t)
{
	int c = 0;

	while (n) {
		c += n->tag == t;
		n = n->next;
	}
	return c;
}

/* arrays of structs: indexed, and walked with a pointer */
TOUCH long touch__point__x_indexed(const struct point *p, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += p[i].x;
	return s;
}

TOUCH long touch__point__z_walk(const struct point *p, const struct point *end)
{
	long s = 0;

	for (; p < end; p++)
		s += p->z;
	return s;
}

TOUCH int touch__point__y_at(const struct point *p, long i)
{
	return p[i].y;
}

TOUCH double touch__vec2__dx_third(const struct vec2 *v)
{
	return v[2].dx;
}

/* globals */
TOUCH int touch__config__threshold(void)
{
	return g_config.threshold;
}

TOUCH void touch__config__limit(long v)
{
	g_config.limit = v;
}

TOUCH unsigned long touch__counter__hits_global(int i)
{
	return g_counters[i].hits;
}

TOUCH long touch__node__key_global(void)
{
	return g_head->key;
}

TOUCH unsigned touch__object__npoints_global(void)
{
	return g_object.npoints;
}

/* tables of struct pointers (S **, S *[N]), as hash tables keep them */
TOUCH long touch__node__key_table(struct node **tab, int i)
{
	return tab[i]->key;
}

TOUCH int touch__node__value_bucket(int i)
{
	return g_buckets[i & 7]->value;
}

TOUCH long touch__table__slots__node__key(const struct table *t, unsigned h)
{
	return t->slots[h % 8]->key;
}

/* past the fixed part of a struct is its flexible array member */
TOUCH int touch__msg__body_at(const struct msg *m, int i)
{
	return m->body[i];
}

TOUCH int touch__msg__kind(const struct msg *m)
{
	return m->kind;
}

/*
 * Register pressure across an indirect call (no interprocedural register
 * allocation): some loaded pointers are spilled to the frame and reloaded.
 */
static void opaque(void)
{
}

void (*volatile g_opaque)(void) = opaque;

TOUCH long touch__node__next__node__value_spill(struct node *a, struct node *b, struct node *c,
						struct node *d, struct node *e, struct node *f,
						struct node *g)
{
	struct node *an = a->next, *bn = b->next, *cn = c->next, *dn = d->next;
	struct node *en = e->next, *fn = f->next, *gn = g->next;

	g_opaque();
	return an->value + bn->value + cn->value + dn->value + en->value + fn->value + gn->value;
}

/* a void * context converted to a struct pointer */
TOUCH int touch__point__y_void(void *ctx)
{
	const struct point *p = ctx;

	return p->y;
}

/* nested struct members: the outer member and the inner field */
TOUCH double touch__object__pos__vec2__dx(const struct object *o)
{
	return o->pos.dx;
}

TOUCH void touch__object__pos__vec2__dy(struct object *o, double v)
{
	o->pos.dy = v;
}

/* a pointer field to an array of structs */
TOUCH int touch__object__points__point__x(const struct object *o, unsigned i)
{
	return o->points[i].x;
}

/* a returned pointer types the access after the call */
TOUCH struct node *make_node(long key)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n)
		abort();
	n->key = key;
	return n;
}

TOUCH int touch__node__value_returned(long key)
{
	struct node *n = make_node(key + 1);
	int v;

	v = n->value;
	free(n);
	return v;
}

/* a struct on the stack (in memory at -O0), filled field by field */
TOUCH int touch__point__x__point__y_copy(const struct point *q)
{
	struct point p;

	p.x = q->x;
	p.y = q->y;
	return p.x * p.y;
}

/* two structs in one function */
TOUCH long touch__node__key__config__limit(const struct node *n)
{
	return n->key > g_config.limit ? n->key : g_config.limit;
}

static struct node *build_list(int n)
{
	struct node *head = NULL;

	for (int i = 0; i < n; i++) {
		struct node *e = make_node(i);

		e->next = head;
		e->value = i * 2;
		e->tag = (char)('a' + i % 26);
		head = e;
	}
	return head;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	struct point pts[8] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
	struct vec2 vs[4] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
	struct counter root = {0}, child = {.parent = &root};
	struct table table = {.slots = g_buckets, .size = 8};
	struct msg *m = calloc(1, sizeof(*m) + 16);
	long acc = 0;

	g_head = build_list(n > 3 ? n : 3);
	g_object = (struct object){.id = 1, .points = pts, .npoints = 8, .list = g_head};
	for (int i = 0; i < 8; i++)
		g_buckets[i] = g_head;
	for (int round = 0; round < 10; round++) {
		touch__node__tag(g_head, 'z');
		touch__point__z(pts, round);
		touch__counter__misses(&child);
		touch__config__limit(round * 10);
		touch__object__pos__vec2__dy(&g_object, round);
		acc += touch__node__key(g_head) + touch__node__value(g_head) + touch__point__y(pts);
		acc += (long)touch__vec2__dy(vs) + touch__object__npoints(&g_object);
		acc += touch__node__next__node__key(g_head) +
		       touch__object__list__node__value(&g_object);
		acc += (long)touch__counter__parent__counter__hits(&child);
		acc += touch__node__next__node__key_sum(g_head) +
		       touch__node__next__node__tag_count(g_head, 'a');
		acc += touch__point__x_indexed(pts, 8) + touch__point__z_walk(pts, pts + 8);
		acc += touch__point__y_at(pts, round % 8) + (long)touch__vec2__dx_third(vs);
		acc += touch__config__threshold() + (long)touch__counter__hits_global(round % 4);
		acc += touch__node__key_global() + touch__object__npoints_global();
		acc += (long)touch__object__pos__vec2__dx(&g_object);
		acc += touch__object__points__point__x(&g_object, (unsigned)round % 8);
		acc += touch__node__value_returned(round);
		acc += touch__point__x__point__y_copy(pts + 1);
		acc += touch__node__key__config__limit(g_head);
		acc +=
		    touch__node__key_table(g_buckets, round % 8) + touch__node__value_bucket(round);
		acc += touch__table__slots__node__key(&table, (unsigned)round);
		acc += touch__point__y_void(pts);
		acc += touch__msg__body_at(m, round % 16) + touch__msg__kind(m);
		acc += touch__node__next__node__value_spill(g_head, g_head, g_head, g_head, g_head,
							    g_head, g_head);
	}
	/* a struct of the C library: referenced, but not the program's to reorder */
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		acc += ts.tv_nsec & 1;
	}
	free(m);
	printf("%ld\n", acc);
	return 0;
}
