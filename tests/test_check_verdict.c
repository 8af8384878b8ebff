/*
 * test_check_verdict.c - kmux-check's readiness rules (tools/kmux_check/ck_verdict.c) fed with
 * faked device facts and faked measurements, with the default targets of ck_targets.c.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ck_targets.h"
#include "ck_verdict.h"

static ck_targets T(void) {
    ck_targets t;
    ck_targets_default(&t);
    return t;
}

/* ---- code objects ---- */

Test(check_verdict, gfx942_with_only_gfx90a_code_objects_fails) {
    ck_verdict v = ck_judge_code_objects("gfx942:sramecc+:xnack-", "gfx90a,gfx90a:xnack+");
    cr_assert_eq(v.status, CK_FAIL, "%s", v.detail);
    cr_assert(strstr(v.detail, "no code object for gfx942"), "%s", v.detail);
    cr_assert(strstr(v.hint, "--offload-arch=gfx942:sramecc+:xnack-"), "%s", v.hint);
}

Test(check_verdict, amd_target_features_must_agree) {
    cr_assert_eq(ck_judge_code_objects("gfx942:sramecc+:xnack-", "gfx90a,gfx942").status, CK_PASS);
    cr_assert_eq(ck_judge_code_objects("gfx942:sramecc+:xnack-", "gfx942:xnack-").status, CK_PASS);
    cr_assert_eq(ck_judge_code_objects("gfx942:sramecc+:xnack-", "gfx942:xnack+").status, CK_FAIL);
    cr_assert_eq(ck_judge_code_objects("gfx942:sramecc+:xnack-", "gfx942:sramecc-").status,
                 CK_FAIL);
    cr_assert_eq(ck_judge_code_objects("gfx942", "gfx942:xnack+").status, CK_PASS);
    cr_assert_eq(
        ck_judge_code_objects("gfx942:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-")
            .status,
        CK_PASS);
    /* gfx9420 is not gfx942: the processor name is compared whole */
    cr_assert_eq(ck_judge_code_objects("gfx942", "gfx9420").status, CK_FAIL);
}

Test(check_verdict, nvidia_sass_ptx_and_arch_specific) {
    cr_assert_eq(ck_judge_code_objects("sm_90", "sm_80,sm_86").status, CK_FAIL);
    cr_assert_eq(ck_judge_code_objects("sm_86", "sm_80").status, CK_PASS); /* same major */
    cr_assert_eq(ck_judge_code_objects("sm_80", "sm_86").status, CK_FAIL); /* newer minor */
    cr_assert_eq(ck_judge_code_objects("sm_90", "sm_80,compute_80").status, CK_WARN);
    cr_assert_eq(ck_judge_code_objects("sm_90", "sm_90a").status, CK_PASS);
    cr_assert_eq(ck_judge_code_objects("sm_100", "sm_90a,compute_90a").status, CK_FAIL);
    cr_assert_eq(ck_judge_code_objects("sm_120", "sm_80, sm_90, compute_90").status, CK_WARN);
}

Test(check_verdict, unknown_code_objects_skip) {
    cr_assert_eq(ck_judge_code_objects("", "gfx942").status, CK_SKIP);
    cr_assert_eq(ck_judge_code_objects("gfx942", "").status, CK_SKIP);
    cr_assert_eq(ck_judge_code_objects("avx2", "x").status, CK_SKIP);
}

/* ---- environment ---- */

Test(check_verdict, hsa_override_gfx_version_warns) {
    ck_verdict v = ck_judge_env_override("HSA_OVERRIDE_GFX_VERSION", "9.4.2", 8);
    cr_assert_eq(v.status, CK_WARN);
    cr_assert(strstr(v.detail, "spoofed"), "%s", v.detail);
    cr_assert_eq(ck_judge_env_override("HSA_OVERRIDE_GFX_VERSION", NULL, 8).status, CK_PASS);
}

Test(check_verdict, other_overrides) {
    cr_assert_eq(ck_judge_env_override("OPENBLAS_CORETYPE", "Prescott", 8).status, CK_WARN);
    cr_assert_eq(ck_judge_env_override("ONEDNN_MAX_CPU_ISA", "AVX2", 8).status, CK_WARN);
    cr_assert_eq(ck_judge_env_override("CUDA_VISIBLE_DEVICES", "", 8).status, CK_WARN);
    cr_assert_eq(ck_judge_env_override("HIP_VISIBLE_DEVICES", "-1", 8).status, CK_WARN);
    cr_assert_eq(ck_judge_env_override("ROCR_VISIBLE_DEVICES", "0,1", 8).status, CK_PASS);
    cr_assert_eq(ck_judge_env_override("OMP_NUM_THREADS", "64", 8).status, CK_WARN);
    cr_assert_eq(ck_judge_env_override("OMP_NUM_THREADS", "4x", 8).status, CK_WARN);
    cr_assert_eq(ck_judge_env_override("OMP_NUM_THREADS", "8", 8).status, CK_PASS);
}

Test(check_verdict, device_node_denied_names_the_group) {
    ck_node_facts f = {"/dev/kfd", 1, 0, "render", 0};
    ck_verdict v = ck_judge_device_node(&f, "amdgpu");
    cr_assert_eq(v.status, CK_FAIL);
    cr_assert(strstr(v.hint, "usermod -aG render"), "%s", v.hint);
    f.accessible = 1;
    cr_assert_eq(ck_judge_device_node(&f, "amdgpu").status, CK_PASS);
    ck_node_facts missing = {"/dev/nvidiactl", 0, 0, NULL, 0};
    v = ck_judge_device_node(&missing, "nvidia");
    cr_assert_eq(v.status, CK_SKIP);
    cr_assert(strstr(v.detail, "nvidia driver is not loaded"), "%s", v.detail);
}

/* ---- speed ---- */

Test(check_verdict, gemm_at_40_percent_of_peak_fails_the_70_percent_target) {
    ck_targets t = T();
    cr_assert_float_eq(t.gemm_pass_frac, 0.70, 1e-12);
    ck_rate_rule rule = {t.gemm_pass_frac, t.gemm_fail_frac};
    double peak = 989.4e3; /* GFLOP/s, H100 SXM dense bf16 */
    ck_verdict v = ck_judge_rate(0.40 * peak, peak, rule, 0, "GFLOP/s", "peak", "fix it");
    cr_assert_eq(v.status, CK_FAIL, "%s", v.detail);
    cr_assert(strstr(v.detail, "40% of"), "%s", v.detail);
    cr_assert_str_eq(v.hint, "fix it");
    cr_assert_eq(ck_judge_rate(0.75 * peak, peak, rule, 0, "GFLOP/s", "", "").status, CK_PASS);
    cr_assert_eq(ck_judge_rate(0.60 * peak, peak, rule, 0, "GFLOP/s", "", "").status, CK_WARN);
    cr_assert_eq(ck_judge_rate(0.70 * peak, peak, rule, 0, "GFLOP/s", "", "").status, CK_PASS);
}

Test(check_verdict, busy_host_turns_a_speed_fail_into_a_warn) {
    ck_rate_rule rule = {0.6, 0.3};
    ck_verdict v = ck_judge_rate(10, 100, rule, 1, "GFLOP/s", "", "use AVX2 kernels");
    cr_assert_eq(v.status, CK_WARN);
    cr_assert(strstr(v.detail, "busy"), "%s", v.detail);
    cr_assert(strstr(v.hint, "use AVX2 kernels"), "%s", v.hint);
}

Test(check_verdict, unknown_reference_skips_with_the_measurement) {
    ck_rate_rule rule = {0.6, 0.0};
    ck_verdict v = ck_judge_rate(9.5, 0, rule, 0, "GB/s", "DRAM peak (DMI unreadable)", "");
    cr_assert_eq(v.status, CK_SKIP);
    cr_assert(strstr(v.detail, "9.5 GB/s") && strstr(v.detail, "DMI unreadable"), "%s", v.detail);
}

Test(check_verdict, pcie_rates) {
    cr_assert_float_eq(ck_pcie_rate_gbps(4, 16), 31.5, 0.05);
    cr_assert_float_eq(ck_pcie_rate_gbps(5, 16), 63.0, 0.05);
    cr_assert_float_eq(ck_pcie_rate_gbps(3, 16), 15.75, 0.05);
    cr_assert_float_eq(ck_pcie_rate_gbps(4, 8), 15.75, 0.05);
    cr_assert_float_eq(ck_pcie_rate_gbps(1, 1), 0.25, 1e-9);
    cr_assert_eq(ck_pcie_rate_gbps(0, 16), 0.0);
    cr_assert_eq(ck_pcie_rate_gbps(4, 0), 0.0);
    cr_assert_eq(ck_pcie_rate_gbps(7, 16), 0.0);
}

Test(check_verdict, twelve_gbps_on_gen4_x16_warns) {
    ck_targets t = T();
    double link = ck_pcie_rate_gbps(4, 16);
    ck_rate_rule pinned = {t.h2d_pinned_pass_frac, 0.0}, pageable = {t.h2d_pageable_pass_frac, 0};
    ck_verdict v = ck_judge_rate(12.0, link, pinned, 0, "GB/s", "", "check lspci -vv LnkSta");
    cr_assert_eq(v.status, CK_WARN, "%s", v.detail);
    cr_assert_eq(ck_judge_rate(12.0, link, pageable, 0, "GB/s", "", "").status, CK_WARN);
    /* never a FAIL, however low: the link is slow, the stack still works */
    cr_assert_eq(ck_judge_rate(1.0, link, pinned, 0, "GB/s", "", "").status, CK_WARN);
    cr_assert_eq(ck_judge_rate(25.0, link, pinned, 0, "GB/s", "", "").status, CK_PASS);
}

/* ---- CPU kernels ---- */

Test(check_verdict, cpu_isa_from_flags_and_library_names) {
    cr_assert_eq(ck_isa_from_cpu_flags("fpu sse sse2 avx fma avx2 bmi2"), CK_ISA_AVX2);
    cr_assert_eq(ck_isa_from_cpu_flags("fpu sse avx2 avx"), CK_ISA_AVX); /* avx2 needs fma */
    cr_assert_eq(ck_isa_from_cpu_flags("avx fma avx2 avx512f avx512bw"), CK_ISA_AVX512);
    cr_assert_eq(ck_isa_from_cpu_flags("avx fma avx2 avx512f amx_tile amx_bf16"), CK_ISA_AMX);
    cr_assert_eq(ck_isa_from_cpu_flags("fpu sse sse2 avx512_bf16x"), CK_ISA_SSE);
    cr_assert_eq(ck_isa_from_cpu_flags(""), CK_ISA_UNKNOWN);
    cr_assert_eq(ck_isa_from_openblas_core("Haswell"), CK_ISA_AVX2);
    cr_assert_eq(ck_isa_from_openblas_core("Zen"), CK_ISA_AVX2);
    cr_assert_eq(ck_isa_from_openblas_core("SkylakeX"), CK_ISA_AVX512);
    cr_assert_eq(ck_isa_from_openblas_core("Prescott"), CK_ISA_SSE);
    cr_assert_eq(ck_isa_from_openblas_core("Sandybridge"), CK_ISA_AVX);
    cr_assert_eq(ck_isa_from_openblas_core("mystery"), CK_ISA_UNKNOWN);
    cr_assert_eq(ck_isa_from_onednn("avx512_core_amx"), CK_ISA_AMX);
    cr_assert_eq(ck_isa_from_onednn("avx512_core_bf16"), CK_ISA_AVX512);
    cr_assert_eq(ck_isa_from_onednn("avx2_vnni"), CK_ISA_AVX2);
    cr_assert_eq(ck_isa_from_onednn("sse41"), CK_ISA_SSE);
}

Test(check_verdict, library_falling_back_to_old_kernels_warns) {
    ck_verdict v = ck_judge_cpu_kernels("OpenBLAS", CK_ISA_AVX512, CK_ISA_SSE, CK_ISA_AVX512,
                                        "OPENBLAS_CORETYPE=SkylakeX");
    cr_assert_eq(v.status, CK_WARN);
    cr_assert_str_eq(v.hint, "OPENBLAS_CORETYPE=SkylakeX");
    cr_assert_eq(
        ck_judge_cpu_kernels("OpenBLAS", CK_ISA_AVX2, CK_ISA_AVX2, CK_ISA_AVX512, "").status,
        CK_PASS);
    /* AMX CPU, OpenBLAS without AMX kernels: its best (AVX-512) is all it can do */
    cr_assert_eq(
        ck_judge_cpu_kernels("OpenBLAS", CK_ISA_AMX, CK_ISA_AVX512, CK_ISA_AVX512, "").status,
        CK_PASS);
    cr_assert_eq(ck_judge_cpu_kernels("oneDNN", CK_ISA_AMX, CK_ISA_AVX2, CK_ISA_AMX, "").status,
                 CK_WARN);
    cr_assert_eq(ck_judge_cpu_kernels("oneDNN", CK_ISA_UNKNOWN, CK_ISA_AVX2, CK_ISA_AMX, "").status,
                 CK_SKIP);
}

/* ---- function, ECC, summary ---- */

Test(check_verdict, comparison_with_ref) {
    ck_compare ok = {480, 0, 0.0, 0.0, 0.9};
    cr_assert_eq(ck_judge_compare(&ok).status, CK_PASS);
    ck_compare bad = {480, 3, 2.0, 0.0, 0.9};
    ck_verdict v = ck_judge_compare(&bad);
    cr_assert_eq(v.status, CK_FAIL);
    cr_assert(strstr(v.detail, "3 of 480"), "%s", v.detail);
    ck_compare zeros = {480, 0, 0.0, 0.0, 0.1};
    v = ck_judge_compare(&zeros);
    cr_assert_eq(v.status, CK_FAIL);
    cr_assert(strstr(v.detail, "mistrusted"), "%s", v.detail);
    ck_compare none = {0, 0, 0, 0, 0};
    cr_assert_eq(ck_judge_compare(&none).status, CK_SKIP);
}

Test(check_verdict, ecc) {
    cr_assert_eq(ck_judge_ecc(1, 1).status, CK_PASS);
    cr_assert_eq(ck_judge_ecc(0, 1).status, CK_WARN);
    cr_assert_eq(ck_judge_ecc(0, 0).status, CK_PASS);
    cr_assert_eq(ck_judge_ecc(-1, -1).status, CK_SKIP);
}

Test(check_verdict, exit_status_is_zero_only_without_fail) {
    ck_counts c = {0};
    ck_counts_add(&c, CK_PASS);
    ck_counts_add(&c, CK_WARN);
    ck_counts_add(&c, CK_SKIP);
    cr_assert_eq(ck_exit_status(&c), 0);
    ck_counts_add(&c, CK_FAIL);
    cr_assert_eq(ck_exit_status(&c), 1);
    cr_assert_eq(c.pass + c.warn + c.fail + c.skip, 4);
    cr_assert_str_eq(ck_status_name(CK_FAIL), "FAIL");
}

/* ---- PCIe link state ---- */

Test(check_verdict, pcie_link_speed_strings) {
    cr_assert_eq(ck_pcie_gen_from_speed("16.0 GT/s PCIe"), 4);
    cr_assert_eq(ck_pcie_gen_from_speed("32.0 GT/s PCIe"), 5);
    cr_assert_eq(ck_pcie_gen_from_speed("2.5 GT/s"), 1);
    cr_assert_eq(ck_pcie_gen_from_speed("8 GT/s"), 3);
    cr_assert_eq(ck_pcie_gen_from_speed("Unknown"), 0);
    cr_assert_eq(ck_pcie_gen_from_speed(NULL), 0);
}

Test(check_verdict, pcie_link_trained_at_fewer_lanes_warns) {
    ck_verdict v = ck_judge_pcie_link(4, 8, 4, 16);
    cr_assert_eq(v.status, CK_WARN);
    cr_assert(strstr(v.detail, "x8 of x16"), "%s", v.detail);
    cr_assert_eq(ck_judge_pcie_link(4, 16, 4, 16).status, CK_PASS);
    /* a lower generation alone is idle power saving, not a verdict */
    v = ck_judge_pcie_link(1, 16, 5, 16);
    cr_assert_eq(v.status, CK_PASS);
    cr_assert(strstr(v.detail, "idle"), "%s", v.detail);
    cr_assert_eq(ck_judge_pcie_link(0, 0, 0, 0).status, CK_SKIP);
}
