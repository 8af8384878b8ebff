/* kb_csv.c - RFC 4180 CSV reader of the workload files. */
#include "kb_csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_util.h"

typedef struct row_builder {
    char **cells;
    size_t n, cap;
} row_builder;

static void row_push(row_builder *r, char *cell) {
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->cells = kb_xrealloc(r->cells, r->cap * sizeof *r->cells);
    }
    r->cells[r->n++] = cell;
}

int kb_csv_parse(const char *text, kb_csv *csv, char *err, size_t err_cap) {
    memset(csv, 0, sizeof *csv);
    char ***rows = NULL;
    size_t *widths = NULL;
    size_t nrows = 0, caprows = 0;
    const char *p = text;
    size_t line = 1;
    while (*p) {
        row_builder r = {NULL, 0, 0};
        for (;;) { /* one field */
            kb_sb f = KB_SB_INIT;
            kb_sb_append(&f, "", 0);
            if (*p == '"') {
                ++p;
                for (;;) {
                    if (!*p) {
                        snprintf(err, err_cap, "line %zu: unterminated quoted field", line);
                        kb_sb_free(&f);
                        for (size_t i = 0; i < r.n; ++i)
                            free(r.cells[i]);
                        free(r.cells);
                        goto fail;
                    }
                    if (*p == '"' && p[1] == '"') {
                        kb_sb_append(&f, "\"", 1);
                        p += 2;
                    } else if (*p == '"') {
                        ++p;
                        break;
                    } else {
                        if (*p == '\n') ++line;
                        kb_sb_append(&f, p++, 1);
                    }
                }
            }
            while (*p && *p != ',' && *p != '\n' && *p != '\r')
                kb_sb_append(&f, p++, 1);
            row_push(&r, f.buf);
            if (*p == ',') {
                ++p;
                continue;
            }
            if (*p == '\r') ++p;
            if (*p == '\n') ++p, ++line;
            break;
        }
        if (r.n == 1 && r.cells[0][0] == '\0') { /* blank line */
            free(r.cells[0]);
            free(r.cells);
            continue;
        }
        if (nrows == caprows) {
            caprows = caprows ? 2 * caprows : 64;
            rows = kb_xrealloc(rows, caprows * sizeof *rows);
            widths = kb_xrealloc(widths, caprows * sizeof *widths);
        }
        rows[nrows] = r.cells;
        widths[nrows++] = r.n;
    }
    if (nrows == 0) {
        snprintf(err, err_cap, "empty CSV");
        goto fail;
    }
    csv->cols = widths[0];
    csv->header = rows[0];
    csv->rows = nrows - 1;
    csv->cell = kb_xcalloc(csv->rows ? csv->rows : 1, sizeof *csv->cell);
    for (size_t i = 1; i < nrows; ++i) {
        if (widths[i] < csv->cols) { /* pad short rows with "" */
            rows[i] = kb_xrealloc(rows[i], csv->cols * sizeof *rows[i]);
            for (size_t c = widths[i]; c < csv->cols; ++c)
                rows[i][c] = kb_xstrdup("");
        } else {
            for (size_t c = csv->cols; c < widths[i]; ++c)
                free(rows[i][c]);
        }
        csv->cell[i - 1] = rows[i];
    }
    free(rows);
    free(widths);
    return 1;
fail:
    for (size_t i = 0; i < nrows; ++i) {
        for (size_t c = 0; c < widths[i]; ++c)
            free(rows[i][c]);
        free(rows[i]);
    }
    free(rows);
    free(widths);
    return 0;
}

int kb_csv_col(const kb_csv *csv, const char *name) {
    for (size_t c = 0; c < csv->cols; ++c)
        if (!strcmp(csv->header[c], name)) return (int)c;
    return -1;
}

const char *kb_csv_get(const kb_csv *csv, size_t row, const char *name) {
    int c = kb_csv_col(csv, name);
    return c < 0 || row >= csv->rows ? "" : csv->cell[row][c];
}

void kb_csv_free(kb_csv *csv) {
    for (size_t r = 0; r < csv->rows; ++r) {
        for (size_t c = 0; c < csv->cols; ++c)
            free(csv->cell[r][c]);
        free(csv->cell[r]);
    }
    for (size_t c = 0; c < csv->cols; ++c)
        free(csv->header[c]);
    free(csv->header);
    free(csv->cell);
    memset(csv, 0, sizeof *csv);
}
