/*
 * onednn_api.h - the oneDNN entry points this plugin calls, resolved from the oneDNN it opened
 * (kmux_vendor_lib.h says why: a dnnl_* function elsewhere in the process, e.g. of another oneDNN
 * the application links, must never be called in this plugin's oneDNN's place). Included by
 * onednn_internal.h after <oneapi/dnnl/dnnl.h>: the macros below redirect the usual names through
 * the table, so call sites read as plain oneDNN C API. The plugin does not link oneDNN
 * (-Wl,--no-undefined catches a call that bypasses the table: add the function here then).
 */
#ifndef KMUX_ONEDNN_API_H
#define KMUX_ONEDNN_API_H

#include <oneapi/dnnl/dnnl.h>
#include <stddef.h>

/** The table; every field has the type of the function of the same name in <dnnl.h>. */
typedef struct kmux_dnnl_api_table {
    __typeof__(&dnnl_dilated_convolution_backward_data_desc_init)
        dnnl_dilated_convolution_backward_data_desc_init;
    __typeof__(&dnnl_dilated_convolution_backward_weights_desc_init)
        dnnl_dilated_convolution_backward_weights_desc_init;
    __typeof__(&dnnl_dilated_convolution_forward_desc_init)
        dnnl_dilated_convolution_forward_desc_init;
    __typeof__(&dnnl_eltwise_backward_desc_init) dnnl_eltwise_backward_desc_init;
    __typeof__(&dnnl_eltwise_forward_desc_init) dnnl_eltwise_forward_desc_init;
    __typeof__(&dnnl_engine_create) dnnl_engine_create;
    __typeof__(&dnnl_engine_destroy) dnnl_engine_destroy;
    __typeof__(&dnnl_get_effective_cpu_isa) dnnl_get_effective_cpu_isa;
    __typeof__(&dnnl_get_primitive_cache_capacity) dnnl_get_primitive_cache_capacity;
    __typeof__(&dnnl_matmul_desc_init) dnnl_matmul_desc_init;
    __typeof__(&dnnl_memory_create) dnnl_memory_create;
    __typeof__(&dnnl_memory_desc_equal) dnnl_memory_desc_equal;
    __typeof__(&dnnl_memory_desc_get_size) dnnl_memory_desc_get_size;
    __typeof__(&dnnl_memory_desc_init_by_strides) dnnl_memory_desc_init_by_strides;
    __typeof__(&dnnl_memory_desc_init_by_tag) dnnl_memory_desc_init_by_tag;
    __typeof__(&dnnl_memory_destroy) dnnl_memory_destroy;
    __typeof__(&dnnl_memory_set_data_handle) dnnl_memory_set_data_handle;
    __typeof__(&dnnl_post_ops_append_binary) dnnl_post_ops_append_binary;
    __typeof__(&dnnl_post_ops_append_eltwise) dnnl_post_ops_append_eltwise;
    __typeof__(&dnnl_post_ops_append_sum) dnnl_post_ops_append_sum;
    __typeof__(&dnnl_post_ops_create) dnnl_post_ops_create;
    __typeof__(&dnnl_post_ops_destroy) dnnl_post_ops_destroy;
    __typeof__(&dnnl_primitive_attr_create) dnnl_primitive_attr_create;
    __typeof__(&dnnl_primitive_attr_destroy) dnnl_primitive_attr_destroy;
    __typeof__(&dnnl_primitive_attr_set_fpmath_mode) dnnl_primitive_attr_set_fpmath_mode;
    __typeof__(&dnnl_primitive_attr_set_output_scales) dnnl_primitive_attr_set_output_scales;
    __typeof__(&dnnl_primitive_attr_set_post_ops) dnnl_primitive_attr_set_post_ops;
    __typeof__(&dnnl_primitive_attr_set_scratchpad_mode) dnnl_primitive_attr_set_scratchpad_mode;
    __typeof__(&dnnl_primitive_create) dnnl_primitive_create;
    __typeof__(&dnnl_primitive_desc_create) dnnl_primitive_desc_create;
    __typeof__(&dnnl_primitive_desc_destroy) dnnl_primitive_desc_destroy;
    __typeof__(&dnnl_primitive_desc_iterator_create) dnnl_primitive_desc_iterator_create;
    __typeof__(&dnnl_primitive_desc_iterator_destroy) dnnl_primitive_desc_iterator_destroy;
    __typeof__(&dnnl_primitive_desc_iterator_fetch) dnnl_primitive_desc_iterator_fetch;
    __typeof__(&dnnl_primitive_desc_iterator_next) dnnl_primitive_desc_iterator_next;
    __typeof__(&dnnl_primitive_desc_query) dnnl_primitive_desc_query;
    __typeof__(&dnnl_primitive_desc_query_md) dnnl_primitive_desc_query_md;
    __typeof__(&dnnl_primitive_destroy) dnnl_primitive_destroy;
    __typeof__(&dnnl_primitive_execute) dnnl_primitive_execute;
    __typeof__(&dnnl_reorder_primitive_desc_create) dnnl_reorder_primitive_desc_create;
    __typeof__(&dnnl_set_primitive_cache_capacity) dnnl_set_primitive_cache_capacity;
    __typeof__(&dnnl_stream_create) dnnl_stream_create;
    __typeof__(&dnnl_stream_destroy) dnnl_stream_destroy;
    __typeof__(&dnnl_version) dnnl_version;
    __typeof__(&dnnl_binary_desc_init) dnnl_binary_desc_init;
    __typeof__(&dnnl_pooling_backward_desc_init) dnnl_pooling_backward_desc_init;
    __typeof__(&dnnl_pooling_forward_desc_init) dnnl_pooling_forward_desc_init;
    __typeof__(&dnnl_reduction_desc_init) dnnl_reduction_desc_init;
} kmux_dnnl_api_table;

/** Filled once by kmux_dnnl_api_load; read-only afterwards. */
extern kmux_dnnl_api_table kmux_dnnl_api;

/** Opens oneDNN (KMUX_DNNL_LIBRARY, the SONAME of the oneDNN found at build time) and fills
 *  kmux_dnnl_api, once per process (thread-safe). Returns 0, or -1 with the library name and
 *  the reason in why. */
int kmux_dnnl_api_load(char *why, size_t why_size);

#ifndef KMUX_DNNL_API_NO_MACROS
#define dnnl_dilated_convolution_backward_data_desc_init                                           \
    (kmux_dnnl_api.dnnl_dilated_convolution_backward_data_desc_init)
#define dnnl_dilated_convolution_backward_weights_desc_init                                        \
    (kmux_dnnl_api.dnnl_dilated_convolution_backward_weights_desc_init)
#define dnnl_dilated_convolution_forward_desc_init                                                 \
    (kmux_dnnl_api.dnnl_dilated_convolution_forward_desc_init)
#define dnnl_eltwise_backward_desc_init (kmux_dnnl_api.dnnl_eltwise_backward_desc_init)
#define dnnl_eltwise_forward_desc_init (kmux_dnnl_api.dnnl_eltwise_forward_desc_init)
#define dnnl_engine_create (kmux_dnnl_api.dnnl_engine_create)
#define dnnl_engine_destroy (kmux_dnnl_api.dnnl_engine_destroy)
#define dnnl_get_effective_cpu_isa (kmux_dnnl_api.dnnl_get_effective_cpu_isa)
#define dnnl_get_primitive_cache_capacity (kmux_dnnl_api.dnnl_get_primitive_cache_capacity)
#define dnnl_matmul_desc_init (kmux_dnnl_api.dnnl_matmul_desc_init)
#define dnnl_memory_create (kmux_dnnl_api.dnnl_memory_create)
#define dnnl_memory_desc_equal (kmux_dnnl_api.dnnl_memory_desc_equal)
#define dnnl_memory_desc_get_size (kmux_dnnl_api.dnnl_memory_desc_get_size)
#define dnnl_memory_desc_init_by_strides (kmux_dnnl_api.dnnl_memory_desc_init_by_strides)
#define dnnl_memory_desc_init_by_tag (kmux_dnnl_api.dnnl_memory_desc_init_by_tag)
#define dnnl_memory_destroy (kmux_dnnl_api.dnnl_memory_destroy)
#define dnnl_memory_set_data_handle (kmux_dnnl_api.dnnl_memory_set_data_handle)
#define dnnl_post_ops_append_binary (kmux_dnnl_api.dnnl_post_ops_append_binary)
#define dnnl_post_ops_append_eltwise (kmux_dnnl_api.dnnl_post_ops_append_eltwise)
#define dnnl_post_ops_append_sum (kmux_dnnl_api.dnnl_post_ops_append_sum)
#define dnnl_post_ops_create (kmux_dnnl_api.dnnl_post_ops_create)
#define dnnl_post_ops_destroy (kmux_dnnl_api.dnnl_post_ops_destroy)
#define dnnl_primitive_attr_create (kmux_dnnl_api.dnnl_primitive_attr_create)
#define dnnl_primitive_attr_destroy (kmux_dnnl_api.dnnl_primitive_attr_destroy)
#define dnnl_primitive_attr_set_fpmath_mode (kmux_dnnl_api.dnnl_primitive_attr_set_fpmath_mode)
#define dnnl_primitive_attr_set_output_scales (kmux_dnnl_api.dnnl_primitive_attr_set_output_scales)
#define dnnl_primitive_attr_set_post_ops (kmux_dnnl_api.dnnl_primitive_attr_set_post_ops)
#define dnnl_primitive_attr_set_scratchpad_mode                                                    \
    (kmux_dnnl_api.dnnl_primitive_attr_set_scratchpad_mode)
#define dnnl_primitive_create (kmux_dnnl_api.dnnl_primitive_create)
#define dnnl_primitive_desc_create (kmux_dnnl_api.dnnl_primitive_desc_create)
#define dnnl_primitive_desc_destroy (kmux_dnnl_api.dnnl_primitive_desc_destroy)
#define dnnl_primitive_desc_iterator_create (kmux_dnnl_api.dnnl_primitive_desc_iterator_create)
#define dnnl_primitive_desc_iterator_destroy (kmux_dnnl_api.dnnl_primitive_desc_iterator_destroy)
#define dnnl_primitive_desc_iterator_fetch (kmux_dnnl_api.dnnl_primitive_desc_iterator_fetch)
#define dnnl_primitive_desc_iterator_next (kmux_dnnl_api.dnnl_primitive_desc_iterator_next)
#define dnnl_primitive_desc_query (kmux_dnnl_api.dnnl_primitive_desc_query)
#define dnnl_primitive_desc_query_md (kmux_dnnl_api.dnnl_primitive_desc_query_md)
#define dnnl_primitive_destroy (kmux_dnnl_api.dnnl_primitive_destroy)
#define dnnl_primitive_execute (kmux_dnnl_api.dnnl_primitive_execute)
#define dnnl_reorder_primitive_desc_create (kmux_dnnl_api.dnnl_reorder_primitive_desc_create)
#define dnnl_set_primitive_cache_capacity (kmux_dnnl_api.dnnl_set_primitive_cache_capacity)
#define dnnl_stream_create (kmux_dnnl_api.dnnl_stream_create)
#define dnnl_stream_destroy (kmux_dnnl_api.dnnl_stream_destroy)
#define dnnl_version (kmux_dnnl_api.dnnl_version)
#define dnnl_binary_desc_init (kmux_dnnl_api.dnnl_binary_desc_init)
#define dnnl_pooling_backward_desc_init (kmux_dnnl_api.dnnl_pooling_backward_desc_init)
#define dnnl_pooling_forward_desc_init (kmux_dnnl_api.dnnl_pooling_forward_desc_init)
#define dnnl_reduction_desc_init (kmux_dnnl_api.dnnl_reduction_desc_init)
#endif

#endif
