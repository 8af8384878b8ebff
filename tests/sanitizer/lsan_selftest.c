/*
 * lsan_selftest.c - checks tests/sanitizer/lsan.supp under the sanitizer stage's LSAN_OPTIONS
 * (tests/sanitizer/lsan-selftest.sh builds and runs it): glibc's dlerror() buffers held in the
 * TLS of a thread that is still alive at exit (as oneDNN's OpenMP workers are) must be
 * suppressed, which needs glibc's debug symbols (libc6-dbg) to name the frames; and leaks of the
 * program's own must still be reported: a plain malloc, and a getline() buffer (allocated inside
 * libc, which a suppression by library name would hide).
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static __attribute__((noinline)) void own_malloc_leak(void) {
    volatile char *p = malloc(4242);
    if (p) p[0] = 1;
}

static __attribute__((noinline)) void own_getline_leak(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return;
    char *line = NULL;
    size_t cap = 0;
    if (getline(&line, &cap, f) < 0) fprintf(stderr, "lsan_selftest: getline failed\n");
    fclose(f); /* line is never freed */
}

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_done;

/* A failing dlopen in a thread that stays parked until the process exits: glibc keeps the
 * error in that thread's TLS, which the sanitizer run does not scan (use_tls=0). */
static void *glibc_dlerror_buffers(void *arg) {
    (void)arg;
    void *h = dlopen("libkmux-lsan-selftest-no-such-library.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) fprintf(stderr, "lsan_selftest: dlopen of a missing library succeeded?\n");
    pthread_mutex_lock(&g_lock);
    g_done = 1;
    pthread_cond_signal(&g_cond);
    pthread_mutex_unlock(&g_lock);
    for (;;)
        pause();
    return NULL;
}

int main(void) {
    own_malloc_leak();
    own_getline_leak();
    pthread_t t;
    if (pthread_create(&t, NULL, glibc_dlerror_buffers, NULL) != 0) return 2;
    pthread_mutex_lock(&g_lock);
    while (!g_done)
        pthread_cond_wait(&g_cond, &g_lock);
    pthread_mutex_unlock(&g_lock);
    return 0; /* the parked thread is still alive */
}
