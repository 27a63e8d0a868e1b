#!/usr/bin/env python3
"""A complete external aisched worker in one file (Python 3 standard library only).

It registers with a node, keeps itself online with heartbeats (re-registering
when the node does not know it, e.g. after a leader change), accepts runs on
POST /internal/tasks/execute (answering 202 at once), runs shell commands with
the run's identity in the environment, and reports to the report_url it was
given: first "running", then the outcome.

Nothing a run starts outlives it, nor this worker: each command runs in a
process group of its own, led by a small guard shell. Cancel and timeout kill
the whole group (the report keeps what the run printed), and the kernel tells
the guard when this worker dies, even by kill -9 (PR_SET_PDEATHSIG), and the
guard then kills the group. A process that leaves the group on purpose
(setsid, a daemon) escapes; native workers (aisched --roles worker) also
contain those.

    python3 worker.py --server http://127.0.0.1:8080 --id py-1 --port 0 \
        --label zone=eu --max-load 4

With --port 0 it picks a free port and prints "listening on PORT".
"""
import argparse
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


# Linux: resolved before any fork, so the child only calls into it.
_LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1

# The run's first process: it leads the run's process group, runs the command
# as its child and, on SIGTERM (sent by the kernel when the worker dies, see
# _guard_setup) kills the whole group, itself included.
GUARD = 'trap "kill -KILL 0" TERM HUP INT; /bin/sh -c "$1" & wait $!'


def _guard_setup(worker_pid):
    """In the child, before exec: SIGTERM when the worker's thread that started
    it dies; and if the worker is already gone, no run at all."""
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != worker_pid:
        os._exit(137)


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def now_rfc3339():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def post(url, doc, timeout=10, credential=None):
    headers = {"Content-Type": "application/json"}
    if credential:
        headers["X-Worker-Credential"] = credential
    req = urllib.request.Request(url, data=json.dumps(doc).encode(), method="POST",
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError as e:
        return 0, str(e).encode()


def parse_duration(text):
    total, num = 0.0, ""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    i = 0
    while i < len(text):
        if text[i].isdigit():
            num += text[i]
            i += 1
            continue
        unit = "ms" if text[i:i + 2] == "ms" else text[i]
        total += int(num or 0) * units.get(unit, 0)
        num = ""
        i += len(unit)
    return total or 3600


class Worker:
    def __init__(self, args):
        self.args = args
        self.seen = {}  # (instance_id, attempt) -> True: a duplicate delivery runs once
        self.lock = threading.Lock()
        self.load = 0
        self.running = {}  # instance_id -> Popen of its guard (the process group's id)
        self.cancelled = set()  # instance ids told to cancel while they run
        # Issued by the node at registration; heartbeats and reports carry it.
        self.credential = None

    def registration(self, port):
        labels = dict(kv.split("=", 1) for kv in self.args.label)
        return {"id": self.args.id, "callback_url": f"http://127.0.0.1:{port}",
                "labels": labels, "max_load": self.args.max_load}

    def keep_registered(self, port):
        doc = self.registration(port)
        registered = False
        while True:
            if not registered:
                status, body = post(self.args.server + "/api/v1/workers", doc)
                registered = status == 201
                if registered:
                    self.credential = json.loads(body)["credential"]
            else:
                status, _ = post(f"{self.args.server}/api/v1/workers/{self.args.id}/heartbeat",
                                 {"load": self.load}, credential=self.credential)
                registered = status == 200
            time.sleep(self.args.heartbeat if registered else 0.5)

    def run(self, job):
        report_url = job["report_url"]
        started = now_rfc3339()
        post(report_url, {"worker_id": self.args.id, "attempt": job["attempt"], "state": "running",
                          "started_at": started}, credential=self.credential)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin",
               "IDEMPOTENCY_KEY": job["idempotency_key"],
               "SHARD_NO": str(job["shard"]), "SHARD_TOTAL": str(job["shards"]),
               "SCHEDULE_INSTANCE_ID": job["instance_id"], "ATTEMPT": str(job["attempt"]),
               "TRACE_ID": job["trace_id"], "TASK_ID": str(job["task_id"])}
        # Event values: the command refers to them as $AISCHED_EVENT_... variables.
        env.update({k: v for k, v in job.get("env", {}).items() if k.startswith("AISCHED_EVENT_")})
        state, code, output, error = "success", 0, "", ""
        try:
            if job["kind"] == "noop":
                pass
            elif job["kind"] == "shell":
                state, code, output, error = self.run_shell(job, env)
            else:
                state, code, error = "failed", -1, f"kind {job['kind']} not supported here"
        except OSError as e:
            state, code, error = "failed", -1, f"cannot start the command: {e}"
        # Report until the node takes it (it acknowledges duplicates without change).
        doc = {"worker_id": self.args.id, "attempt": job["attempt"], "state": state,
               "exit_code": code, "output": output,
               "error": error, "started_at": started, "finished_at": now_rfc3339()}
        for _ in range(60):
            # A new leader issues new credentials: after re-registering, the
            # report goes out with the new one (403 until then).
            status, _ = post(report_url, doc, credential=self.credential)
            if status in (200, 404, 409):
                break
            time.sleep(0.5)
        with self.lock:
            self.load -= 1

    def run_shell(self, job, env):
        """Runs the command in a process group of its own; returns (state, exit
        code, output tail, error). A cancel or timeout kills the group and keeps
        what the run printed until then."""
        iid = job["instance_id"]
        p = subprocess.Popen(["/bin/sh", "-c", GUARD, "aisched-run", job["command"]], env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True,
                             preexec_fn=lambda pid=os.getpid(): _guard_setup(pid))
        with self.lock:
            self.running[iid] = p
        chunks = []
        reader = threading.Thread(
            target=lambda: chunks.extend(iter(lambda: p.stdout.read1(8192), b"")), daemon=True)
        reader.start()
        timed_out = False
        try:
            p.wait(timeout=parse_duration(job["timeout"]))
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(p.pid)
            p.wait()
        kill_group(p.pid)  # whatever the command left running in its group
        reader.join(2)  # a process that left the group may hold the pipe: not waited for
        with self.lock:
            self.running.pop(iid, None)
            cancelled = iid in self.cancelled
            self.cancelled.discard(iid)
        output = b"".join(chunks)[-16384:].decode(errors="replace")
        code = p.returncode if p.returncode >= 0 else 128 - p.returncode
        if cancelled:
            return "failed", code, output, "cancelled"
        if timed_out:
            return "timed_out", code, output, f"timed out after {job['timeout']}"
        if code != 0:
            return "failed", code, output, f"exit status {code}"
        return "success", 0, output, ""

    def cancel(self, instance_id):
        with self.lock:
            p = self.running.get(instance_id)
            if p is not None:
                self.cancelled.add(instance_id)
                kill_group(p.pid)

    def handler(self):
        worker = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path == "/internal/tasks/execute":
                    job = json.loads(body)
                    key = (job["instance_id"], job["attempt"])
                    with worker.lock:
                        fresh = key not in worker.seen
                        worker.seen[key] = True
                        if fresh:
                            worker.load += 1
                    self.send_response(202)
                    self.end_headers()
                    if fresh:
                        threading.Thread(target=worker.run, args=(job,), daemon=True).start()
                elif self.path == "/internal/tasks/cancel":
                    worker.cancel(json.loads(body).get("instance_id", ""))
                    self.send_response(202)
                    self.end_headers()
                else:
                    self.send_response(404)
                    self.end_headers()

        return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--id", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--max-load", type=int, default=4)
    ap.add_argument("--heartbeat", type=float, default=2.0)
    args = ap.parse_args()
    w = Worker(args)
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), w.handler())
    port = srv.server_address[1]
    print(f"listening on {port}", flush=True)
    threading.Thread(target=w.keep_registered, args=(port,), daemon=True).start()
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
