#!/usr/bin/env python3
"""No include circles: reads every #include "..." in src/ and ui/ and fails on any cycle
between files.

A .c file is never included, so a circle between files runs through the files of one
module: foo.c and foo.h are one module (foo.c includes foo.h first, by the style), and a header
of foo's own parts — foo_*.h beside foo.c, which includes foo.h and which foo.c includes
(filter_internal.h, body_internal.h, replay_run.h, restamp_kit.h) — is part of foo too. A circle is module A's files including a
header of module B while B's files include one of A's, directly or through others: the shape
that makes two modules one in all but name, which the layers alone do not catch within a layer
(filter <-> groups, before error_fingerprint had a header of its own; decode <-> dialect,
before the helpers that write into struct decoded left dialect.c).

KNOWN lists the circles that are known and not yet broken, each with why: they are reported
but do not fail; a circle not in it fails, and a known one that is gone is said, to be taken
off the list.

usage: circles.py ROOT   (the source tree: ROOT/src/*/ and ROOT/ui/)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


# Circles known and not broken yet (sorted member lists), and why.
KNOWN = {
    ("ui/app", "ui/job", "ui/source", "ui/term", "ui/ui"): "struct app (ui.h) is one object "
    "written in four files — app.c its loop and views, job.c its jobs, source.c its source, "
    "term.c its screen — so ui.h includes job.h and source.h for the parts it holds and each "
    "of those files includes ui.h: parts of one module, not layers (src/ has no circle)",
}


def module(path, stems, private):
    """A file's module: its directory and its stem, or foo for a private header of foo
    (private: the headers found to be one)."""
    d, name = os.path.split(os.path.splitext(path)[0])
    return private.get(path, os.path.join(d, name))


def includes(path, header):
    """Whether the file at path has #include "header"."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return header in INCLUDE.findall(fh.read())


def private_headers(root, files, stems):
    """Each header foo_*.h whose longest foo has a foo.c beside it that includes it, and that
    includes foo.h itself -> foo's module."""
    out = {}
    for f in files:
        rel = os.path.relpath(f, root)
        d, name = os.path.split(os.path.splitext(rel)[0])
        if not rel.endswith(".h") or "_" not in name:
            continue
        parts = name.split("_")
        for k in range(len(parts) - 1, 0, -1):
            base = "_".join(parts[:k])
            if base in stems.get(d, ()):
                impl = os.path.join(root, d, base + ".c")
                if os.path.isfile(impl) and includes(f, base + ".h") and includes(impl, name + ".h"):
                    out[rel] = os.path.join(d, base)
                break
    return out


def graph(root):
    """Module -> the modules its files include (headers found in the tree by name)."""
    files = []
    for top in ("src", "ui"):
        for d, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(d, n) for n in names if n.endswith((".c", ".h"))]
    stems = {}
    for f in files:
        rel = os.path.relpath(f, root)
        stems.setdefault(os.path.dirname(rel), set()).add(
            os.path.splitext(os.path.basename(rel))[0])
    private = private_headers(root, files, stems)
    by_name = {}
    for f in files:
        if f.endswith(".h"):
            by_name.setdefault(os.path.basename(f), []).append(f)
    edges = {}
    for f in files:
        m = module(os.path.relpath(f, root), stems, private)
        edges.setdefault(m, set())
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            target = os.path.normpath(os.path.join(os.path.dirname(f), inc))
            if not os.path.isfile(target):
                found = by_name.get(os.path.basename(inc), [])
                if not found:
                    continue  # a system header spelled with quotes, or generated
                # the one in the same directory first, else the only one
                same = [t for t in found if os.path.dirname(t) == os.path.dirname(f)]
                target = (same or found)[0]
            tm = module(os.path.relpath(target, root), stems, private)
            if tm != m:
                edges[m].add(tm)
    return edges


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def path_in(comp, edges):
    """One circle through the component, for the message: a -> b -> ... -> a."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v] & members):
            if w == start:
                chain = [v]
                while prev[chain[-1]] is not None:
                    chain.append(prev[chain[-1]])
                return list(reversed(chain)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    edges = graph(argv[1])
    found = cycles(edges)
    bad = 0
    for comp in found:
        way = " -> ".join(path_in(comp, edges))
        why = KNOWN.get(tuple(comp))
        if why:
            print("circles: known: %s (%s)" % (way, why))
        else:
            print("circles: includes go round: " + way)
            bad += 1
    for comp in sorted(set(KNOWN) - {tuple(c) for c in found}):
        print("circles: %s is no longer a circle: take it off KNOWN" % " <-> ".join(comp))
    if bad:
        print("circles: %d include circle(s); move what both need down (a header of its own, "
              "or the lower layer)" % bad)
        return 1
    print("circles: %d modules, no include circle but the known ones" % len(edges))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
