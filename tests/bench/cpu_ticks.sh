#!/usr/bin/env bash
# tests/bench/cpu_ticks.sh PID...: the CPU time (utime+stime, clock ticks)
# the processes have used so far, summed; a process that is gone counts 0.
# Read before and after a run, it gives what each request or byte cost in CPU,
# which holds on a shared machine where req/s and MB/s do not (decision 0057).
sum=0
for p in "$@"; do
    t=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) || t=0
    sum=$((sum + ${t:-0}))
done
echo "$sum"
