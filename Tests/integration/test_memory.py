"""Where a running gateway's heap lives: every thread allocates from glibc's main arena, so the periodic
`malloc_trim` gives back what any of them freed (a thread's own arena keeps its freed top resident)."""
import http.client
import os
import threading

# glibc reserves each arena other than the main one as a 64 MiB-aligned mapping of 64 MiB (HEAP_MAX_SIZE on 64-bit):
# the part in use read-write, the rest reserved without access.
ARENA_BYTES = 64 << 20


def thread_arenas(pid):
    """How many glibc arenas besides the main one the process holds, from its memory map."""
    maps = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            maps.append((start, end, fields[1], fields[5] if len(fields) > 5 else ""))
    count = 0
    for i, (start, end, perm, name) in enumerate(maps):
        if name or perm != "rw-p" or start % ARENA_BYTES:
            continue
        if i + 1 < len(maps) and maps[i + 1][0] == end and maps[i + 1][2] == "---p":
            end = maps[i + 1][1]
        count += end - start == ARENA_BYTES
    return count


def burst(gw, posters=8, each=40):
    """Live updates from several keep-alive connections at once, so that commits pile up and the store's writer
    thread takes some (it allocates while it writes them)."""
    failures = []

    def post(k):
        conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=10)
        for i in range(each):
            status, _ = gw.request("POST", "/v1/push", {
                "targets": ["phone"], "title": "Washer", "message": f"{i} min",
                "data": {"tag": f"w{k}-{i % 5}", "live_update": True, "progress": i, "progress_max": each}},
                headers=gw.admin_headers(), conn=conn)
            if status not in (200, 202):
                failures.append(status)
        conn.close()

    threads = [threading.Thread(target=post, args=(k,)) for k in range(posters)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_every_thread_allocates_from_the_main_heap(gateway):
    gw = gateway()
    burst(gw)
    assert len(os.listdir(f"/proc/{gw.proc.pid}/task")) > 1  # the store's threads are there
    assert thread_arenas(gw.proc.pid) == 0


def test_malloc_arena_max_in_the_environment_wins(gateway):
    # What an operator sets for glibc is left alone: with room for more arenas, the threads take their own again
    # (the check above would see them; this one shows it can).
    gw = gateway(env={"MALLOC_ARENA_MAX": "8"})
    burst(gw)
    assert thread_arenas(gw.proc.pid) > 0
