#!/usr/bin/env python3
"""Re-run every `$ bufcache ...` example in docs/cli.md and README.md and paste its real output.

Usage: cargo build --release && scripts/refresh-cli-docs.py [FILE...]

A code block is rewritten when its first line starts with `$ bufcache`; lines up to the
next `$ ` line or the closing fence are replaced by what the command prints (stdout and
stderr, as a user sees them). Commands run from a scratch directory next to the project
so that relative paths such as ../shared/traces resolve as in the docs.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "bufcache")


def run(command, cwd):
    args = shlex.split(command)
    args[0] = BINARY
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)
    return (done.stdout + done.stderr).rstrip("\n").splitlines()


def refresh(path, cwd):
    lines = open(path).read().split("\n")
    out, i, in_block = [], 0, False
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_block = not in_block
            out.append(line)
            i += 1
            continue
        if in_block and line.startswith("$ bufcache"):
            out.append(line)
            out.extend(run(line[2:], cwd))
            i += 1
            while i < len(lines) and not lines[i].startswith("$ ") and not lines[i].startswith("```"):
                i += 1
            continue
        out.append(line)
        i += 1
    open(path, "w").write("\n".join(out))


def main():
    files = sys.argv[1:] or [os.path.join(ROOT, "docs", "cli.md"), os.path.join(ROOT, "README.md")]
    # a sibling scratch dir, so that ../shared/traces means the same as from the project root
    with tempfile.TemporaryDirectory(dir=os.path.dirname(ROOT)) as scratch:
        # the shipped scenarios, reachable as in the docs (`scenarios/...`)
        os.symlink(os.path.join(ROOT, "scenarios"), os.path.join(scratch, "scenarios"))
        for f in files:
            if os.path.exists(f):
                refresh(f, scratch)


if __name__ == "__main__":
    main()
