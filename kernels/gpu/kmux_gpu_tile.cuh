/*
 * kmux_gpu_tile.cuh - the block-level tiled multiply shared by the GEMM and the implicit-GEMM
 * convolution kernels: a BM x BN tile of op(A) op(B) over K, staged through shared memory in
 * steps of BK, each of the (BM / TM) * (BN / TN) threads of the 1-D block accumulating a
 * TM x TN micro-tile (rows tr + r * BM / TM, columns tc + c * BN / TN). Operands are read
 * through loader functors (element (i, p) of A and (p, j) of B, already decoded to the
 * accumulation type, 0 outside the problem), so one core serves every dtype, layout and
 * convolution direction. No wave-width assumption: only block barriers.
 */
#ifndef KMUX_GPU_TILE_CUH
#define KMUX_GPU_TILE_CUH

#include <stdio.h>

#include "kmux_gpu_formats.cuh"

/* Multiply-add in the accumulation type: f32 and f64 fused (one rounding per step on every
 * target), i32 wrapping modulo 2^32 as cuBLAS integer GEMM. */
template <typename Acc> struct kmux_gpu_acc_ops;
template <> struct kmux_gpu_acc_ops<float> {
    static KMUX_DEV float mad(float a, float b, float c) {
        return fmaf(a, b, c);
    }
};
template <> struct kmux_gpu_acc_ops<double> {
    static KMUX_DEV double mad(double a, double b, double c) {
        return fma(a, b, c);
    }
};
template <> struct kmux_gpu_acc_ops<int32_t> {
    static KMUX_DEV int32_t mad(int32_t a, int32_t b, int32_t c) {
        return (int32_t)((uint32_t)c + (uint32_t)a * (uint32_t)b);
    }
};

template <int BM, int BN, int BK, int TM, int TN> struct kmux_gpu_tile {
    static constexpr int RT = BM / TM; /* thread rows */
    static constexpr int CT = BN / TN; /* thread columns */
    static constexpr int THREADS = RT * CT;
    static constexpr int MT = TM, NT = TN; /* a thread's micro-tile, for code outside mma */
    static_assert(BM % TM == 0 && BN % TN == 0, "tile not divisible by the micro-tile");

    /* acc += A[i0 .. i0+BM) x B[.., j0 .. j0+BN) over p < k. As (BK * BM) and Bs (BK * BN) are
     * the block's shared arrays. Every thread of the block must call it. */
    template <typename Acc, class LA, class LB>
    static KMUX_DEV void mma(Acc (&acc)[TM][TN], const LA &la, const LB &lb, int64_t m, int64_t n,
                             int64_t k, int64_t i0, int64_t j0, Acc *As, Acc *Bs) {
        const int t = (int)threadIdx.x;
        const int tr = t / CT, tc = t % CT;
        for (int64_t p0 = 0; p0 < k; p0 += BK) {
            for (int e = t; e < BM * BK; e += THREADS) {
                const int il = e % BM, pl = e / BM;
                const int64_t i = i0 + il, p = p0 + pl;
#if KMUX_GPU_PLANT == KMUX_GPU_PLANT_TILE_EDGE
                const bool in = i < m && p <= k; /* planted bug: one step past the K edge */
#else
                const bool in = i < m && p < k;
#endif
                As[pl * BM + il] = in ? la(i, p) : (Acc)0;
            }
            for (int e = t; e < BN * BK; e += THREADS) {
                const int jl = e % BN, pl = e / BN;
                const int64_t j = j0 + jl, p = p0 + pl;
                Bs[pl * BN + jl] = j < n && p < k ? lb(p, j) : (Acc)0;
            }
#if KMUX_GPU_PLANT != KMUX_GPU_PLANT_NO_BARRIER
            __syncthreads();
#endif
            /* only the real steps: a padded fma(0, 0, -0) would turn -0 into +0 */
            const int kl = k - p0 < BK ? (int)(k - p0) : BK;
            for (int pl = 0; pl < kl; pl++) {
                Acc a[TM], b[TN];
                for (int r = 0; r < TM; r++)
                    a[r] = As[pl * BM + tr + r * RT];
                for (int c = 0; c < TN; c++)
                    b[c] = Bs[pl * BN + tc + c * CT];
                for (int r = 0; r < TM; r++)
                    for (int c = 0; c < TN; c++)
                        acc[r][c] = kmux_gpu_acc_ops<Acc>::mad(a[r], b[c], acc[r][c]);
            }
            __syncthreads(); /* before the next step overwrites the tiles */
        }
    }
};

/* Block-wide amax of non-negative f32 bit patterns: see kmux_gpu_block_max_to. */

/* The tile configurations the launchers know, as (BM, BN, BK, TM, TN); all 256 threads. */
#define KMUX_GPU_TILES(X)                                                                          \
    X(0, 64, 64, 16, 4, 4)                                                                         \
    X(1, 32, 32, 8, 2, 2)

/* ---- host side of the tiled launchers (kmux_gpu_gemm.cu, kmux_gpu_conv.cu) ---- */

/* f.template launch<BM, BN, BK, TM, TN>() for tile index `tile` of KMUX_GPU_TILES: the one switch
 * from a run-time tile to the template instantiation; invalid value for an unknown tile. */
template <class F> inline int kmux_gpu_tile_dispatch(int tile, const F &f) {
    switch (tile) {
#define KMUX_GPU_TILE_CASE_(id, bm, bn, bk, tm, tn)                                                \
    case id:                                                                                       \
        return f.template launch<bm, bn, bk, tm, tn>();
        KMUX_GPU_TILES(KMUX_GPU_TILE_CASE_)
#undef KMUX_GPU_TILE_CASE_
    default:
        return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    }
}

/* Grid of a tiled kernel: x = tiles of the m output rows, y = tiles of the n columns, z = the
 * layers (batch matrices, groups); y and z capped at max_yz, the kernels loop beyond. false when
 * m needs more row tiles than a grid's x dimension holds (2^31 - 1). */
template <int BM, int BN>
inline bool kmux_gpu_tile_grid(int64_t m, int64_t n, int64_t layers, int max_yz, dim3 &grid) {
    const int64_t gx = (m + BM - 1) / BM, gy = (n + BN - 1) / BN;
    if (gx > 2147483647) return false;
    grid = dim3((unsigned)gx, (unsigned)(gy < max_yz ? gy : max_yz),
                (unsigned)(layers < max_yz ? layers : max_yz));
    return true;
}

/* "64x64x16/4x4" (BMxBNxBK/TMxTN) of tile `tile` into buf; false for an unknown tile or a buffer
 * too small. The implementation names of kmux_gpu_gemm_name and kmux_gpu_conv2d_name end so. */
inline bool kmux_gpu_tile_label(int tile, char *buf, size_t size) {
    static const int shapes[][5] = {
#define KMUX_GPU_TILE_ROW_(id, bm, bn, bk, tm, tn) {bm, bn, bk, tm, tn},
        KMUX_GPU_TILES(KMUX_GPU_TILE_ROW_)
#undef KMUX_GPU_TILE_ROW_
    };
    if (tile < 0 || tile >= (int)(sizeof shapes / sizeof shapes[0])) return false;
    const int *s = shapes[tile];
    const int r = snprintf(buf, size, "%dx%dx%d/%dx%d", s[0], s[1], s[2], s[3], s[4]);
    return r >= 0 && (size_t)r < size;
}

#endif
