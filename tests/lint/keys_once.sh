#!/usr/bin/env bash
# tests/lint/keys_once.sh: the Redis key layout is spelled in one place,
# common/keys.h (issue 10, "one home for each record"). Fails when
#   - a file in handlers/ includes keys.h: handlers reach Redis through the
#     stores in scheduler/ (worker_store, sandbox_store, ...), never by key;
#   - a key prefix of keys.h ("corral:{ws:", "corral:sbws:", ...: each format
#     string up to its first %) is spelled in any other C or Lua source, as a
#     C format string or built up in a script. Scripts get their keys, or a
#     prefix made from keys.h, from C.
# Run by `make lint`; prints every offence, exits 1 if there was any.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Handlers that still include keys.h. Temporary: each goes when its record
# has its store.
ALLOW=(
    # being moved by issue 10 (the sandbox record and its readers)
    handlers/h_e2b_list.c handlers/h_sandboxes.c handlers/h_e2b.c handlers/create_wait.c
    handlers/h_e2b_templates.c handlers/h_keys.c handlers/h_workspace.c handlers/h_network.c
    handlers/e2b_view.c handlers/sandbox_view.c handlers/e2b_spec.c handlers/main.c
    # the per-credential rate bucket (decision 0028): a record of its own that
    # issue 10 has not yet given a home
    handlers/ratelimit.c
)

bad=0
allowed() {
    local f
    for f in "${ALLOW[@]}"; do [ "$f" = "$1" ] && return 0; done
    return 1
}

for f in $(git ls-files 'handlers/*.c' 'handlers/*.h'); do
    if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]keys\.h[">]' "$f" && ! allowed "$f"; then
        echo "keys_once: $f includes keys.h; use a store in scheduler/ instead" >&2
        bad=1
    fi
done

# The literal prefix of each key format: what comes before its first %.
mapfile -t prefixes < <(sed -n 's/^#define[[:space:]]\+K_[A-Z_]\+[[:space:]]\+"\([^"%]*\).*/\1/p' common/keys.h | sort -u)
[ ${#prefixes[@]} -gt 0 ] || { echo "keys_once: no key formats found in common/keys.h" >&2; exit 1; }

sources=$(git ls-files '*.c' '*.h' '*.lua' | grep -vx 'common/keys.h')
for p in "${prefixes[@]}"; do
    # shellcheck disable=SC2086
    if hits=$(grep -nF -- "$p" $sources); then
        echo "keys_once: the key prefix \"$p\" is spelled outside common/keys.h:" >&2
        echo "$hits" | sed 's/^/    /' >&2
        bad=1
    fi
done

exit $bad
