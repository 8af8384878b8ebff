/*
 * fuzz_conv.c - libFuzzer target: the 2-D convolution argument space on "ref". Each input
 * becomes one description (direction, layout, n c h w k r s, groups, strides, paddings,
 * dilations, dtypes and compute types, edge and invalid values) and its execution. Properties:
 *  - a rejected description gives INVALID_ARGUMENT or UNSUPPORTED with a message that names
 *    kmux_conv2d_plan_create, and kmux_conv2d_output_dims agrees that it is invalid or not;
 *  - an accepted one runs on tensors of exactly their size, returns OK and, in f32 and f64, gives
 *    exactly the naive result of its direction (small integers: exact).
 */
#include "fuzz_common.h"

#define CAP_ELEMS (1 << 15)

static const int dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS};
static const int layouts[] = {KMUX_NCHW, KMUX_NHWC};
static const int dtypes[] = {KMUX_F32, KMUX_F64, KMUX_F16, KMUX_BF16, KMUX_F32, KMUX_I8};
static const int computes[] = {KMUX_COMPUTE_F32, KMUX_COMPUTE_F64, KMUX_COMPUTE_F32_FAST_TF32,
                               KMUX_COMPUTE_F16};

typedef struct shape {
    const kmux_conv2d_desc *d;
    int64_t p, q;
} shape;

static int64_t xi(const shape *z, int64_t n, int64_t c, int64_t h, int64_t w) {
    const kmux_conv2d_desc *d = z->d;
    return d->layout == KMUX_NCHW ? ((n * d->c + c) * d->h + h) * d->w + w
                                  : ((n * d->h + h) * d->w + w) * d->c + c;
}
static int64_t wi(const shape *z, int64_t k, int64_t cg, int64_t r, int64_t s) {
    const kmux_conv2d_desc *d = z->d;
    int64_t C = d->c / d->groups;
    return d->layout == KMUX_NCHW ? ((k * C + cg) * d->r + r) * d->s + s
                                  : ((k * d->r + r) * d->s + s) * C + cg;
}
static int64_t yi(const shape *z, int64_t n, int64_t k, int64_t p, int64_t q) {
    const kmux_conv2d_desc *d = z->d;
    return d->layout == KMUX_NCHW ? ((n * d->k + k) * z->p + p) * z->q + q
                                  : ((n * z->p + p) * z->q + q) * d->k + k;
}

/* out = alpha * (the direction's sum) + beta * out, naively, in double. */
static void naive(const shape *z, double alpha, double beta, const double *x, const double *w,
                  const double *y, double *out, int64_t out_elems) {
    const kmux_conv2d_desc *d = z->d;
    for (int64_t i = 0; i < out_elems; i++)
        out[i] = 0;
    int64_t C = d->c / d->groups, Kg = d->k / d->groups;
    for (int64_t n = 0; n < d->n; n++)
        for (int64_t k = 0; k < d->k; k++)
            for (int64_t p = 0; p < z->p; p++)
                for (int64_t q = 0; q < z->q; q++)
                    for (int64_t cg = 0; cg < C; cg++)
                        for (int64_t r = 0; r < d->r; r++)
                            for (int64_t s = 0; s < d->s; s++) {
                                int64_t h = p * d->stride_h - d->pad_top + r * d->dilation_h;
                                int64_t ww = q * d->stride_w - d->pad_left + s * d->dilation_w;
                                if (h < 0 || h >= d->h || ww < 0 || ww >= d->w) continue;
                                int64_t c = (k / Kg) * C + cg;
                                int64_t ix = xi(z, n, c, h, ww), iw = wi(z, k, cg, r, s),
                                        iy = yi(z, n, k, p, q);
                                if (d->direction == KMUX_CONV_FWD)
                                    out[iy] += x[ix] * w[iw];
                                else if (d->direction == KMUX_CONV_BWD_DATA)
                                    out[ix] += y[iy] * w[iw];
                                else
                                    out[iw] += x[ix] * y[iy];
                            }
    const double *prev = d->direction == KMUX_CONV_FWD        ? y
                         : d->direction == KMUX_CONV_BWD_DATA ? x
                                                              : w;
    for (int64_t i = 0; i < out_elems; i++)
        out[i] = alpha * out[i] + (beta != 0 ? beta * prev[i] : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f = {data, size};
    kmux_device *ref;
    kmux_stream *st = fz_ref_stream(&ref);
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = (kmux_conv_direction)fz_enum(&f, dirs, 3);
    d.layout = (kmux_layout)fz_enum(&f, layouts, 2);
    d.n = fz_size(&f, 3), d.c = fz_size(&f, 6), d.h = fz_size(&f, 7), d.w = fz_size(&f, 7);
    d.k = fz_size(&f, 6), d.r = fz_size(&f, 4), d.s = fz_size(&f, 4);
    d.groups = fz_size(&f, 3);
    d.stride_h = fz_size(&f, 3), d.stride_w = fz_size(&f, 3);
    d.pad_top = fz_size(&f, 2), d.pad_bottom = fz_size(&f, 2);
    d.pad_left = fz_size(&f, 2), d.pad_right = fz_size(&f, 2);
    d.dilation_h = fz_size(&f, 3), d.dilation_w = fz_size(&f, 3);
    d.x_type = (kmux_dtype)fz_enum(&f, dtypes, 6);
    d.w_type = fz_u8(&f) % 8 ? d.x_type : (kmux_dtype)fz_enum(&f, dtypes, 6);
    d.y_type = fz_u8(&f) % 8 ? d.x_type : (kmux_dtype)fz_enum(&f, dtypes, 6);
    d.compute_type = fz_u8(&f) % 4 ? (d.x_type == KMUX_F64 ? KMUX_COMPUTE_F64 : KMUX_COMPUTE_F32)
                                   : (kmux_compute_type)fz_enum(&f, computes, 4);
    double alpha = fz_small(&f), beta = fz_small(&f);

    int64_t p = -1, q = -1;
    kmux_status ost = kmux_conv2d_output_dims(&d, &p, &q);
    kmux_plan *plan = NULL;
    kmux_status vst = kmux_conv2d_plan_create(ref, &d, NULL, &plan);
    if (vst != KMUX_OK) {
        fz_check_rejection(vst, "kmux_conv2d_plan_create");
        /* output_dims makes the same checks (it may accept what only the device refuses) */
        if (ost == KMUX_OK && vst == KMUX_ERR_INVALID_ARGUMENT) {
            fprintf(stderr, "fuzz_conv: output_dims accepted what plan_create rejects: %s\n",
                    kmux_last_error());
            abort();
        }
        return 0;
    }
    if (ost != KMUX_OK) {
        fprintf(stderr, "fuzz_conv: plan_create accepted what output_dims rejects\n");
        abort();
    }
    shape z = {&d, p, q};
    int64_t nx = d.n * d.c * d.h * d.w, nw = d.k * (d.c / d.groups) * d.r * d.s;
    int64_t ny = d.n * d.k * p * q;
    if (nx > CAP_ELEMS || nw > CAP_ELEMS || ny > CAP_ELEMS ||
        (double)d.n * d.k * p * q * (d.c / d.groups) * d.r * d.s > 4e6) {
        kmux_plan_destroy(plan);
        return 0; /* valid, too large to run here */
    }
    double *vx, *vw, *vy;
    void *x = fz_tensor(st, d.x_type, nx, 5, &vx), *w = fz_tensor(st, d.w_type, nw, 6, &vw);
    void *y = fz_tensor(st, d.y_type, ny, 7, &vy);
    float af = (float)alpha, bf = (float)beta;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = d.compute_type == KMUX_COMPUTE_F64 ? (const void *)&alpha : (const void *)&af;
    a.beta = d.compute_type == KMUX_COMPUTE_F64 ? (const void *)&beta : (const void *)&bf;
    a.x = x, a.w = w, a.y = y;
    kmux_status est = kmux_conv2d_execute(plan, st, &a);
    if (est == KMUX_OK) est = kmux_stream_synchronize(st);
    if (est != KMUX_OK) {
        fprintf(stderr, "fuzz_conv: accepted description failed: %s: %s\n", kmux_status_str(est),
                kmux_last_error());
        abort();
    }
    if (d.x_type == KMUX_F32 || d.x_type == KMUX_F64) {
        int64_t no = d.direction == KMUX_CONV_FWD        ? ny
                     : d.direction == KMUX_CONV_BWD_DATA ? nx
                                                         : nw;
        const void *got = d.direction == KMUX_CONV_FWD        ? y
                          : d.direction == KMUX_CONV_BWD_DATA ? x
                                                              : w;
        double *want = malloc((no ? (size_t)no : 1) * sizeof *want);
        naive(&z, alpha, beta, vx, vw, vy, want, no);
        for (int64_t i = 0; i < no; i++)
            if (fz_get(got, d.x_type, i) != want[i]) {
                fprintf(stderr,
                        "fuzz_conv: direction %d layout %d %s: element %lld = %g, want %g\n",
                        (int)d.direction, (int)d.layout, kmux_dtype_name(d.x_type), (long long)i,
                        fz_get(got, d.x_type, i), want[i]);
                abort();
            }
        free(want);
    }
    kmux_plan_destroy(plan);
    free(x), free(w), free(y), free(vx), free(vw), free(vy);
    return 0;
}
