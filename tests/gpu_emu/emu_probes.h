/*
 * emu_probes.h - small kernels that probe the GPU emulator itself (emu_probes.cpp, compiled with
 * KMUX_GPU_EMU): each returns what the launch returned, so the tests can check that the emulator
 * detects what breaks on real hardware.
 */
#ifndef KMUX_EMU_PROBES_H
#define KMUX_EMU_PROBES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One thread of a 64-thread block returns before __syncthreads. */
int probe_exit_before_barrier(void);
/** Even and odd threads wait at two different __syncthreads. */
int probe_split_barrier(void);
/** One lane of a wave returns before a shuffle the others execute. */
int probe_exit_before_shuffle(void);
/** Every thread of a `threads`-thread block: lane id, xor-1 shuffle of its index, ballot of
 *  (index odd), any(index == 3). */
int probe_wave_ops(unsigned threads, unsigned *lane, uint32_t *shfl, uint64_t *ballot, int *any);
/** Order in which the `blocks` blocks of a 1-D grid ran (block indices, in execution order). */
int probe_block_order(unsigned blocks, unsigned *order);
/** Each block writes its index to shared memory, barriers, and reads it back; out[b] gets the
 *  value read and first[b] what the shared word held before the write (the poison). */
int probe_shared_per_block(unsigned blocks, uint32_t *out, uint32_t *first);
/** Writes one element past a 16-element shared array (AddressSanitizer must stop it). */
int probe_shared_overflow(void);
/** Reads p[n] (one past the end; AddressSanitizer must stop it). */
int probe_global_overflow(const int *p, int n, int *out);

#ifdef __cplusplus
}
#endif
#endif
