/* stats.h: one sandbox's sample from the Engine API (pure): its stats
 * (`GET /containers/{id}/stats?stream=false&one-shot=true`) and the CPU
 * percentage worked out from two of them, since one-shot stats carry no
 * previous reading. */
#ifndef WORKERD_STATS_H
#define WORKERD_STATS_H

#include <jansson.h>

struct stats_sample {
    long long cpu_ns;    /* cpu_stats.cpu_usage.total_usage: CPU time used since start */
    long long mem_used;  /* usage less the inactive page cache, as `docker stats` counts it */
    long long mem_total; /* the limit */
    long long mem_cache; /* page cache (cgroup v2 "file", v1 "cache") */
    long online_cpus;
};

/* 0 with s filled, -1 when stats is not a running container's answer. */
int stats_parse(const json_t *stats, struct stats_sample *s);

/* CPU used between two readings wall_ns apart, as a percentage of the
 * sandbox's cpus (0 to 100, like E2B's cpuUsedPct). */
double stats_cpu_pct(long long prev_cpu_ns, long long cpu_ns, long long wall_ns, long cpus);

/* A sandbox's cpu count from its HostConfig.NanoCpus: whole cpus, rounded
 * up; online_cpus when it has no limit. */
long stats_cpu_count(long long nano_cpus, long online_cpus);

#endif
