/*
 * onednn_util.c - small helpers of the oneDNN plugin: thread count around oneDNN calls, error
 * messages with oneDNN's status names, primitive descriptor creation by implementation index,
 * the oneDNN data type of a kmux dtype, ISA names.
 */
#include "onednn_internal.h"

#include <omp.h>
#include <string.h>

void kmux_dnn_threads_enter(const kmux_dnn_state *st, kmux_dnn_threads *t) {
    int want = kmux_dnn_fork_threads(st); /* 1 in a fork() child of a pool (onednn_fork.c) */
    t->saved = omp_get_max_threads();
    if (t->saved != want) omp_set_num_threads(want);
}

void kmux_dnn_threads_leave(const kmux_dnn_threads *t) {
    if (omp_get_max_threads() != t->saved) omp_set_num_threads(t->saved);
}

const char *kmux_dnn_status_name(dnnl_status_t s) {
    switch (s) {
    case dnnl_success:
        return "dnnl_success";
    case dnnl_out_of_memory:
        return "dnnl_out_of_memory";
    case dnnl_invalid_arguments:
        return "dnnl_invalid_arguments";
    case dnnl_unimplemented:
        return "dnnl_unimplemented";
    case dnnl_iterator_ends:
        return "dnnl_iterator_ends";
    case dnnl_runtime_error:
        return "dnnl_runtime_error";
    case dnnl_not_required:
        return "dnnl_not_required";
    }
    return "dnnl_status_unknown";
}

kmux_status kmux_dnn_fail(const kmux_dnn_state *st, const char *fn, const char *what,
                          dnnl_status_t s) {
    kmux_status ks = KMUX_ERR_DEVICE;
    if (s == dnnl_unimplemented) ks = KMUX_ERR_UNSUPPORTED;
    if (s == dnnl_out_of_memory) ks = KMUX_ERR_OUT_OF_MEMORY;
    return KMUX_DNN_ERROR(st, ks, "%s: backend onednn: oneDNN %s failed: %s (%d)", fn, what,
                          kmux_dnn_status_name(s), (int)s);
}

kmux_status kmux_dnn_oom(const kmux_dnn_state *st, const char *fn, size_t bytes) {
    return KMUX_DNN_ERROR(st, KMUX_ERR_OUT_OF_MEMORY,
                          "%s: backend onednn: cannot allocate %zu bytes of host memory", fn,
                          bytes);
}

dnnl_primitive_attr_t kmux_dnn_attr_new(void) {
    dnnl_primitive_attr_t attr = NULL;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success) return NULL;
    if (dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) != dnnl_success ||
        dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_strict) != dnnl_success) {
        dnnl_primitive_attr_destroy(attr);
        return NULL;
    }
    return attr;
}

const char *kmux_dnn_pd_impl(const_dnnl_primitive_desc_t pd) {
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl)
        return "?";
    return impl;
}

size_t kmux_dnn_pd_scratch(const_dnnl_primitive_desc_t pd) {
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    return md ? dnnl_memory_desc_get_size(md) : 0;
}

int kmux_dnn_is_ref_kernel(const char *impl) {
    return strncmp(impl, "ref", 3) == 0;
}

/* A kernel the caller avoids (its name contains `avoid`). */
static int is_avoided(const_dnnl_primitive_desc_t pd, const char *avoid) {
    return avoid && strstr(kmux_dnn_pd_impl(pd), avoid) != NULL;
}

/* A reference kernel, or one the caller avoids: listed only when nothing else is offered. */
static int is_last_resort(const_dnnl_primitive_desc_t pd, const char *avoid) {
    return kmux_dnn_is_ref_kernel(kmux_dnn_pd_impl(pd)) || is_avoided(pd, avoid);
}

/* Walks oneDNN's implementation list (see kmux_dnn_pd_create). */
static dnnl_status_t pd_walk(const_dnnl_op_desc_t op_desc, const_dnnl_primitive_attr_t attr,
                             dnnl_engine_t engine, const_dnnl_primitive_desc_t hint, int impl_index,
                             const char *want_impl, const char *avoid, dnnl_primitive_desc_t *pd) {
    dnnl_primitive_desc_iterator_t it = NULL;
    dnnl_status_t s = dnnl_primitive_desc_iterator_create(&it, op_desc, attr, engine, hint);
    if (s != dnnl_success) return s;
    /* The list oneDNN offers ends with slow reference implementations; they are listed only
     * when they are all there is (then index 0 is the first of them). */
    dnnl_primitive_desc_t first = dnnl_primitive_desc_iterator_fetch(it);
    dnnl_primitive_desc_t found = NULL;
    int index = 0;
    if (!first) {
        dnnl_primitive_desc_iterator_destroy(it);
        return dnnl_runtime_error;
    }
    for (dnnl_primitive_desc_t cur = first; cur;) {
        int match = want_impl ? strcmp(kmux_dnn_pd_impl(cur), want_impl) == 0
                              : (!is_last_resort(cur, avoid) && index++ == impl_index);
        if (match) {
            found = cur;
            break;
        }
        if (cur != first) dnnl_primitive_desc_destroy(cur);
        cur = dnnl_primitive_desc_iterator_next(it) == dnnl_success
                  ? dnnl_primitive_desc_iterator_fetch(it)
                  : NULL;
    }
    dnnl_primitive_desc_iterator_destroy(it);
    if (found) {
        if (found != first) dnnl_primitive_desc_destroy(first);
        *pd = found;
        return dnnl_success;
    }
    /* want_impl not offered with these attributes, or only reference implementations exist */
    if (want_impl || (impl_index == 0 && index == 0)) {
        *pd = first;
        return dnnl_success;
    }
    dnnl_primitive_desc_destroy(first);
    return dnnl_iterator_ends;
}

static pthread_mutex_t walk_lock = PTHREAD_MUTEX_INITIALIZER;

dnnl_status_t kmux_dnn_pd_create(const_dnnl_op_desc_t op_desc, const_dnnl_primitive_attr_t attr,
                                 dnnl_engine_t engine, const_dnnl_primitive_desc_t hint,
                                 int impl_index, const char *want_impl, const char *avoid,
                                 dnnl_primitive_desc_t *pd) {
    dnnl_primitive_desc_t first = NULL;
    dnnl_status_t s = dnnl_primitive_desc_create(&first, op_desc, attr, engine, hint);
    if (s != dnnl_success) return s;
    if (want_impl ? strcmp(kmux_dnn_pd_impl(first), want_impl) == 0
                  : impl_index == 0 && !is_avoided(first, avoid)) {
        *pd = first;
        return dnnl_success;
    }
    dnnl_primitive_desc_destroy(first);
    /* oneDNN 2.6 bug: an iterator that finds its current entry in the primitive cache does not
     * advance its position in the implementation list, so after a cache hit next() starts the
     * list over and offers the first implementation again and again. Walking past the first
     * entry therefore runs with the cache emptied (capacity 0; this only costs other primitive
     * creations a cache miss) and restored afterwards, one walk at a time. */
    pthread_mutex_lock(&walk_lock);
    int capacity = 0;
    int restore = dnnl_get_primitive_cache_capacity(&capacity) == dnnl_success &&
                  dnnl_set_primitive_cache_capacity(0) == dnnl_success;
    s = pd_walk(op_desc, attr, engine, hint, impl_index, want_impl, avoid, pd);
    if (restore) dnnl_set_primitive_cache_capacity(capacity);
    pthread_mutex_unlock(&walk_lock);
    return s;
}

dnnl_data_type_t kmux_dnn_dtype(kmux_dtype t) {
    switch (t) {
    case KMUX_F32:
        return dnnl_f32;
    case KMUX_F16:
        return dnnl_f16;
    case KMUX_BF16:
        return dnnl_bf16;
    case KMUX_I8:
        return dnnl_s8;
    case KMUX_I32:
        return dnnl_s32;
    default:
        return dnnl_data_type_undef;
    }
}

const char *kmux_dnn_isa_name(dnnl_cpu_isa_t isa) {
    switch (isa) {
    case dnnl_cpu_isa_sse41:
        return "sse41";
    case dnnl_cpu_isa_avx:
        return "avx";
    case dnnl_cpu_isa_avx2:
        return "avx2";
    case dnnl_cpu_isa_avx2_vnni:
        return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic:
        return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops:
        return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core:
        return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni:
        return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16:
        return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx:
        return "avx512_core_amx";
    default:
        return "generic";
    }
}
