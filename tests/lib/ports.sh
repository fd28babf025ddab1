# tests/lib/ports.sh (sourced): loopback ports no one holds, so that test
# stacks never collide with another stack on the same machine.
# free_port: one port the kernel just handed out and released.
free_port() {
    node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# free_port_pair: a port p with p+1 also free (the stack's API and data ports).
free_port_pair() {
    local p i
    for i in $(seq 20); do
        p=$(free_port)
        [ "$p" -lt 65535 ] && [ -z "$(ss -ltnH "( sport = :$((p + 1)) )")" ] && { echo "$p"; return 0; }
    done
    echo "ports.sh: no free pair of ports after 20 tries" >&2
    return 1
}
