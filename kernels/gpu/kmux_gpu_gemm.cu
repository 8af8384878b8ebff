/*
 * kmux_gpu_gemm.cu - kmux_gpu_gemm (see kmux_gpu_kernels.h): kmux's own tiled GEMM, one source
 * for CUDA, HIP and the host emulation.
 *
 * D = d_scale * act(a_scale * b_scale * alpha * op(A) op(B) + beta * C + bias), per batch
 * matrix, with the semantics of kmux_matmul_execute (those of ref, backends/ref/ref_gemm.c):
 * inputs decoded on load with the shared codec into the accumulation type (f64 for f64, i32 for
 * i8, f32 otherwise: strict f32, also for the FAST compute types and for KMUX_COMPUTE_F16, which
 * only ever gain precision), fused multiply-adds in order p = 0..k-1 within a thread, the
 * epilogue in the accumulation type (f64 for a scaled i32 result), and one rounding to c_type.
 * BLAS degenerate cases: k == 0 or alpha == 0 never reads A or B, beta == 0 never reads C.
 *
 * Grid: x = tiles of m, y = tiles of n, z = batch matrices; y and z loop beyond max_grid_yz
 * (65535 on CUDA and HIP), so any batch count and any n run. Every offset is int64.
 */
#include <stdio.h>

#include "kmux_gpu_gemm_params.h"
#include "kmux_gpu_kernels.h"
#include "kmux_gpu_tile.cuh"

namespace kmux_gpu_k {

typedef kmux_gpu_gemm_params gemm_params; /* kmux_gpu_gemm_params.h: shared with module launches */

/* Element i of dtype T decoded to the accumulation type. */
template <int T, typename Acc> KMUX_DEV Acc load_acc(const void *p, int64_t i) {
    if (T == KMUX_F64) return (Acc)((const double *)p)[i];
    if (T == KMUX_I8) return (Acc)((const int8_t *)p)[i];
    return (Acc)kmux_gpu_load_f32<T>(p, i);
}

/* Element (x, y) of a strided matrix: base[off + x * s0 + y * s1]. */
template <int T, typename Acc> struct strided_loader {
    const void *base;
    int64_t off, s0, s1;
    KMUX_DEV Acc operator()(int64_t x, int64_t y) const {
        return load_acc<T, Acc>(base, off + x * s0 + y * s1);
    }
};

template <typename E> KMUX_DEV E gelu(E x) {
    const E k0 = (E)0.7978845608028654; /* sqrt(2 / pi) */
    const E k1 = (E)0.044715;
    return (E)0.5 * x * ((E)1 + tanh(k0 * (x + k1 * x * x * x)));
}

/* d/dx of gelu (DGELU) */
template <typename E> KMUX_DEV E gelu_grad(E x) {
    const E k0 = (E)0.7978845608028654;
    const E k1 = (E)0.044715;
    const E th = tanh(k0 * (x + k1 * x * x * x));
    return (E)0.5 * ((E)1 + th) + (E)0.5 * x * ((E)1 - th * th) * k0 * ((E)1 + (E)3 * k1 * x * x);
}

/* The aux part of the epilogue at aux index x for the activation's input v (kmux.h
 * kmux_epilogue). The mask's bit x is bit x % 32 of 32-bit word x / 32: on a little-endian
 * device that is bit x % 8 of byte x / 8, the host's layout; neighbours share a word, hence the
 * atomics. */
template <typename E> KMUX_DEV E aux_step(const gemm_params &p, int64_t x, E v) {
    unsigned *w = (unsigned *)p.aux + (x >> 5);
    const unsigned bit = 1u << (unsigned)(x & 31);
    switch (p.aux_mode) {
    case KMUX_EPILOGUE_RELU_AUX:
        if (v > (E)0)
            atomicOr(w, bit);
        else
            atomicAnd(w, ~bit);
        return v;
    case KMUX_EPILOGUE_GELU_AUX:
        if constexpr (sizeof(E) == sizeof(double))
            kmux_gpu_store_rt_f64(p.aux, x, (double)v, p.aux_type);
        else
            kmux_gpu_store_rt_f32(p.aux, x, (float)v, p.aux_type);
        return v;
    case KMUX_EPILOGUE_DRELU:
        return (*w & bit) ? v : (E)0;
    case KMUX_EPILOGUE_DGELU:
        return v * gelu_grad(kmux_gpu_load_rt<E>(p.aux, x, p.aux_type));
    default:
        return v;
    }
}

template <typename E> KMUX_DEV E activate(E v, int act) {
    if (act == KMUX_EPILOGUE_RELU) return v > (E)0 ? v : (v != v ? v : (E)0); /* NaN stays */
    if (act == KMUX_EPILOGUE_GELU) return gelu(v);
    return v;
}

static KMUX_DEV uint32_t amax_bits_of(float v) {
    return kmux_gpu_amax_bits(v);
}
static KMUX_DEV uint32_t amax_bits_of(double v) {
    return kmux_gpu_amax_bits_f64(v);
}

/* int32 of v, rounded to nearest even, saturated, NaN -> 0 (as ref). */
static KMUX_DEV int32_t to_i32(double v) {
    if (v != v) return 0;
    if (v <= -2147483648.0) return INT32_MIN;
    if (v >= 2147483647.0) return INT32_MAX;
    return (int32_t)rint(v);
}

/* Floating epilogue of element (i, j) in type E = Acc (float or double). */
template <typename E>
KMUX_DEV void epilogue_float(const gemm_params &p, E ab, E acc, int64_t ci, int64_t j, int64_t xi,
                             uint32_t &amax_bits) {
    E v = p.skip_ab ? (E)0 : ab * acc;
    if (p.read_c) {
        E bc = (E)p.beta * kmux_gpu_load_rt<E>(p.C, ci, p.c_type);
        v = p.skip_ab ? bc : v + bc;
    }
    if (p.has_bias) v += kmux_gpu_load_rt<E>(p.bias, j, p.bias_type);
    if (p.aux_mode) v = aux_step(p, xi, v);
    v = activate(v, p.act);
    amax_bits = max(amax_bits, amax_bits_of(v));
    if (p.d_scale) v *= (E)*p.d_scale;
    if constexpr (sizeof(E) == sizeof(double))
        kmux_gpu_store_rt_f64(p.C, ci, (double)v, p.c_type);
    else
        kmux_gpu_store_rt_f32(p.C, ci, (float)v, p.c_type);
}

/* Integer epilogue: wrapping alpha * AB + beta * C without scales, else in f64 as ref. */
static KMUX_DEV void epilogue_int(const gemm_params &p, double ab, int32_t acc, int64_t ci,
                                  uint32_t &amax_bits) {
    int32_t *c = (int32_t *)p.C;
    if (p.int_plain) {
        uint32_t v = p.skip_ab ? 0u : (uint32_t)(int32_t)p.alpha * (uint32_t)acc;
        if (p.read_c) v += (uint32_t)(int32_t)p.beta * (uint32_t)c[ci];
        c[ci] = (int32_t)v;
        return;
    }
    double v = p.skip_ab ? 0.0 : ab * (double)acc;
    if (p.read_c) v += p.beta * (double)c[ci];
    amax_bits = max(amax_bits, kmux_gpu_amax_bits_f64(v));
    if (p.d_scale) v *= (double)*p.d_scale;
    c[ci] = to_i32(v);
}

/* BGRADA / BGRADB (batch_count 1): the sums over k of op(A)'s rows, by the first column of
 * threads of the blocks of the first n-tile, or of op(B)'s columns, by the first row of threads
 * of the blocks of the first m-tile; in the accumulation type (f32), rounded once. */
template <typename tile, typename LA, typename LB>
KMUX_DEV void bias_grad(const gemm_params &p, const LA &la, const LB &lb, int64_t i0, int64_t j0,
                        int tr, int tc, int64_t jt) {
    if (p.bgrad == KMUX_EPILOGUE_BGRADA && jt == 0 && tc == 0) {
        for (int r = 0; r < tile::MT; r++) {
            const int64_t i = i0 + tr + r * tile::RT;
            if (i >= p.m) continue;
            float s = 0.0f;
            for (int64_t q = 0; q < p.k; q++)
                s += (float)la(i, q);
            kmux_gpu_store_rt_f32(p.bias_grad, i, s, p.bias_type);
        }
    } else if (p.bgrad == KMUX_EPILOGUE_BGRADB && i0 == 0 && tr == 0) {
        for (int c = 0; c < tile::NT; c++) {
            const int64_t j = j0 + tc + c * tile::CT;
            if (j >= p.n) continue;
            float s = 0.0f;
            for (int64_t q = 0; q < p.k; q++)
                s += (float)lb(q, j);
            kmux_gpu_store_rt_f32(p.bias_grad, j, s, p.bias_type);
        }
    }
}

template <int AT, int BT, typename Acc, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(256) gemm_kernel(gemm_params p) {
    typedef kmux_gpu_tile<BM, BN, BK, TM, TN> tile;
    KMUX_GPU_SHARED(Acc, As, BK * BM);
    KMUX_GPU_SHARED(Acc, Bs, BK * BN);
    if (p.alpha_ptr) { /* KMUX_POINTER_MODE_DEVICE: alpha == 0 and beta == 0 decided here */
        p.alpha = kmux_gpu_scalar_value(p.alpha_ptr, (kmux_compute_type)p.scalar_ct);
        p.skip_ab = p.k == 0 || p.alpha == 0.0;
    }
    if (p.beta_ptr) {
        p.beta = kmux_gpu_scalar_value(p.beta_ptr, (kmux_compute_type)p.scalar_ct);
        p.read_c = p.beta != 0.0;
    }
    const int t = (int)threadIdx.x;
    const int tr = t / tile::CT, tc = t % tile::CT;
    const double ab_d =
        p.alpha * (p.a_scale ? (double)*p.a_scale : 1.0) * (p.b_scale ? (double)*p.b_scale : 1.0);
    uint32_t amax_bits = 0;
    const int64_t n_tiles = (p.n + BN - 1) / BN;
    for (int64_t b = blockIdx.z; b < p.batch; b += gridDim.z) {
        const strided_loader<AT, Acc> la = {p.A, b * p.sa, p.a_si, p.a_sp};
        const strided_loader<BT, Acc> lb = {p.B, b * p.sb, p.b_sp, p.b_sj};
        for (int64_t jt = blockIdx.y; jt < n_tiles; jt += gridDim.y) {
            const int64_t i0 = (int64_t)blockIdx.x * BM, j0 = jt * BN;
            Acc acc[TM][TN];
            for (int r = 0; r < TM; r++)
                for (int c = 0; c < TN; c++)
                    acc[r][c] = (Acc)0;
            if (!p.skip_ab) tile::mma(acc, la, lb, p.m, p.n, p.k, i0, j0, As, Bs);
            for (int r = 0; r < TM; r++)
                for (int c = 0; c < TN; c++) {
                    const int64_t i = i0 + tr + r * tile::RT, j = j0 + tc + c * tile::CT;
                    if (i >= p.m || j >= p.n) continue;
                    const int64_t ci = b * p.sc + i * p.c_si + j * p.c_sj;
                    if constexpr (AT == KMUX_I8)
                        epilogue_int(p, ab_d, acc[r][c], ci, amax_bits);
                    else
                        epilogue_float<Acc>(p, (Acc)ab_d, acc[r][c], ci, j,
                                            b * p.sx + i * p.x_si + j * p.x_sj, amax_bits);
                }
            if constexpr (AT != KMUX_I8 && AT != KMUX_F64)
                if (p.bgrad) bias_grad<tile>(p, la, lb, i0, j0, tr, tc, jt);
        }
    }
    if (p.amax) kmux_gpu_block_max_to(amax_bits, p.amax);
}

/* The launch of gemm_kernel<AT, BT, Acc, tile> (kmux_gpu_tile_dispatch picks the tile). */
template <int AT, int BT, typename Acc> struct gemm_launch {
    kmux_gpu_stream_t st;
    const gemm_params &p;
    int max_yz;
    template <int BM, int BN, int BK, int TM, int TN> int launch() const {
        dim3 grid;
        if (!kmux_gpu_tile_grid<BM, BN>(p.m, p.n, p.batch, max_yz, grid))
            return (int)KMUX_GPU_ERROR_INVALID_VALUE;
        const unsigned threads = kmux_gpu_tile<BM, BN, BK, TM, TN>::THREADS;
        KMUX_GPU_LAUNCH(grid, threads, st, gemm_kernel<AT, BT, Acc, BM, BN, BK, TM, TN>)(p);
        return (int)kmux_gpu_get_last_error();
    }
};

template <int AT, int BT, typename Acc>
int launch_types(kmux_gpu_stream_t st, const gemm_params &p, int tile, int max_yz) {
    return kmux_gpu_tile_dispatch(tile, gemm_launch<AT, BT, Acc>{st, p, max_yz});
}

/* B of A's fp8 family only (the type table never mixes OCP and FNUZ): no kernel is compiled for
 * a pair that cannot run. */
template <int AT>
int launch_fp8_b(kmux_gpu_stream_t st, const gemm_params &p, kmux_dtype bt, int tile, int max_yz) {
    if constexpr (AT == KMUX_F8_E4M3_FNUZ || AT == KMUX_F8_E5M2_FNUZ) {
        if (bt == KMUX_F8_E4M3_FNUZ)
            return launch_types<AT, KMUX_F8_E4M3_FNUZ, float>(st, p, tile, max_yz);
        if (bt == KMUX_F8_E5M2_FNUZ)
            return launch_types<AT, KMUX_F8_E5M2_FNUZ, float>(st, p, tile, max_yz);
    } else {
        if (bt == KMUX_F8_E4M3) return launch_types<AT, KMUX_F8_E4M3, float>(st, p, tile, max_yz);
        if (bt == KMUX_F8_E5M2) return launch_types<AT, KMUX_F8_E5M2, float>(st, p, tile, max_yz);
    }
    return (int)KMUX_GPU_ERROR_INVALID_VALUE;
}

static int launch(kmux_gpu_stream_t st, const gemm_params &p, kmux_dtype at, kmux_dtype bt,
                  int tile, int max_yz) {
    if (!kmux_gpu_gemm_pair_runs(at, bt)) return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    if (kmux_dtype_is_fp8(at)) { /* one fp8 family per GEMM (the type table) */
        switch (at) {
        case KMUX_F8_E4M3:
            return launch_fp8_b<KMUX_F8_E4M3>(st, p, bt, tile, max_yz);
        case KMUX_F8_E5M2:
            return launch_fp8_b<KMUX_F8_E5M2>(st, p, bt, tile, max_yz);
        case KMUX_F8_E4M3_FNUZ:
            return launch_fp8_b<KMUX_F8_E4M3_FNUZ>(st, p, bt, tile, max_yz);
        default:
            return launch_fp8_b<KMUX_F8_E5M2_FNUZ>(st, p, bt, tile, max_yz);
        }
    }
    switch (at) {
    case KMUX_F64:
        return launch_types<KMUX_F64, KMUX_F64, double>(st, p, tile, max_yz);
    case KMUX_F32:
        return launch_types<KMUX_F32, KMUX_F32, float>(st, p, tile, max_yz);
    case KMUX_F16:
        return launch_types<KMUX_F16, KMUX_F16, float>(st, p, tile, max_yz);
    case KMUX_BF16:
        return launch_types<KMUX_BF16, KMUX_BF16, float>(st, p, tile, max_yz);
    case KMUX_I8:
        return launch_types<KMUX_I8, KMUX_I8, int32_t>(st, p, tile, max_yz);
    default:
        return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    }
}

static const char *acc_name(kmux_dtype a) {
    return a == KMUX_F64 ? "f64" : a == KMUX_I8 ? "i32" : "f32";
}

} // namespace kmux_gpu_k

extern "C" int kmux_gpu_tile_count(void) {
    return KMUX_GPU_TILE_COUNT;
}

extern "C" int kmux_gpu_pick_tile(int arch, int64_t m, int64_t n) {
    (void)arch; /* every current target (sm_80..sm_90, gfx942) prefers the large tile */
    return m * n >= (int64_t)64 * 64 * 16 ? 0 : 1;
}

extern "C" int kmux_gpu_gemm_name(const kmux_matmul_desc *d, int tile, char *buf, size_t size) {
    char t[48];
    if (!kmux_gpu_tile_label(tile, t, sizeof t)) return -1;
    int r = snprintf(buf, size, "kmux-gpu:gemm:%s*%s->%s:acc=%s:tile=%s",
                     kmux_dtype_desc_of(d->a_type).name, kmux_dtype_desc_of(d->b_type).name,
                     kmux_dtype_desc_of(d->c_type).name, kmux_gpu_k::acc_name(d->a_type), t);
    return r < 0 || (size_t)r >= size ? -1 : 0;
}

extern "C" int kmux_gpu_gemm(void *stream, const kmux_matmul_desc *d, const kmux_matmul_args *a,
                             int tile, int max_grid_yz) {
    kmux_gpu_stream_t st = (kmux_gpu_stream_t)stream;
    if (tile < 0 || tile >= KMUX_GPU_TILE_COUNT) return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    if (max_grid_yz <= 0 || max_grid_yz > KMUX_GPU_MAX_GRID_YZ) max_grid_yz = KMUX_GPU_MAX_GRID_YZ;
    if (d->m == 0 || d->n == 0 || d->batch_count == 0) return 0; /* nothing, as kmux.h says */
    if (a->amax_d) { /* the kernel merges into *amax_d with atomicMax: start from +0 */
        kmux_gpu_error_t e = kmux_gpu_memset_async(a->amax_d, 0, sizeof(float), st);
        if (e != KMUX_GPU_SUCCESS) return (int)e;
    }
    kmux_gpu_gemm_params p;
    kmux_gpu_gemm_params_fill(&p, d, a);
    return kmux_gpu_k::launch(st, p, d->a_type, d->b_type, tile, max_grid_yz);
}
