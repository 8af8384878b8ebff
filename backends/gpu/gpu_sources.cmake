# backends/gpu: the GPU host layer shared by the CUDA and HIP plugins (kernel names, launch logic
# of kernels/gpu on a vendor's kmux_gpu_launcher). Not a library of its own: each plugin compiles
# these sources in (kmux_gpu_add_host_layer), so neither exports them. Included by both plugins'
# CMakeLists.txt (the function is global; paths come from the function's own file, since
# variables set here would reach only the first including directory).
include_guard(GLOBAL)

# Adds the layer to a plugin target.
function(kmux_gpu_add_host_layer target)
  set(d ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  target_sources(${target} PRIVATE ${d}/gpu_kernel_names.c ${d}/gpu_elementwise.c ${d}/gpu_amp.c ${d}/gpu_eltwise.c ${d}/gpu_optimizer.c ${d}/gpu_softmax.c ${d}/gpu_binary.c ${d}/gpu_reduction.c ${d}/gpu_pooling.c ${d}/gpu_vendor.c ${d}/gpu_runtime.c
                 ${d}/gpu_tiled.c ${d}/gpu_post.c)
  target_include_directories(${target} PRIVATE ${d} ${KMUX_SOURCE_DIR}/kernels/gpu
                             ${KMUX_SOURCE_DIR}/dispatch/common)
endfunction()

# Appends to variable `var` the C of a device binary `file` embedded in a section of its own
# (.incbin: no copy in memory, no size limit), aligned to `align` bytes, with the hidden symbols
# <sym> (first byte) and <sym>_end (one past the last, followed by a NUL for loaders that read
# a string), declared for C. Both plugins embed their kernels this way (fatbins, code objects).
function(kmux_gpu_embed_asm var section sym file align)
  string(APPEND ${var} "__asm__(\".pushsection ${section},\\\"a\\\",@progbits\\n\"\n"
                       "        \".balign ${align}\\n.globl ${sym}\\n.hidden ${sym}\\n\"\n"
                       "        \"${sym}:\\n.incbin \\\"${file}\\\"\\n\"\n"
                       "        \".globl ${sym}_end\\n.hidden ${sym}_end\\n\"\n"
                       "        \"${sym}_end:\\n.byte 0\\n.popsection\\n\");\n"
                       "extern const unsigned char ${sym}[], ${sym}_end[];\n")
  set(${var} "${${var}}" PARENT_SCOPE)
endfunction()

# The kernel names alone (no vendor call), for the name tests (test_hip_kernel_names).
if(NOT TARGET kmux_gpu_kernel_names)
  add_library(kmux_gpu_kernel_names STATIC ${CMAKE_CURRENT_LIST_DIR}/gpu_kernel_names.c)
  kmux_target_defaults(kmux_gpu_kernel_names)
  target_include_directories(kmux_gpu_kernel_names PUBLIC ${CMAKE_CURRENT_LIST_DIR}
                             ${KMUX_SOURCE_DIR}/include ${KMUX_SOURCE_DIR}/dispatch/common
                             ${KMUX_SOURCE_DIR}/kernels/gpu)
endif()
