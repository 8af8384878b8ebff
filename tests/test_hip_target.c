/*
 * test_hip_target.c - the HIP plugin's target-id matcher (backends/hip/hip_target.h), a pure
 * function, against a table of cases: which code object (processor, optional sramecc/xnack
 * setting) a device of a given full target id loads, by LLVM's target-id rules; the search of a
 * carried list; and the "needs" notation of the probe's message. No HIP, no plugin: it runs
 * everywhere.
 */
#include <stdio.h>
#include <string.h>

#include "hip_target.h"

typedef struct match_case {
    const char *device, *code;
    int want;
} match_case;

static const match_case cases[] = {
    /* same processor, nothing specified */
    {"gfx942", "gfx942", 1},
    {"gfx942:sramecc+:xnack-", "gfx942", 1},
    /* another processor never matches, whatever the features */
    {"gfx942:sramecc+:xnack-", "gfx90a", 0},
    {"gfx90a", "gfx90a:xnack-", 1}, /* device setting unknown: not held against it */
    {"gfx1030", "gfx1100", 0},
    {"gfx1100", "gfx110", 0}, /* a prefix is not the processor */
    {"gfx110", "gfx1100", 0},
    {"gfx942", "gfx9421", 0},
    /* specified features must equal the device's */
    {"gfx942:sramecc+:xnack-", "gfx942:xnack-", 1},
    {"gfx942:sramecc+:xnack-", "gfx942:xnack+", 0},
    {"gfx942:sramecc+:xnack-", "gfx942:sramecc+", 1},
    {"gfx942:sramecc+:xnack-", "gfx942:sramecc-", 0},
    {"gfx942:sramecc+:xnack-", "gfx942:sramecc+:xnack-", 1},
    {"gfx942:sramecc+:xnack-", "gfx942:sramecc+:xnack+", 0},
    {"gfx942:sramecc+:xnack-", "gfx942:sramecc-:xnack-", 0},
    {"gfx90a:sramecc-:xnack+", "gfx90a:xnack+", 1},
    {"gfx90a:sramecc-:xnack+", "gfx90a:sramecc-:xnack+", 1},
    {"gfx90a:sramecc-:xnack+", "gfx90a:sramecc+", 0},
    /* feature order in the code object's id does not matter */
    {"gfx942:sramecc+:xnack-", "gfx942:xnack-:sramecc+", 1},
    /* a device with only one feature (gfx1010 has xnack, no sramecc) */
    {"gfx1010:xnack-", "gfx1010", 1},
    {"gfx1010:xnack-", "gfx1010:xnack+", 0},
    /* offload-bundle entry ids */
    {"gfx942:sramecc+:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx942", 1},
    {"gfx942:sramecc+:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx942:xnack+", 0},
    {"gfx942:sramecc+:xnack-", "hip-amdgcn-amd-amdhsa--gfx942:xnack-", 1},
    /* malformed code-object ids match nothing */
    {"gfx942:sramecc+:xnack-", "gfx942:xnack", 0},
    {"gfx942:sramecc+:xnack-", "gfx942:", 0},
    {"gfx942", "", 0},
    {"gfx942", ":xnack-", 0},
};

typedef struct find_case {
    const char *device, *carried, *want; /* want: the entry found, NULL for none */
} find_case;

static const find_case finds[] = {
    {"gfx942:sramecc+:xnack-", "gfx90a,gfx942,gfx1100", "gfx942"},
    {"gfx1030", "gfx90a,gfx942,gfx1100", NULL},
    {"gfx942:sramecc+:xnack-", "gfx942:xnack+,gfx942:xnack-", "gfx942:xnack-"},
    {"gfx942:sramecc+:xnack+", "gfx942:xnack-,gfx90a", NULL},
    {"gfx1100", "gfx90a, gfx942 , gfx1100", "gfx1100"},
    {"gfx942", "", NULL},
    {"gfx942", ",,gfx942,", "gfx942"},
};

typedef struct needs_case {
    const char *device, *want;
} needs_case;

static const needs_case needs[] = {
    {"gfx1030", "gfx1030"},
    {"gfx942:sramecc+:xnack-", "gfx942[:sramecc+][:xnack-]"},
    {"gfx1010:xnack-", "gfx1010[:xnack-]"},
};

int main(void) {
    int failed = 0, n = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++, n++) {
        const match_case *c = &cases[i];
        int got = kmux_hip_target_matches(c->device, strlen(c->device), c->code, strlen(c->code));
        if (got != c->want) {
            fprintf(stderr, "FAIL: device %s, code object %s: %s, expected %s\n", c->device,
                    c->code, got ? "matches" : "no match", c->want ? "a match" : "none");
            failed++;
        }
    }
    for (size_t i = 0; i < sizeof finds / sizeof finds[0]; i++, n++) {
        const find_case *c = &finds[i];
        char got[64] = "";
        int found = kmux_hip_target_find(c->device, c->carried, got, sizeof got);
        if (found != (c->want != NULL) || (c->want && strcmp(got, c->want) != 0)) {
            fprintf(stderr, "FAIL: device %s in \"%s\": %s, expected %s\n", c->device, c->carried,
                    found ? got : "none", c->want ? c->want : "none");
            failed++;
        }
    }
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++, n++) {
        char got[96];
        kmux_hip_target_needs(needs[i].device, got, sizeof got);
        if (strcmp(got, needs[i].want) != 0) {
            fprintf(stderr, "FAIL: %s needs \"%s\", expected \"%s\"\n", needs[i].device, got,
                    needs[i].want);
            failed++;
        }
    }
    printf("test_hip_target: %d of %d cases passed\n", n - failed, n);
    return failed ? 1 : 0;
}
