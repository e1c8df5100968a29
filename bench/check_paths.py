#!/usr/bin/env python3
"""Checks that every path cited as bench/results/... or docs/gpu-runs/... in the repository's
.md, .rs, .py and .sh files (and ../<run> links inside bench/results) exists in the tree; one
cited as <commit>:<path> must exist at that commit.
Run from the repository root: python3 bench/check_paths.py. Exit 1 and one line per missing
path if any."""
import glob, os, re, subprocess, sys

PAT = re.compile(r"(?:([0-9a-f]{7,40}):)?((?:bench/results|docs/gpu-runs)/[A-Za-z0-9._/*{},<>-]*)")
REL = re.compile(r"\.\./(20\d\d-\d\d-\d\d-[A-Za-z0-9._-]+)")

def exists(p):
    p = p.rstrip(".,;:)`'\"")
    if "<" in p:  # a placeholder such as bench/results/<date>-<gpu>/
        return True
    m = re.search(r"\{([^}]*)\}", p)
    if m:  # a {x,y} list: every alternative
        return all(exists(p[:m.start()] + a + p[m.end():]) for a in m.group(1).split(","))
    p = p.split("{")[0]
    if "*" in p:
        return bool(glob.glob(p))
    return os.path.exists(p)

files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True,
                       text=True, check=True).stdout.split()
missing, cited = [], 0
for f in files:
    if not f.endswith((".md", ".rs", ".py", ".sh")) or not os.path.isfile(f):
        continue
    for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
        for m in PAT.finditer(line):
            cited += 1
            commit, path = m.group(1), m.group(2)
            if commit and "<" not in path:  # <commit>:<path>, a file kept in git only: it must exist at that commit
                ok = subprocess.run(["git", "cat-file", "-e", f"{commit}:{path.rstrip('.,;:)`')}"],
                                    capture_output=True).returncode == 0
            else:
                ok = exists(path)
            if not ok:
                missing.append(f"{f}:{n}: {m.group(0)}")
        if f.startswith("bench/results/"):
            for m in REL.finditer(line):
                cited += 1
                if not exists(os.path.join("bench/results", m.group(1))):
                    missing.append(f"{f}:{n}: ../{m.group(1)}")
print(f"{cited} cited paths checked, {len(missing)} missing")
print("\n".join(missing))
sys.exit(1 if missing else 0)
