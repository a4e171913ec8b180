/*
 * scols_load.h - libsmartcols, opened with dlopen() by the output layer the first time a table needs it
 * (scols_load.c). Call sites use the sym_ names below, after scols_load().
 */
#ifndef PAGEMAP_CLI_SCOLS_LOAD_H
#define PAGEMAP_CLI_SCOLS_LOAD_H

#include <libsmartcols.h>

/* Every libsmartcols call the CLI makes (cli/output/out_table.c, output.c, out_stream.c). */
#define SCOLS_CALLS(X)                                                                                        \
	X(scols_new_table) X(scols_unref_table) X(scols_table_set_name) X(scols_table_enable_json)            \
	X(scols_table_enable_raw) X(scols_table_enable_noheadings) X(scols_table_new_column)                \
	X(scols_column_set_json_type) X(scols_column_set_whint) X(scols_column_set_flags)                   \
	X(scols_column_get_flags) X(scols_column_get_width) X(scols_table_new_line) X(scols_line_add_child)   \
	X(scols_line_set_data) X(scols_line_get_cell) X(scols_cell_get_data) X(scols_table_next_line)         \
	X(scols_new_iter) X(scols_free_iter) X(scols_print_table)                                            \
	X(scols_table_print_range) X(scols_table_remove_lines) X(scols_column_set_wrapfunc)

#define SCOLS_DECLARE(f) extern __typeof__(f) *sym_##f;
SCOLS_CALLS(SCOLS_DECLARE)
#undef SCOLS_DECLARE

/*
 * Load libsmartcols and resolve every call above, once. A CLI without it
 * cannot print a table: it says which library is missing and exits with
 * EXIT_RUNTIME, as the dynamic loader would have at start.
 */
void scols_load(void);

#endif
