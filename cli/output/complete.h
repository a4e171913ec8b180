/* complete.h - shell completion words, read from the tables the commands themselves parse and print with. */
#ifndef PM_CLI_COMPLETE_H
#define PM_CLI_COMPLETE_H

#include <getopt.h>
#include "cli.h"
#include "output.h"

/* While true, a command's getopt_long and out_help report their tables instead of working. */
bool complete_active(void);

/* Called by out_help: the command's output columns ("col NAME" lines, aliases too). */
void complete_columns(const struct out_col *cols, size_t n);

/* Print the words of an option table: "opt --NAME" for each, "arg --NAME [-X]" for those taking a value. */
void complete_options(FILE *f, const char *shortopts, const struct option *longopts);

/*
 * pagemap --complete-words CMD: run @fn as "CMD --help" with its output
 * captured, printing on stdout the options its getopt_long was given, the
 * columns its help listed, and "pid" if its usage line takes a PID.
 */
int complete_command(int (*fn)(struct pm_ctx *ctx, int argc, char **argv), const char *name);

#endif
