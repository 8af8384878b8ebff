/*
 * onednn_api.c - fills the oneDNN entry-point table (onednn_api.h) from the oneDNN this plugin
 * opens itself.
 */
#define KMUX_DNNL_API_NO_MACROS
#include "onednn_api.h"

#include "dispatch/common/kmux_vendor_lib.h"

#ifndef KMUX_DNNL_LIBRARY
#define KMUX_DNNL_LIBRARY "libdnnl.so.2"
#endif

kmux_dnnl_api_table kmux_dnnl_api;

#define SYM(f)                                                                                     \
    { #f, offsetof(kmux_dnnl_api_table, f) }
static const kmux_vendor_sym syms[] = {
    SYM(dnnl_dilated_convolution_backward_data_desc_init),
    SYM(dnnl_dilated_convolution_backward_weights_desc_init),
    SYM(dnnl_dilated_convolution_forward_desc_init),
    SYM(dnnl_eltwise_backward_desc_init),
    SYM(dnnl_eltwise_forward_desc_init),
    SYM(dnnl_engine_create),
    SYM(dnnl_engine_destroy),
    SYM(dnnl_get_effective_cpu_isa),
    SYM(dnnl_get_primitive_cache_capacity),
    SYM(dnnl_matmul_desc_init),
    SYM(dnnl_memory_create),
    SYM(dnnl_memory_desc_equal),
    SYM(dnnl_memory_desc_get_size),
    SYM(dnnl_memory_desc_init_by_strides),
    SYM(dnnl_memory_desc_init_by_tag),
    SYM(dnnl_memory_destroy),
    SYM(dnnl_memory_set_data_handle),
    SYM(dnnl_post_ops_append_binary),
    SYM(dnnl_post_ops_append_eltwise),
    SYM(dnnl_post_ops_append_sum),
    SYM(dnnl_post_ops_create),
    SYM(dnnl_post_ops_destroy),
    SYM(dnnl_primitive_attr_create),
    SYM(dnnl_primitive_attr_destroy),
    SYM(dnnl_primitive_attr_set_fpmath_mode),
    SYM(dnnl_primitive_attr_set_output_scales),
    SYM(dnnl_primitive_attr_set_post_ops),
    SYM(dnnl_primitive_attr_set_scratchpad_mode),
    SYM(dnnl_primitive_create),
    SYM(dnnl_primitive_desc_create),
    SYM(dnnl_primitive_desc_destroy),
    SYM(dnnl_primitive_desc_iterator_create),
    SYM(dnnl_primitive_desc_iterator_destroy),
    SYM(dnnl_primitive_desc_iterator_fetch),
    SYM(dnnl_primitive_desc_iterator_next),
    SYM(dnnl_primitive_desc_query),
    SYM(dnnl_primitive_desc_query_md),
    SYM(dnnl_primitive_destroy),
    SYM(dnnl_primitive_execute),
    SYM(dnnl_reorder_primitive_desc_create),
    SYM(dnnl_set_primitive_cache_capacity),
    SYM(dnnl_stream_create),
    SYM(dnnl_stream_destroy),
    SYM(dnnl_binary_desc_init),
    SYM(dnnl_pooling_backward_desc_init),
    SYM(dnnl_pooling_forward_desc_init),
    SYM(dnnl_reduction_desc_init),
    SYM(dnnl_version),
};
#undef SYM

static kmux_vendor_lib_once once = KMUX_VENDOR_LIB_ONCE_INIT;

int kmux_dnnl_api_load(char *why, size_t why_size) {
    return kmux_vendor_lib_load_once(&once, KMUX_DNNL_LIBRARY, syms, sizeof syms / sizeof syms[0],
                                     &kmux_dnnl_api, why, why_size);
}
