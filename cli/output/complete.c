/* complete.c - shell completion words, read from the tables the commands themselves parse and print with. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "complete.h"

/*
 * Each command keeps its options in a getopt_long table and its columns in
 * an out_col table, both private to its file. Rather than a second list
 * that would fall behind, the command is run as "CMD --help" with these
 * two calls listening: the link wraps getopt_long (-Wl,--wrap, see the
 * Makefile), and out_help reports the columns it prints.
 */
static FILE *words;	/* where the words go while the command's own stdout is captured */

int __real_getopt_long(int argc, char *const *argv, const char *shortopts, const struct option *longopts,
		       int *index);
int __wrap_getopt_long(int argc, char *const *argv, const char *shortopts, const struct option *longopts,
		       int *index);

bool complete_active(void)
{
	return words != NULL;
}

/* @longopts' entry for short option @c, or NULL. */
static const struct option *long_of(const struct option *longopts, int c)
{
	for (; longopts && longopts->name; longopts++)
		if (!longopts->flag && longopts->val == c)
			return longopts;
	return NULL;
}

void complete_options(FILE *f, const char *shortopts, const struct option *longopts)
{
	const struct option *o;
	const char *s;

	for (o = longopts; o && o->name; o++) {
		fprintf(f, "opt --%s\n", o->name);
		if (o->has_arg == required_argument)
			fprintf(f, "arg --%s\n", o->name);
	}
	for (s = shortopts ? shortopts : ""; *s; s++) {
		if (*s == ':' || *s == '+' || *s == '-')
			continue;
		if (s[1] == ':' && s[2] != ':') {
			o = long_of(longopts, *s);
			fprintf(f, "arg -%c%s%s\n", *s, o ? " --" : "", o ? o->name : "");
		}
	}
}

/* In completion mode: report the table, then ask for the command's help (it prints its columns through out_help). */
int __wrap_getopt_long(int argc, char *const *argv, const char *shortopts, const struct option *longopts,
		       int *index)
{
	const struct option *o;

	if (!words)
		return cli_getopt_numbers(argc, argv, shortopts, longopts, index, __real_getopt_long);
	complete_options(words, shortopts, longopts);
	for (o = longopts; o && o->name; o++)
		if (!strcmp(o->name, "help") && !o->flag)
			return o->val;
	return -1;
}

/* The tables a command reported so far: a column in two of them (ps's rows and its groups) is one word. */
static const struct out_col *told[4];
static size_t ntold[4], ntables;

static bool same_word(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && !strncmp(a, b, alen);
}

static bool col_told(const char *name, size_t len)
{
	size_t t, i, n;
	const char *a;

	for (t = 0; t < ntables; t++)
		for (i = 0; i < ntold[t]; i++) {
			if (same_word(told[t][i].name, strlen(told[t][i].name), name, len))
				return true;
			for (a = told[t][i].aliases; a && *a; a += n + (a[n] == ','))
				if (same_word(a, n = strcspn(a, ","), name, len))
					return true;
		}
	return false;
}

void complete_columns(const struct out_col *cols, size_t n)
{
	size_t i, len;
	const char *a;

	for (i = 0; words && i < n; i++) {
		if (!col_told(cols[i].name, strlen(cols[i].name)))
			fprintf(words, "col %s\n", cols[i].name);
		for (a = cols[i].aliases; a && *a; a += len + (a[len] == ',')) {
			len = strcspn(a, ",");
			if ((len != strlen(cols[i].name) || strncmp(a, cols[i].name, len)) && !col_told(a, len))
				fprintf(words, "col %.*s\n", (int)len, a);
		}
	}
	if (words && ntables < sizeof(told) / sizeof(told[0])) {
		told[ntables] = cols;
		ntold[ntables++] = n;
	}
}

/* Does the usage line (the first of the captured help) take a PID operand? */
static bool takes_pid(FILE *help)
{
	char line[512];

	rewind(help);
	return fgets(line, sizeof(line), help) && strstr(line, "PID");
}

int complete_command(int (*fn)(struct pm_ctx *ctx, int argc, char **argv), const char *name)
{
	char *argv[] = { (char *)name, NULL };
	FILE *help = tmpfile();
	struct pm_ctx *ctx = pm_ctx_new(NULL);	/* opens nothing: --help returns before any use */
	int saved = -1, code = EXIT_RUNTIME;

	fflush(stdout);
	if (!help || !ctx || (saved = dup(STDOUT_FILENO)) < 0 || !(words = fdopen(dup(saved), "w")) ||
	    dup2(fileno(help), STDOUT_FILENO) < 0) {
		cli_error(errno, "cannot list completion words");
		goto out;
	}
	fn(ctx, 1, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	if (takes_pid(help))
		fputs("pid\n", words);
	code = fflush(words) ? EXIT_RUNTIME : EXIT_OK;
out:
	if (words)
		fclose(words);
	words = NULL;
	ntables = 0;
	if (saved >= 0)
		close(saved);
	if (help)
		fclose(help);
	pm_ctx_free(ctx);
	return code;
}
