/*
 * kmux_gpu_emu.cpp - the runtime of the host emulation of the GPU execution model (see
 * kmux_gpu_emu.h). One block at a time: every thread of the block is a ucontext fiber with its
 * own heap stack; the scheduler runs every runnable fiber (in a shuffled order) until it waits
 * at a barrier or a wavefront operation or exits, then releases the barriers every participant
 * reached, and reports a divergence when nothing can be released any more.
 *
 * AddressSanitizer is told about every stack switch (__sanitizer_start/finish_switch_fiber), so
 * the emulated kernels run under it without false reports.
 */
#include "kmux_gpu_emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <map>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define KMUX_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KMUX_EMU_ASAN 1
#endif
#endif

#ifdef KMUX_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace {

enum state { RUNNABLE, WAIT_BARRIER, WAIT_WAVE, DONE };
enum wave_op { OP_NONE, OP_SHFL_U32, OP_SHFL_F64, OP_BALLOT };

/* Kernels are shallow; small stacks also keep AddressSanitizer's swapcontext interceptor cheap
 * (it clears the shadow of the whole target stack on every switch). */
constexpr size_t kStack = 64 * 1024;

struct fiber {
    ucontext_t ctx;
    char *stack = nullptr;
    uint3 tid{0, 0, 0};
    unsigned linear = 0;
    state st = RUNNABLE;
    const char *file = nullptr; /* barrier site */
    int line = 0;
    wave_op op = OP_NONE;
    uint64_t val = 0;
    unsigned param = 0;
    uint64_t result = 0;
    void *fake_stack = nullptr;
};

/* Fiber stacks are mapped, not malloc'ed: pages are committed only when touched, which keeps a
 * launch of 1024 threads cheap (and AddressSanitizer's heap out of it). */
char *alloc_stack() {
    void *p = mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "kmux_gpu_emu: out of memory for fiber stacks\n");
        abort();
    }
    return (char *)p;
}
void free_stack(char *p) {
    if (p) munmap(p, kStack);
}

struct shared_buf {
    void *p;
    size_t bytes;
};

struct emu_state {
    unsigned wave = 32;
    uint64_t seed = 0;
    int err = 0;
    std::string msg;
    dim3 grid, block;
    uint3 bidx{0, 0, 0};
    std::vector<fiber> fibers;
    fiber *cur = nullptr;
    ucontext_t sched;
    void *sched_fake = nullptr;
    const void *sched_bottom = nullptr;
    size_t sched_size = 0;
    const std::function<void()> *body = nullptr;
    std::map<const void *, shared_buf> shared;
    uint64_t launches = 0, threads = 0;
    uint64_t rng = 0;
    ~emu_state() {
        for (fiber &f : fibers)
            free_stack(f.stack);
    }
};

emu_state g;

void asan_start(void **save, const void *bottom, size_t size) {
#ifdef KMUX_EMU_ASAN
    __sanitizer_start_switch_fiber(save, bottom, size);
#else
    (void)save, (void)bottom, (void)size;
#endif
}
void asan_finish(void *save, const void **bottom_old, size_t *size_old) {
#ifdef KMUX_EMU_ASAN
    __sanitizer_finish_switch_fiber(save, bottom_old, size_old);
#else
    (void)save, (void)bottom_old, (void)size_old;
#endif
}

uint64_t next_rand() { /* splitmix64 */
    uint64_t z = (g.rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

template <typename T> void shuffle(std::vector<T> &v) {
    for (size_t i = v.size(); i > 1; i--) {
        size_t j = (size_t)(next_rand() % i);
        T t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

void fail(const std::string &m) {
    if (g.err) return; /* keep the first reason */
    g.err = KMUX_GPU_EMU_ERROR;
    g.msg = m;
}

void entry() {
    asan_finish(nullptr, &g.sched_bottom, &g.sched_size);
    (*g.body)();
    g.cur->st = DONE;
    asan_start(nullptr, g.sched_bottom, g.sched_size); /* this fiber's stack is done */
    setcontext(&g.sched);
}

void run(fiber &f) {
    g.cur = &f;
    asan_start(&g.sched_fake, f.stack, kStack);
    swapcontext(&g.sched, &f.ctx);
    asan_finish(g.sched_fake, nullptr, nullptr);
    g.cur = nullptr;
}

void yield(state s) {
    fiber &f = *g.cur;
    f.st = s;
    asan_start(&f.fake_stack, g.sched_bottom, g.sched_size);
    swapcontext(&f.ctx, &g.sched);
    asan_finish(f.fake_stack, &g.sched_bottom, &g.sched_size);
}

std::string block_name() {
    char b[96];
    snprintf(b, sizeof b, "block (%u,%u,%u)", g.bidx.x, g.bidx.y, g.bidx.z);
    return b;
}

/* Releases every wave whose lanes all wait at a wavefront operation. Returns 1 if one was. */
int release_waves() {
    const unsigned n = (unsigned)g.fibers.size();
    int progress = 0;
    for (unsigned w0 = 0; w0 < n; w0 += g.wave) {
        unsigned w1 = w0 + g.wave < n ? w0 + g.wave : n;
        unsigned waiting = 0;
        for (unsigned i = w0; i < w1; i++)
            waiting += g.fibers[i].st == WAIT_WAVE;
        if (waiting == 0 || waiting != w1 - w0) continue;
        wave_op op = g.fibers[w0].op;
        for (unsigned i = w0; i < w1; i++)
            if (g.fibers[i].op != op) {
                fail(block_name() + ": lanes of one wave are in different wavefront operations");
                return 0;
            }
        uint64_t ballot = 0;
        for (unsigned i = w0; i < w1; i++)
            if (g.fibers[i].val) ballot |= 1ull << (i - w0);
        for (unsigned i = w0; i < w1; i++) {
            fiber &f = g.fibers[i];
            if (op == OP_BALLOT) {
                f.result = ballot;
            } else {
                unsigned src = w0 + ((i - w0) ^ f.param);
                f.result = src < w1 ? g.fibers[src].val : f.val;
            }
            f.st = RUNNABLE;
        }
        progress = 1;
    }
    return progress;
}

/* Releases the block barrier when every thread waits at it. Returns 1 if it did. */
int release_barrier() {
    const unsigned n = (unsigned)g.fibers.size();
    unsigned waiting = 0, done = 0;
    for (const fiber &f : g.fibers) {
        waiting += f.st == WAIT_BARRIER;
        done += f.st == DONE;
    }
    if (waiting == 0) return 0;
    const fiber *first = nullptr;
    for (const fiber &f : g.fibers)
        if (f.st == WAIT_BARRIER) {
            first = &f;
            break;
        }
    char b[512];
    if (waiting != n) {
        unsigned example = 0;
        for (const fiber &f : g.fibers)
            if (f.st != WAIT_BARRIER) {
                example = f.linear;
                break;
            }
        snprintf(b, sizeof b,
                 "%s:%d: __syncthreads reached by %u of %u threads of %s (%u exited, %u wait at "
                 "a wavefront operation; thread %u did not arrive)",
                 first->file, first->line, waiting, n, block_name().c_str(), done,
                 n - waiting - done, example);
        fail(b);
        return 0;
    }
    for (const fiber &f : g.fibers)
        if (f.line != first->line || strcmp(f.file, first->file) != 0) {
            snprintf(b, sizeof b,
                     "%s: threads wait at different barriers (%s:%d, thread %u at %s:%d)",
                     block_name().c_str(), first->file, first->line, f.linear, f.file, f.line);
            fail(b);
            return 0;
        }
    for (fiber &f : g.fibers)
        f.st = RUNNABLE;
    return 1;
}

void run_block(const std::vector<unsigned> &base_order) {
    const unsigned n = (unsigned)g.fibers.size();
    for (unsigned t = 0; t < n; t++) {
        fiber &f = g.fibers[t];
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack;
        f.ctx.uc_stack.ss_size = kStack;
        f.ctx.uc_link = nullptr;
        makecontext(&f.ctx, entry, 0);
        f.st = RUNNABLE;
        f.op = OP_NONE;
        f.fake_stack = nullptr;
    }
    std::vector<unsigned> order = base_order;
    for (;;) {
        if (g.seed) shuffle(order);
        for (unsigned i : order)
            if (g.fibers[i].st == RUNNABLE) run(g.fibers[i]);
        unsigned done = 0;
        for (const fiber &f : g.fibers)
            done += f.st == DONE;
        if (done == n) break;
        if (release_waves()) continue;
        if (g.err) break;
        if (release_barrier()) continue;
        if (!g.err) {
            unsigned waves = 0;
            for (const fiber &f : g.fibers)
                waves += f.st == WAIT_WAVE;
            char b[256];
            snprintf(b, sizeof b,
                     "%s: a wavefront operation not reached by every lane of its wave (%u lanes "
                     "wait, %u threads exited)",
                     block_name().c_str(), waves, done);
            fail(b);
        }
        break; /* the waiting fibers are abandoned */
    }
    for (auto &kv : g.shared)
        free(kv.second.p);
    g.shared.clear();
}

} // namespace

const uint3 &kmux_emu_thread_idx() {
    return g.cur->tid;
}
const uint3 &kmux_emu_block_idx() {
    return g.bidx;
}
const dim3 &kmux_emu_block_dim() {
    return g.block;
}
const dim3 &kmux_emu_grid_dim() {
    return g.grid;
}

void kmux_emu_syncthreads(const char *file, int line) {
    g.cur->file = file;
    g.cur->line = line;
    yield(WAIT_BARRIER);
}

void *kmux_emu_shared(const void *site, size_t bytes, const char *name) {
    auto it = g.shared.find(site);
    if (it != g.shared.end()) {
        if (it->second.bytes != bytes)
            fail(std::string("shared array ") + name + " declared with two sizes");
        return it->second.p;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "kmux_gpu_emu: out of memory for shared array %s\n", name);
        abort();
    }
    memset(p, 0xff, bytes); /* a read before any write: NaN for floats, -1 for integers */
    g.shared[site] = shared_buf{p, bytes};
    return p;
}

unsigned kmux_emu_wave_size() {
    return g.wave;
}
unsigned kmux_emu_lane_id() {
    return g.cur->linear % g.wave;
}

static uint64_t wave_exchange(wave_op op, uint64_t v, unsigned param) {
    fiber &f = *g.cur;
    f.op = op;
    f.val = v;
    f.param = param;
    yield(WAIT_WAVE);
    f.op = OP_NONE;
    return f.result;
}

uint32_t kmux_emu_shfl_xor_u32(uint32_t v, unsigned mask) {
    return (uint32_t)wave_exchange(OP_SHFL_U32, v, mask);
}
double kmux_emu_shfl_xor_f64(double v, unsigned mask) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    u = wave_exchange(OP_SHFL_F64, u, mask);
    memcpy(&v, &u, sizeof v);
    return v;
}
uint64_t kmux_emu_ballot(bool p) {
    return wave_exchange(OP_BALLOT, p ? 1 : 0, 0);
}
bool kmux_emu_any(bool p) {
    return wave_exchange(OP_BALLOT, p ? 1 : 0, 0) != 0;
}

int kmux_emu_get_last_error() {
    int e = g.err;
    g.err = 0;
    return e;
}

int kmux_emu_memset_async(void *p, int value, size_t bytes, void *stream) {
    (void)stream;
    memset(p, value, bytes);
    return 0;
}

void kmux_emu::launch(dim3 grid, dim3 block, const std::function<void()> &body) {
    if (g.cur) {
        fprintf(stderr, "kmux_gpu_emu: a launch from inside a kernel\n");
        abort();
    }
    g.launches++;
    const uint64_t nb = (uint64_t)grid.x * grid.y * grid.z;
    const unsigned nt = block.x * block.y * block.z;
    if (nb == 0 || nt == 0 || nt > 1024 || g.err) {
        if (!g.err) fail("launch with an empty grid or block, or more than 1024 threads");
        return;
    }
    g.grid = grid;
    g.block = block;
    g.body = &body;
    g.rng = g.seed;
    if (g.fibers.size() != nt) {
        for (fiber &f : g.fibers)
            free_stack(f.stack);
        g.fibers.assign(nt, fiber());
        for (unsigned t = 0; t < nt; t++)
            g.fibers[t].stack = alloc_stack();
    }
    std::vector<unsigned> torder(nt);
    for (unsigned t = 0; t < nt; t++) {
        fiber &f = g.fibers[t];
        f.linear = t;
        f.tid = uint3{t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
        torder[t] = t;
    }
    std::vector<uint64_t> border(nb);
    for (uint64_t b = 0; b < nb; b++)
        border[b] = b;
    if (g.seed) shuffle(border);
    for (uint64_t b : border) {
        g.bidx = uint3{(unsigned)(b % grid.x), (unsigned)((b / grid.x) % grid.y),
                       (unsigned)(b / ((uint64_t)grid.x * grid.y))};
        g.threads += nt;
        run_block(torder);
        if (g.err) break;
    }
    g.body = nullptr;
}

extern "C" int kmux_gpu_emu_configure(unsigned wave, uint64_t seed) {
    if (wave != 32 && wave != 64) return -1;
    g.wave = wave;
    g.seed = seed;
    return 0;
}

extern "C" const char *kmux_gpu_emu_message(void) {
    return g.msg.c_str();
}

extern "C" void kmux_gpu_emu_clear(void) {
    g.err = 0;
    g.msg.clear();
}

extern "C" void kmux_gpu_emu_counters(uint64_t *launches, uint64_t *threads) {
    *launches = g.launches;
    *threads = g.threads;
}
