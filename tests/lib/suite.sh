# shellcheck shell=bash
# tests/lib/suite.sh: what every suite script that runs a stack does alike.
# Sourced from the repository's root.

# dockerd is stopped at a suite's end only if the suite started it: call
# suite_dockerd_note before starting it, suite_dockerd_release at the end.
suite_dockerd_note() {
    SUITE_OWNS_DOCKERD=1
    curl -sf --max-time 3 --unix-socket /var/run/docker.sock http://d/_ping >/dev/null 2>&1 &&
        SUITE_OWNS_DOCKERD=0
    true
}
suite_dockerd_release() {
    [ "${SUITE_OWNS_DOCKERD:-0}" = 1 ] && bash tests/lib/docker.sh stop
    true
}

# Fails (1), printing them, when the sanitizers wrote reports into dir
# (ASAN_OPTIONS / UBSAN_OPTIONS log_path=dir/asan, dir/ubsan).
suite_sanitizer_reports() {
    ls "$1"/asan* "$1"/ubsan* >/dev/null 2>&1 || return 0
    echo "sanitizer reports:"
    cat "$1"/asan* "$1"/ubsan* 2>/dev/null | head -80
    return 1
}

# dockerd started (and noted), the base image built when missing, the stack
# (conf/stack.sh, as the caller's environment sets it) brought up; at exit the
# stack goes down and dockerd is released. Returns 1, saying why, on failure.
suite_stack_up() {
    suite_dockerd_note
    trap 'conf/stack.sh down >/dev/null 2>&1; suite_dockerd_release' EXIT
    bash tests/lib/docker.sh start || { echo "dockerd: cannot start"; return 1; }
    bash tests/lib/images.sh >"$CORRAL_RUN/images.log" 2>&1 || { tail -20 "$CORRAL_RUN/images.log"; return 1; }
    conf/stack.sh up >/dev/null || { echo "stack did not come up"; tail -n 20 "$CORRAL_RUN"/log/*.log; return 1; }
}

# The stack's corralctl (CORRAL_BUILD, CORRAL_RUN) as JSON; a field of its
# answer; a new workspace's id (its whole answer kept in ws-NAME.json); a
# member key of a new workspace.
ctl() { "$CORRAL_BUILD/corralctl" -c "$CORRAL_RUN/corral.conf" --json "$@"; }
field() { sed -E "s/.*\"$1\":\"([^\"]*)\".*/\\1/"; }
workspace() { ctl workspace create "$1" > "$CORRAL_RUN/ws-$1.json"; field workspace < "$CORRAL_RUN/ws-$1.json"; }
member_key() { ctl key create --workspace "$(workspace "$1")" --role member | field key; }
