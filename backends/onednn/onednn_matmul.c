/*
 * onednn_matmul.c - creation of matmul plans on oneDNN's matmul primitive (see onednn_matmul.h
 * for the row-major problem the plan solves).
 *
 * Types: f32 (strict: fpmath mode strict, also for the F32_FAST_* compute types, which oneDNN
 * 2.x cannot honour with TF32 or bf16x3 - the plan reports effective compute F32); i8 x i8 ->
 * s32 (exact, see onednn_matmul.h); bf16 and f16 either on oneDNN's native kernels (bf16 on
 * avx512_core_bf16, f16 nowhere in 2.x) or converted to f32 in a workspace ("+cvt", only when
 * the caller allows emulation; which comes first: native_narrow_first), fp8 always "+cvt"; the
 * result is rounded once to c_type. f64: oneDNN 2.x has no f64 on CPU, and kmux never lowers f64
 * (the device's capabilities leave it out, so the core refuses it). Empty problems, k == 0 and
 * alpha == 0 never reach the plugin: the core runs them.
 * alpha is a constant output scale, beta a sum post-op (none for beta == 0: C is not read), the
 * bias a binary-add post-op broadcast over rows where that is safe (onednn_matmul.h),
 * relu/gelu_tanh eltwise post-ops; otherwise bias and activation are applied by hand.
 */
#include "onednn_matmul.h"
#include "kmux_sys_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char FN[] = "kmux_matmul_plan_create";

static int is_fp8(kmux_dtype t) {
    return t == KMUX_F8_E4M3 || t == KMUX_F8_E5M2 || t == KMUX_F8_E4M3_FNUZ ||
           t == KMUX_F8_E5M2_FNUZ;
}

static size_t align64(size_t v) {
    return (v + 63) / 64 * 64;
}

static uint32_t f32_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* Memory descriptor of an input: the user's storage, or (dense) its packed f32 copy. */
static dnnl_status_t operand_md(const kmux_dnn_mm_operand *o, int nd, int64_t batch,
                                dnnl_data_type_t dt, int dense, dnnl_memory_desc_t *md) {
    int64_t srows = o->trans ? o->cols : o->rows, scols = o->trans ? o->rows : o->cols;
    int64_t ld = dense ? scols : o->ld;
    dnnl_dims_t dims = {0}, strides = {0};
    int i = 0;
    if (nd == 3) {
        dims[0] = o->bstride == 0 ? 1 : batch;
        strides[0] = (dense || o->bstride == 0) ? srows * scols : o->bstride;
        i = 1;
    }
    dims[i] = o->rows;
    dims[i + 1] = o->cols;
    strides[i] = o->trans ? 1 : ld;
    strides[i + 1] = o->trans ? ld : 1;
    return dnnl_memory_desc_init_by_strides(md, nd, dims, dt, strides);
}

/* Memory descriptor of the output: the C view, or the dense f32 workspace W. */
static dnnl_status_t dst_md(const kmux_dnn_mm_plan *p, int nd, dnnl_data_type_t dt, int dense,
                            dnnl_memory_desc_t *md) {
    dnnl_dims_t dims = {0}, strides = {0};
    int i = 0;
    if (nd == 3) {
        dims[0] = p->prim_batch;
        strides[0] = dense ? p->M * p->N : p->bstride_r;
        i = 1;
    }
    dims[i] = p->M;
    dims[i + 1] = p->N;
    strides[i] = dense ? p->N : p->ldr;
    strides[i + 1] = 1;
    return dnnl_memory_desc_init_by_strides(md, nd, dims, dt, strides);
}

/* The attribute of the variant (alpha, beta). NULL when oneDNN refuses (status in *s). */
static dnnl_primitive_attr_t variant_attr(const kmux_dnn_mm_plan *p, float alpha, float beta,
                                          dnnl_status_t *s) {
    dnnl_primitive_attr_t attr = kmux_dnn_attr_new();
    dnnl_post_ops_t po = NULL;
    *s = attr ? dnnl_success : dnnl_out_of_memory;
    if (*s == dnnl_success && !p->is_int) {
        if (p->rt_alpha) {
            float rt = DNNL_RUNTIME_F32_VAL;
            *s = dnnl_primitive_attr_set_output_scales(attr, 1, 0, &rt);
        } else if (alpha != 1.0f) {
            *s = dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha);
        }
        if (*s == dnnl_success) *s = dnnl_post_ops_create(&po);
        if (*s == dnnl_success && beta != 0.0f) *s = dnnl_post_ops_append_sum(po, beta);
        if (*s == dnnl_success && p->bias_in_prim)
            *s = dnnl_post_ops_append_binary(po, dnnl_binary_add, &p->md_bias);
        if (*s == dnnl_success && !p->epi_by_hand && (p->d.epilogue & KMUX_EPILOGUE_RELU))
            *s = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
        if (*s == dnnl_success && !p->epi_by_hand && (p->d.epilogue & KMUX_EPILOGUE_GELU))
            *s = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_gelu_tanh, 0.0f, 0.0f);
        if (*s == dnnl_success) *s = dnnl_primitive_attr_set_post_ops(attr, po);
    }
    if (po) dnnl_post_ops_destroy(po);
    if (*s != dnnl_success && attr) {
        dnnl_primitive_attr_destroy(attr);
        attr = NULL;
    }
    return attr;
}

/* Kernels the plan must not use: oneDNN 2.x's AMX int8 brgemm matmul (brg:avx512_core_amx_int8)
 * executes an invalid tile configuration, SIGILL on tdpbssd, when K is not a multiple of 4
 * (the VNNI-4 tail): on a 2-core Sapphire Rapids VM with oneDNN 2.6.3, M x K x N = 33 x 127 x 1
 * and 17, 65/66/97/130 x 125..127 x 1 crashed the process (the conformance suite's i8 GEMM), while
 * every K % 4 == 0 shape and every other kernel ran. Those plans take the next kernel (brgemm
 * avx512_core_vnni). */
static const char *kernels_to_avoid(const kmux_dnn_mm_plan *p) {
    return p->is_int && p->K % 4 != 0 && dnnl_version()->major < 3 ? "amx" : NULL;
}

/* Creates the primitive of (alpha, beta) for the plan's implementation. want_impl NULL: the
 * implementation number p->mode_index (used for the first variant, which fixes the name). */
static dnnl_status_t variant_create(kmux_dnn_state *st, const kmux_dnn_mm_plan *p, float alpha,
                                    float beta, const char *want_impl, dnnl_primitive_t *prim,
                                    size_t *scratch, char *impl, size_t impl_size) {
    dnnl_status_t s;
    dnnl_primitive_attr_t attr = variant_attr(p, alpha, beta, &s);
    if (!attr) return s;
    dnnl_primitive_desc_t pd = NULL;
    s = kmux_dnn_pd_create(&p->op, attr, st->engine, NULL, p->mode_index, want_impl,
                           kernels_to_avoid(p), &pd);
    dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success) return s;
    if (impl) snprintf(impl, impl_size, "%s", kmux_dnn_pd_impl(pd));
    *scratch = kmux_dnn_pd_scratch(pd);
    s = dnnl_primitive_create(prim, pd);
    dnnl_primitive_desc_destroy(pd);
    return s;
}

kmux_status kmux_dnn_mm_variant_get(kmux_dnn_state *st, const kmux_dnn_mm_plan *p, float alpha,
                                    float beta, dnnl_primitive_t *prim, size_t *scratch,
                                    int *temporary) {
    uint32_t ab = (p->is_int || p->rt_alpha) ? 0u : f32_bits(alpha);
    uint32_t bb = (p->is_int || beta == 0.0f) ? 0u : f32_bits(beta);
    *temporary = 0;
    for (int i = 0; i < p->nvariants; i++)
        if (p->v[i].alpha_bits == ab && p->v[i].beta_bits == bb) {
            *prim = p->v[i].prim;
            *scratch = p->v[i].scratch;
            return KMUX_OK;
        }
    /* Not prepared at plan creation: a primitive for this call only (oneDNN's primitive cache
     * makes a repeated pair cheap); the plan itself never changes. */
    dnnl_status_t s = variant_create(st, p, p->is_int ? 1.0f : alpha, p->is_int ? 0.0f : beta,
                                     p->prim_impl, prim, scratch, NULL, 0);
    if (s != dnnl_success)
        return kmux_dnn_fail(st, "kmux_matmul_execute", "matmul primitive creation (alpha/beta)",
                             s);
    *temporary = 1;
    return KMUX_OK;
}

/* Maps the call onto the row-major problem R = P Q (see onednn_matmul.h). */
static void map_problem(kmux_dnn_mm_plan *p) {
    const kmux_matmul_desc *d = &p->d;
    kmux_dnn_mm_operand a = {0}, b = {0};
    int col = d->order == KMUX_COL_MAJOR;
    /* op(A) is m x k, op(B) k x n; in column-major they enter transposed */
    a.rows = col ? d->k : d->m;
    a.cols = col ? d->m : d->k;
    b.rows = col ? d->n : d->k;
    b.cols = col ? d->k : d->n;
    a.trans = d->transa == KMUX_TRANS;
    b.trans = d->transb == KMUX_TRANS;
    a.ld = d->lda;
    b.ld = d->ldb;
    a.bstride = d->batch_count > 1 ? d->stride_a : 0;
    b.bstride = d->batch_count > 1 ? d->stride_b : 0;
    a.type = d->a_type;
    b.type = d->b_type;
    a.from_a = 1;
    p->swapped = col;
    p->P = col ? b : a;
    p->Q = col ? a : b;
    p->M = col ? d->n : d->m;
    p->N = col ? d->m : d->n;
    p->K = d->k;
    p->ldr = d->ldc;
    p->bstride_r = d->stride_c;
    /* A and B both broadcast: oneDNN rejects a batch that only the output has; loop instead */
    int both_bcast = d->batch_count > 1 && d->stride_a == 0 && d->stride_b == 0;
    p->loop = both_bcast ? d->batch_count : 1;
    p->prim_batch = both_bcast ? 1 : d->batch_count;
    p->P.distinct = p->P.bstride == 0 ? 1 : d->batch_count;
    p->Q.distinct = p->Q.bstride == 0 ? 1 : d->batch_count;
}

static dnnl_status_t build_descs_once(kmux_dnn_mm_plan *p) {
    int nd = p->prim_batch > 1 ? 3 : 2;
    /* I32: P is the biased u8 copy (see onednn_matmul.h), dense */
    dnnl_status_t s = operand_md(&p->P, nd, p->prim_batch, p->is_int ? dnnl_u8 : p->in_type,
                                 p->cvt || p->is_int, &p->md_p);
    if (s == dnnl_success) s = operand_md(&p->Q, nd, p->prim_batch, p->in_type, p->cvt, &p->md_q);
    if (s == dnnl_success) s = dst_md(p, nd, p->dst_type, p->use_w, &p->md_dst);
    if (s == dnnl_success && p->bias_in_prim) {
        dnnl_dims_t dims = {1, 1, 1};
        dims[nd - 1] = p->N;
        s = dnnl_memory_desc_init_by_tag(&p->md_bias, nd, dims, dnnl_f32,
                                         nd == 3 ? dnnl_abc : dnnl_ab);
    }
    if (s == dnnl_success && p->rt_alpha) {
        dnnl_dims_t one = {1};
        s = dnnl_memory_desc_init_by_tag(&p->md_scale, 1, one, dnnl_f32, dnnl_a);
    }
    if (s == dnnl_success) s = dnnl_matmul_desc_init(&p->op, &p->md_p, &p->md_q, NULL, &p->md_dst);
    return s;
}

/* Memory descriptors and the op descriptor for the native (cvt == 0) or converted path. kmux
 * allows batch strides down to the span of one matrix ((rows - 1) * ld + cols), oneDNN wants at
 * least rows * ld: such batches run as a loop of 2-D matmuls instead. */
static dnnl_status_t build_descs(kmux_dnn_mm_plan *p) {
    dnnl_status_t s = build_descs_once(p);
    if (s == dnnl_invalid_arguments && p->prim_batch > 1) {
        p->loop = p->d.batch_count;
        p->prim_batch = 1;
        s = build_descs_once(p);
    }
    return s;
}

/* Sets the epilogue flags: the bias as a post-op only where oneDNN has a fast kernel for it and
 * gets it right (see onednn_matmul.h), else bias and activation by hand (by_hand = 1 forces it).
 */
static void set_epilogue(kmux_dnn_mm_plan *p, int by_hand) {
    const kmux_matmul_desc *d = &p->d;
    unsigned epi = d->epilogue;
    /* oneDNN's post-ops write no aux and have no backward: those epilogues are the finish's (the
     * bias gradients do not touch D: kmux_cpu_matmul_bias_grad after the primitive) */
    by_hand |= (epi & KMUX_EPILOGUE_WITH_AUX) != 0;
    int c_dense = p->ldr == p->N && (p->prim_batch == 1 || p->bstride_r == p->M * p->N);
    p->bias_in_prim =
        !by_hand && !p->is_int && !p->swapped && c_dense && (epi & KMUX_EPILOGUE_BIAS);
    p->epi_by_hand = !p->is_int && (by_hand || ((epi & KMUX_EPILOGUE_BIAS) && !p->bias_in_prim));
    p->bias_cvt = p->bias_in_prim && d->bias_type != KMUX_F32;
}

/* Types and descriptors of the native path (no conversion): oneDNN's own kernels. */
static dnnl_status_t native_setup(kmux_dnn_mm_plan *p) {
    const kmux_matmul_desc *d = &p->d;
    p->cvt = 0;
    p->in_type = kmux_dnn_dtype(d->a_type);
    p->dst_type = p->is_int ? dnnl_s32 : kmux_dnn_dtype(d->c_type);
    p->use_w = p->epi_by_hand && d->c_type != KMUX_F32;
    if (p->use_w) p->dst_type = dnnl_f32;
    return build_descs(p);
}

/* Back to the native path's flags and descriptors (after "+cvt"). */
static dnnl_status_t native_path(kmux_dnn_mm_plan *p) {
    p->rt_alpha = 0;
    set_epilogue(p, p->native_by_hand);
    return native_setup(p);
}

static dnnl_status_t try_native(kmux_dnn_state *st, kmux_dnn_mm_plan *p, dnnl_primitive_t *prim,
                                size_t *scratch) {
    dnnl_status_t s = native_setup(p);
    if (s == dnnl_success)
        s = variant_create(st, p, 1.0f, 0.0f, NULL, prim, scratch, p->prim_impl,
                           sizeof p->prim_impl);
    return s;
}

/* Types and descriptors of the "+cvt" path: f32 primitive on widened copies of the inputs. */
static dnnl_status_t cvt_setup(kmux_dnn_mm_plan *p) {
    const kmux_matmul_desc *d = &p->d;
    p->cvt = 1;
    p->rt_alpha = is_fp8(d->a_type) || is_fp8(d->b_type);
    p->in_type = dnnl_f32;
    p->dst_type = dnnl_f32;
    p->use_w = d->c_type != KMUX_F32;
    set_epilogue(p, 0);
    return build_descs(p);
}

/* VNNI (vpdpbusd) sums u8 x s8 products in s32 without saturation; without it oneDNN uses
 * vpmaddubsw, whose pairwise s16 sums saturate for u8 values above 127 (see onednn_matmul.h). */
static int has_vnni(dnnl_cpu_isa_t isa) {
    unsigned v = (unsigned)isa;
    return (v & (unsigned)dnnl_cpu_isa_avx512_core_vnni) ==
               (unsigned)dnnl_cpu_isa_avx512_core_vnni ||
           (v & (unsigned)dnnl_cpu_isa_avx2_vnni) == (unsigned)dnnl_cpu_isa_avx2_vnni;
}

/* bf16/f16 with emulation allowed: native kernel or f32 on converted inputs ("+cvt")? Both
 * accumulate exactly-widened products in f32 and round once, so this is a speed choice only, and
 * with prefs.tune the measurement makes it on the real shape. Without tuning, native comes first
 * where the CPU has bf16 dot-product instructions (isa avx512_core_bf16: AVX512_BF16, or AMX),
 * "+cvt" (f32 FMAs) first everywhere else. Measurements behind the rule (oneDNN 2.6.3, 2 cores,
 * interleaved medians): AMD EPYC Zen 4 (AVX512_BF16), 1024^3: native brg:avx512_core_bf16
 * 419-446 GFLOP/s against 134-178 for "+cvt" (issue 14); AMX: native several times f32. One
 * earlier Xeon measurement with avx512_core_bf16 and no AMX (2048^3) had native at 211 ms and
 * "+cvt" at 129 ms: the rule is wrong there, KMUX_TUNE=1 corrects it. f16 has no native kernel
 * but the reference one in oneDNN 2.x except with AMX. The other path follows in
 * plan_next_impl. */
static int has_amx(dnnl_cpu_isa_t isa) {
    return ((unsigned)isa & (unsigned)dnnl_cpu_isa_avx512_core_amx) ==
           (unsigned)dnnl_cpu_isa_avx512_core_amx;
}

static int native_narrow_first(dnnl_cpu_isa_t isa, kmux_dtype t) {
    unsigned bf16 = (unsigned)dnnl_cpu_isa_avx512_core_bf16;
    return has_amx(isa) || (t == KMUX_BF16 && ((unsigned)isa & bf16) == bf16);
}

/* Decides the path for the plan's types and creates its first primitive. */
static kmux_status choose_path(kmux_dnn_state *st, kmux_dnn_mm_plan *p,
                               const kmux_plan_prefs *prefs, dnnl_primitive_t *prim,
                               size_t *scratch) {
    const kmux_matmul_desc *d = &p->d;
    int narrow = d->a_type == KMUX_F16 || d->a_type == KMUX_BF16;
    int fp8 = is_fp8(d->a_type) || is_fp8(d->b_type);
    p->base.effective_compute = p->is_int ? KMUX_COMPUTE_I32 : KMUX_COMPUTE_F32;
    set_epilogue(p, 0);
    dnnl_status_t s = dnnl_unimplemented;
    if (!fp8) { /* native first */
        s = try_native(st, p, prim, scratch);
        if (s == dnnl_success && kmux_dnn_is_ref_kernel(p->prim_impl) && d->epilogue &&
            !p->epi_by_hand) {
            /* only oneDNN's reference kernel fuses this epilogue: apply it by hand instead */
            dnnl_primitive_t alt = NULL;
            size_t alt_scratch = 0;
            char ref_impl[sizeof p->prim_impl];
            memcpy(ref_impl, p->prim_impl, sizeof ref_impl);
            set_epilogue(p, 1);
            if (try_native(st, p, &alt, &alt_scratch) == dnnl_success &&
                !kmux_dnn_is_ref_kernel(p->prim_impl)) {
                dnnl_primitive_destroy(*prim);
                *prim = alt;
                *scratch = alt_scratch;
            } else { /* keep the fused reference kernel */
                if (alt) dnnl_primitive_destroy(alt);
                set_epilogue(p, 0);
                s = native_setup(p);
                memcpy(p->prim_impl, ref_impl, sizeof ref_impl);
            }
        }
        int cvt_ok = narrow && prefs->allow_emulation;
        if (s == dnnl_success && cvt_ok &&
            (kmux_dnn_is_ref_kernel(p->prim_impl) || !native_narrow_first(st->isa, d->a_type))) {
            /* a native kernel exists but "+cvt" runs first (see prefer_cvt below); the native
             * one stays reachable with plan_next_impl unless it is a reference kernel */
            p->alt_next = !kmux_dnn_is_ref_kernel(p->prim_impl);
            p->native_by_hand = p->epi_by_hand;
            dnnl_primitive_destroy(*prim);
            *prim = NULL;
        } else if (s == dnnl_success) {
            /* "+cvt" stays available as the implementations after the native ones */
            p->alt_next = cvt_ok;
            p->native_by_hand = p->epi_by_hand;
            return KMUX_OK;
        } else if (!narrow || s != dnnl_unimplemented) {
            return KMUX_DNN_ERROR(
                st, s == dnnl_unimplemented ? KMUX_ERR_UNSUPPORTED : KMUX_ERR_DEVICE,
                "%s: backend onednn: oneDNN has no matmul for a_type=%s c_type=%s compute=%s on "
                "this CPU (isa %s): %s (%d)",
                FN, kmux_common_dtype_name(d->a_type), kmux_common_dtype_name(d->c_type),
                kmux_common_compute_type_name(d->compute_type), kmux_dnn_isa_name(st->isa),
                kmux_dnn_status_name(s), (int)s);
        }
    }
    if (!prefs->allow_emulation)
        return KMUX_DNN_ERROR(st, KMUX_ERR_UNSUPPORTED,
                              "%s: backend onednn: oneDNN %d.%d has no %s x %s matmul on this CPU "
                              "(isa %s) and prefs.allow_emulation is 0 (it would run in f32 on "
                              "converted inputs, \"+cvt\")",
                              FN, dnnl_version()->major, dnnl_version()->minor,
                              kmux_common_dtype_name(d->a_type), kmux_common_dtype_name(d->b_type),
                              kmux_dnn_isa_name(st->isa));
    s = cvt_setup(p);
    if (s == dnnl_success)
        s = variant_create(st, p, 1.0f, 0.0f, NULL, prim, scratch, p->prim_impl,
                           sizeof p->prim_impl);
    if (s != dnnl_success) return kmux_dnn_fail(st, FN, "f32 matmul primitive creation", s);
    return KMUX_OK;
}

/* Workspace layout: [P f32][Q f32] (cvt) or [P u8][colsum Q s32] (I32), [W] (f32 dense, or s32
 * in the C layout), [bias f32]. */
static size_t plan_workspace(kmux_dnn_mm_plan *p) {
    size_t off = 0;
    if (p->cvt) {
        p->P.cvt_offset = off;
        off += align64((size_t)(p->P.distinct * p->P.rows * p->P.cols) * sizeof(float));
        p->Q.cvt_offset = off;
        off += align64((size_t)(p->Q.distinct * p->Q.rows * p->Q.cols) * sizeof(float));
    }
    if (p->is_int) { /* u8 copy (two halves when split) of P, column sums of Q */
        p->P.cvt_offset = off;
        off += align64((size_t)(p->P.distinct * p->P.rows * p->P.cols)) * (p->int_split ? 2 : 1);
        p->off_colsum = off;
        off += align64((size_t)(p->Q.distinct * p->N) * sizeof(int32_t));
    }
    p->off_w = off;
    if (p->is_int) {
        int64_t batches = p->d.batch_count;
        int64_t span = (batches - 1) * p->bstride_r + (p->M - 1) * p->ldr + p->N;
        off += align64((size_t)span * sizeof(int32_t));
        p->off_w2 = off;
        if (p->int_split) off += align64((size_t)span * sizeof(int32_t));
    } else if (p->use_w) {
        off += align64((size_t)(p->d.batch_count * p->M * p->N) * sizeof(float));
    }
    p->off_bias = off;
    if (p->bias_cvt) off += align64((size_t)p->N * sizeof(float));
    return off;
}

static void set_impl_name(kmux_dnn_mm_plan *p) {
    snprintf(p->base.impl, sizeof p->base.impl, "onednn:%s%s%s", p->prim_impl, p->cvt ? "+cvt" : "",
             p->int_split ? "+u8x2" : "");
}

/* The variant (alpha, beta) = (1, 1) (accumulation into C) next to (1, 0), so that both common
 * calls find a prepared primitive. A failure only means such calls make their own. */
static void add_beta_one_variant(kmux_dnn_state *st, kmux_dnn_mm_plan *p) {
    if (p->is_int || p->nvariants >= KMUX_DNN_MM_VARIANTS) return;
    dnnl_primitive_t prim = NULL;
    size_t scratch = 0;
    if (variant_create(st, p, 1.0f, 1.0f, p->prim_impl, &prim, &scratch, NULL, 0) != dnnl_success)
        return;
    kmux_dnn_mm_variant *v = &p->v[p->nvariants++];
    v->alpha_bits = p->rt_alpha ? 0u : f32_bits(1.0f);
    v->beta_bits = f32_bits(1.0f);
    v->prim = prim;
    v->scratch = scratch;
}

/* I32 with VNNI or AMX: oneDNN's s8 x s8 primitive of the plan's kernel on the caller's P (see
 * onednn_matmul.h), for the calls whose data keep it exact. Only brgemm kernels, whose VNNI/AMX
 * dot products sum u8 x s8 in s32 without saturation; none when oneDNN offers another kernel for
 * s8 or refuses the caller's strides. */
static void add_s8_direct(kmux_dnn_state *st, kmux_dnn_mm_plan *p) {
    p->prim_s8 = NULL;
    p->scratch_s8 = 0;
    if (!p->is_int || p->int_split || strncmp(p->prim_impl, "brg:", 4) != 0) return;
    int nd = p->prim_batch > 1 ? 3 : 2;
    dnnl_matmul_desc_t op;
    dnnl_status_t s = operand_md(&p->P, nd, p->prim_batch, dnnl_s8, 0, &p->md_p_s8);
    if (s == dnnl_success) s = dnnl_matmul_desc_init(&op, &p->md_p_s8, &p->md_q, NULL, &p->md_dst);
    dnnl_primitive_attr_t attr = s == dnnl_success ? variant_attr(p, 1.0f, 0.0f, &s) : NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (attr) {
        s = kmux_dnn_pd_create(&op, attr, st->engine, NULL, 0, p->prim_impl, kernels_to_avoid(p),
                               &pd);
        dnnl_primitive_attr_destroy(attr);
    }
    /* kmux_dnn_pd_create falls back to oneDNN's first kernel when the named one is not offered
     * for s8 (say, for these strides): only the same kernel is used */
    if (pd && strcmp(kmux_dnn_pd_impl(pd), p->prim_impl) == 0) {
        if (dnnl_primitive_create(&p->prim_s8, pd) == dnnl_success)
            p->scratch_s8 = kmux_dnn_pd_scratch(pd);
        else
            p->prim_s8 = NULL;
    }
    if (pd) dnnl_primitive_desc_destroy(pd);
    st->hdr.host->trace(2, "plan,onednn,matmul,%s,s8 x s8 kernel for bounded data: %s",
                        p->base.impl, p->prim_s8 ? "yes" : "no");
}

/* Workspace of the plan: its own buffers and the larger scratchpad of its primitives. */
static void set_workspace(kmux_dnn_mm_plan *p, size_t scratch) {
    p->base.work_bytes = plan_workspace(p);
    p->base.workspace_bytes = kmux_dnn_work_offset(p->base.work_bytes) +
                              (scratch > p->scratch_s8 ? scratch : p->scratch_s8);
}

/* The implementation after cur, as a new plan: the next one oneDNN offers for cur's path; after
 * the last one of a bf16/f16 plan that allows emulation, those of the other path (native kernels
 * after "+cvt", or "+cvt" after native ones; see native_narrow_first). KMUX_ERR_LAST_IMPL (no
 * message) when there is none. */
static kmux_status mm_next(kmux_dnn_state *st, const kmux_dnn_mm_plan *cur,
                           kmux_dnn_mm_plan **out) {
    kmux_dnn_mm_plan *p = kmux_sys_malloc(sizeof *p);
    if (!p) return KMUX_ERR_OUT_OF_MEMORY;
    *p = *cur;
    kmux_dnn_pool_init(&p->base);
    p->prim_s8 = NULL;
    p->nvariants = 0;
    memset(p->v, 0, sizeof p->v);
    dnnl_primitive_t prim = NULL;
    size_t scratch = 0;
    char impl[64];
    int switched = 0;
    p->mode_index++;
    dnnl_status_t s = variant_create(st, p, 1.0f, 0.0f, NULL, &prim, &scratch, impl, sizeof impl);
    if (s == dnnl_iterator_ends && p->alt_next) { /* this path's list done: the other path */
        p->mode_index = 0;
        s = cur->cvt ? native_path(p) : cvt_setup(p);
        if (s == dnnl_success)
            s = variant_create(st, p, 1.0f, 0.0f, NULL, &prim, &scratch, impl, sizeof impl);
        switched = s == dnnl_success;
    }
    if (s != dnnl_success) {
        if (s != dnnl_iterator_ends)
            st->hdr.host->trace(2, "plan,onednn,matmul,%s,implementations end at %s (%d)",
                                cur->base.impl, kmux_dnn_status_name(s), (int)s);
        kmux_dnn_pool_destroy(&p->base);
        free(p);
        return KMUX_ERR_LAST_IMPL;
    }
    p->v[0].alpha_bits = p->rt_alpha || p->is_int ? 0u : f32_bits(1.0f);
    p->v[0].beta_bits = 0u;
    p->v[0].prim = prim;
    p->v[0].scratch = scratch;
    p->nvariants = 1;
    snprintf(p->prim_impl, sizeof p->prim_impl, "%s", impl);
    if (switched) p->alt_next = 0;
    p->base.impl_index = cur->base.impl_index + 1;
    set_impl_name(p);
    add_s8_direct(st, p);
    set_workspace(p, scratch);
    *out = p;
    return KMUX_OK;
}

kmux_status kmux_dnn_matmul_build(kmux_dnn_state *st, const kmux_matmul_desc *desc,
                                  const kmux_plan_prefs *prefs,
                                  kmux_dnn_plan *list[KMUX_DNN_MAX_IMPLS], int *count) {
    const kmux_matmul_desc *d = desc;
    kmux_dnn_mm_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return kmux_dnn_oom(st, FN, sizeof *p);
    p->base.kind = KMUX_DNN_MATMUL;
    p->d = *d;
    kmux_dnn_pool_init(&p->base);
    map_problem(p);
    p->is_int = d->compute_type == KMUX_COMPUTE_I32;
    p->int_split = p->is_int && !has_vnni(st->isa);
    kmux_dnn_threads th;
    kmux_dnn_threads_enter(st, &th);
    dnnl_primitive_t prim = NULL;
    size_t scratch = 0;
    kmux_status ks = choose_path(st, p, prefs, &prim, &scratch);
    if (ks != KMUX_OK) {
        kmux_dnn_threads_leave(&th);
        kmux_dnn_matmul_destroy(&p->base);
        return ks;
    }
    p->v[0].alpha_bits = p->rt_alpha || p->is_int ? 0u : f32_bits(1.0f);
    p->v[0].beta_bits = 0u;
    p->v[0].prim = prim;
    p->v[0].scratch = scratch;
    p->nvariants = 1;
    set_impl_name(p);
    add_s8_direct(st, p);
    set_workspace(p, scratch);
    /* Every implementation is prepared now: the plan never changes after creation. */
    int n = 1;
    list[0] = &p->base;
    while (n < KMUX_DNN_MAX_IMPLS) {
        kmux_dnn_mm_plan *next = NULL;
        if (mm_next(st, (const kmux_dnn_mm_plan *)list[n - 1], &next) != KMUX_OK) break;
        list[n++] = &next->base;
    }
    add_beta_one_variant(st, p);
    kmux_dnn_threads_leave(&th);
    st->hdr.host->trace(2, "plan,onednn,matmul,%s,%s,%s,%s,%d implementations", p->base.impl,
                        kmux_common_dtype_name(d->a_type), kmux_common_dtype_name(d->c_type),
                        kmux_common_compute_type_name(d->compute_type), n);
    *count = n;
    return KMUX_OK;
}

void kmux_dnn_matmul_destroy(kmux_dnn_plan *plan) {
    kmux_dnn_mm_plan *p = (kmux_dnn_mm_plan *)plan;
    for (int i = 0; i < p->nvariants; i++)
        dnnl_primitive_destroy(p->v[i].prim);
    if (p->prim_s8) dnnl_primitive_destroy(p->prim_s8);
    kmux_dnn_pool_destroy(&p->base);
    free(p);
}
