/*
 * fake_gpu_core.h - the vendor-neutral core of kmux's fake GPU runtimes (TEST TOOLS): the fake
 * HIP runtime (libkmux-fake-hip.so, fake_hip.cpp) and the fake CUDA driver (libcuda.so.1,
 * tests/fake_cuda/fake_cuda_driver.cpp). Both run the kernel sources of kernels/gpu, compiled for
 * the host, in the GPU emulator (kmux_gpu_emu.h); what this core gives them:
 *
 * - the kernel registry: every kernel instantiation a plugin can launch is registered by its
 *   address (fake_hip_kernels_*.cpp, built once as an object library linked into both fakes)
 *   and named from the ELF symbol table of the shared object the core is linked into, i.e. the
 *   host compiler's Itanium mangling, which is also nvcc's and clang's for the device code, and
 *   independent of any name table of a plugin;
 * - "device" memory: host memory, tracked, so that a copy, a memset or a free outside an
 *   allocation is refused as a real runtime would fault; pinned host memory tracked apart;
 * - the launch: the emulator at a given wave width (AMD 64, NVIDIA 32) with shuffled block order,
 *   one launch at a time (the emulator's state is global);
 * - a monotonic clock for events.
 *
 * Every symbol here is hidden (kmux_target_defaults), so that two fakes loaded in one process
 * keep their own registry, allocations and emulator.
 */
#ifndef KMUX_FAKE_GPU_CORE_H
#define KMUX_FAKE_GPU_CORE_H

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kmux_gpu_emu.h"

namespace fake_gpu {

/** A launch bound to copies of its argument values, as a kernel node of a captured graph keeps
 *  them (CUDA and HIP copy kernelParams at the call): runs the kernel in the emulator and returns
 *  the emulator's error (0 on success). */
typedef std::function<int(dim3 grid, dim3 block)> bound;
/** Binds a kernel to the values a module-launch argument array points at (kernelParams: one
 *  pointer per argument, typed as the kernel's parameters). */
typedef bound (*binder)(void **params);

/** Registers a kernel by its address, with its number of parameters (its name is read from the
 *  fake's own symbol table). */
void add_kernel(const void *address, binder bind, size_t params);

/** Kernel registrations of each emulated source (fake_hip_kernels_*.cpp). */
void register_cast();
void register_amp();
void register_gemm();
void register_conv();
void register_post();
void register_eltwise();
void register_optimizer();
void register_softmax();
void register_binary();
void register_reduction();
void register_pooling();

struct kernel {
    std::string name; /* mangled, as in the device code's symbol table */
    binder bind;
    size_t params; /* number of kernel parameters */
};

/** The registered kernel of that mangled name, or NULL. */
const kernel *find_kernel(const char *name);

/** Device memory (host memory, aligned, tracked): NULL when out of memory. */
void *device_alloc(size_t bytes, size_t align);
/** Frees what device_alloc returned; false for any other pointer. */
bool device_free(void *p);
/** [p, p + bytes) inside one device allocation? */
bool is_device(const void *p, size_t bytes);
/** Does p lie inside some device allocation (its first byte)? */
bool in_device(const void *p);
/** Bytes held by device allocations. */
size_t device_bytes();

/** Pinned host memory, tracked apart from device memory. */
void *host_alloc(size_t bytes, size_t align);
bool host_free(void *p);
bool is_host(const void *p, size_t bytes);
bool in_host(const void *p);

/** Runs a launch bound by its kernel's binder (at the call, or later: a captured kernel node
 *  replayed) in the emulator at wave width `wave` (32 or 64) with block-order seed `seed`; one
 *  launch at a time. Returns the emulator's error (0 on success), its reason in *why when not
 *  NULL. */
int launch_bound(const bound &b, dim3 grid, dim3 block, unsigned wave, uint64_t seed,
                 std::string *why = nullptr);

/* ---- stream capture, shared by both fakes ----
 * CUDA and HIP agree on the capture API and on its error numbers, so one model serves both: a
 * capturing stream records its operations (copies, memsets, launches with their arguments copied
 * at the call, event records, waits) as the nodes of a graph instead of running them, and a graph
 * launch runs them in order. A "potentially unsafe" call (an allocation or a free of device or
 * pinned memory, which a capture does not record) is refused with kCaptureUnsupported while the
 * calling thread has a capture not begun in RELAXED mode or another thread has one in GLOBAL
 * mode, and invalidates those captures; so do a synchronisation of a capturing stream, a use of
 * the legacy stream while any capture is open (kCaptureImplicit) and a wait on an event recorded
 * in a capture (kCapturedEvent). Not modelled: forks and joins across streams, capture into an
 * existing graph, stream-ordered allocation nodes (refused as unsafe, stricter than CUDA). */
enum {
    kIllegalState = 401,       /* CUDA_ERROR_ILLEGAL_STATE, hipErrorIllegalState */
    kJoinUnsupported = 801,    /* CUDA_ERROR_NOT_SUPPORTED, hipErrorNotSupported */
    kCaptureUnsupported = 900, /* ..._STREAM_CAPTURE_UNSUPPORTED */
    kCaptureInvalidated = 901, /* ..._STREAM_CAPTURE_INVALIDATED */
    kCaptureImplicit = 906,    /* ..._STREAM_CAPTURE_IMPLICIT */
    kCapturedEvent = 907,      /* ..._CAPTURED_EVENT */
    kCaptureWrongThread = 908  /* ..._STREAM_CAPTURE_WRONG_THREAD */
};
/* Capture modes, as both APIs number them. */
enum { kCaptureGlobal = 0, kCaptureThreadLocal = 1, kCaptureRelaxed = 2 };

/** A stream operation: runs it and returns the runtime's error (0 on success). */
typedef std::function<int()> work;
/** A stream's capture state (a member of the fake's stream). */
struct capture;
capture *capture_new();
void capture_delete(capture *c); /* its capture, if open, ends with it */
/** 1 while c captures (c NULL: the legacy or default stream, never capturing). */
bool capturing(const capture *c);
/** An event's part in capture (a member of the fake's event): whether it was last recorded in a
 *  capturing stream, and the two refusals that follow from it. */
struct event_capture {
    bool captured = false;
    /** The event recorded on a stream whose capture state is c. */
    void record(const capture *c) {
        captured = capturing(c);
    }
    /** A stream (capture state c) waits on it: 0, or kJoinUnsupported for an event recorded in a
     *  capture and waited on from outside it (a join into a capture: not modelled). */
    int wait(const capture *c) const {
        return captured && !capturing(c) ? (int)kJoinUnsupported : 0;
    }
    /** The host waits on it: 0, or kCapturedEvent for an event recorded in a capture. */
    int synchronize() const {
        return captured ? (int)kCapturedEvent : 0;
    }
};
/** A captured graph (also its instantiation: a copy of the nodes). */
struct graph {
    std::vector<work> nodes;
};

/** Begins a capture on c: 0; 1 (invalid value) for an unknown mode; kIllegalState if open. */
int capture_begin(capture *c, int mode);
/** Ends it: 0 and *g a new graph; kIllegalState when c is not capturing; kCaptureWrongThread
 *  from another thread (modes but RELAXED); kCaptureInvalidated (*g NULL) after a refusal. */
int capture_end(capture *c, graph **g);
/** 1 while c captures (c NULL: the legacy or default stream, never capturing). */
bool capturing(const capture *c);
/** 1 after a refusal invalidated c's open capture. */
bool capture_invalidated(const capture *c);
/** A potentially unsafe call: 0, or kCaptureUnsupported (and the captures that prohibit it
 *  invalidated). */
int capture_unsafe();
/** A stream operation on a stream (c; legacy: the legacy stream): run now, or recorded while c
 *  captures (kCaptureInvalidated once invalidated); kCaptureImplicit on the legacy stream while
 *  a capture is open. */
int submit(capture *c, bool legacy, work w);
/** A synchronisation of a stream: 0, or kCaptureUnsupported (invalidating) while it captures,
 *  kCaptureImplicit for the legacy stream while a capture is open. */
int capture_sync(capture *c, bool legacy);
/** Runs a graph's nodes in order (the first error is returned). */
int graph_run(const graph &g);
/** Calls refused because a capture was open; successful graph runs. */
long capture_refusals();
long graph_runs();

/** KMUX_FAKE_FAIL_CALL=K, the vendor-call failure sweep's hook (fake_fail.h): true for the K-th
 *  call of this fake library counted through it; the fake then returns its "unknown error". */
bool fail_call(const char *lib, const char *fn);

/** CLOCK_MONOTONIC in milliseconds. */
double now_ms();

/** $name as an int, dflt when unset or empty. */
int env_int(const char *name, int dflt);

template <typename... A> constexpr size_t arity(void (*)(A...)) {
    return sizeof...(A);
}
/** k bound to copies of the arguments params points at (kernelParams: one pointer per argument,
 *  typed as k's parameters). */
template <typename... A, size_t... I>
bound bind_with(void (*k)(A...), void **params, std::index_sequence<I...>) {
    std::tuple<std::decay_t<A>...> args{*static_cast<std::decay_t<A> *>(params[I])...};
    return [k, args](dim3 grid, dim3 block) {
        kmux_emu::launch(grid, block, [&]() { std::apply(k, args); });
        return kmux_emu_get_last_error();
    };
}
template <auto K> bound bind(void **params) {
    return bind_with(K, params, std::make_index_sequence<arity(K)>{});
}
template <auto K> void add() {
    add_kernel(reinterpret_cast<const void *>(K), &bind<K>, arity(K));
}

} // namespace fake_gpu

#endif
