/*
 * loader_cwd.c - run by test_loader_cwd.sh with libkmux found through a RELATIVE
 * LD_LIBRARY_PATH entry, so that dladdr names it relatively. It changes into argv[1] (a folder
 * holding lib/libkmux-cwdplant.so) and only then creates a context: kmux must search the folder
 * libkmux was loaded from, never the same relative path under the new working folder.
 * Exit 0 when no backend came from argv[1]; 1 (with the listing) otherwise.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kmux.h"

int main(int argc, char **argv) {
    if (argc != 2 || chdir(argv[1]) != 0) {
        fprintf(stderr, "usage: loader_cwd <folder to change into>\n");
        return 2;
    }
    kmux_context *ctx = NULL;
    if (kmux_context_create(NULL, &ctx) != KMUX_OK) {
        fprintf(stderr, "kmux_context_create: %s\n", kmux_last_error());
        return 2;
    }
    int n = 0, bad = 0;
    kmux_backend_count(ctx, &n);
    for (int i = 0; i < n; i++) {
        kmux_backend_info b;
        kmux_backend_info_get(ctx, i, &b);
        printf("%s [%s] %s\n", b.name, b.path, b.available ? "available" : b.reason);
        if (strstr(b.path, "cwdplant") || strncmp(b.path, argv[1], strlen(argv[1])) == 0) bad = 1;
    }
    kmux_context_destroy(ctx);
    return bad;
}
