#!/usr/bin/env python3
"""Expected buffers of its_collectives (see the .ptx header): every collective of the if/else
runs once for the whole warp, each lane with the operands of its own side's instruction.

    python3 traces/policies/its_collectives/its_collectives.py          # compare with the manifest
    python3 traces/policies/its_collectives/its_collectives.py --print  # print the values
"""
import os
import sys

import yaml

LANES = range(32)


def i32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def expected():
    then = [lane < 16 for lane in LANES]
    # the value each lane's own shfl instruction supplies as its source operand
    src = [3 * lane + 1 + (0 if then[lane] else 1000) for lane in LANES]
    shfl = [src[lane ^ 16] for lane in LANES]
    # each lane's own vote predicate: THEN odd lanes, ELSE lanes with lane % 4 == 0
    pred = [(lane & 1 == 1) if then[lane] else (lane % 4 == 0) for lane in LANES]
    ballot = sum(1 << lane for lane in LANES if pred[lane])
    match = [sum(1 << k for k in LANES if k & 3 == lane & 3) for lane in LANES]
    # the second ballot (of true): ELSE guards it with lane % 4 == 0; a guarded-off lane
    # neither votes nor receives the result (its register keeps -2)
    guard = [then[lane] or lane % 4 == 0 for lane in LANES]
    gballot = sum(1 << lane for lane in LANES if guard[lane])
    return {
        "shfl": shfl,
        "ballot": [i32(ballot)] * 32,
        "match": [i32(m) for m in match],
        "side": [1 if t else 2 for t in then],
        "gballot": [i32(gballot) if guard[lane] else -2 for lane in LANES],
    }


def main():
    exp = expected()
    if "--print" in sys.argv:
        for name, vals in exp.items():
            print(f"{name}: {vals}")
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "its_collectives.yaml")) as f:
        manifest = yaml.safe_load(f)
    bad = 0
    for check in manifest["checks"]:
        if check["values"] != exp[check["buffer"]]:
            print(f"{check['buffer']}: manifest {check['values']} != expected {exp[check['buffer']]}")
            bad += 1
    print("ok" if bad == 0 else f"{bad} buffer(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
