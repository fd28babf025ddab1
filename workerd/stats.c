#include "stats.h"

static long long num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

int stats_parse(const json_t *stats, struct stats_sample *s)
{
    const json_t *cpu = json_object_get(stats, "cpu_stats");
    const json_t *mem = json_object_get(stats, "memory_stats");
    const json_t *ms = json_object_get(mem, "stats");
    long long inactive;

    if (!json_is_integer(json_object_get(json_object_get(cpu, "cpu_usage"), "total_usage")) ||
        !json_is_integer(json_object_get(mem, "usage")))
        return -1;
    s->cpu_ns = num(json_object_get(cpu, "cpu_usage"), "total_usage");
    s->online_cpus = (long)num(cpu, "online_cpus");
    /* cgroup v2 names it inactive_file, v1 total_inactive_file. */
    inactive = json_object_get(ms, "inactive_file") ? num(ms, "inactive_file")
                                                    : num(ms, "total_inactive_file");
    s->mem_used = num(mem, "usage");
    s->mem_used -= inactive < s->mem_used ? inactive : 0;
    s->mem_total = num(mem, "limit");
    s->mem_cache = json_object_get(ms, "file") ? num(ms, "file") : num(ms, "cache");
    return 0;
}

double stats_cpu_pct(long long prev_cpu_ns, long long cpu_ns, long long wall_ns, long cpus)
{
    double pct;

    if (wall_ns <= 0 || cpus <= 0 || cpu_ns <= prev_cpu_ns)
        return 0;
    pct = (double)(cpu_ns - prev_cpu_ns) * 100.0 / ((double)wall_ns * (double)cpus);
    return pct > 100 ? 100 : pct;
}

long stats_cpu_count(long long nano_cpus, long online_cpus)
{
    if (nano_cpus <= 0)
        return online_cpus > 0 ? online_cpus : 1;
    return (long)((nano_cpus + 999999999LL) / 1000000000LL);
}
