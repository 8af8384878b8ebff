/*
 * net.h - the CNN of the example, with every convolution and matrix product run by kmux:
 *
 *   x  N x 28 x 28 x 1    (NHWC)
 *   conv1 3x3, stride 2, pad 1, 16 filters  + bias, ReLU   -> y1  N x 14 x 14 x 16
 *   conv2 3x3, stride 2, pad 1, 32 filters  + bias, ReLU   -> y2  N x  7 x  7 x 32
 *   fully connected 1568 -> 10 + bias                      -> logits N x 10 (f32)
 *   softmax cross-entropy (kmux's softmax op: the loss, its gradient, the predictions)
 *
 * Each convolution's bias and ReLU run as one GEMM with the ReLU epilogue: Y(NPQ x K) =
 * relu(ones(NPQ x 1) b(1 x K) + Y); each bias gradient db(K) is kmux's reduction op, the SUM of
 * dY(NPQ x K) over its rows (f64 accumulation), on the device. The ReLU's backward is kmux's
 * element-wise op (RELU backward from the output Y, in place on dY), on the device.
 *
 * Precision: the activations, the weight copies and every gradient are in the training type T
 * (f32, bf16 or f16); every product accumulates in f32. The logits are f32.
 */
#ifndef FMNIST_NET_H
#define FMNIST_NET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <kmux.h>

#include "memstat.h"

enum {
    NET_C1 = 16,
    NET_C2 = 32,
    NET_H0 = 28,
    NET_H1 = 14,
    NET_H2 = 7,
    NET_CLASSES = 10,
    NET_FC_IN = NET_H2 * NET_H2 * NET_C2
};

/** The parameters, in one buffer: name, element offset, element count. */
enum { P_W1, P_B1, P_W2, P_B2, P_WF, P_BF, P_COUNT };
typedef struct net_layout {
    int64_t off[P_COUNT], len[P_COUNT];
    int64_t total;  /**< elements, with the alignment gaps */
    int64_t params; /**< real parameters */
} net_layout;

/** A buffer of the device, with a host copy on devices whose memory is not host memory. */
typedef struct net_buf {
    void *dev, *host;
    size_t bytes;
} net_buf;

/** Plans and activations for one batch size. */
typedef struct net_batch {
    int64_t n;
    int train; /**< backward plans and buffers too */
    net_buf x32, x, y1, y2, logits, dlog32, dlog, dy2, dy1, ones;
    net_buf mask2; /* conv2's ReLU mask (1 bit an element): written by act2's RELU_AUX, read by
                      fc_dx's DRELU, which applies the ReLU's backward to dy2 */
    net_buf labels, loss, mean, argmax; /* the loss op's: int32 labels (host-filled), f32 per-row
                                           losses, their f32 mean, int32 predictions */
    kmux_plan *conv1, *act1, *conv2, *act2, *fc; /* forward */
    kmux_plan *fc_dw, *fc_dx, *conv2_dw, *conv2_dx, *b2_grad, *conv1_dw, *b1_grad;
    kmux_plan *relu1_bwd; /* element-wise ReLU backward from y1 (conv2_dx has no epilogue) */
    kmux_plan *xent;      /* softmax cross-entropy of the logits */
} net_batch;

typedef struct net {
    kmux_device *dev;
    kmux_stream *s;
    int is_host;  /**< device memory is host memory and no staging was asked */
    kmux_dtype t; /**< training type */
    net_layout L;
    net_buf w32;    /**< f32 master weights (updated on the device by kmux's optimizer op) */
    net_buf w;      /**< weights in T (== w32 for f32) */
    net_buf g;      /**< gradients in T */
    net_buf g32;    /**< gradients in f32 (== g for f32) */
    net_batch b[6]; /**< train batch, last partial batch, evaluation batches */
    /** The workspace of every GEMM and convolution plan (made with prefs.caller_workspace): they
     *  run one after another on one stream, so one arena of the largest need serves them all. */
    net_buf arena;
    memstat *mem;
    FILE *plan_log; /**< when set, one line per plan: implementation and workspace */
} net;

/** Sets up the parameter buffers (f32 master weights initialised from seed as PyTorch's default
 *  init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases). stage = 1 keeps host copies
 *  and copies through them even when the device memory is host memory (the path of GPUs, for
 *  testing it on a CPU). Returns 0, or -1 after printing the kmux error. */
int net_create(net *nt, kmux_device *dev, kmux_stream *s, kmux_dtype t, uint64_t seed, int stage,
               memstat *mem);
void net_destroy(net *nt);

/** Plans and buffers for batch size n (created on first use; up to six sizes). NULL on error
 *  (printed). */
net_batch *net_batch_get(net *nt, int64_t n, int train);

/** Casts the master weights to T (a no-op for f32): once at the start; afterwards the optimiser
 *  writes the T copy in its own pass. */
int net_cast_weights(net *nt);

/** Forward pass of b->x32 (host-filled, then pushed here); the logits stay on the device. */
int net_forward(net *nt, net_batch *b);
/** The mean softmax cross-entropy of the logits against b->labels (host-filled int32, pushed
 *  here) into *loss and the number of rows predicted right added to *correct, by kmux's
 *  softmax cross-entropy op; with grad, also the logits' gradient into b->dlog32 on the device,
 *  times *grad_scale (device f32, NULL = 1: the f16 loss scale). */
int net_loss(net *nt, net_batch *b, int grad, const float *grad_scale, double *loss,
             int64_t *correct);
/** The same op without reading anything back: the mean loss into *mean and the predicted classes
 *  into argmax[0 .. b->n) (device memory), for a training step that does not synchronise. */
int net_loss_to(net *nt, net_batch *b, int grad, const float *grad_scale, float *mean,
                int32_t *argmax);

/** Backward pass from b->dlog32 (host, the loss gradient already multiplied by the loss scale):
 *  gradients in nt->g32 on the host. */
int net_backward(net *nt, net_batch *b);

/** Copies between the host copy and the device (no-ops on host devices). */
int net_push(net *nt, net_buf *b);
int net_pull(net *nt, net_buf *b);

#endif
