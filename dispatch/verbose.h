/*
 * verbose.h - the KMUX_VERBOSE trace lines (verbose.c). Every line has the same columns:
 *
 *   kmux_verbose,<event>,<device>,<op>,<impl>,<dtypes>,<compute>,<problem>,<ms>,<message>
 *
 * event: info (the header: kmux version, column template, every device with its ISA), exec
 * (level 1), create / reject (plan creation), error, load, cache ... (level 2). <problem> is
 * written in kmux-bench's own grammar ("--dt=f32 --stag=ab --wtag=ab --dtag=ab 64x32:32x16",
 * "--dir=FWD --dt=f32 --layout=nchw mb2ic64ih56...") so that it can be pasted after kmux-bench;
 * <problem> and <message> are always quoted (CSV: "" inside), empty columns stay empty.
 */
#ifndef KMUX_VERBOSE_H
#define KMUX_VERBOSE_H

#include "internal.h"

/** The column names after "kmux_verbose", as the header prints them. */
#define KMUX_TRACE_COLUMNS "event,device,op,impl,dtypes,compute,problem,ms,message"

/** The header of a context's trace (level >= 1): version, template, one line per device. */
void kmux_trace_header(const kmux_context *ctx);

/** One line about a matmul / convolution plan: impl may be NULL, ms < 0 leaves the column empty,
 *  message may be NULL. A message equal to the thread's pending error replaces that error line. */
void kmux_trace_matmul(int level, const char *event, const kmux_device *dev, const char *impl,
                       const kmux_matmul_desc *d, double ms, const char *message);
void kmux_trace_conv(int level, const char *event, const kmux_device *dev, const char *impl,
                     const kmux_conv2d_desc *d, double ms, const char *message);
/** One line about an element-wise plan (problem: "relu:fwd:n64:alpha0:beta0"). */
void kmux_trace_eltwise(int level, const char *event, const kmux_device *dev, const char *impl,
                        const kmux_eltwise_desc *d, double ms);
/** One line about an optimizer plan (grad dtype, "adamw:n100:copybf16:..."). */
void kmux_trace_optimizer(int level, const char *event, const kmux_device *dev, const char *impl,
                          const kmux_optimizer_desc *d, double ms);
/** One line about a softmax plan ("cross_entropy:fwd:64x10:smoothing0"). */
void kmux_trace_softmax(int level, const char *event, const kmux_device *dev, const char *impl,
                        const kmux_softmax_desc *d, double ms);
/** One line about a binary plan ("add:64x256x56x56+1x256x1x1:a1:b1"). */
void kmux_trace_binary(int level, const char *event, const kmux_device *dev, const char *impl,
                       const kmux_binary_desc *d, double ms);
/** One line about a reduction plan ("sum:64x256x56x56->1x256x1x1"). */
void kmux_trace_reduction(int level, const char *event, const kmux_device *dev, const char *impl,
                          const kmux_reduction_desc *d, double ms);
/** One line about a pooling plan ("max:nchw:64x256x56x56:k3x3:s2x2:p1,1,1,1:fwd"). */
void kmux_trace_pooling(int level, const char *event, const kmux_device *dev, const char *impl,
                        const kmux_pooling_desc *d, double ms);

/** The problem of a description in kmux-bench's grammar (options, then the descriptor). */
void kmux_trace_problem_matmul(const kmux_matmul_desc *d, char *buf, size_t cap);
void kmux_trace_problem_conv(const kmux_conv2d_desc *d, char *buf, size_t cap);

/** An error was set (kmux_set_error): kept pending on this thread, so that an error re-set with
 *  more context, or a reject line carrying the same message, gives one line and not three. */
void kmux_trace_error(kmux_status status, const char *message);
/** Writes this thread's pending error line, if any (kmux_clear_error: the next API call). */
void kmux_trace_flush_error(void);

#endif
