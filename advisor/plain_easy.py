"""A plain-Python EASY-FCFS-FCFS: the yardstick ``advisor bench`` times a whole ``advisor
replay`` process against. Standard library only, one file, the engine's rules (completions,
then arrivals, then one pass per second; the textbook shadow rule), so it gives the same
schedule: the bench checks that it does before timing it.

    python -m advisor.plain_easy TRACE.swf[.gz]     # prints {"jobs": N, "avg_wait": W}
    python -m advisor.plain_easy TRACE --starts     # one start time per job instead

It reads an SWF log as the advisor does by default: a job's processors are its requested
ones (else its allocated ones), its estimate its requested time (else its runtime); jobs
with no processors or a negative runtime are left out; the machine is the header's
MaxProcs (else MaxNodes).
"""
from __future__ import annotations

import bisect
import gzip
import heapq
import json
import sys


def read(path: str) -> tuple[int, list[tuple[int, int, int, int, int]]]:
    """(machine size, jobs as (submit, job id, runtime, estimate, processors) in submit
    order)."""
    opener = gzip.open if path.endswith(".gz") else open
    size = {"MaxProcs": 0, "MaxNodes": 0}
    jobs = []
    with opener(path, "rt", errors="replace") as lines:
        for line in lines:
            line = line.strip()
            if line.startswith(";"):
                key, _, value = line[1:].partition(":")
                if key.strip() in size and value.split():
                    size[key.strip()] = int(value.split()[0])
                continue
            f = line.split()
            if len(f) < 18:
                continue
            job_id, submit, runtime = int(f[0]), int(f[1]), int(float(f[3]))
            alloc, req, req_time = int(f[4]), int(f[7]), int(float(f[8]))
            procs = req if req > 0 else alloc
            if procs <= 0 or runtime < 0:
                continue
            jobs.append((submit, job_id, runtime, req_time if req_time >= 0 else runtime,
                         procs))
    jobs.sort()
    return size["MaxProcs"] or size["MaxNodes"], jobs


def easy(machine: int, jobs: list) -> list[int]:
    """Start time of each job under EASY backfilling, FCFS in both queues."""
    n = len(jobs)
    start = [-1] * n
    ends: list[tuple[int, int]] = []      # (completion, job) heap
    running: list[tuple[int, int, int]] = []  # (expected end, processors, job), sorted
    queue: list[int] = []
    free, nxt = machine, 0

    def launch(j: int, t: int) -> None:
        nonlocal free
        _, _, runtime, estimate, procs = jobs[j]
        start[j] = t
        free -= procs
        heapq.heappush(ends, (t + runtime, j))
        bisect.insort(running, (t + estimate, procs, j))

    while nxt < n or ends:
        t = min(jobs[nxt][0] if nxt < n else float("inf"), ends[0][0] if ends else float("inf"))
        while ends and ends[0][0] == t:
            _, j = heapq.heappop(ends)
            free += jobs[j][4]
            running.remove((start[j] + jobs[j][3], jobs[j][4], j))
        while nxt < n and jobs[nxt][0] == t:
            queue.append(nxt)
            nxt += 1
        if not queue:
            continue
        a = 0
        while a < len(queue) and jobs[queue[a]][4] <= free:
            launch(queue[a], t)
            a += 1
        if a < len(queue):
            head = queue[a]
            need, avail, shadow, extra = jobs[head][4], free, t, free - jobs[head][4]
            for r, (end, procs, _) in enumerate(running):
                avail += procs
                if avail >= need:
                    shadow = max(end, t + 1)
                    for end2, procs2, _ in running[r + 1:]:  # all that end with it
                        if max(end2, t + 1) != shadow:
                            break
                        avail += procs2
                    extra = avail - need
                    break
            for j in queue[a + 1:]:
                if free == 0:
                    break
                procs = jobs[j][4]
                if procs > free:
                    continue
                by_shadow = t + jobs[j][3] <= shadow
                if by_shadow or procs <= extra:
                    if not by_shadow:
                        extra -= procs
                    launch(j, t)
        queue = [j for j in queue if start[j] < 0]
    return start


def main(argv: list[str]) -> None:
    machine, jobs = read(argv[0])
    start = easy(machine, jobs)
    if "--starts" in argv:
        print("\n".join(map(str, start)))
        return
    wait = sum(s - job[0] for s, job in zip(start, jobs)) / max(len(jobs), 1)
    print(json.dumps({"jobs": len(jobs), "avg_wait": wait}))


if __name__ == "__main__":
    main(sys.argv[1:])
