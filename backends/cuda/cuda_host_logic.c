/*
 * cuda_host_logic.c - the CUDA plugin's pure host-side decisions (cuda_host_logic.h). No CUDA
 * header, no CUDA call: everything here is tested without a GPU (tests/test_cuda_host.c).
 */
#include "cuda_host_logic.h"

#include <string.h>

#include "dispatch/common/kmux_dtype_desc.h"

static int64_t align_up64(int64_t x, int64_t a) {
    return (x + a - 1) / a * a;
}
static size_t align_up_sz(size_t x, size_t a) {
    return (x + a - 1) / a * a;
}

/* ---- alignment ---- */

unsigned kmux_cuda_ptr_align(uintptr_t v) {
    if (v == 0) return 256;
    unsigned a = 1;
    while (a < 256 && !(v & a))
        a <<= 1;
    return a;
}

int kmux_cuda_align_class(unsigned align) {
    if (align >= 16) return 0;
    if (align >= 8) return 1;
    if (align >= 4) return 2;
    if (align >= 2) return 3;
    return 4;
}

unsigned kmux_cuda_align_class_bytes(int cls) {
    static const unsigned bytes[KMUX_CUDA_ALIGN_CLASSES] = {16, 8, 4, 2, 1};
    return cls >= 0 && cls < KMUX_CUDA_ALIGN_CLASSES ? bytes[cls] : 1;
}

unsigned kmux_cuda_call_align(const kmux_cuda_align_in *in) {
    unsigned al = 256;
    const void *p[4] = {in->a, in->b, in->c, in->bias};
    const int use[4] = {in->use_a, in->use_b, in->use_c, in->use_bias};
    for (int i = 0; i < 4; i++) {
        if (!use[i] || !p[i]) continue;
        unsigned a = kmux_cuda_ptr_align((uintptr_t)p[i]);
        if (a < al) al = a;
    }
    return al;
}

int kmux_cuda_pick_impl(const kmux_cuda_impl_key *impls, int n, int requested, int cfg,
                        unsigned call_align) {
    if (requested >= 0 && requested < n && impls[requested].cfg == cfg &&
        impls[requested].align <= call_align)
        return requested;
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (impls[i].cfg != cfg || impls[i].align > call_align) continue;
        if (best < 0 || impls[i].align > impls[best].align) best = i;
    }
    return best;
}

int kmux_cuda_fallback_aligns(size_t min_elem_size, unsigned out[4]) {
    int n = 0;
    for (unsigned a = 8; a >= 1; a >>= 1) {
        if (a < min_elem_size) break;
        out[n++] = a;
    }
    return n;
}

/* ---- fp8 ---- */

void kmux_cuda_fp8_layout_plan(const kmux_cuda_fp8_in *in, kmux_cuda_fp8_layout *out) {
    memset(out, 0, sizeof *out);
    int batched = in->batch > 1;
    out->k_p = align_up64(in->k, 16);
    out->n_p = align_up64(in->n, 16);
    int pad_k = out->k_p != in->k, pad_n = out->n_p != in->n;
    out->pack_a = !(in->a_trans && in->lda % 16 == 0) || pad_k || (batched && in->stride_a % 16);
    out->pack_b =
        !(!in->b_trans && in->ldb % 16 == 0) || pad_k || pad_n || (batched && in->stride_b % 16);
    out->zero_a = out->pack_a && pad_k;
    out->zero_b = out->pack_b && (pad_k || pad_n);
    out->lda_p = out->pack_a ? out->k_p : in->lda;
    out->ldb_p = out->pack_b ? out->k_p : in->ldb;
    if (out->pack_a)
        out->pack_a_bytes = align_up_sz((size_t)out->k_p * (size_t)in->m * (size_t)in->batch, 256);
    if (out->pack_b)
        out->pack_b_bytes =
            align_up_sz((size_t)out->k_p * (size_t)out->n_p * (size_t)in->batch, 256);
    size_t ldc_bytes = (size_t)in->ldc * in->c_size;
    size_t stride_c_bytes = (size_t)in->stride_c * in->c_size;
    out->use_temp =
        in->force_temp || pad_n || ldc_bytes % 16 != 0 || (batched && stride_c_bytes % 16 != 0);
}

int64_t kmux_cuda_temp_ld(int64_t m) {
    return align_up64(m, 4);
}

size_t kmux_cuda_temp_bytes(int64_t m, int64_t n, int64_t batch) {
    return align_up_sz((size_t)kmux_cuda_temp_ld(m) * (size_t)n * sizeof(float) * (size_t)batch,
                       256);
}

/* ---- workspace ---- */

int kmux_cuda_algo_cap(size_t cap, int user_cap, size_t extra, size_t *algo_cap) {
    if (!user_cap) {
        *algo_cap = cap;
        return 1;
    }
    if (extra > cap) {
        *algo_cap = 0;
        return 0;
    }
    *algo_cap = cap - extra;
    return 1;
}

/* ---- F32_FAST_BF16 ---- */

int kmux_cuda_bf16x9_offered(int sm) {
    return sm >= 100;
}

kmux_compute_type kmux_cuda_bf16x9_effective(int emulated_compute, int cap_known, int algo_emulates,
                                             int eager, const char **tag) {
    /* Under the default (performant) strategy cuBLASLt decides per call whether emulation pays
     * off, so only an eager strategy with an algorithm that emulates is known to run bf16x9. */
    if (emulated_compute && cap_known && algo_emulates && eager) {
        *tag = "32F_EMULATED_16BFX9";
        return KMUX_COMPUTE_F32_FAST_BF16;
    }
    *tag = "32F";
    return KMUX_COMPUTE_F32;
}

/* ---- capabilities ---- */

int kmux_cuda_matmul_row_runs(kmux_dtype a, kmux_dtype b, kmux_dtype c, kmux_compute_type ct,
                              int sm) {
    (void)c;
    (void)ct;
    if (kmux_dtype_is_fnuz(a) || kmux_dtype_is_fnuz(b)) return 0;
    if ((kmux_dtype_is_fp8(a) || kmux_dtype_is_fp8(b)) && sm < 89) return 0;
    if (a == KMUX_F8_E5M2 && b == KMUX_F8_E5M2) return 0;
    return 1;
}

int kmux_cuda_conv_row_runs(kmux_dtype x, kmux_compute_type ct) {
    (void)ct;
    return x == KMUX_F64 || x == KMUX_F32 || x == KMUX_F16 || x == KMUX_BF16;
}

/* ---- asymmetric convolution padding ---- */

void kmux_cuda_conv_pad_plan(const kmux_conv2d_desc *d, size_t elem_size, kmux_cuda_conv_pad *out) {
    memset(out, 0, sizeof *out);
    out->needed = d->pad_top != d->pad_bottom || d->pad_left != d->pad_right;
    out->hp = d->h + d->pad_top + d->pad_bottom;
    out->wp = d->w + d->pad_left + d->pad_right;
    out->elements = d->n * d->c * out->hp * out->wp;
    out->bytes = align_up_sz((size_t)out->elements * elem_size, 256);
    out->height = d->h;
    out->dst_rows = out->hp;
    if (d->layout == KMUX_NHWC) {
        out->depth = d->n;
        out->width_bytes = (size_t)(d->w * d->c) * elem_size;
        out->src_pitch = out->width_bytes;
        out->dst_pitch = (size_t)(out->wp * d->c) * elem_size;
        out->dst_offset = (size_t)((d->pad_top * out->wp + d->pad_left) * d->c) * elem_size;
    } else {
        out->depth = d->n * d->c;
        out->width_bytes = (size_t)d->w * elem_size;
        out->src_pitch = out->width_bytes;
        out->dst_pitch = (size_t)out->wp * elem_size;
        out->dst_offset = (size_t)(d->pad_top * out->wp + d->pad_left) * elem_size;
    }
}

/* ---- post kernel ---- */

void kmux_cuda_view_of(const kmux_matmul_desc *d, kmux_cuda_view *v) {
    v->swapped = d->order == KMUX_ROW_MAJOR;
    v->m = v->swapped ? d->n : d->m;
    v->n = v->swapped ? d->m : d->n;
}

int kmux_cuda_scalar_zero(kmux_compute_type ct, const void *v) {
    switch (ct) {
    case KMUX_COMPUTE_F64:
        return *(const double *)v == 0.0;
    case KMUX_COMPUTE_I32:
        return *(const int32_t *)v == 0;
    default:
        return *(const float *)v == 0.0f;
    }
}

static kmux_cuda_act act_of(unsigned e) {
    return (e & KMUX_EPILOGUE_RELU)   ? KMUX_CUDA_ACT_RELU
           : (e & KMUX_EPILOGUE_GELU) ? KMUX_CUDA_ACT_GELU
                                      : KMUX_CUDA_ACT_NONE;
}

/* The scalar beta as the kernel's one double (an int32 is exact in a double). */
static void set_beta(kmux_compute_type ct, const void *beta, kmux_cuda_post_args *a) {
    switch (ct) {
    case KMUX_COMPUTE_F64:
        a->beta = *(const double *)beta;
        break;
    case KMUX_COMPUTE_I32:
        a->beta = (double)*(const int32_t *)beta;
        break;
    default:
        a->beta = *(const float *)beta;
        break;
    }
}

static void post_base(const kmux_matmul_desc *d, const kmux_matmul_args *args,
                      kmux_cuda_post_args *a) {
    kmux_cuda_view v;
    kmux_cuda_view_of(d, &v);
    memset(a, 0, sizeof *a);
    a->rows = v.m;
    a->cols = v.n;
    a->batch = d->batch_count;
    a->d = args->C;
    a->d_type = d->c_type;
    a->ldd = d->ldc;
    a->stride_d = d->stride_c;
    a->bias_type = d->bias_type;
    a->bias_per_row = v.swapped;
    a->d_scale = args->d_scale;
    a->amax = args->amax_d;
}

void kmux_cuda_post_degenerate_args(const kmux_matmul_desc *d, const kmux_matmul_args *args,
                                    kmux_cuda_post_args *a) {
    post_base(d, args, a);
    a->read_c = !kmux_cuda_scalar_zero(d->compute_type, args->beta);
    if (a->read_c) set_beta(d->compute_type, args->beta, a);
    if (d->epilogue & KMUX_EPILOGUE_BIAS) a->bias = args->bias;
    a->act = act_of(d->epilogue);
}

void kmux_cuda_post_after_gemm_args(const kmux_matmul_desc *d, const kmux_matmul_args *args,
                                    int use_temp, const float *temp, int64_t ld_temp,
                                    int64_t stride_temp, int post_epi, kmux_cuda_post_args *a) {
    post_base(d, args, a);
    if (use_temp) {
        a->acc = temp;
        a->ld_acc = ld_temp;
        a->stride_acc = stride_temp;
        a->read_c = !kmux_cuda_scalar_zero(d->compute_type, args->beta);
        if (a->read_c) set_beta(d->compute_type, args->beta, a);
    } else {
        /* D already holds alpha * AB + beta * C: read it back unchanged (beta = 1 for every D
         * type; an integer beta left 0 used to zero an i32 D) */
        a->read_c = 1;
        a->beta = 1.0;
    }
    if (post_epi) {
        if (d->epilogue & KMUX_EPILOGUE_BIAS) a->bias = args->bias;
        a->act = act_of(d->epilogue);
    }
}

int kmux_cuda_needs_post(int use_temp, int post_epi, const kmux_matmul_args *args) {
    return use_temp || post_epi || args->d_scale || args->amax_d;
}
