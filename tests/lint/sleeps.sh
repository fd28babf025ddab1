#!/usr/bin/env bash
# tests/lint/sleeps.sh: no fixed sleep in the tests where a condition can be
# awaited (issue 27). A test waits for what it needs with a deadline:
# tests/lib/poll.mjs's until/eventually (JS), tests/lib/wait.sh's wait_until
# (shell). A sleep stays only where it is the point (a timeout must expire,
# nothing may happen for a while, a client's pace) or paces a bounded loop,
# and then says why on the line before it.
#
# Fails, listing file:line, on a sleep in tests/ (*.mjs, *.sh) that is
#   - not in the helpers themselves (tests/lib/poll.mjs, tests/lib/wait.sh),
#   - not a one-line loop (`while (...) await sleep(...)`, `for ...; do ...;
#     sleep 0.1; done`: bounded, the condition beside it),
#   - not under a comment block whose lines include one starting
#     `// sleep:` (JS) or `# sleep:` (shell), right above it.
# A sleep, in JS: a call of sleep( or delay(, or setTimeout(f, ms) whose f is
# a bare name (a promise's resolve); setTimeout(() => ..., ms) is a deadline
# or a delayed action, not a wait. In shell: the sleep command where a
# command starts (quoted strings and comments are left out).
# Run by `make lint`; prints every offence, exits 1 if there was any.
set -euo pipefail
cd "$(dirname "$0")/../.."

# awk over one file: prints file:line: text for each offence.
check() { # file, js|sh
    awk -v file="$1" -v lang="$2" '
    function code_of(line) { # the line without what cannot be a sleep: quoted text, comments
        if (lang == "sh") {
            gsub(/\x27[^\x27]*\x27/, "\x27\x27", line)
            sub(/(^|[ \t])#.*$/, "", line)
        }
        return line
    }
    function is_comment(line) {
        return lang == "js" ? line ~ /^[ \t]*\/\// : line ~ /^[ \t]*#/
    }
    function says_why(line) {
        return lang == "js" ? line ~ /^[ \t]*\/\/ sleep:/ : line ~ /^[ \t]*# sleep:/
    }
    function is_sleep(c) {
        if (lang == "js")
            return c ~ /(^|[^A-Za-z0-9_$.])(sleep|delay)\(/ ||
                   c ~ /(^|[^A-Za-z0-9_$.])setTimeout\([ \t]*[A-Za-z_$][A-Za-z0-9_$]*[ \t]*,/
        return c ~ /(^[ \t]*|[;&|({][ \t]*|[ \t](do|then|else)[ \t]+)sleep[ \t]/
    }
    function one_line_loop(c) {
        if (lang == "js")
            return c ~ /^[ \t]*(\}[ \t]*)?(for|while)[ \t]*\(/
        return c ~ /(^|[;&|( \t])(for|while|until)[ \t]/ && c ~ /(^|[; \t])do([ \t]|$)/ &&
               c ~ /(^|[; \t])done([ \t;)&|]|$)/
    }
    {
        if (is_comment($0)) { why = why || says_why($0); next }
        c = code_of($0)
        if (is_sleep(c) && !why && !one_line_loop(c))
            printf "%s:%d: %s\n", file, FNR, $0
        why = 0
    }' "$1"
}

found=$(
    git ls-files --cached --others --exclude-standard 'tests/*.mjs' 'tests/*.sh' | sort -u |
        while read -r f; do
            [ -f "$f" ] || continue
            case "$f" in
            tests/lib/poll.mjs | tests/lib/wait.sh) ;; # the helpers: their sleep is the poll's pace
            *.mjs) check "$f" js ;;
            *.sh) check "$f" sh ;;
            esac
        done
)
if [ -n "$found" ]; then
    echo "sleeps: a fixed sleep where a condition can be awaited (tests/lib/poll.mjs until/eventually," >&2
    echo "tests/lib/wait.sh wait_until), or a sleep that is the point without a '// sleep:' or" >&2
    echo "'# sleep:' comment on the line before saying why:" >&2
    echo "$found" | sed 's/^/    /' >&2
    exit 1
fi
