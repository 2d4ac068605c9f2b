#!/usr/bin/env python3
"""Small reads from 8 concurrent shells (vcs-compare's harness and tree), interleaved, for:
/bin/true; git's three reads on a bare repository; `keel`'s three reads (files, filelog -m 5,
fstat) and its fstat alone; `fstat` of each other keel build given (--keel NAME=PATH; with
--three-reads, its three reads too); and each
floor given (--floor NAME=PATH: ./small-read-floor/, tokio + tonic + the generated client making
the one Fstat call, nothing else). One server (KEEL, which also makes the three reads) serves
every Keel variant. Prints calls/s (median, range) and, for Keel, the server's CPU per call.

Usage: small-read-floor.py KEEL [--keel NAME=PATH]... [--floor NAME=PATH]...
                           [--rounds N] [--seconds S] [--files N] [--three-reads]
"""

import argparse
import importlib.machinery
import os
import shutil
import statistics
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "../../../.."))
vc = importlib.machinery.SourceFileLoader(
    "vcs_compare", os.path.join(REPO, "scripts/vcs-compare")).load_module()


class Commands:
    """A read-load variant: `make(i)` gives the commands for random file i."""

    def __init__(self, name, make, server=None):
        self.name, self.make, self.server = name, make, server

    def read_commands(self, wc, i):
        return self.make(i)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("keel")
    ap.add_argument("--keel", dest="builds", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--floor", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--files", type=int, default=3400)
    ap.add_argument("--three-reads", action="store_true",
                    help="also the three reads for each --keel build")
    a = ap.parse_args()
    base = tempfile.mkdtemp(prefix="small-read-floor.", dir="/dev/shm")
    try:
        tree = os.path.join(base, "tree")
        vc.generate_tree(tree, a.files, a.files * 7000, 1)
        git = vc.Git(os.path.join(base, "git"))
        git.import_tree(tree, os.path.join(base, "git-wc"))
        os.makedirs(os.path.join(base, "keel"))
        keel = vc.Keel(os.path.join(base, "keel"), os.path.abspath(a.keel))
        keel.import_tree(tree, os.path.join(base, "keel-wc"))
        os.environ.update(KEEL_SERVER=keel.addr, KEEL_USER="bench")
        k = [keel.binary, "-s", keel.addr, "-u", "bench"]
        dp = lambda i: f"//depot/main/{vc.rel_path(i)}"  # noqa: E731
        variants = [
            Commands("/bin/true", lambda i: [["/bin/true"]]),
            Commands("git (ls-tree, log -n 5, cat-file -s)",
                     lambda i: git.read_commands(None, i)),
            Commands("keel (files, filelog -m 5, fstat)",
                     lambda i: keel.read_commands(None, i), keel),
            Commands("keel fstat", lambda i: [k + ["fstat", dp(i)]], keel),
        ]
        for spec in a.builds:
            name, path = spec.split("=", 1)
            kb = [os.path.abspath(path)] + k[1:]
            variants.append(Commands(f"{name} fstat", lambda i, kb=kb: [kb + ["fstat", dp(i)]],
                                     keel))
            if a.three_reads:
                variants.append(Commands(
                    f"{name} (files, filelog -m 5, fstat)",
                    lambda i, exe=kb[0]: [[exe] + c[1:] for c in keel.read_commands(None, i)],
                    keel))
        for spec in a.floor:
            name, path = spec.split("=", 1)
            fb = [os.path.abspath(path)]
            variants.append(Commands(f"{name} fstat", lambda i, fb=fb: [fb + [dp(i)]], keel))
        for v in variants[3:]:  # each prints the file it was asked for
            out = vc.run(v.make(7)[0])
            vc.check(vc.rel_path(7) in out, f"{v.name} answered: {out!r}")
        rates = {v.name: [] for v in variants}
        server = {v.name: [] for v in variants}
        for r in range(a.rounds):
            order = variants[r % len(variants):] + variants[:r % len(variants)]
            for v in order:
                before = v.server.server_cpu() if v.server else None
                rate = vc.read_load(v, None, a.files, a.seconds, r)
                rates[v.name].append(rate)
                if v.server:
                    server[v.name].append(
                        (v.server.server_cpu() - before) / (rate * a.seconds) * 1000)
            print(f"round {r + 1}: " + ", ".join(f"{n} {x[-1]:.0f}" for n, x in rates.items()),
                  flush=True)
        print("\n| variant | calls/s, median (range) | server CPU ms/call |\n|---|---|---|")
        for v in variants:
            x, s = rates[v.name], server[v.name]
            srv = f"{statistics.median(s):.2f}" if s else "-"
            print(f"| {v.name} | {statistics.median(x):,.0f} ({min(x):,.0f}–{max(x):,.0f}) "
                  f"| {srv} |")
        keel.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
