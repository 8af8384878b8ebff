/* kb_csv.h - the CSV reader of the workload files (bench/workloads). */
#ifndef KB_CSV_H
#define KB_CSV_H

#include <stddef.h>

/** A parsed CSV file (RFC 4180: quoted fields, "" escapes, newlines inside quotes). */
typedef struct kb_csv {
    size_t rows, cols; /**< data rows (header excluded); columns of the header */
    char **header;     /**< cols names */
    char ***cell;      /**< cell[row][col]; missing trailing cells are "" */
} kb_csv;

/** Parses CSV text. Returns 1 on success; 0 with a message in err. */
int kb_csv_parse(const char *text, kb_csv *csv, char *err, size_t err_cap);
/** Index of a header column, -1 when absent. */
int kb_csv_col(const kb_csv *csv, const char *name);
/** Cell (row, column name); "" when the column is absent. */
const char *kb_csv_get(const kb_csv *csv, size_t row, const char *name);
void kb_csv_free(kb_csv *csv);

#endif
