#!/usr/bin/env python3
"""Validate every trace's PTX with the real `ptxas -arch=sm_52`.

Token instructions (ssy/sync/preBrk/brk/break/preRet) are not real PTX, so for files that contain
them a copy is checked in which `ssy L;`, `preBrk L;`, `preRet L;` and `sync;` are deleted and
`brk;`/`break;` becomes `exit;` (same guard).  That still checks every declaration, register,
label, type and operand of the rest of the file.  Token-free files are checked as they are.

    pip install nvidia-cuda-nvcc-cu12      # provides site-packages/nvidia/cuda_nvcc/bin/ptxas
    python3 traces/semantics/ptxas_check.py
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def find_ptxas():
    p = shutil.which("ptxas")
    if p:
        return p
    try:
        import nvidia.cuda_nvcc as m
        for d in m.__path__:
            c = os.path.join(d, "bin", "ptxas")
            if os.path.exists(c):
                return c
    except ImportError:
        pass
    sys.exit("ptxas not found (pip install nvidia-cuda-nvcc-cu12)")


TOKEN_LINE = re.compile(r"^(\s*)(?:@!?%[\w$]+\s+)?(ssy|preBrk|preRet)\s+[\w$]+\s*;", re.M)
SYNC_LINE = re.compile(r"^(\s*)(?:@!?%[\w$]+\s+)?sync\s*;", re.M)
BRK = re.compile(r"^(\s*(?:@!?%[\w$]+\s+)?)(brk|break)\s*;", re.M)


def strip_tokens(src):
    n = 0
    for rx, rep in ((TOKEN_LINE, r"\1// token removed;"), (SYNC_LINE, r"\1// sync removed;"), (BRK, r"\1exit;")):
        src, k = rx.subn(rep, src)
        n += k
    return src, n


def main():
    ptxas = find_ptxas()
    files = sorted(glob.glob(os.path.join(HERE, "*", "*.ptx")))
    bad = 0
    with tempfile.TemporaryDirectory() as td:
        for f in files:
            src, n = strip_tokens(open(f).read())
            tmp = os.path.join(td, os.path.basename(f))
            open(tmp, "w").write(src)
            r = subprocess.run([ptxas, "-arch=sm_52", tmp, "-o", os.devnull], capture_output=True, text=True)
            msgs = [l for l in (r.stdout + r.stderr).splitlines() if "deprecated" not in l]
            status = "ok" if r.returncode == 0 else "FAIL"
            bad += r.returncode != 0
            print(f"{status:4} {os.path.relpath(f, HERE)}{f'  ({n} token instructions stripped)' if n else ''}")
            for l in msgs:
                print("     " + l.replace(td + "/", ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
