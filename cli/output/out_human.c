/*
 * out_human.c - numbers for people: digits without printf, sizes "4K", "1.5M", and a change of size,
 * "+1.5M", "-4K". One rule for every command and view (tables, top's terminal and its header, render's
 * pictures), so that the same change reads alike everywhere.
 */
#include <stdio.h>
#include <string.h>
#include "out_human.h"

size_t out_fmt_u64(char *buf, uint64_t v, bool hex)
{
	char tmp[24], *p = tmp + sizeof(tmp);

	*--p = '\0';
	do {
		*--p = "0123456789abcdef"[hex ? v & 15 : v % 10];
		v = hex ? v >> 4 : v / 10;
	} while (v);
	if (hex) {
		*--p = 'x';
		*--p = '0';
	}
	memcpy(buf, p, (size_t)(tmp + sizeof(tmp) - p));
	return (size_t)(tmp + sizeof(tmp) - p) - 1;
}

char *out_human_size(uint64_t bytes, char *buf, size_t size)
{
	static const char suffix[] = "BKMGTPE";
	unsigned exp = 0;
	uint64_t whole = bytes, frac = 0;

	while (whole >= 1024 && exp + 1 < sizeof(suffix) - 1) {
		frac = whole & 1023;
		whole >>= 10;
		exp++;
	}
	/* One decimal, rounded, as util-linux's size_to_human_string. */
	frac = (frac * 10 + 512) / 1024;
	if (frac == 10) {
		whole++;
		frac = 0;
	}
	/* Digits by hand, not snprintf: a cell or more of every row of maps (run-mappings.sh). */
	char tmp[32];
	size_t n;

	n = out_fmt_u64(tmp, whole, false);
	if (frac && whole < 1000) {
		tmp[n++] = '.';
		tmp[n++] = (char)('0' + frac);
	}
	tmp[n++] = suffix[exp];
	tmp[n] = '\0';
	if (size) {
		n = n < size - 1 ? n : size - 1;
		memcpy(buf, tmp, n);
		buf[n] = '\0';
	}
	return buf;
}

char *out_human_signed(int64_t bytes, char *buf, size_t size)
{
	/* The magnitude in unsigned arithmetic: -INT64_MIN does not fit an int64_t. */
	uint64_t mag = bytes < 0 ? (uint64_t)0 - (uint64_t)bytes : (uint64_t)bytes;
	char tmp[40];

	/* A rise reads apart from a fall by its sign; no change has none, and its unit, as out_human_size's 0B. */
	tmp[0] = bytes < 0 ? '-' : '+';
	out_human_size(mag, tmp + 1, sizeof(tmp) - 1);
	if (size)
		snprintf(buf, size, "%s", bytes ? tmp : tmp + 1);
	return buf;
}

int64_t out_round_s64(double v)
{
	/* 2^63 as a double: the first value past INT64_MAX; NaN (no interval) is no change. */
	if (v != v)
		return 0;
	if (v >= 9223372036854775808.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	v = v < 0 ? v - 0.5 : v + 0.5;	/* to the nearest, halves away from zero, as both signs alike */
	if (v >= 9223372036854775808.0)
		return INT64_MAX;
	return (int64_t)v;
}
