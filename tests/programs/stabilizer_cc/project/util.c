/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util.h"

int triangle(int n)
{
	return n == 0 ? 0 : n + triangle(n - 1);
}
