/*
 * kmux_gpu_emu_api.h - the C interface of the GPU emulator (kmux_gpu_emu.h) for the tests of
 * tests/gpu_emu: settings of the next launches and the reason of the last failure. A test tool,
 * not part of libkmux.
 */
#ifndef KMUX_GPU_EMU_API_H
#define KMUX_GPU_EMU_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error code of a launch the emulator stopped (barrier divergence and the like). */
#define KMUX_GPU_EMU_ERROR 900

/** Settings of the following launches: wave (wavefront width, 32 or 64), seed (order of the
 *  blocks and of the threads between barriers; 0 = blocks in index order, threads in index
 *  order). Returns 0, or -1 for a wave that is not 32 or 64 (settings unchanged). */
int kmux_gpu_emu_configure(unsigned wave, uint64_t seed);

/** Reason of the last failed launch ("" if none since the last kmux_gpu_emu_clear). */
const char *kmux_gpu_emu_message(void);

/** Forgets the last error (kmux_emu_get_last_error() reads and clears the code itself). */
void kmux_gpu_emu_clear(void);

/** Number of launches and of emulated threads run since the process started. */
void kmux_gpu_emu_counters(uint64_t *launches, uint64_t *threads);

#ifdef __cplusplus
}
#endif
#endif
