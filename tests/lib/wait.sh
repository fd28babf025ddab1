# shellcheck shell=bash
# tests/lib/wait.sh (sourced): waiting for a condition with a deadline,
# instead of a fixed sleep before a check (issue 27). As fast as the condition
# when it comes, bounded when it never does; a fixed sleep stays only where
# time itself is the point, under a `# sleep:` comment saying why
# (tests/lint/sleeps.sh checks it).

# wait_until SECONDS WHAT COMMAND [ARG...]: runs COMMAND (its output dropped)
# every 0.1 s until it succeeds, for SECONDS (whole seconds; bash's clock
# ticks in seconds, so up to one more); 0 once it does, else 1 with
# "timed out after SECONDS s waiting for WHAT" on stderr.
wait_until() {
    local secs=$1 what=$2 end
    shift 2
    end=$((SECONDS + secs + 1))
    until "$@" >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$end" ]; then
            echo "timed out after $secs s waiting for $what" >&2
            return 1
        fi
        sleep 0.1
    done
}
