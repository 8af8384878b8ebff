/*
 * cuda_libs.c - opens the CUDA driver, cuBLASLt and cuDNN at run time and fills the call table of
 * cuda_libs.h (search order there). Once per process: the libraries are process-wide and never
 * closed (as cuBLAS and cuDNN themselves expect: unloading them under live handles is undefined).
 *
 * The driver is opened by the backend's init; cuBLASLt (a 540 MB library: about half a second to
 * map and relocate) and cuDNN only when a plan first needs them (kmux_cuda_libs_load). Until then
 * the probe only locates their files (kmux_cuda_libs_locate: the same search, file checks instead
 * of dlopen), so that a context on a host with NVIDIA's libraries costs what one without costs.
 */
#define _GNU_SOURCE /* dl_iterate_phdr, RTLD_NOLOAD */
#define KMUX_CUDA_LIBS_IMPL
#include "cuda_libs.h"

#include "kmux_so_file.h"
#include "kmux_sys_alloc.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((visibility("hidden"))) kmux_cuda_libs kmux_cuda_lib;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT, locate_once = PTHREAD_ONCE_INIT,
                      libs_once = PTHREAD_ONCE_INIT;
static int libs_loaded; /* 1 once libs_once has run (atomic: read by describe) */

/* The sonames, newest first. cuBLASLt 12 is accepted for a plugin built with 13's headers: the
 * descriptors are opaque (sized by *Init_internal) and the optional 13.0 symbols stay NULL. */
static const char *const lt_sonames[] = {"libcublasLt.so.13", "libcublasLt.so.12", NULL};
static const char *const dnn_sonames[] = {"libcudnn.so.9", NULL};
static const char *const drv_sonames[] = {"libcuda.so.1", NULL};

/* Appends `sep` (when buf is not empty) and `item` to buf (size bytes), truncating silently. */
static void append(char *buf, size_t size, const char *sep, const char *item) {
    size_t len = strlen(buf);
    if (len + 1 < size) snprintf(buf + len, size - len, "%s%s", len ? sep : "", item);
}

/* Where the running Python keeps NVIDIA's wheels: up to 12 site-packages / dist-packages
 * folders (dist-packages: Debian's pip). */
typedef struct py_prefixes {
    char dir[12][512];
    int n;
} py_prefixes;

static void add_site_packages(py_prefixes *pp, const char *prefix, const char *pyver) {
    if (!prefix || !prefix[0] || !pyver || !pyver[0]) return;
    static const char *const kinds[] = {"site-packages", "dist-packages"};
    for (int k = 0; k < 2 && pp->n < 12; k++) {
        char d[512];
        if (snprintf(d, sizeof d, "%s/lib/%s/%s", prefix, pyver, kinds[k]) >= (int)sizeof d) return;
        int seen = 0;
        for (int i = 0; i < pp->n; i++)
            seen |= strcmp(pp->dir[i], d) == 0;
        if (!seen) snprintf(pp->dir[pp->n++], sizeof pp->dir[0], "%s", d);
    }
}

/* "python3.11" from a path ending in .../libpython3.11.so.1.0 or .../python3.11; "" if neither. */
static void python_version_of(const char *path, char *out, size_t size) {
    out[0] = '\0';
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strncmp(base, "lib", 3) == 0) base += 3;
    if (strncmp(base, "python3.", 8) != 0) return;
    size_t n = 8;
    while (base[n] >= '0' && base[n] <= '9')
        n++;
    if (n == 8 || n >= size) return;
    memcpy(out, base, n);
    out[n] = '\0';
}

/* The prefix two folders above `path` (<prefix>/lib/libpython3.X.so, <prefix>/bin/python3.X),
 * three for a multiarch library folder (Debian's <prefix>/lib/x86_64-linux-gnu/libpython3.X.so). */
static void prefix_of(const char *path, char *out, size_t size) {
    snprintf(out, size, "%s", path);
    int ups = 2;
    for (int up = 0; up < ups; up++) {
        char *slash = strrchr(out, '/');
        if (!slash) {
            out[0] = '\0';
            return;
        }
        *slash = '\0';
        if (up == 0) { /* out: the file's folder; a multiarch triplet is one level more */
            const char *last = strrchr(out, '/');
            if (strstr(last ? last + 1 : out, "-linux-")) ups = 3;
        }
    }
}

static int find_libpython(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    char ver[32], prefix[512];
    if (!info->dlpi_name || !strstr(info->dlpi_name, "libpython3.")) return 0;
    python_version_of(info->dlpi_name, ver, sizeof ver);
    prefix_of(info->dlpi_name, prefix, sizeof prefix);
    add_site_packages(data, prefix, ver);
    if (strcmp(prefix, "/usr") == 0) add_site_packages(data, "/usr/local", ver); /* Debian pip */
    return 0;
}

/* The running Python's prefixes: a loaded libpython3.X's, the python3.X executable's, the
 * virtual environment's (VIRTUAL_ENV) and the user's (~/.local); none when no Python runs. */
static void python_site_packages(py_prefixes *pp) {
    char exe[512], ver[32], prefix[512], user[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    const char *venv = getenv("VIRTUAL_ENV"), *home = getenv("HOME");
    pp->n = 0;
    dl_iterate_phdr(find_libpython, pp);
    if (n <= 0) return;
    exe[n] = '\0';
    python_version_of(exe, ver, sizeof ver);
    if (!ver[0]) return;
    prefix_of(exe, prefix, sizeof prefix);
    add_site_packages(pp, prefix, ver);
    /* Debian's pip installs into /usr/local/lib/python3.X/dist-packages for /usr/bin/python3 */
    if (strcmp(prefix, "/usr") == 0) add_site_packages(pp, "/usr/local", ver);
    add_site_packages(pp, venv, ver);
    if (home && snprintf(user, sizeof user, "%s/.local", home) < (int)sizeof user)
        add_site_packages(pp, user, ver);
}

/* Opens the first of `sonames` found; writes the file opened (or what was tried) to `where`. */
/* `where` for the file opened; files rejected before it are named with their reason (a broken
 * copy in KMUX_CUDA_LIB_PATH must not be passed over without a word). */
static void found(char *where, size_t size, const char *file, const char *rejected) {
    if (rejected[0])
        snprintf(where, size, "%s (rejected before it: %s)", file, rejected);
    else
        snprintf(where, size, "%s", file);
}

/* The next folder of a colon-separated list at *cursor, whole, into one (size bytes): 1 when it
 * fits, -1 when it does not (never used shorter), 0 at the end; empty entries are skipped. */
static int next_folder(const char **cursor, char *one, size_t size) {
    while (**cursor == ':')
        (*cursor)++;
    if (!**cursor) return 0;
    size_t n = strcspn(*cursor, ":");
    int fits = n < size;
    if (fits) {
        memcpy(one, *cursor, n);
        one[n] = '\0';
    } else {
        snprintf(one, size, "%.200s", *cursor); /* for the message only */
    }
    *cursor += n;
    return fits ? 1 : -1;
}

static void *open_library(const char *const *sonames, const char *wheel, char *where, size_t size) {
    char tried[2048] = "", rejected[1024] = "", path[1024];
    /* 1. already in the process (RTLD_NOLOAD: a reference, no second copy) */
    for (const char *const *s = sonames; *s; s++) {
        void *h = dlopen(*s, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (h) {
            snprintf(where, size, "%s (already loaded)", *s);
            return h;
        }
    }
    /* 2. KMUX_CUDA_LIB_PATH */
    const char *env = getenv("KMUX_CUDA_LIB_PATH");
    if (env && env[0]) {
        /* every folder whole (a path that does not fit is reported, never opened shorter);
         * each file checked before dlopen (a truncated one would SIGBUS in it, a FIFO block) */
        const char *dir = env;
        char one[sizeof path];
        for (int got; (got = next_folder(&dir, one, sizeof one)) != 0;) {
            if (got > 0) {
                for (const char *const *s = sonames; *s; s++) {
                    char why[600];
                    if (kmux_path_join(path, sizeof path, one, *s) != 0) {
                        snprintf(why, sizeof why, "%.200s.../%s: path too long, not opened", one,
                                 *s);
                        append(tried, sizeof tried, ", ", why);
                        continue;
                    }
                    int chk = kmux_so_file_check(path, why, sizeof why);
                    if (chk == KMUX_SO_BAD) { /* there, but never loaded: say so */
                        append(tried, sizeof tried, ", ", why);
                        append(rejected, sizeof rejected, "; ", why);
                        continue;
                    }
                    void *h = chk == KMUX_SO_OK ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
                    if (h) {
                        found(where, size, path, rejected);
                        return h;
                    }
                    if (chk == KMUX_SO_OK) {
                        const char *e = dlerror();
                        snprintf(why, sizeof why, "%s", e ? e : path);
                        append(rejected, sizeof rejected, "; ", why);
                    }
                    append(tried, sizeof tried, ", ", path);
                }
            } else {
                char why[300];
                snprintf(why, sizeof why, "%.200s...: folder path too long, not searched", one);
                append(tried, sizeof tried, ", ", why);
            }
        }
    }
    /* 3. the loader's search (LD_LIBRARY_PATH, this plugin's RUNPATH, ld.so.cache) */
    for (const char *const *s = sonames; *s; s++) {
        void *h = dlopen(*s, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            struct link_map *lm = NULL;
            if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
                found(where, size, lm->l_name, rejected);
            else
                found(where, size, *s, rejected);
            return h;
        }
        append(tried, sizeof tried, ", ", *s);
    }
    /* 4. NVIDIA's pip wheels of the running Python (not for the driver: wheel NULL) */
    py_prefixes pp;
    pp.n = 0;
    if (wheel) python_site_packages(&pp);
    /* CUDA 12's wheels keep each library in nvidia/<library>/lib, CUDA 13's all of them in
     * nvidia/cu13/lib */
    const char *const folders[] = {wheel, "cu13", "cu12"};
    for (int i = 0; i < pp.n; i++)
        for (int f = 0; f < 3; f++)
            for (const char *const *s = sonames; *s; s++) {
                if (snprintf(path, sizeof path, "%s/nvidia/%s/lib/%s", pp.dir[i], folders[f], *s) >=
                    (int)sizeof path)
                    continue; /* never a shorter path */
                char why[600];
                int chk = kmux_so_file_check(path, why, sizeof why);
                if (chk == KMUX_SO_ABSENT) continue; /* absent: summarised below */
                void *h = chk == KMUX_SO_OK ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
                if (h) {
                    found(where, size, path, rejected);
                    return h;
                }
                if (chk == KMUX_SO_BAD) append(rejected, sizeof rejected, "; ", why);
                append(tried, sizeof tried, ", ", path);
            }
    if (pp.n > 0) {
        char wheels[160];
        snprintf(wheels, sizeof wheels, "nvidia/{%s,cu13,cu12}/lib of %d Python package folders",
                 wheel, pp.n);
        append(tried, sizeof tried, ", ", wheels);
    }
    snprintf(where, size, "not found (tried %s on the loader path%s)", tried,
             env && env[0] ? " and in KMUX_CUDA_LIB_PATH" : "; KMUX_CUDA_LIB_PATH not set");
    return NULL;
}

/* The folders the loader searches for a dlopen from this plugin (LD_LIBRARY_PATH, its RUNPATH,
 * the system folders), in order; NULL when glibc cannot say. Caller frees. */
static Dl_serinfo *loader_folders(void) {
    Dl_info self;
    if (!dladdr(&kmux_cuda_lib, &self) || !self.dli_fname) return NULL;
    void *h = dlopen(self.dli_fname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h) return NULL;
    Dl_serinfo size, *info = NULL;
    if (dlinfo(h, RTLD_DI_SERINFOSIZE, &size) == 0 &&
        (info = kmux_sys_malloc(size.dls_size)) != NULL) {
        memcpy(info, &size, sizeof size);
        if (dlinfo(h, RTLD_DI_SERINFO, info) != 0) {
            free(info);
            info = NULL;
        }
    }
    dlclose(h);
    return info;
}

/* Appends ":" and `list` to buf (size bytes) when it fits whole; else leaves buf as it was. */
static void add_whole(char *buf, size_t size, const char *list) {
    if (strlen(buf) + 1 + strlen(list) < size) append(buf, size, ":", list);
}

/* Finds the file open_library would open first, without opening it: an already loaded library,
 * then a file that passes kmux_so_file_check in KMUX_CUDA_LIB_PATH, the loader's folders, the
 * folders of /etc/ld.so.conf and the wheel folders. 1 and `where` (the file, and the files
 * rejected before it) when found; 0 when none of these has it (the loader's cache may still, from
 * a folder no longer in ld.so.conf: only dlopen knows). */
static int locate_library(const char *const *sonames, const char *wheel, char *where, size_t size) {
    char rejected[1024] = "", path[1024], why[600];
    for (const char *const *s = sonames; *s; s++) {
        void *h = dlopen(*s, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (h) {
            dlclose(h);
            snprintf(where, size, "%s (already loaded)", *s);
            return 1;
        }
    }
    /* the folders to search, in open_library's order, colon-separated; a folder that would not
     * fit whole is left out (never searched shorter: the real load searches it) */
    char dirs[8192] = "";
    const char *env = getenv("KMUX_CUDA_LIB_PATH");
    if (env && env[0]) add_whole(dirs, sizeof dirs, env);
    Dl_serinfo *si = loader_folders();
    for (unsigned i = 0; si && i < si->dls_cnt; i++)
        add_whole(dirs, sizeof dirs, si->dls_serpath[i].dls_name);
    free(si);
    /* the folders ldconfig put in the loader's cache (NVIDIA's packages add /usr/local/cuda/lib64
     * there); dlopen consults the cache before the system folders, which come last above: a
     * library in both is named from the system folder here, the real load says which it opened */
    (void)kmux_ld_conf_folders("/etc/ld.so.conf", dirs, sizeof dirs);
    py_prefixes pp;
    pp.n = 0;
    python_site_packages(&pp);
    const char *const folders[] = {wheel, "cu13", "cu12"};
    for (int i = 0; i < pp.n; i++)
        for (int f = 0; f < 3; f++)
            if (snprintf(path, sizeof path, "%s/nvidia/%s/lib", pp.dir[i], folders[f]) <
                (int)sizeof path)
                add_whole(dirs, sizeof dirs, path);
    const char *dir = dirs;
    char one[sizeof path];
    for (int got; (got = next_folder(&dir, one, sizeof one)) != 0;)
        for (const char *const *s = sonames; got > 0 && *s; s++) {
            if (kmux_path_join(path, sizeof path, one, *s) != 0) continue;
            int chk = kmux_so_file_check(path, why, sizeof why);
            if (chk == KMUX_SO_OK) {
                found(where, size, path, rejected);
                return 1;
            }
            if (chk == KMUX_SO_BAD) append(rejected, sizeof rejected, "; ", why);
        }
    return 0;
}

/* dlsym every name of a list; on a missing one, `where` says which and 0 is returned. The name
 * is stringized after expansion: cuda.h's cuMemAlloc is the symbol cuMemAlloc_v2. */
#define KMUX_CUDA_STR2(x) #x
#define KMUX_CUDA_STR(x) KMUX_CUDA_STR2(x)
#define KMUX_CUDA_LIB_SYM(name)                                                                    \
    if (ok) {                                                                                      \
        *(void **)&tab->name = sym_of(h, KMUX_CUDA_STR(name));                                     \
        if (!tab->name) {                                                                          \
            snprintf(missing, sizeof missing, "%s", KMUX_CUDA_STR(name));                          \
            ok = 0;                                                                                \
        }                                                                                          \
    }
#define KMUX_CUDA_LIB_OPT(name) *(void **)&tab->name = sym_of(h, KMUX_CUDA_STR(name));

static void *sym_of(void *h, const char *name) {
    void *p = dlsym(h, name);
    /* drivers before 12.8 export cuEventElapsedTime only; the _v2 that newer headers name has
     * the same signature and semantics */
    if (!p && strcmp(name, "cuEventElapsedTime_v2") == 0) p = dlsym(h, "cuEventElapsedTime");
    return p;
}

static int load_drv(void *h) {
    __typeof__(kmux_cuda_lib.drv) *tab = &kmux_cuda_lib.drv;
    char missing[96] = "";
    int ok = 1;
    KMUX_CUDA_DRV_FUNCS(KMUX_CUDA_LIB_SYM)
    if (!ok)
        append(kmux_cuda_lib.drv_where, sizeof kmux_cuda_lib.drv_where, ": no symbol ", missing);
    return ok;
}

static int load_lt(void *h) {
    __typeof__(kmux_cuda_lib.lt) *tab = &kmux_cuda_lib.lt;
    char missing[96] = "";
    int ok = 1;
    KMUX_CUDA_LT_FUNCS(KMUX_CUDA_LIB_SYM)
    KMUX_CUDA_LT_OPTIONAL_FUNCS(KMUX_CUDA_LIB_OPT)
    if (!ok) append(kmux_cuda_lib.lt_where, sizeof kmux_cuda_lib.lt_where, ": no symbol ", missing);
    return ok;
}

static int load_dnn(void *h) {
    __typeof__(kmux_cuda_lib.dnn) *tab = &kmux_cuda_lib.dnn;
    char missing[96] = "";
    int ok = 1;
    KMUX_CUDA_DNN_FUNCS(KMUX_CUDA_LIB_SYM)
    if (!ok)
        append(kmux_cuda_lib.dnn_where, sizeof kmux_cuda_lib.dnn_where, ": no symbol ", missing);
    return ok;
}

static void drv_load_once(void) {
    kmux_cuda_libs *L = &kmux_cuda_lib;
    void *drv = open_library(drv_sonames, NULL, L->drv_where, sizeof L->drv_where);
    L->drv_ok = drv && load_drv(drv);
}

int kmux_cuda_driver_load(void) {
    pthread_once(&drv_once, drv_load_once);
    return kmux_cuda_lib.drv_ok;
}

static void libs_load_once(void) {
    kmux_cuda_libs *L = &kmux_cuda_lib;
    void *lt = open_library(lt_sonames, "cublas", L->lt_where, sizeof L->lt_where);
    void *dnn = open_library(dnn_sonames, "cudnn", L->dnn_where, sizeof L->dnn_where);
    L->lt_ok = lt && load_lt(lt);
    L->dnn_ok = dnn && load_dnn(dnn);
    __atomic_store_n(&libs_loaded, 1, __ATOMIC_RELEASE);
}

int kmux_cuda_libs_load(void) {
    (void)kmux_cuda_driver_load();
    pthread_once(&libs_once, libs_load_once);
    return kmux_cuda_lib.lt_ok && kmux_cuda_lib.dnn_ok;
}

static void locate_once_fn(void) {
    kmux_cuda_libs *L = &kmux_cuda_lib;
    L->lt_found = locate_library(lt_sonames, "cublas", L->lt_file, sizeof L->lt_file);
    L->dnn_found = locate_library(dnn_sonames, "cudnn", L->dnn_file, sizeof L->dnn_file);
    /* not in any folder the search can list: the loader's cache may have it, which only a real
     * load can tell (slow, and only on such hosts) */
    if (!L->lt_found || !L->dnn_found) (void)kmux_cuda_libs_load();
}

int kmux_cuda_libs_locate(void) {
    pthread_once(&locate_once, locate_once_fn);
    if (__atomic_load_n(&libs_loaded, __ATOMIC_ACQUIRE))
        return kmux_cuda_lib.lt_ok && kmux_cuda_lib.dnn_ok;
    return kmux_cuda_lib.lt_found && kmux_cuda_lib.dnn_found;
}

int kmux_cuda_libs_present(int *lt, int *dnn) {
    const int ok = kmux_cuda_libs_locate();
    const kmux_cuda_libs *L = &kmux_cuda_lib;
    const int loaded = __atomic_load_n(&libs_loaded, __ATOMIC_ACQUIRE);
    *lt = loaded ? L->lt_ok : L->lt_found;
    *dnn = loaded ? L->dnn_ok : L->dnn_found;
    return ok;
}

void kmux_cuda_libs_describe(char *buf, size_t size) {
    (void)kmux_cuda_libs_locate();
    const kmux_cuda_libs *L = &kmux_cuda_lib;
    if (__atomic_load_n(&libs_loaded, __ATOMIC_ACQUIRE))
        snprintf(buf, size, "cuBLASLt %s; cuDNN %s", L->lt_where, L->dnn_where);
    else
        snprintf(buf, size, "cuBLASLt %s; cuDNN %s (both opened when a plan first needs them)",
                 L->lt_file, L->dnn_file);
}

void kmux_cuda_driver_describe(char *buf, size_t size) {
    (void)kmux_cuda_driver_load();
    snprintf(buf, size, "%s", kmux_cuda_lib.drv_where);
}
