/*
 * out_human.h - numbers as every output prints them: sizes with util-linux's units and rounding, changes
 * of size, digits without printf (out_human.c, out_rows.c). Free of libsmartcols, so that the pictures
 * (cli/render/) and their fuzz target print sizes as the tables do.
 */
#ifndef PM_OUT_HUMAN_H
#define PM_OUT_HUMAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * @v as "%" PRIu64 or "0x%" PRIx64 would print it, NUL-terminated, without printf's cost;
 * @buf has 24 bytes. Returns its length.
 */
size_t out_fmt_u64(char *buf, uint64_t v, bool hex);
/* Human-readable size like util-linux: "0B", "4K", "1.5M" (out_human.c). */
char *out_human_size(uint64_t bytes, char *buf, size_t size);
/*
 * A change of size, the one form every command and view shows: out_human_size's units and rounding
 * with a sign, "+1.5M", "-4K"; no change is "0B", unsigned as out_human_size says it.
 */
char *out_human_signed(int64_t bytes, char *buf, size_t size);
/* A change per second (a double) to whole bytes: the nearest, halves away from zero, clamped; NaN is 0. */
int64_t out_round_s64(double v);

#endif
