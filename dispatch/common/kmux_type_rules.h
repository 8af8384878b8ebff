/*
 * kmux_type_rules.h - THE table of legal type combinations of GEMM/matmul and convolution (the
 * rows documented in kmux.h), one copy for validation in dispatch/, the public query functions
 * (kmux_matmul_type_combination_get & co), kmux-support-matrix, kmux-bench and the tests. Whether a
 * given DEVICE runs a legal combination is its plugin's answer (capabilities), not this table's.
 */
#ifndef KMUX_TYPE_RULES_H
#define KMUX_TYPE_RULES_H

#include "kmux.h"

/** The legal GEMM rows (a, b, c, compute). Static storage; *count receives the row count. */
const kmux_type_combination *kmux_rules_matmul_table(int *count);
/** The legal convolution rows (x = w = y in a, b and c; compute). */
const kmux_type_combination *kmux_rules_conv_table(int *count);

/** 1 when (a, b, c, ct) is a row of the matmul table. Otherwise 0, and *why (may be NULL)
 *  receives a static sentence saying which rule it breaks ("fp8 inputs need an f32, f16 or bf16
 *  output"). The enums must be valid values (the caller checks that first). */
int kmux_rules_matmul_legal(kmux_dtype a, kmux_dtype b, kmux_dtype c, kmux_compute_type ct,
                            const char **why);
/** The same for a convolution with tensors x, w, y and compute type ct. */
int kmux_rules_conv_legal(kmux_dtype x, kmux_dtype w, kmux_dtype y, kmux_compute_type ct,
                          const char **why);

#endif
