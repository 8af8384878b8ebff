/*
 * cuda_props.c - properties of a CUDA device and its peak rates.
 *
 * Everything comes from driver queries that do not create a context (cuDeviceGetName,
 * cuDeviceTotalMem, cuDeviceGetAttribute, cuDeviceGetPCIBusId).
 *
 * Peak FLOP/s = rate per clock per SM (table below) x SM count x max boost clock.
 * Rates are dense (no 2:4 sparsity), per SM per clock, from NVIDIA's architecture whitepapers:
 *   - NVIDIA A100 Tensor Core GPU Architecture (GA100, sm_80), table "A100 peak performance";
 *   - NVIDIA Ampere GA102 GPU Architecture (GA10x, sm_86);
 *   - NVIDIA Ada GPU Architecture (AD10x, sm_89), appendix tables for RTX 4090 / L40;
 *   - NVIDIA H100 Tensor Core GPU Architecture (GH100, sm_90).
 * Cross-checked against the datasheet figures collected in workloads/peaks.csv: A100 SXM 108 SM x
 * 2048 x 1.41 GHz = 312 TFLOP/s f16; H100 SXM 132 x 4096 x 1.83 GHz = 989 TFLOP/s f16 and
 * 132 x 256 x 1.98 GHz = 66.9 TFLOP/s f32; RTX 4090 128 x 512 x 2.52 GHz = 165 TFLOP/s f16 with
 * f32 accumulation; RTX 3060 28 x 256 x 1.777 GHz = 12.7 TFLOP/s f32.
 * Hopper's tensor-core figures are quoted at a lower clock than the max boost clock the device
 * reports (SXM5: 1830 vs 1980 MHz, PCIe: 1620 vs 1755 MHz; both ratios 0.924), hence
 * tensor_clock_ratio. GeForce sm_86/sm_89 parts run f32-accumulate tensor math (and TF32) at half
 * the rate of the professional parts of the same chip.
 */
#include <stdio.h>
#include <string.h>

#include "cuda_backend.h"

int kmux_cuda_arch_rates_get(int sm, int geforce, kmux_cuda_arch_rates *r) {
    memset(r, 0, sizeof *r);
    r->tensor_clock_ratio = 1.0;
    double *p = r->per_clock_sm;
    switch (sm) {
    case 80: /* A100: FP64 via DMMA tensor cores (19.5 TFLOP/s), 64 FP32 FMA/clk */
        p[KMUX_F64] = 128;
        p[KMUX_F32] = 128;
        r->tf32 = 1024;
        p[KMUX_F16] = p[KMUX_BF16] = 2048;
        p[KMUX_I8] = 4096;
        return 1;
    case 86: /* GA10x: 128 FP32 lanes, 2 FP64 units per SM */
    case 89: /* AD10x: same SM layout, adds FP8 */
        p[KMUX_F64] = 4;
        p[KMUX_F32] = 256;
        r->tf32 = geforce ? 256 : 512;
        p[KMUX_F16] = p[KMUX_BF16] = geforce ? 512 : 1024;
        p[KMUX_I8] = 2048;
        if (sm == 89) p[KMUX_F8_E4M3] = p[KMUX_F8_E5M2] = geforce ? 1024 : 2048;
        return 1;
    case 90: /* GH100 */
        p[KMUX_F64] = 256;
        p[KMUX_F32] = 256;
        r->tf32 = 2048;
        p[KMUX_F16] = p[KMUX_BF16] = 4096;
        p[KMUX_F8_E4M3] = p[KMUX_F8_E5M2] = 8192;
        p[KMUX_I8] = 8192;
        r->tensor_clock_ratio = 0.924;
        return 1;
    default:
        return 0;
    }
}

/* "580.95.05" from the kernel module's version file, "" when it cannot be read. */
static void read_kernel_driver_version(char *buf, size_t size) {
    buf[0] = '\0';
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return;
    char line[256];
    if (fgets(line, sizeof line, f)) {
        /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue ..." */
        const char *m = strstr(line, "Kernel Module");
        if (m) {
            m += strlen("Kernel Module");
            while (*m == ' ')
                m++;
            size_t n = strcspn(m, " \n");
            if (n >= size) n = size - 1;
            memcpy(buf, m, n);
            buf[n] = '\0';
        }
    }
    fclose(f);
}

static int attr(CUdevice dev, CUdevice_attribute a) {
    int v = 0;
    if (cuDeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS) v = 0;
    return v;
}

kmux_status kmux_cuda_device_props(void *state, int device, kmux_device_props *props) {
    kmux_cuda_state *st = state;
    const kmux_cuda_device *d = &st->devices[device];
    char name[256] = "";
    size_t total = 0;
    CUresult e = cuDeviceGetName(name, (int)sizeof name, d->dev);
    if (e == CUDA_SUCCESS) e = cuDeviceTotalMem(&total, d->dev);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e,
                              "device_props: cuDeviceGetName/cuDeviceTotalMem(%d) for cuda:%d",
                              d->ordinal, device);
    const int major = attr(d->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    const int minor = attr(d->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    const int sms = attr(d->dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);

    memset(props, 0, sizeof *props);
    snprintf(props->id, sizeof props->id, "cuda:%d", device);
    snprintf(props->backend, sizeof props->backend, "cuda");
    snprintf(props->vendor, sizeof props->vendor, "NVIDIA");
    snprintf(props->name, sizeof props->name, "%s", name);
    snprintf(props->arch, sizeof props->arch, "sm_%d%d", major, minor);

    int drv = 0;
    (void)cuDriverGetVersion(&drv);
    char kmod[32];
    read_kernel_driver_version(kmod, sizeof kmod);
    if (kmod[0])
        snprintf(props->driver_version, sizeof props->driver_version, "%s (CUDA driver %d.%d)",
                 kmod, drv / 1000, (drv % 1000) / 10);
    else
        snprintf(props->driver_version, sizeof props->driver_version, "CUDA driver %d.%d",
                 drv / 1000, (drv % 1000) / 10);
    if (kmux_cuda_libs_load()) { /* the versions need the libraries: opened here if no plan has */
        size_t lt = cublasLtGetVersion(), dnn = cudnnGetVersion();
        snprintf(props->library_version, sizeof props->library_version,
                 "cuBLASLt %zu.%zu.%zu, cuDNN %zu.%zu.%zu", lt / 10000, (lt % 10000) / 100,
                 lt % 100, dnn / 10000, (dnn % 10000) / 100, dnn % 100);
    } else {
        snprintf(props->library_version, sizeof props->library_version,
                 "cuBLASLt/cuDNN do not load (the first plan says why)");
    }
    if (cuDeviceGetPCIBusId(props->pci_bus_id, (int)sizeof props->pci_bus_id, d->dev) !=
        CUDA_SUCCESS) {
        props->pci_bus_id[0] = '\0';
    }

    props->is_host = 0;
    props->memory_bytes = (int64_t)total;
    props->compute_units = sms;
    int clock_khz = attr(d->dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    int mem_clock_khz = attr(d->dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    int bus_bits = attr(d->dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    props->clock_mhz = clock_khz / 1000.0;
    /* double data rate: two transfers per memory clock */
    props->mem_bandwidth_gbps = 2.0 * mem_clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;

    int sm = major * 10 + minor;
    unsigned char *ds = props->dtype_support;
    ds[KMUX_F64] = ds[KMUX_F32] = ds[KMUX_F16] = ds[KMUX_I8] = ds[KMUX_I32] = 1;
    ds[KMUX_BF16] = sm >= 80;
    /* what kmux_matmul_plan_create accepts: cuBLASLt's fp8 kernels (OCP, Ada and newer), and
     * kmux's own GEMM kernel (kernels/gpu), which decodes every fp8 format in software (the
     * FNUZ ones, AMD's, and OCP before sm_89) */
    ds[KMUX_F8_E4M3] = ds[KMUX_F8_E5M2] = 1;
    ds[KMUX_F8_E4M3_FNUZ] = ds[KMUX_F8_E5M2_FNUZ] = 1;

    kmux_cuda_arch_rates r;
    int geforce = strstr(name, "GeForce") != NULL || strstr(name, "TITAN") != NULL;
    if (kmux_cuda_arch_rates_get(sm, geforce, &r)) {
        double base = (double)sms * clock_khz * 1e3;
        for (int t = 0; t < KMUX_DTYPE_COUNT; t++) {
            int tensor = t != KMUX_F64 && t != KMUX_F32;
            props->peak_flops[t] = r.per_clock_sm[t] * base * (tensor ? r.tensor_clock_ratio : 1.0);
        }
    }
    return KMUX_OK;
}
