/*
 * kmux_gpu_conv.cu - kmux_gpu_conv2d (see kmux_gpu_kernels.h): implicit-GEMM 2-D convolution
 * (cross-correlation) on the tile core of kmux_gpu_tile.cuh, one source for CUDA, HIP and the host
 * emulation. Semantics of kmux_conv2d_execute (those of ref, backends/ref/ref_conv.c), per group g
 * (grid z, looping beyond max_grid_yz), with Cg = C / groups, Kg = K / groups:
 *   FWD          y[n, gKg+k, p, q]  = sum_{c,r,s} x[n, gCg+c, h, w] w[gKg+k, c, r, s]
 *                GEMM M = N*P*Q (n, p, q), N = Kg (k), K = Cg*R*S (c, r, s)
 *   BWD_DATA     dx[n, gCg+c, h, w] = sum_{k,r,s} dy[n, gKg+k, p, q] w[gKg+k, c, r, s]
 *                GEMM M = N*H*W (n, h, w), N = Cg (c), K = Kg*R*S (k, r, s)
 *   BWD_WEIGHTS  dw[gKg+k, c, r, s] = sum_{n,p,q} dy[n, gKg+k, p, q] x[n, gCg+c, h, w]
 *                GEMM M = Kg (k), N = Cg*R*S (c, r, s), K = N*P*Q (n, p, q)
 * with h = p * stride_h - pad_top + r * dilation_h (likewise w), taps outside the input 0 (so any
 * asymmetric padding), NCHW/KCRS or NHWC/KRSC. Accumulation in f64 for f64, f32 otherwise (also
 * for the FAST compute types); out = alpha * acc + beta * out rounded once; alpha == 0 reads no
 * input, beta == 0 does not read the output.
 */
#include <stdio.h>

#include "kmux_gpu_conv_params.h"
#include "kmux_gpu_kernels.h"
#include "kmux_gpu_tile.cuh"

namespace kmux_gpu_k {

typedef kmux_gpu_conv_params conv_params; /* kmux_gpu_conv_params.h: shared with module launches */

static KMUX_DEV int64_t x_at(const conv_params &p, int64_t n, int64_t c, int64_t h, int64_t w) {
    return p.nhwc ? ((n * p.h + h) * p.w + w) * p.c + c : ((n * p.c + c) * p.h + h) * p.w + w;
}
/* c: channel within the group */
static KMUX_DEV int64_t w_at(const conv_params &p, int64_t k, int64_t c, int64_t r, int64_t s) {
    return p.nhwc ? ((k * p.r + r) * p.s + s) * p.cg + c : ((k * p.cg + c) * p.r + r) * p.s + s;
}
static KMUX_DEV int64_t y_at(const conv_params &p, int64_t n, int64_t k, int64_t pp, int64_t q) {
    return p.nhwc ? ((n * p.p + pp) * p.q + q) * p.k + k : ((n * p.k + k) * p.p + pp) * p.q + q;
}

template <int T, typename Acc> KMUX_DEV Acc load(const void *base, int64_t i) {
    if (T == KMUX_F64) return (Acc)((const double *)base)[i];
    return (Acc)kmux_gpu_load_f32<T>(base, i);
}

/* Input tap (n, c, h, w) for output pixel (pp, q) and filter tap (r, s); 0 in the padding. */
template <int T, typename Acc>
KMUX_DEV Acc x_tap(const conv_params &p, int64_t g, int64_t n, int64_t c, int64_t pp, int64_t q,
                   int64_t r, int64_t s) {
    const int64_t h = pp * p.sh - p.pt + r * p.dh, w = q * p.sw - p.pl + s * p.dw;
    if (h < 0 || h >= p.h || w < 0 || w >= p.w) return (Acc)0;
    return load<T, Acc>(p.x, x_at(p, n, g * p.cg + c, h, w));
}

/* The GEMM operands of direction D for group g. */
template <int T, typename Acc, int D> struct conv_a {
    const conv_params &p;
    int64_t g;
    KMUX_DEV Acc operator()(int64_t i, int64_t kk) const {
        if (D == KMUX_CONV_FWD) { /* i = (n, p, q), kk = (c, r, s) */
            const int64_t pq = p.p * p.q, rs = p.r * p.s;
            const int64_t n = i / pq, pp = i % pq / p.q, q = i % p.q;
            const int64_t c = kk / rs, r = kk % rs / p.s, s = kk % p.s;
            return x_tap<T, Acc>(p, g, n, c, pp, q, r, s);
        } else if (D == KMUX_CONV_BWD_DATA) { /* i = (n, h, w), kk = (k, r, s) */
            const int64_t hw = p.h * p.w, rs = p.r * p.s;
            const int64_t n = i / hw, h = i % hw / p.w, w = i % p.w;
            const int64_t k = kk / rs, r = kk % rs / p.s, s = kk % p.s;
            const int64_t hp = h + p.pt - r * p.dh, wq = w + p.pl - s * p.dw;
            if (hp < 0 || wq < 0 || hp % p.sh != 0 || wq % p.sw != 0) return (Acc)0;
            const int64_t pp = hp / p.sh, q = wq / p.sw;
            if (pp >= p.p || q >= p.q) return (Acc)0;
            return load<T, Acc>(p.y, y_at(p, n, g * p.kg + k, pp, q));
        } else { /* BWD_WEIGHTS: i = k, kk = (n, p, q) */
            const int64_t pq = p.p * p.q;
            const int64_t n = kk / pq, pp = kk % pq / p.q, q = kk % p.q;
            return load<T, Acc>(p.y, y_at(p, n, g * p.kg + i, pp, q));
        }
    }
};

template <int T, typename Acc, int D> struct conv_b {
    const conv_params &p;
    int64_t g;
    KMUX_DEV Acc operator()(int64_t kk, int64_t j) const {
        const int64_t rs = p.r * p.s;
        if (D == KMUX_CONV_FWD) { /* kk = (c, r, s), j = k */
            const int64_t c = kk / rs, r = kk % rs / p.s, s = kk % p.s;
            return load<T, Acc>(p.wt, w_at(p, g * p.kg + j, c, r, s));
        } else if (D == KMUX_CONV_BWD_DATA) { /* kk = (k, r, s), j = c */
            const int64_t k = kk / rs, r = kk % rs / p.s, s = kk % p.s;
            return load<T, Acc>(p.wt, w_at(p, g * p.kg + k, j, r, s));
        } else { /* BWD_WEIGHTS: kk = (n, p, q), j = (c, r, s) */
            const int64_t pq = p.p * p.q;
            const int64_t n = kk / pq, pp = kk % pq / p.q, q = kk % p.q;
            const int64_t c = j / rs, r = j % rs / p.s, s = j % p.s;
            return x_tap<T, Acc>(p, g, n, c, pp, q, r, s);
        }
    }
};

/* GEMM sizes of direction D. */
template <int D>
__host__ __device__ inline void gemm_dims(const conv_params &p, int64_t &m, int64_t &n,
                                          int64_t &k) {
    if (D == KMUX_CONV_FWD) {
        m = p.n * p.p * p.q, n = p.kg, k = p.cg * p.r * p.s;
    } else if (D == KMUX_CONV_BWD_DATA) {
        m = p.n * p.h * p.w, n = p.cg, k = p.kg * p.r * p.s;
    } else {
        m = p.kg, n = p.cg * p.r * p.s, k = p.n * p.p * p.q;
    }
}

/* Output element of GEMM element (i, j) in group g. */
template <int D> KMUX_DEV int64_t out_at(const conv_params &p, int64_t g, int64_t i, int64_t j) {
    if (D == KMUX_CONV_FWD) {
        const int64_t pq = p.p * p.q;
        return y_at(p, i / pq, g * p.kg + j, i % pq / p.q, i % p.q);
    } else if (D == KMUX_CONV_BWD_DATA) {
        const int64_t hw = p.h * p.w;
        return x_at(p, i / hw, g * p.cg + j, i % hw / p.w, i % p.w);
    } else {
        const int64_t rs = p.r * p.s;
        return w_at(p, g * p.kg + i, j / rs, j % rs / p.s, j % p.s);
    }
}

template <int T, typename Acc, int D, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(256) conv_kernel(conv_params p) {
    typedef kmux_gpu_tile<BM, BN, BK, TM, TN> tile;
    KMUX_GPU_SHARED(Acc, As, BK * BM);
    KMUX_GPU_SHARED(Acc, Bs, BK * BN);
    const int t = (int)threadIdx.x;
    const int tr = t / tile::CT, tc = t % tile::CT;
    int64_t gm, gn, gk;
    gemm_dims<D>(p, gm, gn, gk);
    const int64_t n_tiles = (gn + BN - 1) / BN;
    for (int64_t g = blockIdx.z; g < p.groups; g += gridDim.z) {
        const conv_a<T, Acc, D> la = {p, g};
        const conv_b<T, Acc, D> lb = {p, g};
        for (int64_t jt = blockIdx.y; jt < n_tiles; jt += gridDim.y) {
            const int64_t i0 = (int64_t)blockIdx.x * BM, j0 = jt * BN;
            Acc acc[TM][TN];
            for (int r = 0; r < TM; r++)
                for (int c = 0; c < TN; c++)
                    acc[r][c] = (Acc)0;
            if (!p.skip) tile::mma(acc, la, lb, gm, gn, gk, i0, j0, As, Bs);
            for (int r = 0; r < TM; r++)
                for (int c = 0; c < TN; c++) {
                    const int64_t i = i0 + tr + r * tile::RT, j = j0 + tc + c * tile::CT;
                    if (i >= gm || j >= gn) continue;
                    const int64_t o = out_at<D>(p, g, i, j);
                    Acc v = p.skip ? (Acc)0 : (Acc)p.alpha * acc[r][c];
                    if (p.read_out) v += (Acc)p.beta * kmux_gpu_load_rt<Acc>(p.out, o, p.out_type);
                    if constexpr (sizeof(Acc) == sizeof(double))
                        kmux_gpu_store_rt_f64(p.out, o, v, p.out_type);
                    else
                        kmux_gpu_store_rt_f32(p.out, o, v, p.out_type);
                }
        }
    }
}

/* The launch of conv_kernel<T, Acc, D, tile> (kmux_gpu_tile_dispatch picks the tile). */
template <int T, typename Acc, int D> struct conv_launch {
    kmux_gpu_stream_t st;
    const conv_params &p;
    int max_yz;
    template <int BM, int BN, int BK, int TM, int TN> int launch() const {
        int64_t gm, gn, gk;
        gemm_dims<D>(p, gm, gn, gk);
        if (gm == 0 || gn == 0 || p.groups == 0) return 0; /* an empty output */
        dim3 grid;
        if (!kmux_gpu_tile_grid<BM, BN>(gm, gn, p.groups, max_yz, grid))
            return (int)KMUX_GPU_ERROR_INVALID_VALUE;
        const unsigned threads = kmux_gpu_tile<BM, BN, BK, TM, TN>::THREADS;
        KMUX_GPU_LAUNCH(grid, threads, st, conv_kernel<T, Acc, D, BM, BN, BK, TM, TN>)(p);
        return (int)kmux_gpu_get_last_error();
    }
};

template <int T, typename Acc, int D>
int launch_dir(kmux_gpu_stream_t st, const conv_params &p, int tile, int max_yz) {
    return kmux_gpu_tile_dispatch(tile, conv_launch<T, Acc, D>{st, p, max_yz});
}

template <int T, typename Acc>
int launch_type(kmux_gpu_stream_t st, const conv_params &p, kmux_conv_direction dir, int tile,
                int max_yz) {
    switch (dir) {
    case KMUX_CONV_FWD:
        return launch_dir<T, Acc, KMUX_CONV_FWD>(st, p, tile, max_yz);
    case KMUX_CONV_BWD_DATA:
        return launch_dir<T, Acc, KMUX_CONV_BWD_DATA>(st, p, tile, max_yz);
    case KMUX_CONV_BWD_WEIGHTS:
        return launch_dir<T, Acc, KMUX_CONV_BWD_WEIGHTS>(st, p, tile, max_yz);
    default:
        return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    }
}

static const char *dir_name(kmux_conv_direction d) {
    return d == KMUX_CONV_FWD ? "fwd" : d == KMUX_CONV_BWD_DATA ? "bwd_data" : "bwd_weights";
}

} // namespace kmux_gpu_k

extern "C" int kmux_gpu_conv2d_name(const kmux_conv2d_desc *d, int tile, char *buf, size_t size) {
    char t[48];
    if (!kmux_gpu_tile_label(tile, t, sizeof t)) return -1;
    int r = snprintf(buf, size, "kmux-gpu:conv2d:%s:%s:%s:acc=%s:tile=%s",
                     kmux_gpu_k::dir_name(d->direction), d->layout == KMUX_NHWC ? "nhwc" : "nchw",
                     kmux_dtype_desc_of(d->x_type).name, d->x_type == KMUX_F64 ? "f64" : "f32", t);
    return r < 0 || (size_t)r >= size ? -1 : 0;
}

extern "C" int kmux_gpu_conv2d(void *stream, const kmux_conv2d_desc *d, const kmux_conv2d_args *a,
                               int tile, int max_grid_yz) {
    kmux_gpu_stream_t st = (kmux_gpu_stream_t)stream;
    if (tile < 0 || tile >= KMUX_GPU_TILE_COUNT) return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    if (max_grid_yz <= 0 || max_grid_yz > KMUX_GPU_MAX_GRID_YZ) max_grid_yz = KMUX_GPU_MAX_GRID_YZ;
    kmux_gpu_conv_params p;
    kmux_gpu_conv_params_fill(&p, d, a);
    if (d->x_type != d->w_type || d->x_type != d->y_type) return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    switch (d->x_type) {
    case KMUX_F64:
        return kmux_gpu_k::launch_type<KMUX_F64, double>(st, p, d->direction, tile, max_grid_yz);
    case KMUX_F32:
        return kmux_gpu_k::launch_type<KMUX_F32, float>(st, p, d->direction, tile, max_grid_yz);
    case KMUX_F16:
        return kmux_gpu_k::launch_type<KMUX_F16, float>(st, p, d->direction, tile, max_grid_yz);
    case KMUX_BF16:
        return kmux_gpu_k::launch_type<KMUX_BF16, float>(st, p, d->direction, tile, max_grid_yz);
    default:
        return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    }
}
