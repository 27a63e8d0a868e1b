#!/usr/bin/env python3
"""How aisched is installed, checked the way an operator would deploy it:
`cmake --install` into a temporary root (DESTDIR) puts the binaries, the systemd
units, the example configuration and the docs where Debian keeps them; the
installed node binary runs; the units pass `systemd-analyze verify` (when this
machine has systemd) with no warning; and `cpack -G DEB` builds a package that
holds the same files, marks the configuration as conffiles and depends on the
shared libraries the binaries use.

usage: check_package.py BUILD_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile

EXPECTED = [
    "usr/bin/aisched", "usr/bin/aischedctl", "usr/bin/aisched-inspect", "usr/bin/aisched-load",
    "usr/libexec/aisched/aisched-supervisor",  # where usr/bin/aisched looks for it
    "usr/lib/systemd/system/aisched.service", "usr/lib/systemd/system/aisched-worker.service",
    "etc/aisched/aisched.conf", "etc/aisched/aisched-worker.conf",
    "usr/share/doc/aisched/README.md", "usr/share/doc/aisched/SECURITY.md",
]
HARDENING = ["NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "ProtectHome=yes"]


def run(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"FAILED: {' '.join(args)} (exit {r.returncode})\n{r.stdout}\n{r.stderr}")
    return r


def main():
    build = os.path.abspath(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory(prefix="aisched-package-") as tmp:
        root = os.path.join(tmp, "root")
        run(["cmake", "--install", build, "--prefix", "/usr"], env={**os.environ, "DESTDIR": root})
        for f in EXPECTED:
            if not os.path.isfile(os.path.join(root, f)):
                failures.append(f"not installed: /{f}")
        node = os.path.join(root, "usr/bin/aisched")
        if os.path.isfile(node):
            v = run([node, "--version"])
            if "aisched" not in v.stdout:
                failures.append(f"the installed node does not run: {v.stdout!r}")
        for unit in ("aisched.service", "aisched-worker.service"):
            path = os.path.join(root, "usr/lib/systemd/system", unit)
            if not os.path.isfile(path):
                continue
            text = open(path).read()
            # The scheduler runs as a user of its own; the worker starts as root
            # only to give every run an unprivileged one.
            if unit == "aisched.service" and "DynamicUser=yes" not in text:
                failures.append(f"{unit}: not its own user (DynamicUser=yes)")
            for h in HARDENING:
                if h not in text:
                    failures.append(f"{unit}: missing {h}")
            if shutil.which("systemd-analyze"):
                # verify checks ExecStart's binary: point it at the installed one.
                local = os.path.join(tmp, unit)
                open(local, "w").write(text.replace("/usr/bin/aisched", node))
                r = subprocess.run(["systemd-analyze", "verify", "--man=no", local],
                                   capture_output=True, text=True)
                if r.returncode != 0 or r.stderr.strip() or r.stdout.strip():
                    failures.append(f"{unit}: systemd-analyze verify: {r.stdout}{r.stderr}")
            else:
                print(f"{unit}: systemd-analyze not on this machine, unit syntax not verified")

        out = os.path.join(tmp, "deb")
        run(["cpack", "-G", "DEB", "-B", out, "--config", os.path.join(build, "CPackConfig.cmake")])
        debs = [f for f in os.listdir(out) if f.endswith(".deb")]
        if len(debs) != 1:
            failures.append(f"cpack made {debs}, not one .deb")
        else:
            deb = os.path.join(out, debs[0])
            listing = run(["dpkg-deb", "-c", deb]).stdout
            for f in EXPECTED:
                if f"./{f}" not in listing:
                    failures.append(f"not in the package: /{f}")
            conffiles = run(["dpkg-deb", "-I", deb, "conffiles"]).stdout.split()
            for c in ("/etc/aisched/aisched.conf", "/etc/aisched/aisched-worker.conf"):
                if c not in conffiles:
                    failures.append(f"not a conffile (an upgrade would overwrite it): {c}")
            depends = run(["dpkg-deb", "-f", deb, "Depends"]).stdout
            for lib in ("libcaf-core", "libboost-json"):  # RocksDB is linked statically
                if lib not in depends:
                    failures.append(f"Depends misses {lib}: {depends.strip()}")
            print(f"{debs[0]}: {os.path.getsize(deb) // 1024} KiB; Depends: {depends.strip()}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
