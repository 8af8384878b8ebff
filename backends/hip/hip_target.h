/*
 * hip_target.h - AMD GPU target ids ("gfx942", "gfx942:xnack-", "gfx942:sramecc+:xnack-") and
 * which code object a device can load, by the rules of LLVM's AMDGPU target ids (clang's "Target
 * ID" documentation, AMDGPUUsage "Target Features"):
 * - the processor ("gfx942") must be the same;
 * - a feature the code object leaves unspecified ("gfx942" says nothing of xnack) matches any
 *   device setting;
 * - a feature the code object specifies ("xnack-") must equal the device's setting ("xnack-").
 * A device target id that does not state a feature (the architecture came from somewhere other
 * than gcnArchName, so the setting is unknown) is not held against a code object that specifies
 * it: the runtime decides at module load, and a missing code object is reported there
 * (hip_modules.c). A feature field without a '+' or '-' sign makes the code-object entry match
 * nothing.
 * Pure functions, header only: the plugin (hip_backend.c, hip_modules.c) and test_hip_target use
 * the same code. Entries of the carried list may also be offload-bundle ids
 * ("hipv4-amdgcn-amd-amdhsa--gfx942:xnack-"): the part after the last "--" is the target id.
 */
#ifndef KMUX_HIP_TARGET_H
#define KMUX_HIP_TARGET_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/** The target id inside an offload-bundle entry id ("hipv4-amdgcn-amd-amdhsa--gfx942" ->
 *  "gfx942"), the text itself when it holds no "--"; len: the text's length, updated. */
static inline const char *kmux_hip_target_strip(const char *id, size_t *len) {
    const char *t = id;
    for (size_t i = 0; i + 1 < *len; i++)
        if (id[i] == '-' && id[i + 1] == '-') t = id + i + 2;
    *len -= (size_t)(t - id);
    return t;
}

/** Setting of `feature` ("xnack") in the target id id[0, len): '+', '-', 0 when the id does not
 *  state it, '?' when it names the feature without a sign. */
static inline char kmux_hip_target_feature(const char *id, size_t len, const char *feature) {
    size_t fl = strlen(feature), i = 0;
    while (i < len && id[i] != ':')
        i++;
    while (i < len) {
        size_t start = ++i; /* past ':' */
        while (i < len && id[i] != ':')
            i++;
        size_t n = i - start; /* "xnack-" */
        if (n >= fl && strncmp(id + start, feature, fl) == 0 && (n == fl || n == fl + 1)) {
            char sign = n == fl ? 0 : id[start + fl];
            return sign == '+' || sign == '-' ? sign : '?';
        }
    }
    return 0;
}

/** 1 when a device of target id device[0, dlen) can load the code object of target id
 *  code[0, clen) (bundle prefix allowed), by the rules above; 0 otherwise. */
static inline int kmux_hip_target_matches(const char *device, size_t dlen, const char *code,
                                          size_t clen) {
    code = kmux_hip_target_strip(code, &clen);
    size_t dp = strcspn(device, ":"), cp = strcspn(code, ":");
    if (dp > dlen) dp = dlen;
    if (cp > clen) cp = clen;
    if (cp == 0 || dp != cp || strncmp(device, code, cp) != 0) return 0;
    /* every feature the code object specifies */
    for (size_t i = cp; i < clen;) {
        size_t start = ++i;
        while (i < clen && code[i] != ':')
            i++;
        size_t n = i - start;
        if (n < 2 || (code[i - 1] != '+' && code[i - 1] != '-')) return 0; /* malformed */
        char name[32];
        if (n - 1 >= sizeof name) return 0;
        memcpy(name, code + start, n - 1);
        name[n - 1] = '\0';
        char have = kmux_hip_target_feature(device, dlen, name);
        if (have && have != code[i - 1]) return 0; /* '?' on the device side also differs */
    }
    return 1;
}

/** The first entry of the ','-separated carried list that a device of target id `device` can
 *  load, copied into match[size] (may be NULL); returns 1, or 0 when no entry fits. Spaces
 *  around entries are ignored. */
static inline int kmux_hip_target_find(const char *device, const char *carried, char *match,
                                       size_t size) {
    const size_t dlen = strlen(device);
    for (const char *p = carried; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m > 0 && p[m - 1] == ' ')
            m--;
        if (m > 0 && kmux_hip_target_matches(device, dlen, p, m)) {
            if (match && size) snprintf(match, size, "%.*s", (int)m, p);
            return 1;
        }
        p += n;
    }
    return 0;
}

/** What a device of target id `device` needs, in clang's --offload-arch notation with optional
 *  parts in brackets: "gfx1030", "gfx942[:sramecc+][:xnack-]" (a code object for gfx942 that
 *  specifies each of those features as shown, or leaves it out). */
static inline const char *kmux_hip_target_needs(const char *device, char *buf, size_t size) {
    size_t n = strcspn(device, ":");
    int w = snprintf(buf, size, "%.*s", (int)n, device);
    for (const char *p = device + n; *p == ':' && w >= 0 && (size_t)w < size;) {
        size_t f = strcspn(p + 1, ":");
        w += snprintf(buf + w, size - (size_t)w, "[:%.*s]", (int)f, p + 1);
        p += 1 + f;
    }
    return buf;
}

#endif
