/* memstat.c - the memory table printed at the end of a run. */
#include "memstat.h"

static const char *const NAMES[MEM_CAT_COUNT] = {"weights", "gradients", "optimiser state",
                                                 "activations", "workspace"};

static double mib(size_t b) {
    return (double)b / (1024.0 * 1024.0);
}

static size_t total(const memstat *m) {
    size_t t = 0;
    for (int c = 0; c < MEM_CAT_COUNT; c++)
        t += m->dev[c] + m->host[c];
    return t;
}

void memstat_print(const memstat *m, const memstat *run, FILE *out, long long params,
                   int opt_slots) {
    size_t dev = 0, host = 0;
    fprintf(out, "memory of one training step by category (MiB):\n");
    fprintf(out, "  %-16s %10s %10s\n", "category", "device", "host copy");
    for (int c = 0; c < MEM_CAT_COUNT; c++) {
        fprintf(out, "  %-16s %10.3f %10.3f\n", NAMES[c], mib(m->dev[c]), mib(m->host[c]));
        dev += m->dev[c], host += m->host[c];
    }
    fprintf(out, "  %-16s %10.3f %10.3f\n", "total", mib(dev), mib(host));
    /* The rule of thumb of hardware guides: parameters + 2 x activations + optimiser state, the
     * parameters and the optimiser state in f32. */
    size_t p = (size_t)params * 4, o = (size_t)params * 4 * (size_t)opt_slots;
    size_t rule = p + 2 * m->fwd_activations + o;
    fprintf(out,
            "rule of thumb: parameters %.3f + 2 x activations 2 x %.3f + optimiser state %.3f = "
            "%.3f MiB; allocated %.3f MiB on the device (%.2fx the rule)",
            mib(p), mib(m->fwd_activations), mib(o), mib(rule), mib(dev),
            rule ? (double)dev / (double)rule : 0.0);
    if (host) fprintf(out, " + %.3f MiB of host copies", mib(host));
    fprintf(out, "\n");
    fprintf(out,
            "the whole run allocated %.3f MiB (with the last partial batch and the evaluation "
            "batches of up to 1000)\n",
            mib(total(run)));
}
