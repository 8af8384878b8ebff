# kmux_fake_gpu_core: the vendor-neutral core of the fake GPU runtimes (fake_gpu_core.h), built
# once as an OBJECT library and linked into both the fake HIP runtime (tests/fake_hip) and the
# fake CUDA driver (tests/fake_cuda): the kernel registration sources fake_hip_kernels_*.cpp (the
# kernels of kernels/gpu compiled for the GPU emulator; slow to compile), the emulator and the
# core. Test tools only. Included by both folders; the first one defines it.
include_guard(GLOBAL)
set(_fg ${KMUX_SOURCE_DIR}/tests/fake_hip)
add_library(kmux_fake_gpu_core OBJECT ${_fg}/fake_gpu_core.cpp ${_fg}/fake_hip_kernels_cast.cpp
            ${_fg}/fake_hip_kernels_amp.cpp ${_fg}/fake_hip_kernels_gemm.cpp
            ${_fg}/fake_hip_kernels_conv.cpp ${_fg}/fake_hip_kernels_post.cpp
            ${_fg}/fake_hip_kernels_eltwise.cpp ${_fg}/fake_hip_kernels_optimizer.cpp
            ${_fg}/fake_hip_kernels_softmax.cpp ${_fg}/fake_hip_kernels_binary.cpp
            ${_fg}/fake_hip_kernels_reduction.cpp ${_fg}/fake_hip_kernels_pooling.cpp
            ${KMUX_SOURCE_DIR}/kernels/gpu/kmux_gpu_emu.cpp)
kmux_target_defaults(kmux_fake_gpu_core)
set_target_properties(kmux_fake_gpu_core PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_compile_definitions(kmux_fake_gpu_core PUBLIC KMUX_GPU_EMU)
target_include_directories(kmux_fake_gpu_core PUBLIC ${_fg} ${KMUX_SOURCE_DIR}/kernels/gpu
                           ${KMUX_SOURCE_DIR}/dispatch/common ${KMUX_SOURCE_DIR}/include ${KMUX_SOURCE_DIR})
# Every kernel instantiation keeps its own address and local symbol (the fakes name kernels from
# their symbol table): no identical-code folding.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(kmux_fake_gpu_core PRIVATE -fno-ipa-icf)
endif()
target_link_libraries(kmux_fake_gpu_core INTERFACE ${CMAKE_DL_LIBS})
