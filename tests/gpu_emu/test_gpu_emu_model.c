/*
 * test_gpu_emu_model.c - the GPU emulator (kernels/gpu/kmux_gpu_emu.h) itself: it must detect
 * what breaks on real hardware (a barrier not reached by every thread, threads at different
 * barriers, a wave operation a lane never reaches, shared and global out-of-bounds accesses
 * under AddressSanitizer), and implement the execution model the kernels rely on (lane ids and
 * wave operations at 32 and 64 lanes, shared memory per block and poisoned, shuffled block
 * order with a seed, index order without).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "emu_probes.h"
#include "kmux_gpu_emu_api.h"

static void setting(unsigned wave, uint64_t seed) {
    cr_assert_eq(kmux_gpu_emu_configure(wave, seed), 0);
    kmux_gpu_emu_clear();
}

Test(gpu_emu_model, barrier_not_reached_by_every_thread) {
    setting(32, 0);
    cr_assert_eq(probe_exit_before_barrier(), KMUX_GPU_EMU_ERROR);
    cr_assert(strstr(kmux_gpu_emu_message(), "__syncthreads reached by 63 of 64 threads"),
              "message: %s", kmux_gpu_emu_message());
    cr_assert(strstr(kmux_gpu_emu_message(), "thread 17"), "message: %s", kmux_gpu_emu_message());
}

Test(gpu_emu_model, threads_at_different_barriers) {
    setting(64, 3);
    cr_assert_eq(probe_split_barrier(), KMUX_GPU_EMU_ERROR);
    cr_assert(strstr(kmux_gpu_emu_message(), "different barriers"), "message: %s",
              kmux_gpu_emu_message());
}

Test(gpu_emu_model, wave_operation_not_reached_by_every_lane) {
    for (unsigned w = 32; w <= 64; w *= 2) {
        setting(w, 0);
        cr_assert_eq(probe_exit_before_shuffle(), KMUX_GPU_EMU_ERROR);
        cr_assert(strstr(kmux_gpu_emu_message(), "wavefront operation"), "message: %s",
                  kmux_gpu_emu_message());
    }
}

Test(gpu_emu_model, the_next_launch_runs_after_an_error) {
    setting(32, 0);
    cr_assert_eq(probe_exit_before_barrier(), KMUX_GPU_EMU_ERROR);
    unsigned order[4];
    cr_assert_eq(probe_block_order(4, order), 0, "%s", kmux_gpu_emu_message());
}

Test(gpu_emu_model, wave_operations_at_32_and_64_lanes) {
    enum { T = 128 };
    for (unsigned w = 32; w <= 64; w *= 2) {
        setting(w, 99);
        unsigned lane[T];
        uint32_t shfl[T];
        uint64_t ballot[T];
        int any[T];
        cr_assert_eq(probe_wave_ops(T, lane, shfl, ballot, any), 0, "%s", kmux_gpu_emu_message());
        const uint64_t odd = w == 64 ? 0xaaaaaaaaaaaaaaaaull : 0xaaaaaaaaull;
        for (unsigned t = 0; t < T; t++) {
            cr_assert_eq(lane[t], t % w);
            cr_assert_eq(shfl[t], t ^ 1u);
            cr_assert_eq(ballot[t], odd, "wave %u thread %u ballot %llx", w, t,
                         (unsigned long long)ballot[t]);
            cr_assert_eq(any[t], t / w == 0, "wave %u thread %u any", w, t); /* 3 is in wave 0 */
        }
    }
    cr_assert_eq(kmux_gpu_emu_configure(48, 0), -1);
}

Test(gpu_emu_model, block_order_index_or_shuffled_by_seed) {
    enum { B = 64 };
    unsigned a[B], b[B], c[B];
    setting(32, 0);
    cr_assert_eq(probe_block_order(B, a), 0);
    for (unsigned i = 0; i < B; i++)
        cr_assert_eq(a[i], i, "seed 0: blocks in index order");
    setting(32, 7);
    cr_assert_eq(probe_block_order(B, b), 0);
    setting(32, 7);
    cr_assert_eq(probe_block_order(B, c), 0);
    cr_assert(memcmp(b, c, sizeof b) == 0, "one seed, one order");
    cr_assert(memcmp(a, b, sizeof a) != 0, "seed 7 shuffles the blocks");
    unsigned seen[B] = {0};
    for (unsigned i = 0; i < B; i++)
        seen[b[i]]++;
    for (unsigned i = 0; i < B; i++)
        cr_assert_eq(seen[i], 1u, "every block runs once");
}

Test(gpu_emu_model, shared_memory_is_per_block_and_poisoned) {
    enum { B = 5 };
    uint32_t out[B], first[B];
    setting(64, 11);
    cr_assert_eq(probe_shared_per_block(B, out, first), 0, "%s", kmux_gpu_emu_message());
    for (unsigned i = 0; i < B; i++) {
        cr_assert_eq(out[i], i);
        cr_assert_eq(first[i], 0xffffffffu, "block %u saw %x before writing", i, first[i]);
    }
}

#ifdef KMUX_GPU_EMU_ASAN
/* AddressSanitizer reports the overflow and ends the process with exit code 1. */
Test(gpu_emu_model, shared_out_of_bounds_is_caught, .exit_code = 1) {
    setting(32, 0);
    probe_shared_overflow();
    cr_assert_fail("the shared-memory overflow went unnoticed");
}

Test(gpu_emu_model, global_out_of_bounds_is_caught, .exit_code = 1) {
    setting(32, 0);
    int *p = malloc(8 * sizeof *p);
    cr_assert(p);
    for (int i = 0; i < 8; i++)
        p[i] = i;
    int out = 0;
    probe_global_overflow(p, 8, &out);
    free(p);
    cr_assert_fail("the global overflow went unnoticed (read %d)", out);
}
#endif
