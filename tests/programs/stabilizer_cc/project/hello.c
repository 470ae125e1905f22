/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A tiny project built through CC=lever-cc (make) and CMake. */
#include <stdio.h>

#include "util.h"

int main(void)
{
	printf("hello from a lever cc build: %d\n", triangle(100));
	return 0;
}
