/* SPDX-License-Identifier: GPL-3.0-or-later */
int triangle(int n);
