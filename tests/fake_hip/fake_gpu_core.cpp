/*
 * fake_gpu_core.cpp - the vendor-neutral core of the fake GPU runtimes (fake_gpu_core.h): kernel
 * registry named from the ELF symbol table, tracked memory, emulator launch, clock. A TEST TOOL.
 */
#include "fake_gpu_core.h"
#include "fake_fail.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace {

struct pending {
    fake_gpu::binder bind;
    size_t params;
};

std::mutex mu;                              /* registry and allocations */
std::mutex launch_mu;                       /* the emulator's state is global */
std::map<const void *, pending> by_address; /* registered, not yet named */
std::map<std::string, fake_gpu::kernel> kernels;
std::map<uintptr_t, size_t> allocations;      /* device memory */
std::map<uintptr_t, size_t> host_allocations; /* pinned host memory */
size_t allocated = 0;

/* Names every registered kernel from this shared object's own ELF symbol table (the kernels'
 * symbols, local or not, mangled by the host compiler). Called with mu held. */
void name_kernels() {
    if (!kernels.empty() || by_address.empty()) return;
    Dl_info info;
    if (!dladdr(reinterpret_cast<const void *>(&name_kernels), &info) || !info.dli_fname) return;
    int fd = open(info.dli_fname, O_RDONLY);
    if (fd < 0) return;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        close(fd);
        return;
    }
    void *map = mmap(nullptr, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return;
    const char *base = static_cast<const char *>(map);
    const Elf64_Ehdr *eh = reinterpret_cast<const Elf64_Ehdr *>(base);
    const Elf64_Shdr *sh = reinterpret_cast<const Elf64_Shdr *>(base + eh->e_shoff);
    const uintptr_t load = reinterpret_cast<uintptr_t>(info.dli_fbase);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB) continue;
        const Elf64_Sym *sym = reinterpret_cast<const Elf64_Sym *>(base + sh[i].sh_offset);
        const char *str = base + sh[sh[i].sh_link].sh_offset;
        size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
        for (size_t j = 0; j < n; j++) {
            if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC || sym[j].st_value == 0) continue;
            auto it = by_address.find(reinterpret_cast<const void *>(load + sym[j].st_value));
            if (it == by_address.end()) continue;
            const char *name = str + sym[j].st_name;
            kernels[name] = fake_gpu::kernel{name, it->second.bind, it->second.params};
        }
    }
    munmap(map, (size_t)sb.st_size);
}

bool inside(const std::map<uintptr_t, size_t> &m, const void *p, size_t bytes) {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = m.upper_bound(a);
    if (it == m.begin()) return false;
    --it;
    return a >= it->first && a + bytes <= it->first + it->second && a + bytes >= a;
}

/* The first byte of p inside some allocation of m (a zero-byte allocation holds none). */
bool starts_in(const std::map<uintptr_t, size_t> &m, const void *p) {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = m.upper_bound(a);
    if (it == m.begin()) return false;
    --it;
    return a >= it->first && a < it->first + it->second;
}

void *tracked_alloc(std::map<uintptr_t, size_t> &m, size_t bytes, size_t align, bool device) {
    void *q = aligned_alloc(align, (bytes + align - 1) / align * align);
    if (!q) return nullptr;
    std::lock_guard<std::mutex> g(mu);
    m[reinterpret_cast<uintptr_t>(q)] = bytes;
    if (device) allocated += bytes;
    return q;
}

bool tracked_free(std::map<uintptr_t, size_t> &m, void *p, bool device) {
    std::lock_guard<std::mutex> g(mu);
    auto it = m.find(reinterpret_cast<uintptr_t>(p));
    if (it == m.end()) return false;
    if (device) allocated -= it->second;
    m.erase(it);
    free(p);
    return true;
}

struct registrar {
    registrar() {
        fake_gpu::register_cast();
        fake_gpu::register_amp();
        fake_gpu::register_gemm();
        fake_gpu::register_conv();
        fake_gpu::register_post();
        fake_gpu::register_eltwise();
        fake_gpu::register_optimizer();
        fake_gpu::register_softmax();
        fake_gpu::register_binary();
        fake_gpu::register_reduction();
        fake_gpu::register_pooling();
    }
} registrar_instance;

} // namespace

void fake_gpu::add_kernel(const void *address, binder bind, size_t params) {
    by_address[address] = pending{bind, params};
}

const fake_gpu::kernel *fake_gpu::find_kernel(const char *name) {
    std::lock_guard<std::mutex> g(mu);
    name_kernels();
    auto it = kernels.find(name);
    return it == kernels.end() ? nullptr : &it->second;
}

void *fake_gpu::device_alloc(size_t bytes, size_t align) {
    return tracked_alloc(allocations, bytes, align, true);
}
bool fake_gpu::device_free(void *p) {
    return tracked_free(allocations, p, true);
}
bool fake_gpu::is_device(const void *p, size_t bytes) {
    std::lock_guard<std::mutex> g(mu);
    return inside(allocations, p, bytes);
}
bool fake_gpu::in_device(const void *p) {
    std::lock_guard<std::mutex> g(mu);
    return starts_in(allocations, p);
}
size_t fake_gpu::device_bytes() {
    std::lock_guard<std::mutex> g(mu);
    return allocated;
}

void *fake_gpu::host_alloc(size_t bytes, size_t align) {
    return tracked_alloc(host_allocations, bytes, align, false);
}
bool fake_gpu::host_free(void *p) {
    return tracked_free(host_allocations, p, false);
}
bool fake_gpu::is_host(const void *p, size_t bytes) {
    std::lock_guard<std::mutex> g(mu);
    return inside(host_allocations, p, bytes);
}
bool fake_gpu::in_host(const void *p) {
    std::lock_guard<std::mutex> g(mu);
    return starts_in(host_allocations, p);
}

int fake_gpu::launch_bound(const bound &b, dim3 grid, dim3 block, unsigned wave, uint64_t seed,
                           std::string *why) {
    std::lock_guard<std::mutex> g(launch_mu);
    kmux_gpu_emu_configure(wave, seed);
    int e = b(grid, block);
    if (e != 0 && why) *why = kmux_gpu_emu_message();
    return e;
}

/* ---- stream capture ---- */

struct fake_gpu::capture {
    bool active = false, invalidated = false;
    int mode = kCaptureGlobal;
    std::thread::id owner; /* the capturing thread */
    std::vector<work> nodes;
};

namespace {
std::mutex capture_mu;
std::set<fake_gpu::capture *> open_captures;
std::atomic<long> refusals{0}, runs{0};
} // namespace

fake_gpu::capture *fake_gpu::capture_new() {
    return new capture;
}

void fake_gpu::capture_delete(capture *c) {
    std::lock_guard<std::mutex> g(capture_mu);
    open_captures.erase(c);
    delete c;
}

int fake_gpu::capture_begin(capture *c, int mode) {
    if (mode != kCaptureGlobal && mode != kCaptureThreadLocal && mode != kCaptureRelaxed) return 1;
    std::lock_guard<std::mutex> g(capture_mu);
    if (c->active) return kIllegalState;
    c->active = true;
    c->invalidated = false;
    c->mode = mode;
    c->owner = std::this_thread::get_id();
    c->nodes.clear();
    open_captures.insert(c);
    return 0;
}

int fake_gpu::capture_end(capture *c, graph **out) {
    std::lock_guard<std::mutex> g(capture_mu);
    *out = nullptr;
    if (!c->active) return kIllegalState;
    if (c->mode != kCaptureRelaxed && c->owner != std::this_thread::get_id())
        return kCaptureWrongThread;
    c->active = false;
    open_captures.erase(c);
    std::vector<work> nodes;
    nodes.swap(c->nodes);
    if (c->invalidated) return kCaptureInvalidated;
    *out = new graph{std::move(nodes)};
    return 0;
}

bool fake_gpu::capturing(const capture *c) {
    std::lock_guard<std::mutex> g(capture_mu);
    return c && c->active;
}

bool fake_gpu::capture_invalidated(const capture *c) {
    std::lock_guard<std::mutex> g(capture_mu);
    return c && c->active && c->invalidated;
}

int fake_gpu::capture_unsafe() {
    std::lock_guard<std::mutex> g(capture_mu);
    bool refused = false;
    for (capture *c : open_captures) {
        bool mine = c->owner == std::this_thread::get_id();
        if ((mine && c->mode != kCaptureRelaxed) || (!mine && c->mode == kCaptureGlobal)) {
            c->invalidated = true;
            refused = true;
        }
    }
    if (!refused) return 0;
    refusals++;
    return kCaptureUnsupported;
}

namespace {
/* The legacy stream while captures are open: refused, and they are invalidated. Called with
 * capture_mu held. */
int implicit_locked() {
    if (open_captures.empty()) return 0;
    for (fake_gpu::capture *c : open_captures)
        c->invalidated = true;
    refusals++;
    return fake_gpu::kCaptureImplicit;
}
} // namespace

int fake_gpu::submit(capture *c, bool legacy, work w) {
    {
        std::lock_guard<std::mutex> g(capture_mu);
        if (legacy) {
            int e = implicit_locked();
            if (e) return e;
        }
        if (c && c->active) {
            if (c->invalidated) return kCaptureInvalidated;
            c->nodes.push_back(std::move(w));
            return 0;
        }
    }
    return w();
}

int fake_gpu::capture_sync(capture *c, bool legacy) {
    std::lock_guard<std::mutex> g(capture_mu);
    if (legacy) return implicit_locked();
    if (!c || !c->active) return 0;
    c->invalidated = true;
    refusals++;
    return kCaptureUnsupported;
}

int fake_gpu::graph_run(const graph &gr) {
    for (const work &w : gr.nodes) {
        int e = w();
        if (e) return e;
    }
    runs++;
    return 0;
}

long fake_gpu::capture_refusals() {
    return refusals.load();
}

long fake_gpu::graph_runs() {
    return runs.load();
}

bool fake_gpu::fail_call(const char *lib, const char *fn) {
    return kmux_fake_fail_call(lib, fn) != 0;
}

double fake_gpu::now_ms() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int fake_gpu::env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && v[0] ? atoi(v) : dflt;
}
