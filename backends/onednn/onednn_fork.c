/*
 * onednn_fork.c - cpu:onednn in a fork() child.
 *
 * GNU libgomp keeps the worker pool of each thread that ran a parallel region in that thread's
 * (thread-local) state and has no fork handler: fork() copies the bookkeeping but not the worker
 * threads, and the next parallel region of the forking thread in the child waits forever for
 * workers that do not exist (the hang was seen with a fresh context in the child, too). Other
 * threads of the child start a pool of their own and are not affected.
 *
 * So the plugin remembers, per thread, whether it ran oneDNN with more than one thread; a
 * pthread_atfork child handler (it runs in the child's one thread, the forking one, with that
 * thread's TLS) turns the memory into "this thread's pool is stale", and every later oneDNN call
 * of that thread runs single-threaded, where libgomp does not touch the pool. Results are the
 * same; only that thread of the child is slower (include/kmux.h says how to avoid it).
 */
#include "onednn_internal.h"

#include <pthread.h>

static _Thread_local int t_pool_used;  /* this thread ran oneDNN with > 1 OpenMP threads */
static _Thread_local int t_pool_stale; /* ...and then fork()ed: we are that thread's child */

static void on_fork_child(void) {
    if (t_pool_used) t_pool_stale = 1;
}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_atfork_rc = -1;

static void install(void) {
    /* The plugin is never unloaded (-z nodelete), so the handler stays valid. */
    g_atfork_rc = pthread_atfork(NULL, NULL, on_fork_child);
}

int kmux_dnn_fork_guard_install(void) {
    pthread_once(&g_once, install);
    return g_atfork_rc;
}

int kmux_dnn_fork_threads(const kmux_dnn_state *st) {
    int want = st->hdr.num_threads;
    if (t_pool_stale) {
        if (t_pool_stale == 1 && want > 1) {
            t_pool_stale = 2; /* say it once per thread */
            st->hdr.host->trace(1,
                                "fork,onednn,single-threaded: this thread is the fork() child of "
                                "a thread whose OpenMP pool was active (%d threads asked)",
                                want);
        }
        return 1;
    }
    if (want > 1) t_pool_used = 1;
    return want;
}

int kmux_dnn_pool_usable(int n) {
    if (t_pool_stale) return 0;
    if (n > 1) t_pool_used = 1;
    return 1;
}
