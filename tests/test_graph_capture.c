/*
 * test_graph_capture.c - a training step's kmux calls captured into a CUDA or HIP graph and
 * replayed (kmux.h, "Graph capture"), on the device KMUX_TEST_DEVICE names: cuda:0 or hip:0,
 * through the fake runtimes' capture API (tests/fake_cuda, tests/fake_hip) or a real GPU
 * (tests/gpu/run.sh, run_hip.sh); Skipped with the reason where that device is absent.
 *
 * The step: a GEMM with bias + ReLU and its alpha and beta in device memory (pointer_mode), a
 * convolution with bias + ReLU, an element-wise GELU, and
 * the device-side loss scaling of a trainer (kmux_unscale_check_finite on GELU's output,
 * kmux_loss_scale_update), plans made beforehand with the caller's workspace (one arena for all)
 * and run once on the stream before the capture (kmux.h's warm-up rule), on a native stream the
 * test creates and captures with the vendor's own API (cuStreamBeginCapture_v2 / hipStream-
 * BeginCapture in global mode, the strictest), resolved from the runtime the plugin loaded.
 * - Every execute inside the capture returns KMUX_OK, and none runs there: the outputs still hold
 *   their poison after the capture ends (the runtime recorded the work; a call kmux made that
 *   capture prohibits, such as an allocation or a synchronisation, would have failed and
 *   invalidated the capture).
 * - The replayed graph gives the bits of the same step run directly, and reads its inputs at
 *   each launch: new inputs (and a new alpha for the GEMM), a new direct run, the graph again,
 *   the same bits.
 * - kmux_stream_synchronize inside a capture fails with the runtime's error by name (the
 *   capture is then invalidated, and the stream works again after it ends).
 */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* The vendor's capture API, typed with plain C types (CUresult and hipError_t are int-sized
 * enums; CUstream, hipStream_t, graphs and contexts are pointers), so that this test needs
 * neither cuda.h nor hip_runtime.h. */
typedef struct vendor {
    int cuda; /* 1: CUDA driver API, 0: HIP runtime */
    void *lib;
    int (*begin)(void *stream, int mode);
    int (*end)(void *stream, void **graph);
    int (*launch)(void *exec, void *stream);
    int (*exec_destroy)(void *exec);
    int (*graph_destroy)(void *graph);
    int (*stream_destroy)(void *stream);
    /* CUDA */
    int (*cu_instantiate)(void **exec, void *graph, unsigned long long flags);
    int (*cu_ctx_pop)(void **ctx);
    int (*cu_primary_release)(int dev);
    /* HIP */
    int (*hip_instantiate)(void **exec, void *graph, void *error_node, char *log, size_t size);
} vendor;

#define SYM(v, field, name)                                                                        \
    do {                                                                                           \
        *(void **)&(v)->field = dlsym((v)->lib, name);                                             \
        cr_assert((v)->field != NULL, "%s is not in the runtime the plugin loaded", name);         \
    } while (0)

/* The runtime the plugin loaded (a reference, never a second copy), and a native stream of
 * device 0 in it: CUDA, a non-blocking stream of the primary context (pushed current for the
 * test's calls); HIP, a stream of device 0. */
static void vendor_open(vendor *v, int cuda, void **stream) {
    memset(v, 0, sizeof *v);
    v->cuda = cuda;
    if (cuda) {
        v->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    } else {
        const char *rt = getenv("KMUX_HIP_RUNTIME");
        const char *names[] = {rt && rt[0] ? rt : "libamdhip64.so.7", "libamdhip64.so.6"};
        for (int i = 0; i < 2 && !v->lib; i++)
            v->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    }
    cr_assert(v->lib != NULL, "the %s runtime the plugin uses is not loaded in this process",
              cuda ? "CUDA" : "HIP");
    if (cuda) {
        int (*get)(int *, int);
        int (*retain)(void **, int);
        int (*push)(void *);
        int (*create)(void **, unsigned);
        SYM(v, begin, "cuStreamBeginCapture_v2");
        SYM(v, end, "cuStreamEndCapture");
        SYM(v, launch, "cuGraphLaunch");
        SYM(v, exec_destroy, "cuGraphExecDestroy");
        SYM(v, graph_destroy, "cuGraphDestroy");
        SYM(v, stream_destroy, "cuStreamDestroy_v2");
        SYM(v, cu_instantiate, "cuGraphInstantiateWithFlags");
        SYM(v, cu_ctx_pop, "cuCtxPopCurrent_v2");
        SYM(v, cu_primary_release, "cuDevicePrimaryCtxRelease_v2");
        *(void **)&get = dlsym(v->lib, "cuDeviceGet");
        *(void **)&retain = dlsym(v->lib, "cuDevicePrimaryCtxRetain");
        *(void **)&push = dlsym(v->lib, "cuCtxPushCurrent_v2");
        *(void **)&create = dlsym(v->lib, "cuStreamCreate");
        cr_assert(get && retain && push && create);
        int dev = -1;
        void *ctx = NULL;
        cr_assert_eq(get(&dev, 0), 0);
        cr_assert_eq(retain(&ctx, dev), 0);
        cr_assert_eq(push(ctx), 0);
        cr_assert_eq(create(stream, 1 /* CU_STREAM_NON_BLOCKING */), 0);
    } else {
        int (*set)(int);
        int (*create)(void **);
        SYM(v, begin, "hipStreamBeginCapture");
        SYM(v, end, "hipStreamEndCapture");
        SYM(v, launch, "hipGraphLaunch");
        SYM(v, exec_destroy, "hipGraphExecDestroy");
        SYM(v, graph_destroy, "hipGraphDestroy");
        SYM(v, stream_destroy, "hipStreamDestroy");
        SYM(v, hip_instantiate, "hipGraphInstantiate");
        *(void **)&set = dlsym(v->lib, "hipSetDevice");
        *(void **)&create = dlsym(v->lib, "hipStreamCreate");
        cr_assert(set && create);
        cr_assert_eq(set(0), 0);
        cr_assert_eq(create(stream), 0);
    }
}

static void vendor_close(vendor *v, void *stream) {
    cr_assert_eq(v->stream_destroy(stream), 0);
    if (v->cuda) {
        void *ctx = NULL;
        cr_assert_eq(v->cu_ctx_pop(&ctx), 0);
        cr_assert_eq(v->cu_primary_release(0), 0);
    }
    dlclose(v->lib);
}

static int instantiate(const vendor *v, void **exec, void *graph) {
    return v->cuda ? v->cu_instantiate(exec, graph, 0)
                   : v->hip_instantiate(exec, graph, NULL, NULL, 0);
}

/* Global capture mode: cudaStreamCaptureModeGlobal and hipStreamCaptureModeGlobal are 0. */
#define CAPTURE_GLOBAL 0

/* A buffer in the device's memory. */
typedef struct buf {
    void *dev;
    size_t bytes;
} buf;

/* The outputs compared: D, y, GELU's dst (unscaled in place), then the loss scaler's state. */
#define NOUT 6
#define NPOISON 3 /* the first three are poisoned before a run; the state is reset instead */

/* The step: its plans, its device tensors, its arena. */
typedef struct step {
    kmux_device *dev;
    kmux_plan *mm, *cv, *el;
    buf A, B, mbias, D, x, w, cbias, y, esrc, edst;
    buf scale, inv, found, tracker; /* the loss scaler's state: f32, f32, f32, i32 */
    buf ab;                         /* the GEMM's alpha and beta (device memory) */
    buf *outs[NOUT];
    void *arena;
    size_t arena_bytes;
} step;

static const kmux_conv2d_desc *conv_desc(void) {
    static kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.layout = KMUX_NHWC, d.n = 2, d.c = 3, d.h = 9, d.w = 8, d.k = 5, d.r = 3, d.s = 3;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.epilogue = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU;
    return &d;
}

static void buf_make(kmux_device *dev, buf *b, int64_t n) {
    b->bytes = (size_t)n * sizeof(float);
    TU_OK(kmux_malloc(dev, b->bytes, &b->dev));
}

static void upload(kmux_stream *s, buf *b, uint64_t *seed, int range) {
    float *h = tu_fill_ints(KMUX_F32, (int64_t)(b->bytes / 4), range, TU_DENSE, seed);
    for (size_t i = 0; i < b->bytes / 4; i++)
        h[i] *= 0.25f; /* quarters: GELU and the sums are not all integers */
    TU_OK(kmux_memcpy(s, b->dev, h, b->bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_stream_synchronize(s));
    free(h);
}

static void *download(kmux_stream *s, const buf *b) {
    void *h = malloc(b->bytes);
    cr_assert_not_null(h);
    TU_OK(kmux_memcpy(s, h, b->dev, b->bytes, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
    return h;
}

static void step_make(step *t, kmux_device *dev) {
    memset(t, 0, sizeof *t);
    t->dev = dev;
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.caller_workspace = 1;
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.m = 33, md.n = 20, md.k = 17, md.lda = 17, md.ldb = 20, md.ldc = 20;
    md.epilogue = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU;
    md.pointer_mode = KMUX_POINTER_MODE_DEVICE;
    TU_OK(kmux_matmul_plan_create(dev, &md, &prefs, &t->mm));
    TU_OK(kmux_conv2d_plan_create(dev, conv_desc(), &prefs, &t->cv));
    kmux_eltwise_desc ed = KMUX_ELTWISE_DESC_INIT;
    ed.alg = KMUX_ELTWISE_GELU_TANH, ed.n = 97;
    TU_OK(kmux_eltwise_plan_create(dev, &ed, NULL, &t->el));
    /* one arena of the largest workspace, as plans run one after another on one stream */
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(t->mm, &info));
    t->arena_bytes = info.workspace_bytes;
    TU_OK(kmux_plan_info_get(t->cv, &info));
    if (info.workspace_bytes > t->arena_bytes) t->arena_bytes = info.workspace_bytes;
    if (t->arena_bytes) TU_OK(kmux_malloc(dev, t->arena_bytes, &t->arena));
    int64_t nx, nw, ny;
    tu_conv_elems(conv_desc(), &nx, &nw, &ny);
    buf_make(dev, &t->A, 33 * 17), buf_make(dev, &t->B, 17 * 20), buf_make(dev, &t->mbias, 20);
    buf_make(dev, &t->D, 33 * 20);
    buf_make(dev, &t->x, nx), buf_make(dev, &t->w, nw), buf_make(dev, &t->cbias, 5);
    buf_make(dev, &t->y, ny);
    buf_make(dev, &t->esrc, 97), buf_make(dev, &t->edst, 97);
    buf_make(dev, &t->scale, 1), buf_make(dev, &t->inv, 1), buf_make(dev, &t->found, 1);
    buf_make(dev, &t->tracker, 1), buf_make(dev, &t->ab, 2);
    buf *outs[NOUT] = {&t->D, &t->y, &t->edst, &t->scale, &t->found, &t->tracker};
    memcpy(t->outs, outs, sizeof outs);
}

static void step_free(step *t) {
    buf *all[] = {&t->A,    &t->B,    &t->mbias, &t->D,   &t->x,     &t->w,       &t->cbias, &t->y,
                  &t->esrc, &t->edst, &t->scale, &t->inv, &t->found, &t->tracker, &t->ab};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        TU_OK(kmux_free(t->dev, all[i]->dev));
    if (t->arena) TU_OK(kmux_free(t->dev, t->arena));
    TU_OK(kmux_plan_destroy(t->mm));
    TU_OK(kmux_plan_destroy(t->cv));
    TU_OK(kmux_plan_destroy(t->el));
}

/* The loss scaler's state: scale 1024 (its inverse given), the last step of a growth interval,
 * no overflow found yet (the step doubles the scale and restarts the tracker). */
static void step_reset_state(step *t, kmux_stream *s) {
    const float scale = 1024.0f, inv = 1.0f / 1024.0f, found = 0.0f;
    const int32_t tracker = 1999;
    TU_OK(kmux_memcpy(s, t->scale.dev, &scale, 4, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(s, t->inv.dev, &inv, 4, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(s, t->found.dev, &found, 4, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(s, t->tracker.dev, &tracker, 4, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_stream_synchronize(s));
}

/* New inputs (seeded; the GEMM's alpha 1 for seed 1, else 1/2, beta 0) and the scaler's state
 * reset; the outputs keep what they hold. */
static void step_inputs(step *t, kmux_stream *s, uint64_t seed) {
    const float ab[2] = {seed == 1 ? 1.0f : 0.5f, 0.0f};
    TU_OK(kmux_memcpy(s, t->ab.dev, ab, sizeof ab, KMUX_MEMCPY_HOST_TO_DEVICE));
    upload(s, &t->A, &seed, 3), upload(s, &t->B, &seed, 3), upload(s, &t->mbias, &seed, 4);
    upload(s, &t->x, &seed, 3), upload(s, &t->w, &seed, 2), upload(s, &t->cbias, &seed, 4);
    upload(s, &t->esrc, &seed, 12);
    step_reset_state(t, s);
}

/* The step's five calls on s (no synchronisation). */
static kmux_status step_run(step *t, kmux_stream *s) {
    const float one = 1.0f, zero = 0.0f;
    kmux_matmul_args ma = KMUX_MATMUL_ARGS_INIT;
    ma.alpha = t->ab.dev, ma.beta = (const float *)t->ab.dev + 1, ma.A = t->A.dev, ma.B = t->B.dev,
    ma.C = t->D.dev;
    ma.bias = t->mbias.dev, ma.workspace = t->arena, ma.workspace_bytes = t->arena_bytes;
    kmux_status st = kmux_matmul_execute(t->mm, s, &ma);
    if (st != KMUX_OK) return st;
    kmux_conv2d_args ca = KMUX_CONV2D_ARGS_INIT;
    ca.alpha = &one, ca.beta = &zero, ca.x = t->x.dev, ca.w = t->w.dev, ca.y = t->y.dev;
    ca.bias = t->cbias.dev, ca.workspace = t->arena, ca.workspace_bytes = t->arena_bytes;
    st = kmux_conv2d_execute(t->cv, s, &ca);
    if (st != KMUX_OK) return st;
    kmux_eltwise_args ea = KMUX_ELTWISE_ARGS_INIT;
    ea.src = t->esrc.dev, ea.dst = t->edst.dev;
    st = kmux_eltwise_execute(t->el, s, &ea);
    if (st != KMUX_OK) return st;
    void *grads[1] = {t->edst.dev};
    const int64_t sizes[1] = {97};
    const kmux_dtype types[1] = {KMUX_F32};
    st = kmux_unscale_check_finite(s, 1, grads, sizes, types, t->inv.dev, t->found.dev);
    if (st != KMUX_OK) return st;
    return kmux_loss_scale_update(s, t->scale.dev, t->tracker.dev, t->found.dev, 2.0, 0.5, 2000);
}

/* The outputs set to 0xFF bytes (an f32 NaN no step writes), the scaler's state reset. */
static void step_poison(step *t, kmux_stream *s) {
    step_reset_state(t, s);
    for (int i = 0; i < NPOISON; i++)
        TU_OK(kmux_memset(s, t->outs[i]->dev, 0xFF, t->outs[i]->bytes));
    TU_OK(kmux_stream_synchronize(s));
}

/* The outputs on the host (free each). */
static void step_outputs(step *t, kmux_stream *s, void *out[NOUT]) {
    for (int i = 0; i < NOUT; i++)
        out[i] = download(s, t->outs[i]);
}

static const char *const out_names[NOUT] = {"the GEMM's D", "the convolution's y",
                                            "GELU's dst",   "the loss scale",
                                            "found_inf",    "the growth tracker"};

static void expect_same(step *t, void *const want[NOUT], void *const got[NOUT], const char *what) {
    for (int i = 0; i < NOUT; i++)
        cr_assert(memcmp(want[i], got[i], t->outs[i]->bytes) == 0,
                  "%s: %s differs from the direct run's", what, out_names[i]);
}

/* Nothing ran during the capture: the outputs keep their poison, the state its reset values. */
static void expect_untouched(step *t, void *const got[NOUT]) {
    for (int i = 0; i < NPOISON; i++) {
        const unsigned char *p = got[i];
        for (size_t j = 0; j < t->outs[i]->bytes; j++)
            cr_assert_eq(p[j], 0xFF,
                         "%s was written during the capture (byte %zu): the work ran instead of "
                         "being recorded",
                         out_names[i], j);
    }
    float scale, found;
    int32_t tracker;
    memcpy(&scale, got[3], 4), memcpy(&found, got[4], 4), memcpy(&tracker, got[5], 4);
    cr_assert(scale == 1024.0f && found == 0.0f && tracker == 1999,
              "the loss scaler's state changed during the capture (scale %g, found %g, tracker "
              "%d)",
              scale, found, (int)tracker);
}

/* The step did what it should: the scale doubled at the end of its interval. */
static void expect_scaled(void *const got[NOUT]) {
    float scale;
    int32_t tracker;
    memcpy(&scale, got[3], 4), memcpy(&tracker, got[5], 4);
    cr_assert(scale == 2048.0f && tracker == 0, "scale %g, tracker %d after the step", scale,
              (int)tracker);
}

static void free_all(void *p[NOUT]) {
    for (int i = 0; i < NOUT; i++)
        free(p[i]);
}

/* The device under test: KMUX_TEST_DEVICE (cuda:N or hip:N; registered with
 * KMUX_CONFORMANCE_REQUIRE_DEVICE, which exits 77 with the reason when it is absent). */
static const char *device_id(void) {
    const char *id = getenv("KMUX_TEST_DEVICE");
    if (!id || (strncmp(id, "cuda:", 5) != 0 && strncmp(id, "hip:", 4) != 0))
        cr_skip_test("graph capture is a CUDA/HIP feature: set KMUX_TEST_DEVICE to cuda:N or "
                     "hip:N (ctest registers test_graph_capture_cuda and _hip, and the fakes' "
                     "runs)");
    return id;
}

/* A test's context, device, vendor runtime, and its native stream wrapped as a kmux stream. */
typedef struct session {
    kmux_context *ctx;
    kmux_device *dev;
    vendor v;
    void *native;
    kmux_stream *s;
} session;

static void session_open(session *q) {
    const char *id = device_id();
    q->ctx = tu_context();
    q->dev = tu_device(q->ctx, id);
    cr_assert_not_null(q->dev, "%s: %s", id, kmux_last_error());
    q->native = NULL;
    vendor_open(&q->v, strncmp(id, "cuda:", 5) == 0, &q->native);
    TU_OK(kmux_stream_wrap_native(q->dev, q->native, &q->s));
}

static void session_close(session *q) {
    TU_OK(kmux_stream_destroy(q->s));
    vendor_close(&q->v, q->native);
    TU_OK(kmux_context_destroy(q->ctx));
}

Test(graph_capture, a_captured_step_replays_with_the_inputs_of_each_launch) {
    session q;
    session_open(&q);
    const vendor v = q.v;
    void *native = q.native;
    kmux_stream *s = q.s;
    step t;
    step_make(&t, q.dev);

    void *want[NOUT], *got[NOUT];
    step_inputs(&t, s, 1);
    TU_OK(step_run(&t, s)); /* also the warm-up kmux.h asks for before a capture */
    TU_OK(kmux_stream_synchronize(s));
    step_outputs(&t, s, want);
    expect_scaled(want);
    step_poison(&t, s);

    void *graph = NULL, *exec = NULL;
    cr_assert_eq(v.begin(native, CAPTURE_GLOBAL), 0);
    kmux_status st = step_run(&t, s);
    int e = v.end(native, &graph);
    cr_assert_eq(st, KMUX_OK, "an execute inside the capture: %s: %s", kmux_status_str(st),
                 kmux_last_error());
    cr_assert_eq(e, 0, "ending the capture: error %d (a call kmux made invalidated it)", e);
    cr_assert_not_null(graph);
    step_outputs(&t, s, got);
    expect_untouched(&t, got);
    free_all(got);
    cr_assert_eq(instantiate(&v, &exec, graph), 0);

    cr_assert_eq(v.launch(exec, native), 0);
    TU_OK(kmux_stream_synchronize(s));
    step_outputs(&t, s, got);
    expect_same(&t, want, got, "the graph's first launch");
    free_all(got), free_all(want);

    /* new inputs and a new alpha: the graph reads them at its launch */
    step_inputs(&t, s, 2);
    TU_OK(step_run(&t, s));
    TU_OK(kmux_stream_synchronize(s));
    step_outputs(&t, s, want);
    expect_scaled(want);
    step_poison(&t, s);
    cr_assert_eq(v.launch(exec, native), 0);
    TU_OK(kmux_stream_synchronize(s));
    step_outputs(&t, s, got);
    expect_same(&t, want, got, "the graph launched on new inputs");
    free_all(got), free_all(want);

    cr_assert_eq(v.exec_destroy(exec), 0);
    cr_assert_eq(v.graph_destroy(graph), 0);
    step_free(&t);
    session_close(&q);
}

Test(graph_capture, a_synchronisation_inside_a_capture_fails_by_name) {
    session q;
    session_open(&q);
    const vendor v = q.v;
    void *native = q.native;
    kmux_stream *s = q.s;

    void *graph = NULL;
    cr_assert_eq(v.begin(native, CAPTURE_GLOBAL), 0);
    kmux_status st = kmux_stream_synchronize(s);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", kmux_last_error());
    int e = v.end(native, &graph);
    cr_assert_eq(st, KMUX_ERR_DEVICE, "kmux_stream_synchronize in a capture: %s: %s",
                 kmux_status_str(st), msg);
    cr_assert(strstr(msg, "CAPTURE") || strstr(msg, "Capture") || strstr(msg, "capture"),
              "the message names the runtime's capture error: %s", msg);
    cr_assert_neq(e, 0, "the capture was invalidated, its end must say so");
    cr_assert_null(graph);
    /* the stream works again after the capture ended */
    step t;
    step_make(&t, q.dev);
    step_inputs(&t, s, 3);
    TU_OK(step_run(&t, s));
    TU_OK(kmux_stream_synchronize(s));
    step_free(&t);
    session_close(&q);
}
