/* bench_sched: the scheduler's added time per create — admission + placement
 * + record + enqueue, i.e. scheduler_create() — against a real Redis holding
 * the registered workers. Each created sandbox is killed right after, so the
 * fleet's load stays level. Prints p50 and p99 in microseconds. Redis and its
 * login, and the secrets, come from the stack's corral.conf. */
#include "audit.h"
#include "clock.h"
#include "corral_conf.h"
#include "lifecycle.h"
#include "scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    static struct corral_conf cc;
    struct sched_conf conf;
    struct sandbox_spec spec = {.timeout_s = 300, .cpu_cores = 0.5, .memory_mb = 256};
    struct sched_error err;
    struct rconn rc;
    char sbid[SANDBOX_ID_MAX], cerr[512];
    int n = argc > 3 ? atoi(argv[3]) : 2000;
    double *t = calloc((size_t)n, sizeof(double));

    if (argc < 3 || !t) {
        free(t);
        fprintf(stderr, "usage: bench_sched CORRAL_CONF WORKSPACE [N]\n");
        return 2;
    }
    if (corral_conf_load(argv[1], &cc, cerr, sizeof(cerr)) != 0) {
        free(t);
        fprintf(stderr, "bench_sched: %s\n", cerr);
        return 2;
    }
    /* The scheduler's settings as corral-api makes them: a hand-made copy
     * missed the concurrency ceiling (0: every create refused). */
    sched_conf_init(&conf, &cc);
    snprintf(spec.template_id, sizeof(spec.template_id), "base");
    spec.metadata_json = strdup("{}");
    spec.env_json = strdup("{}");
    spec.allowed_json = strdup("[]");
    corral_conf_rconn(&cc, &rc);
    for (int i = 0; i < n; i++) {
        double t0 = now_us();
        if (scheduler_create(&rc, &conf, argv[2], AUDIT_ACTOR_OPERATOR, &spec, sbid, &err) != 0) {
            fprintf(stderr, "create %d: %d %s\n", i, err.status, err.message);
            free(t);
            return 1;
        }
        t[i] = now_us() - t0;
        sandbox_kill(&rc, argv[2], sbid, AUDIT_KILLED, AUDIT_ACTOR_OPERATOR, "bench");
    }
    qsort(t, (size_t)n, sizeof(double), cmp);
    printf("scheduler_create over %d creates: p50 %.0f us, p99 %.0f us\n", n, t[n / 2],
           t[(int)(n * 0.99)]);
    sandbox_spec_free(&spec);
    free(t);
    rconn_close(&rc);
    return 0;
}
