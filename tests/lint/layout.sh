#!/usr/bin/env bash
# tests/lint/layout.sh: the shape of the tree (issue 27; docs/ARCHITECTURE.md).
# Fails, listing every offence, when
#   - a file outside store/ includes keys.h or sends a Redis command
#     (rconn_cmd, rconn_cmdargv, rconn_eval, rconn_eval_unwaited): records
#     live in store/, which everyone else calls (common/'s rconn, rsentinel
#     and rcluster are the connection itself);
#   - a sandbox state, transition outcome, orphan decision or workerd command
#     is compared as a string (strcmp and friends on a line that names a
#     state, outcome or command, or one of their values) outside the tables
#     that decode them at the edge (CODECS below);
#   - a function is longer than 80 lines (the body between its braces);
#   - a top-level component folder has no README.md saying what it may call.
# Run by `make lint` and by tests/run.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

MAX_FN_LINES=80
# The files that turn a wire string into an enum and back: the only places a
# state, outcome or command may be compared as a string.
CODECS='^(store/sandbox_codec\.c|store/sandbox_fields\.c|workerd/commands\.c|workerd/states\.c)$'
COMPONENTS="common store scheduler handlers module workerd envd egress tunneld interp conf tests"

bad=0
offence() {
    echo "layout: $*" >&2
    bad=1
}

for f in $(git ls-files '*.c' '*.h' | grep -v '^store/'); do
    if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]keys\.h[">]' "$f"; then
        offence "$f includes keys.h: only store/ knows the key layout"
    fi
    case "$f" in common/rconn.* | common/rsentinel.* | common/rcluster.*) continue ;; esac
    if hits=$(grep -nE '\brconn_(cmd|cmdargv|eval|eval_unwaited)[[:space:]]*\(' "$f"); then
        offence "$f sends Redis commands itself; add a function to a store in store/:"
        echo "$hits" | sed 's/^/    /' >&2
    fi
done

# A string compare whose arguments (up to one level of nested parentheses)
# name a state, an outcome, an orphan decision or a command type, or spell
# one of their values.
words='[a-z_>.-]*(state|outcome|orphan|cmd_type)[a-z_]*|"(pending|running|paused|pausing|resuming|exited|failed|lost|killed|replace|skip|notdue|absent)"'
call="\\bstr(n|case)?cmp[[:space:]]*\\(([^()]|\\([^()]*\\))*($words)"
for f in $(git ls-files '*.c' | grep -Ev "$CODECS" | grep -v '^tests/'); do
    if hits=$(grep -nE "$call" "$f"); then
        offence "$f compares a state, outcome or command as a string; decode it once (an enum) at the edge:"
        echo "$hits" | sed 's/^/    /' >&2
    fi
done

# A function starts at column 0 (its name, or nginx style "{" alone on the
# line after it) and ends at the first "}" at column 0.
long=$(git ls-files '*.c' | xargs awk -v max="$MAX_FN_LINES" '
    FNR == 1 { infn = 0 }
    !infn && /^\{[[:space:]]*$/ { infn = 1; start = FNR; name = prev; next }
    !infn && /^[A-Za-z_].*\)[^;=]*\{[[:space:]]*$/ && !/^(struct|enum|union|typedef)/ {
        infn = 1; start = FNR; name = $0; next }
    infn && /^\}/ { n = FNR - start - 1; infn = 0
        if (n > max) printf "    %s:%d: %d lines: %s\n", FILENAME, start, n, name }
    { prev = $0 }')
if [ -n "$long" ]; then
    offence "functions over $MAX_FN_LINES lines:"
    echo "$long" >&2
fi

for d in $COMPONENTS; do
    if [ ! -f "$d/README.md" ]; then
        offence "$d/ has no README.md"
    elif [ "$d" != tests ] && [ "$d" != conf ] && ! grep -qi 'may call' "$d/README.md"; then
        offence "$d/README.md does not say what it may call ('May call: ...')"
    fi
done

exit $bad
