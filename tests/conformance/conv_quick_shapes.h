/*
 * conv_quick_shapes.h - the quick convolution shapes of the conformance suite, one row per
 * problem: n, c, h, w, k, r, s, groups, stride h/w, pad top/bottom/left/right, dilation h/w.
 * Shared by tests/conformance/tables.c (the suite on every device) and
 * tests/gpu_emu/test_gpu_emu_conv.c (the GPU convolution kernel in the emulator).
 */
#ifndef KMUX_CONV_QUICK_SHAPES_H
#define KMUX_CONV_QUICK_SHAPES_H

/* clang-format off */
#define KMUX_CONV_QUICK_SHAPES                                                                     \
    {2, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* odd sizes, "same" padding */ \
    {1, 4, 11, 7, 6, 3, 2, 2, 2, 1, 0, 2, 1, 0, 1, 1},  /* 2 groups, asymmetric pad, stride */ \
    {3, 6, 9, 8, 6, 3, 3, 6, 1, 2, 2, 1, 0, 1, 2, 1},   /* depthwise, dilation 2x1 */ \
    {2, 5, 13, 11, 7, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1}, /* 1x1, stride 2 */ \
    {1, 2, 5, 5, 3, 5, 5, 1, 1, 1, 0, 0, 0, 0, 1, 1},   /* filter covers the input */ \
    {2, 8, 17, 15, 4, 3, 5, 2, 3, 2, 1, 2, 2, 1, 2, 3}, /* everything at once */ \
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},   /* 1x1x1x1 */ \
    {2, 3, 6, 7, 6, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   /* depthwise, multiplier 2 */ \
    {1, 3, 10, 10, 2, 2, 2, 1, 3, 3, 0, 0, 0, 0, 1, 1}, /* stride > filter: gaps in dx */ \
    {1, 2, 7, 5, 4, 3, 3, 1, 1, 1, 3, 0, 0, 2, 1, 1},   /* padding larger than filter - 1 */
/* clang-format on */

#endif
