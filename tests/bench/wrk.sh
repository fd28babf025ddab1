# shellcheck shell=bash
# tests/bench/wrk.sh: sourced by the bench scripts (run.sh, bench_hosts.sh):
# one wrk run of DURATION seconds and its figures.
wrk_run() { wrk -t2 -c64 -d"${DURATION}s" --latency "$@" 2>&1; }
parse() { # wrk output -> "req/s p99_ms non2xx"
    awk '/Requests\/sec/ {rps=$2} / 99%/ {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; p99=v} /Non-2xx/ {bad=$4} END {printf "%s %s %s\n", rps, p99, bad+0}'
}
