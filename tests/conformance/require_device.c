/*
 * require_device.c - no vacuous pass for a suite registered for one device. The suites check
 * every available device against ref, so without the device they were registered for (hip:0 in
 * tests/fake_hip) they would check only ref and pass. With
 *   KMUX_CONFORMANCE_REQUIRE_DEVICE=ID   (e.g. hip:0, set by the ctest registration)
 * the executable first looks for that device (kmux_device_find in a child process, so that the
 * runner that forks the tests never initialises a GPU runtime) and, when it is not available,
 *   - exits 77 with the reason (ctest: SKIP_RETURN_CODE 77, reported "Skipped"), or
 *   - fails (exit 1) when KMUX_CONFORMANCE_DEVICE_PROMISED=1: the build promised that device
 *     (tests/fake_hip: kmux-hip carries code objects, so the fake runtime must give hip:0).
 * When the device is there the variable is removed, so that the test processes do not look
 * again, and the suite runs as usual.
 *
 * Linked as an object (kmux_conformance_require, tests/conformance/CMakeLists.txt) into every
 * suite that tests/fake_hip registers: a constructor, run before Criterion's main.
 */
#define _POSIX_C_SOURCE 200809L /* fork, pipe, unsetenv */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kmux.h"

#define CF_REASON 2048

/* Appends to msg that device id's backend ("hip" of "hip:0") is not loaded at all, when so
 *  (kmux_device_find's message already gives the reason of a loaded, unavailable backend). */
static void backend_state(const kmux_context *ctx, const char *id, char *msg, size_t n) {
    size_t blen = strcspn(id, ":");
    int nb = 0;
    size_t len = strlen(msg);
    if (kmux_backend_count(ctx, &nb) != KMUX_OK) return;
    for (int i = 0; i < nb; i++) {
        kmux_backend_info bi;
        if (kmux_backend_info_get(ctx, i, &bi) == KMUX_OK && strlen(bi.name) == blen &&
            strncmp(bi.name, id, blen) == 0)
            return;
    }
    snprintf(msg + len, n - len,
             "; no backend %.*s is loaded (its plugin was not built, not found, or left out by "
             "KMUX_BACKENDS)",
             (int)blen, id);
}

/* Child: 0 when the device is available, 1 with the reason on fd when not, 2 when no context. */
static int probe(const char *id, int fd) {
    kmux_context *ctx = NULL;
    char msg[CF_REASON];
    int rc = 0;
    if (kmux_context_create(NULL, &ctx) != KMUX_OK) {
        snprintf(msg, sizeof msg, "kmux_context_create failed: %s", kmux_last_error());
        rc = 2;
    } else {
        kmux_device *dev = NULL;
        if (kmux_device_find(ctx, id, &dev) != KMUX_OK) {
            snprintf(msg, sizeof msg, "%s", kmux_last_error());
            rc = 1;
            backend_state(ctx, id, msg, sizeof msg);
        }
        kmux_context_destroy(ctx);
    }
    if (rc) {
        size_t len = strlen(msg);
        if (write(fd, msg, len) != (ssize_t)len) rc = 2;
    }
    return rc;
}

__attribute__((constructor)) static void cf_require_device(void) {
    const char *want = getenv("KMUX_CONFORMANCE_REQUIRE_DEVICE");
    if (!want || !want[0]) return;
    char id[64];
    snprintf(id, sizeof id, "%s", want);
    const char *promised = getenv("KMUX_CONFORMANCE_DEVICE_PROMISED");
    int must = promised && strcmp(promised, "1") == 0;

    int fds[2];
    if (pipe(fds) != 0) {
        perror("conformance: pipe");
        _exit(1);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("conformance: fork");
        _exit(1);
    }
    if (pid == 0) {
        close(fds[0]);
        _exit(probe(id, fds[1]));
    }
    close(fds[1]);
    char reason[CF_REASON];
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fds[0], reason + got, sizeof reason - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
        if (got == sizeof reason - 1) break;
    }
    reason[got] = '\0';
    close(fds[0]);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) {
        perror("conformance: waitpid");
        _exit(1);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        unsetenv("KMUX_CONFORMANCE_REQUIRE_DEVICE"); /* found: the tests need not look again */
        return;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1) {
        fprintf(stderr,
                "FAIL: conformance: looking for the required device %s did not answer (%s%d)%s%s\n",
                id, WIFEXITED(status) ? "exit " : "signal ",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), got ? ": " : "",
                reason);
        _exit(1);
    }
    if (must) {
        fprintf(stderr,
                "FAIL: conformance: this suite is registered for %s and the build promised it "
                "(KMUX_CONFORMANCE_DEVICE_PROMISED=1), but it is not available: %s\n",
                id, reason);
        _exit(1);
    }
    fprintf(stderr,
            "SKIP: conformance: this suite is registered for %s, which is not available, and "
            "would check only ref: %s\n",
            id, reason);
    _exit(77);
}
