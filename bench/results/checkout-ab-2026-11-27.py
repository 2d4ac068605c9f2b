#!/usr/bin/env python3
"""Interleaved A/B of vcs-compare's "check out" row: per round and binary a fresh server root
and workspace on FS; import the tree (not timed), then time `keel workspace create` and `keel
sync` separately (wall, client CPU from rusage, server CPU from /proc/PID/stat); `tar -x` of
the same tree once per round as the floor. Prints one JSON line per sample and a summary.

Usage: checkout-ab-2026-11-27.py --fs DIR --size 3400|70000 --pairs N LABEL=BINARY...
"""
import argparse, importlib.machinery, importlib.util, json, os, resource, shutil, statistics
import subprocess, sys, tarfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
loader = importlib.machinery.SourceFileLoader(
    "vcs", os.path.join(HERE, "..", "..", "scripts", "vcs-compare"))
spec = importlib.util.spec_from_loader("vcs", loader)
vcs = importlib.util.module_from_spec(spec)
loader.exec_module(vcs)
TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def one(binary, base, tree, files):
    os.makedirs(base)
    root, wc_a, wc_b = (os.path.join(base, n) for n in ("server", "wc-a", "wc-b"))
    log = open(os.path.join(base, "serve.log"), "w")
    proc = subprocess.Popen([binary, "serve", "--root", root, "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        addr = proc.stdout.readline().split("listening on ")[1].split()[0]
        def keel(args, cwd, ws):
            env = dict(os.environ, KEEL_SERVER=addr, KEEL_USER="bench", KEEL_WORKSPACE=ws)
            subprocess.run([binary, "-q"] + args, cwd=cwd, env=env, check=True,
                           stdout=subprocess.DEVNULL)
        os.makedirs(wc_b)
        keel(["workspace", "create", "wsb", "--root", wc_b, "--view", "//depot/... //wsb/..."],
             wc_b, "wsb")
        shutil.copytree(tree, os.path.join(wc_b, "main"))
        keel(["add", "..."], wc_b, "wsb")
        keel(["submit", "-d", "import"], wc_b, "wsb")
        os.makedirs(wc_a)
        r = {}
        for key, args in (("create", ["workspace", "create", "wsa", "--root", wc_a, "--view",
                                      "//depot/... //wsa/..."]), ("sync", ["sync"])):
            s0, c0, t0 = proc_cpu(proc.pid), children_cpu(), time.perf_counter()
            keel(args, wc_a, "wsa")
            r[key] = time.perf_counter() - t0
            r[f"client_{key}"] = children_cpu() - c0
            r[f"server_{key}"] = proc_cpu(proc.pid) - s0
        n = vcs.count_files(os.path.join(wc_a, "main"))
        assert n == files, f"{binary} checked out {n} of {files} files"
        return r
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(base)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fs", required=True)
    ap.add_argument("--size", default="3400")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("sides", nargs="+")
    a = ap.parse_args()
    sides = [s.split("=", 1) for s in a.sides]
    files, total, _ = vcs.SIZES[a.size]
    work = os.path.join(a.fs, f"checkout-ab-{os.getpid()}")
    os.makedirs(work)
    samples = {label: [] for label, _ in sides}
    floors = []
    load = [os.getloadavg()[0]]
    try:
        tree = os.path.join(work, "tree")
        vcs.generate_tree(tree, files, total, 1)
        tar = os.path.join(work, "tree.tar")
        with tarfile.open(tar, "w") as tf:
            tf.add(tree, arcname=".")
        for p in range(a.pairs):
            out = os.path.join(work, "tar-x")
            os.makedirs(out)
            t0 = time.perf_counter()
            subprocess.run(["tar", "-xf", tar, "-C", out], check=True)
            floors.append(time.perf_counter() - t0)
            shutil.rmtree(out)
            # The order alternates: a side that always ran second would inherit the first's
            # writeback.
            for label, binary in (sides if p % 2 == 0 else sides[::-1]):
                r = one(binary, os.path.join(work, f"{p}-{label}"), tree, files)
                r.update(pair=p, side=label, load=os.getloadavg()[0])
                load.append(r["load"])
                print(json.dumps(r), flush=True)
                samples[label].append(r)
    finally:
        shutil.rmtree(work)
    fmt = lambda xs: f"{statistics.median(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})"
    print(f"# fs {a.fs}, size {a.size}, {a.pairs} pairs, load {min(load):.2f}-{max(load):.2f}; "
          f"tar -x {fmt(floors)}")
    for label, rs in samples.items():
        print(f"# {label}: " + ", ".join(f"{k} {fmt([r[k] for r in rs])}" for k in
              ("sync", "client_sync", "server_sync", "create", "client_create",
               "server_create")))


main()
