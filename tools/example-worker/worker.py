#!/usr/bin/env python3
"""A complete external aisched worker in one file (Python 3 standard library only).

It registers with a node, keeps itself online with heartbeats (re-registering
when the node does not know it, e.g. after a leader change), accepts runs on
POST /internal/tasks/execute (answering 202 at once), runs shell commands with
the run's identity in the environment, and reports to the report_url it was
given: first "running", then the outcome.

    python3 worker.py --server http://127.0.0.1:8080 --id py-1 --port 0 \
        --label zone=eu --max-load 4

With --port 0 it picks a free port and prints "listening on PORT".
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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
                p = subprocess.run(["/bin/sh", "-c", job["command"]], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=parse_duration(job["timeout"]))
                code, output = p.returncode, p.stdout.decode(errors="replace")[-1024:]
                if code != 0:
                    state, error = "failed", f"exit status {code}"
            else:
                state, code, error = "failed", -1, f"kind {job['kind']} not supported here"
        except subprocess.TimeoutExpired:
            state, code, error = "timed_out", -1, "timed out"
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
