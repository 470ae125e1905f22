/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever: the command-line entry point. Dispatches to one cmd_NAME() per
 * command, as listed in commands.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"

#ifndef LEVER_VERSION
#define LEVER_VERSION "unknown"
#endif

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

#define COMMAND_ENTRY(name, fn, summary) {name, fn, summary},
static const struct command commands[] = {LEVER_COMMANDS(COMMAND_ENTRY)};
#undef COMMAND_ENTRY

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	}
	return NULL;
}

static void print_usage(FILE *out)
{
	fprintf(out, "usage: lever COMMAND [OPTIONS] [ARGS]\n"
		     "       lever help [COMMAND]\n"
		     "       lever --version\n"
		     "\n"
		     "lever finds and proves performance improvements in native programs.\n"
		     "\n"
		     "commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "  %-10s %s\n", "help", "show this list, or the help of one command");
	fprintf(out, "\n"
		     "Run 'lever COMMAND --help' for a command's options.\n"
		     "Documentation: doc/lever.md and one page per command in doc/.\n");
}

static int run_command(const struct command *cmd, int argc, char **argv)
{
	return cmd->fn(argc, argv);
}

static int unknown_command(const char *name)
{
	fprintf(stderr, "lever: unknown command '%s'\n", name);
	fprintf(stderr, "Run 'lever help' for the list of commands.\n");
	return EXIT_USAGE;
}

static int cmd_help(int argc, char **argv)
{
	const struct command *cmd;
	char *help_argv[] = {NULL, "--help", NULL};

	if (argc < 2) {
		print_usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0) {
		print_usage(stdout);
		return 0;
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return unknown_command(argv[1]);
	help_argv[0] = (char *)cmd->name;
	return run_command(cmd, 2, help_argv);
}

/*
 * Called as lever-cc or lever-c++ (symlinks to lever, for CC=/CXX= in build
 * systems): the command that name stands for, or NULL.
 */
static int (*command_for_program_name(const char *argv0))(int argc, char **argv)
{
	const char *base = strrchr(argv0, '/');

	base = base ? base + 1 : argv0;
	if (strcmp(base, "lever-cc") == 0)
		return cmd_cc;
	if (strcmp(base, "lever-c++") == 0)
		return cmd_cxx;
	return NULL;
}

int main(int argc, char **argv)
{
	const struct command *cmd;
	const char *name;
	int (*as_named)(int argc, char **argv) = command_for_program_name(argv[0]);

	if (as_named)
		return as_named(argc, argv);
	if (argc < 2) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
		return cmd_help(1, argv + 1);
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
		printf("lever %s\n", LEVER_VERSION);
		return 0;
	}
	if (strcmp(name, "help") == 0)
		return cmd_help(argc - 1, argv + 1);
	if (name[0] == '-') {
		fprintf(stderr, "lever: unknown option '%s'\n", name);
		fprintf(stderr, "Run 'lever help' for usage.\n");
		return EXIT_USAGE;
	}
	cmd = find_command(name);
	if (!cmd)
		return unknown_command(name);
	return run_command(cmd, argc - 1, argv + 1);
}
