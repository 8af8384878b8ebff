/*
 * kb_noise.h - is the machine quiet enough for a timing to mean something?
 *
 * Around each problem x device run, the CPU time the whole machine spent (/proc/stat: user, nice,
 * system, irq, softirq), the time stolen by the hypervisor (steal) and this process's own CPU
 * time (getrusage, every thread) are sampled. Their differences give the CPUs that OTHER
 * processes kept busy ("foreign load") and the steal fraction during the run. A run is noisy
 * when the foreign load exceeds the CPUs the device left free (online CPUs - its threads) by
 * more than KB_NOISE_FOREIGN_CPUS, or steal exceeds KB_NOISE_STEAL: a process on "the other
 * core" then makes every call equally slow (min = median), which the spread of the per-call
 * times cannot see. Windows shorter than KB_NOISE_MIN_WALL_S (the kernel's tick makes them
 * inexact) give no verdict.
 */
#ifndef KB_NOISE_H
#define KB_NOISE_H

#define KB_NOISE_FOREIGN_CPUS 0.25
#define KB_NOISE_STEAL 0.05
#define KB_NOISE_MIN_WALL_S 0.15
/** Rounds of one timing whose medians disagree by more than this mark it noisy too. */
#define KB_NOISE_ROUNDS 0.15
/** A CPU clock re-measured during the run that moved by more than this fraction from the clock
 *  the peaks were computed with (thermal or power throttling, a governor change) marks the rows
 *  from then on noisy ("clock"). */
#define KB_NOISE_CLOCK 0.05

/** A snapshot of the machine's and this process's CPU time. */
typedef struct kb_noise_sample {
    double wall_s;  /**< monotonic clock */
    double busy_s;  /**< all CPUs: user + nice + system + irq + softirq, seconds */
    double steal_s; /**< all CPUs: steal, seconds */
    double self_s;  /**< this process, user + system, seconds */
    int ok;         /**< 0 when /proc/stat could not be read */
} kb_noise_sample;

/** The verdict of one window. */
typedef struct kb_noise {
    int measured;        /**< 1 when the window was long enough and /proc/stat readable */
    double wall_s;       /**< window length */
    double foreign_cpus; /**< CPUs other processes kept busy on average */
    double steal;        /**< stolen fraction of the online CPUs' time */
    int online_cpus, threads;
    double rounds_spread; /**< disagreement of the timing rounds (kb_stats.rounds_spread) */
    double clock_start_mhz, clock_mhz; /**< the run's clock and its last re-check; 0: none */
    int noisy;                         /**< 1 when the timings should not be ranked */
    char reason[160]; /**< "other processes used 0.97 CPUs (1 left free)", "" when quiet */
} kb_noise;

/** Takes a snapshot. */
void kb_noise_sample_now(kb_noise_sample *s);

/** The verdict from two snapshots for a device that ran `threads` threads. */
void kb_noise_between(const kb_noise_sample *a, const kb_noise_sample *b, int threads, kb_noise *n);

/** Adds the verdict on a timing's rounds: noisy (with the reason) when their medians disagree by
 *  more than KB_NOISE_ROUNDS and the load did not already explain it. */
void kb_noise_rounds(kb_noise *n, double rounds_spread);

/** Adds the verdict on a re-check of the CPU clock: records both clocks, and marks n noisy
 *  ("clock: ...") when now_mhz differs from start_mhz by more than KB_NOISE_CLOCK. Returns 1
 *  when it moved. No verdict when either is <= 0. */
int kb_noise_clock(kb_noise *n, double start_mhz, double now_mhz);

/** The CPU clock measured now with the routine of the cached clock (cpu_model.c), in MHz; the
 *  test hook KMUX_BENCH_RECHECK_CLOCK_MHZ replaces the measurement. */
double kb_noise_recheck_clock_mhz(void);

/** Pure rule, for tests: the verdict of a window of wall_s seconds with those CPU seconds. */
void kb_noise_judge(double wall_s, double busy_s, double steal_s, double self_s, int online_cpus,
                    int threads, kb_noise *n);

#endif
