#!/usr/bin/env python3
"""aisched against BullMQ on this machine: the same three workloads, alternated.

    tools/bench/peers/run.py [--aisched build/runtime/aisched] [--rounds 3] [--only a,b,c]
                             [--members 3]

Installs what is missing (Debian's redis-server with apt-get, BullMQ and ioredis
with npm into --work-dir, default build/bench-peers, never into the tree),
and for each workload runs both, alternating which goes first, --rounds times,
each run on a fresh server of its own: a private redis-server on a free
loopback port in a temp dir (no RDB, no AOF: it never fsyncs), or one aisched
node with a temp data dir on free loopback ports (all roles, its built-in
worker, as `make run` starts it, with --slots and --node-args; with --members N,
N such nodes forming one group on loopback, the workloads sent to its leader):

  a. --burst-n jobs due at one instant: due -> last run finished
  b. --steady-n schedules every 1 s for --steady-duration s: start lateness
     p50/p99 (run started - due), missed, duplicates
  c. enqueue while working, no-op, end to end: runs/s, --bulk runs a request from
     --producers connections on both sides (aisched bulk enqueue, BullMQ addBulk)

and prints the medians and the ratio aisched/BullMQ. aisched is driven by
aisched-load, BullMQ by bullmq_bench.js beside this file. Traffic stays on
127.0.0.1; every wait has a deadline; on exit, error or a signal it stops what
it started, by pid, and removes its temp dir.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BULLMQ_VERSION = "6.7.0"
IOREDIS_VERSION = "5.11.1"

started = []  # every process this script started, stopped by pid at exit


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def stop_process(p, grace=10):
    if p.poll() is not None:
        return
    p.terminate()  # SIGTERM to this pid only
    try:
        p.wait(grace)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(5)


def stop_all():
    while started:
        stop_process(started.pop())


def on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def spawn(cmd, **kw):
    p = subprocess.Popen(cmd, **kw)
    started.append(p)
    return p


def run(cmd, timeout):
    """Runs cmd (ours, tracked), returns (exit code, stdout, stderr); killed at timeout."""
    p = spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_process(p, grace=5)
        out, err = p.communicate()
        err += f"\n(timed out after {timeout} s)"
    started.remove(p)
    return p.returncode, out, err


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(check, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what}: not ready after {seconds} s")


# -- what it needs -------------------------------------------------------------

def ensure_redis():
    exe = shutil.which("redis-server") or ("/usr/bin/redis-server"
                                            if os.path.exists("/usr/bin/redis-server") else None)
    if exe:
        return exe
    if os.geteuid() != 0:
        raise RuntimeError("redis-server is missing: apt-get install redis-server (as root)")
    log("installing Debian's redis-server (apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "redis-server"],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    return shutil.which("redis-server") or "/usr/bin/redis-server"


def ensure_bullmq(work_dir):
    mod = os.path.join(work_dir, "node_modules")
    if os.path.exists(os.path.join(mod, "bullmq", "package.json")) and \
       os.path.exists(os.path.join(mod, "ioredis", "package.json")):
        return mod
    if not shutil.which("npm"):
        raise RuntimeError("npm is missing: apt-get install nodejs npm (or run tools/bootstrap.sh)")
    os.makedirs(work_dir, exist_ok=True)
    log(f"installing bullmq@{BULLMQ_VERSION} ioredis@{IOREDIS_VERSION} into {mod} (npm)")
    subprocess.run(["npm", "install", "--prefix", work_dir, "--no-audit", "--no-fund",
                    "--no-save", f"bullmq@{BULLMQ_VERSION}", f"ioredis@{IOREDIS_VERSION}"],
                   check=True, stdout=subprocess.DEVNULL)
    return mod


# -- the two servers -----------------------------------------------------------

def redis_ping(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def peak_rss_mb(p):
    try:
        for line in open(f"/proc/{p.pid}/status"):
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024)
    except OSError:
        pass
    return None


def start_redis(exe, tmp):
    """A fresh redis-server in tmp; returns (process, port)."""
    port = free_port()
    d = os.path.join(tmp, "redis")
    os.makedirs(d)
    # No persistence at all: no RDB snapshots, no AOF, so nothing is fsynced.
    # noeviction is what BullMQ requires.
    p = spawn([exe, "--bind", "127.0.0.1", "--port", str(port), "--dir", d, "--save", "",
           "--appendonly", "no", "--maxmemory-policy", "noeviction", "--daemonize", "no",
           "--logfile", os.path.join(d, "redis.log")],
          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: redis_ping(port), 20, "redis-server")
    return p, port


def http(method, url, body=None, timeout=5):
    req = urllib.request.Request(url, method=method, data=body.encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read().decode()


def start_aisched(exe, tmp, node_args):
    """A fresh aisched node with its data dir in tmp; returns (process, URL)."""
    data = os.path.join(tmp, "aisched")
    logf = os.path.join(tmp, "aisched.log")
    with open(logf, "w") as f:
        p = spawn([exe, "--data-dir", data, "--http-addr", "127.0.0.1:0", "--cluster-addr",
               "127.0.0.1:0"] + node_args, stdout=f, stderr=subprocess.STDOUT)
    port = [None]
    pattern = re.compile(r'"msg":"http listening","addr":"127\.0\.0\.1:(\d+)"')

    def listening():
        m = pattern.search(open(logf).read())
        port[0] = int(m.group(1)) if m else None
        return port[0] is not None
    wait_for(listening, 60, f"aisched (log {logf})")
    url = f"http://127.0.0.1:{port[0]}"

    def healthy():
        try:
            return http("GET", url + "/healthz")[0] == 200
        except OSError:
            return False
    wait_for(healthy, 60, "aisched /healthz")
    # One JSON log line per transition would cost the node what BullMQ does not log.
    http("PUT", url + "/api/v1/admin/log-level", '{"level":"warn"}')
    return p, url


def start_aisched_group(exe, tmp, node_args, members):
    """`members` aisched nodes on loopback forming one group (--peers), each with
    its data dir in tmp; returns (processes, the leader's URL)."""
    cluster = [free_port() for _ in range(members)]
    ids = [f"n{i + 1}" for i in range(members)]
    peers = ",".join(f"{ids[i]}=127.0.0.1:{cluster[i]}" for i in range(members))
    procs, urls = [], []
    for i in range(members):
        logf = os.path.join(tmp, f"aisched-{ids[i]}.log")
        with open(logf, "w") as f:
            procs.append(spawn([exe, "--node-id", ids[i], "--peers", peers, "--data-dir",
                                os.path.join(tmp, ids[i]), "--http-addr", "127.0.0.1:0",
                                "--cluster-addr", f"127.0.0.1:{cluster[i]}"] + node_args,
                               stdout=f, stderr=subprocess.STDOUT))
    pattern = re.compile(r'"msg":"http listening","addr":"127\.0\.0\.1:(\d+)"')
    for i in range(members):
        logf = os.path.join(tmp, f"aisched-{ids[i]}.log")
        port = [None]

        def listening():
            m = pattern.search(open(logf).read())
            port[0] = int(m.group(1)) if m else None
            return port[0] is not None
        wait_for(listening, 60, f"aisched {ids[i]} (log {logf})")
        urls.append(f"http://127.0.0.1:{port[0]}")
    leader = [None]

    def elected():
        for url in urls:
            try:
                view = json.loads(http("GET", url + "/api/v1/cluster")[1])
            except (OSError, ValueError):
                continue
            if any(m.get("self") and m.get("role") == "leader" for m in view.get("members", [])):
                leader[0] = url
                return True
        return False
    wait_for(elected, 60, "a leader of the aisched group")

    def ready():  # every member: a leader known, caught up (/readyz)
        try:
            return all(http("GET", url + "/readyz")[0] == 200 for url in urls)
        except OSError:
            return False
    wait_for(ready, 60, "every member ready")
    for url in urls:
        http("PUT", url + "/api/v1/admin/log-level", '{"level":"warn"}')
    return procs, leader[0]


# -- the workloads -------------------------------------------------------------

def parse_report(code, out, err, who):
    try:
        r = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise RuntimeError(f"{who}: no JSON report (exit {code}):\n{out}\n{err[-2000:]}")
    r["exit_code"] = code
    if "warning:" in err:
        r["warnings"] = [l for l in err.splitlines() if l.startswith("warning:")]
    return r


def aisched_cmd(a, url, workload):
    load = [a.aisched_load, "--server", url, "-o", "json"]
    if workload == "a":
        return load + ["burst", "--n", str(a.burst_n), "--lead", str(a.lead),
                       "--concurrency", "16", "--keep-tasks"], a.lead + 300
    if workload == "b":
        return load + ["steady", "--n", str(a.steady_n), "--duration", str(a.steady_duration),
                       "--concurrency", "16"], a.steady_duration + 300
    if a.bulk == 0:  # one task per run, each due --due-ms after its create
        return load + ["throughput", "--duration", str(a.throughput_duration), "--n", "1000000",
                       "--backlog", str(a.backlog), "--due-ms", str(a.due_ms),
                       "--concurrency", "32", "--keep-tasks"], a.throughput_duration + 300
    # Bulk enqueue, as BullMQ's side does: batches of --bulk runs from --producers
    # connections (POST /api/v1/tasks/{id}/runs; BullMQ: addBulk).
    return load + ["throughput", "--duration", str(a.throughput_duration), "--n", "100000000",
                   "--backlog", str(a.backlog), "--bulk", str(a.bulk),
                   "--concurrency", str(a.producers), "--keep-tasks"], a.throughput_duration + 300


def bullmq_cmd(a, redis_port, workload):
    """The BullMQ side's command line and timeout."""
    node = ["node", os.path.join(HERE, "bullmq_bench.js")]
    common = ["--port", str(redis_port), "--concurrency", str(a.bullmq_concurrency)]
    if workload == "a":
        return node + ["burst"] + common + ["--n", str(a.burst_n), "--lead", str(a.lead)], \
            a.lead + 300
    if workload == "b":
        return node + ["steady"] + common + ["--n", str(a.steady_n), "--duration",
                                             str(a.steady_duration)], a.steady_duration + 300
    return node + ["throughput"] + common + ["--duration", str(a.throughput_duration),
                                             "--backlog", str(a.backlog),
                                             "--batch", str(a.bulk or 1000),
                                             "--producers", str(a.producers)], \
        a.throughput_duration + 300


# What each workload reports, per system: (label, unit, better, getter).
FIGURES = {
    "a": [("due -> last run finished", "ms", "lower", lambda r: r["all_done_after_ms"]),
          ("due -> last run started", "ms", "lower", lambda r: r["all_started_after_ms"]),
          ("start lateness p99", "ms", "lower", lambda r: r["start_lateness"]["p99_ms"])],
    "b": [("start lateness p50", "ms", "lower", lambda r: r["start_lateness"]["p50_ms"]),
          ("start lateness p99", "ms", "lower", lambda r: r["start_lateness"]["p99_ms"]),
          ("missed", "runs", "lower", lambda r: r["missed"]),
          ("duplicates", "runs", "lower", lambda r: r["duplicates"])],
    "c": [("end to end", "runs/s", "higher",
           lambda r: r.get("committed_per_s", r.get("jobs_per_s")))],
}
TITLES = {
    "a": "a. {burst_n} jobs due at one instant",
    "b": "b. {steady_n} schedules every 1 s for {steady_duration} s",
    "c": "c. enqueue while working, no-op ({throughput_duration} s, at most {backlog} in flight, {bulk} a request from {producers})",
}


def loadavg():
    return os.getloadavg()[0]


def measure(a, who, workload, tmp, exes):
    """One run of one system on a fresh server of its own, stopped afterwards."""
    os.makedirs(tmp)
    node_args = ["--worker-slots", str(a.slots)] + a.node_args.split()
    if who == "aisched" and a.members > 1:
        servers, url = start_aisched_group(exes["aisched"], tmp, node_args, a.members)
        cmd, timeout = aisched_cmd(a, url, workload)
    elif who == "aisched":
        server, url = start_aisched(exes["aisched"], tmp, node_args)
        servers = [server]
        cmd, timeout = aisched_cmd(a, url, workload)
    else:
        server, port = start_redis(exes["redis"], tmp)
        servers = [server]
        cmd, timeout = bullmq_cmd(a, port, workload)
    try:
        code, so, se = run(cmd, timeout)
        r = parse_report(code, so, se, who)
        r["server_peak_rss_mb"] = max((x for x in map(peak_rss_mb, servers) if x is not None),
                                      default=None)
        return r
    finally:
        for server in servers:
            stop_process(server)
            started.remove(server)
        shutil.rmtree(tmp, ignore_errors=True)


def one_round(a, workload, rnd, tmp, exes):
    order = ["aisched", "bullmq"] if rnd % 2 == 0 else ["bullmq", "aisched"]
    out = {}
    for who in order:
        env_load = loadavg()
        t0 = time.time()
        r = measure(a, who, workload, os.path.join(tmp, f"{workload}{rnd}-{who}"), exes)
        r["load_before"] = env_load
        r["wall_s"] = round(time.time() - t0, 1)
        out[who] = r
        shown = ", ".join(f"{label} {fmt(get(r))}" for label, _, _, get in FIGURES[workload])
        log(f"  round {rnd + 1} {who:7s} (load {env_load:.1f}): {shown}")
        for w in r.get("warnings", []):
            log(f"    {who}: {w}")
    return out


def fmt(x):
    if x is None:
        return "-"
    return f"{x:,.0f}".replace(",", " ") if abs(x) >= 100 else f"{x:.1f}".rstrip("0").rstrip(".")


def summary(a, results):
    lines = []
    head = f"{'workload':58s} {'BullMQ':>10s} {'aisched':>10s}  aisched/BullMQ"
    lines += [head, "-" * len(head)]
    for w in a.only:
        lines.append(TITLES[w].format(**vars(a)))
        for label, unit, better, get in FIGURES[w]:
            vals = {s: [get(r[s]) for r in results[w]] for s in ("bullmq", "aisched")}
            med = {s: statistics.median(v) for s, v in vals.items()}
            if med["bullmq"]:
                ratio = f"{med['aisched'] / med['bullmq']:.2f} ({better} is better)"
            else:
                ratio = "-"
            lines.append(f"  {label + ' (' + unit + ')':56s} {fmt(med['bullmq']):>10s} "
                         f"{fmt(med['aisched']):>10s}  {ratio}")
            lines.append(f"  {'':56s} {'/'.join(fmt(x) for x in vals['bullmq']):>10s} "
                         f"{'/'.join(fmt(x) for x in vals['aisched']):>10s}  (each round)")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--aisched", default=os.path.join(ROOT, "build/runtime/aisched"))
    p.add_argument("--aisched-load", default=os.path.join(ROOT, "build/tools/aisched-load/aisched-load"))
    p.add_argument("--work-dir", default=os.path.join(ROOT, "build/bench-peers"),
                   help="where npm installs BullMQ (a node_modules folder outside the tree)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", default="a,b,c", help="workloads to run, of a,b,c")
    p.add_argument("--burst-n", type=int, default=10000)
    p.add_argument("--lead", type=int, default=8, help="a: seconds from creating to the due instant")
    p.add_argument("--steady-n", type=int, default=1000)
    p.add_argument("--steady-duration", type=int, default=30, help="b: seconds (10 for a smoke run)")
    p.add_argument("--throughput-duration", type=int, default=20, help="c: seconds")
    p.add_argument("--backlog", type=int, default=20000, help="c: most runs in flight")
    p.add_argument("--due-ms", type=int, default=50,
                   help="c, aisched: each one-shot run is due this long after its create")
    p.add_argument("--bulk", type=int, default=1000,
                   help="c: runs per enqueue request on both sides (aisched bulk enqueue, BullMQ "
                        "addBulk); 0: aisched creates one one-shot task per run instead")
    # 4: with 2, each aisched producer waited for its answer all the time
    # (aisched-load says so: "the producers were always waiting"), so the
    # rate measured was 2 x bulk / one request's round trip, not the node's.
    p.add_argument("--producers", type=int, default=4,
                   help="c: enqueuing connections on both sides (enough that neither side's "
                        "rate is its producers' round trips)")
    p.add_argument("--slots", type=int, default=1000, help="aisched --worker-slots")
    p.add_argument("--members", type=int, default=1,
                   help="aisched: members of its group on loopback (each with its built-in "
                        "worker; the workloads go to the leader); BullMQ stays one Redis")
    p.add_argument("--bullmq-concurrency", type=int, default=100,
                   help="BullMQ Worker concurrency (its best of 10/100/1000 here: a Worker "
                        "fetches jobs one at a time, so at 1000 it first fetches 1000 in a "
                        "row before running one)")
    p.add_argument("--node-args", default="--dispatch-rate 0 --max-backlog 1000000",
                   help="more aisched flags (BENCHMARKS.md's benchmark settings)")
    p.add_argument("--json", help="also write every round's reports to this file")
    a = p.parse_args()
    a.only = [w.strip() for w in a.only.split(",") if w.strip()]
    if not a.only or any(w not in FIGURES for w in a.only) or a.rounds < 1:
        p.error("--only takes a,b,c; --rounds at least 1")
    for exe in (a.aisched, a.aisched_load):
        if not os.access(exe, os.X_OK):
            p.error(f"{exe}: not built (cmake --build build --target aisched aisched-load)")

    # SIGINT too: a background job can inherit it ignored, and Ctrl-C must still stop it all.
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    tmp = tempfile.mkdtemp(prefix="aisched-peers-")
    try:
        redis_exe = ensure_redis()
        mod = ensure_bullmq(os.path.abspath(a.work_dir))
        os.environ["NODE_PATH"] = mod
        exes = {"aisched": os.path.abspath(a.aisched), "redis": redis_exe}
        versions = {
            "aisched": subprocess.run([a.aisched, "--version"], capture_output=True,
                                      text=True).stdout.strip(),
            "redis": subprocess.run([redis_exe, "--version"], capture_output=True,
                                    text=True).stdout.split(" sha=")[0].strip(),
            "bullmq": json.load(open(os.path.join(mod, "bullmq", "package.json")))["version"],
            "node": subprocess.run(["node", "--version"], capture_output=True,
                                   text=True).stdout.strip(),
            "cpus": os.cpu_count(),
        }
        log(f"peers: {versions}")
        log("each run on a fresh server: aisched with its data dir, or redis-server "
            "(no RDB, no AOF, no fsync), in " + tmp)
        results = {}
        for w in a.only:
            log(TITLES[w].format(**vars(a)))
            results[w] = [one_round(a, w, rnd, tmp, exes) for rnd in range(a.rounds)]
        text = summary(a, results)
        print(f"aisched vs BullMQ {versions['bullmq']} ({versions['redis']}, no fsync), "
              f"{a.rounds} round(s), medians; {versions['cpus']} CPUs, load average "
              f"{loadavg():.1f} at the end" +
              (f"; aisched: a group of {a.members} on loopback" if a.members > 1 else ""))
        print(text)
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"versions": versions, "args": vars(a), "results": results}, f, indent=1)
        return 0
    except (RuntimeError, subprocess.CalledProcessError) as e:
        log(f"peers: {e}")
        return 1
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
