// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Struct layouts for `lever layout refs --all-structs`, checked against
 * pahole (tests/e2e/layout_static_pahole.sh): every kind of member the
 * DWARF reader must describe as C declares it — holes, nested and
 * anonymous members, arrays of structs, function pointers, qualifiers, a
 * flexible array member, an over-aligned member — and the kinds the record
 * format refuses (bitfields, packed, unions), which must be left out with a
 * reason. Each type has a global so that the compiler emits its DWARF.
 */
#include <stddef.h>
#include <stdint.h>

struct point {
	int x, y;
};

struct holes {
	char c;
	long l;
	short s;
	double d;
	char tail;
};

struct nested {
	struct point origin;
	struct point path[4];
	const char *const label;
	volatile int flags;
	int grid[3][2];
	long double ld;
};

struct with_anon {
	int kind;
	union {
		int i;
		float f;
	};
	struct {
		short a, b;
	};
	void *next;
};

typedef struct {
	uint64_t id;
	uint8_t tag;
} handle_t;

struct callbacks {
	int (*on_read)(void *ctx, const char *buf, size_t len);
	void (*on_close)(void);
	char (*rows)[16];
	struct callbacks *self;
};

struct flex {
	size_t len;
	unsigned char data[];
};

struct aligned_member {
	int a;
	int hot __attribute__((aligned(64)));
	int b;
};

struct bits {
	unsigned ready : 1;
	unsigned count : 7;
	int value;
};

struct __attribute__((packed)) packed {
	char c;
	int i;
};

union number {
	int i;
	double d;
};

struct point g_point;
struct holes g_holes;
struct nested g_nested = {.label = "x"};
struct with_anon g_with_anon;
handle_t g_handle;
struct callbacks g_callbacks;
struct flex *g_flex;
struct aligned_member g_aligned;
struct bits g_bits;
struct packed g_packed;
union number g_number;

int main(void)
{
	struct local_only {
		int a;
		char b[3];
	} l = {1, "ab"};

	return l.a + g_point.x;
}
