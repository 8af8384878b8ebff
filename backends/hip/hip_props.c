/*
 * hip_props.c - properties, peak rates and capabilities of a HIP device.
 *
 * Everything comes from calls whose ABI is stable across ROCm 5, 6 and 7 (hipDeviceGetAttribute,
 * hipDeviceGetName, hipDeviceTotalMem, hipDeviceGetPCIBusId), except the target id, which HIP
 * reports only in hipDeviceProp_t.gcnArchName ("gfx942:sramecc+:xnack-": processor and the
 * device's sramecc and xnack settings, the xnack one being the process's mode). It is read through
 * the call of the runtime's version (hip_api.h: hipGetDevicePropertiesR0600 on ROCm 6.0 and
 * later, the unversioned hipGetDeviceProperties with the ROCm 5 layout before), into a buffer
 * larger than either struct. Without it, the processor comes from the KFD topology the ROCm
 * runtime itself reads (/sys/class/kfd/kfd/topology/nodes/<n>/properties: gfx_target_version
 * 90402, matched to the device by PCI location), else on ROCm 5 from hipDeviceAttributeGcnArch
 * (942; the attribute is unused since ROCm 6.0), else from the compute capability (major 9, minor
 * 4), and the target id is the processor alone (its features unknown).
 *
 * Peak FLOP/s = rate per compute unit per clock (table below) x compute units x peak engine
 * clock. Rates are dense (no sparsity), from AMD's ROCm documentation, tables "Peak-performance
 * capabilities" of docs/conceptual/gpu-arch/mi300.md (gfx942: MI300X, MI300A) and mi250.md
 * (gfx90a: MI250X, MI250), ROCm/ROCm@e396b48, as collected in workloads/peaks.csv. Cross-check:
 * MI300X 304 CU x 2048 x 2.1 GHz = 1307.4 TFLOP/s f16; MI300A 228 CU x 2048 x 2.1 GHz = 980.6;
 * MI250X (one GCD of 110 CU; the OAM part is two devices) 110 x 1024 x 1.7 GHz = 191.5 f16.
 * f32 is the FP32 matrix rate (256 flop/clk/CU on gfx942, 256 on gfx90a), f64 the FP64 matrix
 * rate; fp8 is FNUZ on gfx942 (no OCP fp8 unit), none on gfx90a.
 * Memory bandwidth: per product (the HBM3 stacks of gfx942 are not described by the memory clock
 * and bus width the runtime reports): MI300X / MI300A 5300 GB/s, MI250X 1638.4 GB/s per GCD.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/common/kmux_dtype_desc.h"
#include "dispatch/common/kmux_family.h"
#include "dispatch/common/kmux_type_rules.h"
#include "gpu_kernels.h"
#include "hip_backend.h"
#include "kmux_gpu_caps.h"

int kmux_hip_arch_rates_get(const char *arch, kmux_hip_arch_rates *r) {
    memset(r, 0, sizeof *r);
    double *p = r->per_clock_cu;
    if (strncmp(arch, "gfx942", 6) == 0) { /* CDNA 3: MI300X, MI300A */
        p[KMUX_F64] = 256;
        p[KMUX_F32] = 256;
        p[KMUX_F16] = p[KMUX_BF16] = 2048;
        p[KMUX_F8_E4M3_FNUZ] = p[KMUX_F8_E5M2_FNUZ] = 4096;
        p[KMUX_I8] = 4096;
        return 1;
    }
    if (strncmp(arch, "gfx90a", 6) == 0) { /* CDNA 2: MI250X, MI250, MI210 */
        p[KMUX_F64] = 256;
        p[KMUX_F32] = 256;
        p[KMUX_F16] = p[KMUX_BF16] = 1024;
        p[KMUX_I8] = 1024;
        return 1;
    }
    return 0;
}

int kmux_hip_fp8_family(const char *arch) {
    if (strncmp(arch, "gfx942", 6) == 0) return 'F';
    if (strncmp(arch, "gfx950", 6) == 0 || strncmp(arch, "gfx12", 5) == 0) return 'O';
    return 0;
}

/* gfx_target_version of the KFD node whose PCI location matches "dddd:bb:dd.f"; 0 if none. */
static int kfd_target_version(const char *pci) {
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    if (sscanf(pci, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) return 0;
    unsigned want = (bus << 8) | (dev << 3) | fn;
    DIR *d = opendir("/sys/class/kfd/kfd/topology/nodes");
    if (!d) return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[320];
        snprintf(path, sizeof path, "/sys/class/kfd/kfd/topology/nodes/%s/properties", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        char key[64];
        unsigned long long v;
        int gfx = 0;
        long loc = -1, domain = -1;
        while (fscanf(f, "%63s %llu", key, &v) == 2) {
            if (strcmp(key, "gfx_target_version") == 0) gfx = (int)v;
            if (strcmp(key, "location_id") == 0) loc = (long)v;
            if (strcmp(key, "domain") == 0) domain = (long)v;
        }
        fclose(f);
        if (gfx && loc == (long)want && (domain < 0 || domain == (long)dom)) found = gfx;
    }
    closedir(d);
    return found;
}

/* gcnArchName through the properties call of the runtime's version, into id; 1 when it gave a
 * "gfx..." name. */
static int gcn_arch_name(const kmux_hip_state *st, int ordinal, char *id, size_t size) {
    kmux_hip_error (*get)(void *, int) = NULL;
    size_t off = 0;
    if (st->runtime_version >= KMUX_HIP_VERSION_6_0) {
        get = st->api.hipGetDevicePropertiesR0600;
        off = KMUX_HIP_PROPS_R0600_GCN_ARCH_NAME;
    } else if (st->runtime_version > 0) {
        get = st->api.hipGetDeviceProperties;
        off = KMUX_HIP_PROPS_R0000_GCN_ARCH_NAME;
    }
    if (!get) return 0;
    /* 8-byte aligned, zeroed: a runtime that writes less leaves an empty name */
    uint64_t buf[KMUX_HIP_PROPS_BUFFER / sizeof(uint64_t)];
    memset(buf, 0, sizeof buf);
    if (get(buf, ordinal) != KMUX_HIP_SUCCESS) return 0;
    const char *name = (const char *)buf + off;
    size_t n = strnlen(name, KMUX_HIP_GCN_ARCH_NAME_LEN);
    if (n < 4 || n == KMUX_HIP_GCN_ARCH_NAME_LEN || strncmp(name, "gfx", 3) != 0) return 0;
    snprintf(id, size, "%.*s", (int)n, name);
    return 1;
}

const char *kmux_hip_arch_unread_reason(const kmux_hip_state *st) {
    if (st->runtime_version >= KMUX_HIP_VERSION_6_0 && !st->api.hipGetDevicePropertiesR0600)
        return "the HIP runtime (6.0 or later) does not export hipGetDevicePropertiesR0600, and no "
               "KFD topology names it";
    if (st->runtime_version > 0 && st->runtime_version < KMUX_HIP_VERSION_6_0 &&
        !st->api.hipGetDeviceProperties)
        return "the HIP runtime does not export hipGetDeviceProperties, and no KFD topology "
               "names it";
    return "neither the runtime's device properties nor the KFD topology name it";
}

void kmux_hip_read_arch(const kmux_hip_state *st, int ordinal, char *arch, size_t arch_size,
                        char *id, size_t id_size) {
    if (gcn_arch_name(st, ordinal, id, id_size)) {
        snprintf(arch, arch_size, "%.*s", (int)strcspn(id, ":"), id);
        return;
    }
    char pci[32] = "";
    if (st->api.hipDeviceGetPCIBusId(pci, (int)sizeof pci, ordinal) != KMUX_HIP_SUCCESS)
        pci[0] = '\0';
    int v = pci[0] ? kfd_target_version(pci) : 0; /* 90402: major 9, minor 4, stepping 2 */
    int g = 0;
    if (v > 0) {
        snprintf(arch, arch_size, "gfx%d%d%x", v / 10000, (v / 100) % 100, v % 100);
    } else if (st->runtime_version > 0 && st->runtime_version < KMUX_HIP_VERSION_6_0 &&
               st->api.hipDeviceGetAttribute(&g, KMUX_HIP_ATTR_GCN_ARCH, ordinal) ==
                   KMUX_HIP_SUCCESS &&
               g > 0) {
        /* HIP: gcnArch = major * 100 + minor * 10 + stepping, so a hex stepping overflows into
         * the minor digit: gfx90a = 910, gfx90c = 912 (no gfx91x exists) */
        int major = g / 100, minor = (g / 10) % 10, stepping = g % 10;
        if (major == 9 && minor == 1) minor = 0, stepping += 10;
        snprintf(arch, arch_size, "gfx%d%d%x", major, minor, stepping);
    } else {
        int major = 0, minor = 0;
        (void)st->api.hipDeviceGetAttribute(&major, KMUX_HIP_ATTR_CC_MAJOR, ordinal);
        (void)st->api.hipDeviceGetAttribute(&minor, KMUX_HIP_ATTR_CC_MINOR, ordinal);
        snprintf(arch, arch_size, "gfx%d%d?", major, minor);
    }
    snprintf(id, id_size, "%s", arch);
}

static int attr(const kmux_hip_state *st, int ordinal, int a) {
    int v = 0;
    if (st->api.hipDeviceGetAttribute(&v, a, ordinal) != KMUX_HIP_SUCCESS) v = 0;
    return v;
}

/* Peak bandwidth of the known products (GB/s), 0 when unknown. */
static double product_bandwidth(const char *arch, int cus) {
    if (strncmp(arch, "gfx942", 6) == 0 && (cus == 304 || cus == 228)) return 5300.0;
    if (strncmp(arch, "gfx90a", 6) == 0 && cus == 110) return 1638.4; /* one MI250X GCD */
    return 0.0;
}

kmux_status kmux_hip_device_props(void *state, int device, kmux_device_props *props) {
    kmux_hip_state *st = state;
    const kmux_hip_device *d = &st->devices[device];
    int ord = d->ordinal;
    memset(props, 0, sizeof *props);
    snprintf(props->id, sizeof props->id, "hip:%d", device);
    snprintf(props->backend, sizeof props->backend, "hip");
    snprintf(props->vendor, sizeof props->vendor, "AMD");
    kmux_hip_error e = st->api.hipDeviceGetName(props->name, (int)sizeof props->name, ord);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "device_props: hipDeviceGetName(%d) for hip:%d", ord, device);
    snprintf(props->arch, sizeof props->arch, "%s", d->arch);
    int rt = 0, drv = 0;
    (void)st->api.hipRuntimeGetVersion(&rt);
    (void)st->api.hipDriverGetVersion(&drv);
    snprintf(props->driver_version, sizeof props->driver_version, "HIP runtime %d.%d.%d, driver %d",
             rt / 10000000, (rt / 100000) % 100, rt % 100000, drv);
    snprintf(props->library_version, sizeof props->library_version,
             "kmux kernels/gpu code objects (%s)", kmux_hip_carried_archs());
    if (st->api.hipDeviceGetPCIBusId(props->pci_bus_id, (int)sizeof props->pci_bus_id, ord) != 0)
        props->pci_bus_id[0] = '\0';
    size_t mem = 0;
    if (st->api.hipDeviceTotalMem(&mem, ord) == KMUX_HIP_SUCCESS)
        props->memory_bytes = (int64_t)mem;
    props->compute_units = attr(st, ord, KMUX_HIP_ATTR_MULTIPROCESSOR_COUNT);
    int clock_khz = attr(st, ord, KMUX_HIP_ATTR_CLOCK_RATE);
    props->clock_mhz = clock_khz / 1000.0;
    props->mem_bandwidth_gbps = product_bandwidth(d->arch, props->compute_units);
    if (props->mem_bandwidth_gbps == 0.0) {
        int mclk = attr(st, ord, KMUX_HIP_ATTR_MEMORY_CLOCK_RATE);
        int bits = attr(st, ord, KMUX_HIP_ATTR_MEMORY_BUS_WIDTH);
        props->mem_bandwidth_gbps = 2.0 * mclk * 1e3 * (bits / 8.0) / 1e9;
    }
    /* dtype_support: what kmux_matmul_plan_create accepts on this device: the own GEMM kernel
     * runs f64, f32, f16, bf16, i8 (into i32) and the fp8 formats of the architecture's family
     * (FNUZ on gfx942, OCP on gfx950, none elsewhere) */
    unsigned char *ds = props->dtype_support;
    ds[KMUX_F64] = ds[KMUX_F32] = ds[KMUX_F16] = ds[KMUX_BF16] = ds[KMUX_I8] = ds[KMUX_I32] = 1;
    {
        int fam = kmux_hip_fp8_family(d->arch);
        if (fam == 'F') ds[KMUX_F8_E4M3_FNUZ] = ds[KMUX_F8_E5M2_FNUZ] = 1;
        if (fam == 'O') ds[KMUX_F8_E4M3] = ds[KMUX_F8_E5M2] = 1;
    }
    kmux_hip_arch_rates r;
    if (kmux_hip_arch_rates_get(d->arch, &r))
        for (int t = 0; t < KMUX_DTYPE_COUNT; t++)
            if (ds[t])
                props->peak_flops[t] = r.per_clock_cu[t] * props->compute_units * clock_khz * 1e3;
    return KMUX_OK;
}

/* Does the architecture compute in this dtype (fp8: its own family only)? */
static int arch_runs(const char *arch, kmux_dtype t) {
    if (!kmux_dtype_is_fp8(t)) return 1;
    int fam = kmux_hip_fp8_family(arch);
    return kmux_dtype_is_fnuz(t) ? fam == 'F' : fam == 'O';
}

/*
 * Capabilities. Matmul and convolution are offered (so that a plan reaches this plugin and is
 * refused with its reason, see hip_ops.c) with the rows of the legal tables whose dtypes the
 * architecture computes in; limits are those of 32-bit indexing in kernels/gpu.
 */
kmux_status kmux_hip_device_caps(void *state, int device, kmux_device_caps *caps) {
    kmux_hip_state *st = state;
    kmux_hip_device *dev = &st->devices[device];
    const char *arch = dev->arch;
    int n = 0;
    const kmux_type_combination *rows = kmux_rules_matmul_table(&n);
    /* every epilogue: the own kernel's, and the degenerate matmul's (hip_ops.c, the CPU finish) */
    kmux_gpu_matmul_caps(caps);
    kmux_op_caps *m = &caps->matmul;
    for (int i = 0; i < n && i < 64; i++)
        if (arch_runs(arch, rows[i].a_type) && arch_runs(arch, rows[i].b_type) &&
            arch_runs(arch, rows[i].c_type))
            m->type_rows |= UINT64_C(1) << i;
    rows = kmux_rules_conv_table(&n);
    uint64_t conv_rows = 0;
    for (int i = 0; i < n && i < 64; i++)
        if (arch_runs(arch, rows[i].a_type)) conv_rows |= UINT64_C(1) << i;
    kmux_gpu_conv2d_caps(caps, conv_rows);
    caps->amp_dtypes = kmux_gpu_host_amp_dtypes();
    kmux_gpu_families_caps(caps);
    /* the execute of matmul and conv takes args->workspace instead of the stream's (cuda_stream.c,
     * hip_stream.c) */
    if (KMUX_CAPS_HAS(caps, caller_workspace)) caps->caller_workspace = 1;
    /* pointer_mode DEVICE on the own GEMM kernel (hip_matmul.c) */
    if (KMUX_CAPS_HAS(caps, matmul_device_scalars)) caps->matmul_device_scalars = 1;
    /* fp8 honesty (ABI 2.3, written only where the core's struct has the fields): the fp8 family
     * the architecture lacks is refused by the core naming the one it has */
    if (caps->struct_size >=
        offsetof(kmux_device_caps, dtype_instead_note) + sizeof caps->dtype_instead_note) {
        int fam = kmux_hip_fp8_family(arch);
        if (fam == 'F' || fam == 'O') {
            const int fnuz = fam == 'F';
            const kmux_dtype e4 = fnuz ? KMUX_F8_E4M3 : KMUX_F8_E4M3_FNUZ;
            const kmux_dtype e5 = fnuz ? KMUX_F8_E5M2 : KMUX_F8_E5M2_FNUZ;
            caps->dtype_instead[e4] = (uint8_t)(fnuz ? KMUX_F8_E4M3_FNUZ : KMUX_F8_E4M3);
            caps->dtype_instead[e5] = (uint8_t)(fnuz ? KMUX_F8_E5M2_FNUZ : KMUX_F8_E5M2);
            snprintf(dev->fp8_note, sizeof dev->fp8_note, "%s, %s fp8 only", arch,
                     fnuz ? "FNUZ" : "OCP");
            caps->dtype_instead_note = dev->fp8_note;
        }
    }
    return KMUX_OK;
}
