#!/usr/bin/env bash
# tests/lint/keys_once.sh: the Redis key layout is spelled in one place,
# store/keys.h (issue 10, "one home for each record"). Fails when
#   - a file in handlers/ includes keys.h or sends a command (rconn_cmd,
#     rconn_eval): handlers reach Redis through the stores in store/
#     (worker_store, sandbox_store, ...) and common/, never by key;
#   - a key prefix of keys.h ("corral:{ws:", "corral:sbws:", ...: each format
#     string up to its first %) is spelled in any other C or Lua source, as a
#     C format string or built up in a script. Scripts get their keys, or a
#     prefix made from keys.h, from C.
# Run by `make lint`; prints every offence, exits 1 if there was any.
set -euo pipefail
cd "$(dirname "$0")/../.."

bad=0

for f in $(git ls-files 'handlers/*.c' 'handlers/*.h'); do
    if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]keys\.h[">]' "$f" ||
        grep -Eq '\brconn_(cmd|eval)\b' "$f"; then
        echo "keys_once: $f reaches Redis itself (keys.h, rconn_cmd or rconn_eval); use a store in store/" >&2
        bad=1
    fi
done

# The literal prefix of each key format: what comes before its first %.
mapfile -t prefixes < <(sed -n 's/^#define[[:space:]]\+K_[A-Z_]\+[[:space:]]\+"\([^"%]*\).*/\1/p' store/keys.h | sort -u)
[ ${#prefixes[@]} -gt 0 ] || { echo "keys_once: no key formats found in store/keys.h" >&2; exit 1; }

sources=$(git ls-files '*.c' '*.h' '*.lua' | grep -vx 'store/keys.h')
for p in "${prefixes[@]}"; do
    # shellcheck disable=SC2086
    if hits=$(grep -nF -- "$p" $sources); then
        echo "keys_once: the key prefix \"$p\" is spelled outside store/keys.h:" >&2
        echo "$hits" | sed 's/^/    /' >&2
        bad=1
    fi
done

exit $bad
