/*
 * operands.c - a number that begins with '-' is an operand, never an option: `wss PID -1` is an
 * invalid interval, not "invalid option -- '1'". No subcommand has a digit for a short option, so
 * getopt would only refuse such a word with a message about the wrong thing.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static struct {
	char **orig;	/* argv as given, to put the operands back in their order */
	int hidden;	/* negative numbers kept past the argc getopt is shown */
	bool done;	/* getopt said -1: the operands are in place */
} st;

/* "-1", "-0.5", "-2s": a word getopt would take for options but that reads as a negative number. */
static bool negative_number(const char *a)
{
	return a[0] == '-' && ((a[1] >= '0' && a[1] <= '9') || (a[1] == '.' && a[2] >= '0' && a[2] <= '9'));
}

/* Whether long option @a (after "--") takes the next word as its argument: exact, or a unique prefix. */
static bool long_takes_next(const struct option *lo, const char *a)
{
	const struct option *hit = NULL;
	size_t len = strlen(a);

	if (strchr(a, '='))
		return false;
	for (; lo && lo->name; lo++) {
		if (strncmp(lo->name, a, len))
			continue;
		if (strlen(lo->name) == len)
			return lo->has_arg == required_argument;
		if (hit)
			return false;	/* ambiguous: getopt refuses it */
		hit = lo;
	}
	return hit && hit->has_arg == required_argument;
}

/* Whether the short options of cluster @a (after "-") end in one that takes the next word. */
static bool short_takes_next(const char *shortopts, const char *a)
{
	const char *s;

	for (; *a; a++) {
		s = strchr(shortopts, *a);
		if (s && *a != ':' && s[1] == ':')
			return s[2] != ':' && !a[1];	/* required, and nothing attached */
	}
	return false;
}

/* Whether argv[i] is a negative number in an operand's place (not an option's argument, not after "--"). */
static bool *find_numbers(int argc, char **argv, const char *shortopts, const struct option *longopts, int *n)
{
	bool *mark = calloc((size_t)argc, sizeof(*mark));
	int i;

	*n = 0;
	for (i = 1; mark && i < argc && strcmp(argv[i], "--"); i++) {
		if (argv[i][0] != '-' || !argv[i][1])
			continue;
		if (negative_number(argv[i]))
			*n += mark[i] = true;
		else if (argv[i][1] == '-' ? long_takes_next(longopts, argv[i] + 2) :
					     short_takes_next(shortopts, argv[i] + 1))
			i++;
	}
	return mark;
}

/* Keep the negative numbers at the end, past what getopt is shown; the others keep their order. */
static void hide_numbers(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	bool *mark;
	int i, j = 1, k, n;

	free(st.orig);
	st.orig = NULL;
	st.hidden = 0;
	st.done = false;
	if (shortopts[0] == '+' || !(mark = find_numbers(argc, argv, shortopts, longopts, &n)))
		return;	/* "+": stops at the first operand, so never meets one after it */
	if (n && (st.orig = malloc((size_t)argc * sizeof(*argv)))) {
		memcpy(st.orig, argv, (size_t)argc * sizeof(*argv));
		for (i = 1; i < argc; i++)
			if (!mark[i])
				argv[j++] = st.orig[i];
		for (i = 1, k = j; i < argc; i++)
			if (mark[i])
				argv[k++] = st.orig[i];
		st.hidden = n;
	}
	free(mark);
}

static int orig_index(int argc, char *a)
{
	int i;

	for (i = 0; i < argc && st.orig[i] != a; i++)
		;
	return i;
}

/* getopt is done and its operands are at argv[optind..]: put every operand back in the order given. */
static void restore_order(int argc, char **argv)
{
	char *a;
	int i, j;

	for (i = optind + 1; i < argc; i++) {
		a = argv[i];
		for (j = i; j > optind && orig_index(argc, argv[j - 1]) > orig_index(argc, a); j--)
			argv[j] = argv[j - 1];
		argv[j] = a;
	}
	free(st.orig);
	st.orig = NULL;
}

int cli_getopt_numbers(int argc, char *const *cargv, const char *shortopts, const struct option *longopts,
		       int *index, cli_getopt_fn real)
{
	char **argv = (char **)cargv;	/* GNU getopt permutes it too */
	int c;

	if (optind == 0)
		hide_numbers(argc, argv, shortopts, longopts);
	else if (st.done)
		return -1;
	c = real(argc - st.hidden, cargv, shortopts, longopts, index);
	if (c == -1) {
		if (st.orig)
			restore_order(argc, argv);
		st.done = true;
	}
	return c;
}
