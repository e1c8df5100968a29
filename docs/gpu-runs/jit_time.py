"""What a first launch waits for: the driver's JIT compile of each PTX file under DIR, timed.

Run with CUDA_CACHE_DISABLE=1 (the driver's disk cache off, as on a machine that never ran the
kernel): each file is loaded with cuModuleLoadData, which compiles every entry in it for this GPU,
then unloaded. Prints one line per file (bytes, entries, seconds) and the total.
  usage: CUDA_CACHE_DISABLE=1 python3 jit_time.py DIR
"""

import os
import sys
import time
from pathlib import Path

import cupy
from cupy.cuda import driver


def main(root: Path) -> None:
    if os.environ.get("CUDA_CACHE_DISABLE") != "1":
        print("note: CUDA_CACHE_DISABLE is not 1: a cached compile may be measured")
    cupy.zeros(1)  # a context on device 0
    total = 0.0
    for path in sorted(root.rglob("*.ptx")):
        text = path.read_bytes()
        entries = text.count(b".entry ")
        start = time.perf_counter()
        module = driver.moduleLoadData(text)
        seconds = time.perf_counter() - start
        driver.moduleUnload(module)
        total += seconds
        print(f"{path.relative_to(root)}\t{len(text)} bytes\t{entries} entries\t{seconds:.3f} s")
    print(f"total\t{total:.2f} s")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
