"""Benchmark beside the peer library on the same inputs, in one process: prints ratios.

make bench PKG=flux
"""

from __future__ import annotations

import argparse

from paperplug_flux.embedded import load_data

from paperplug.harness import single_thread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    single_thread()
    load_data(args.seed)
    raise NotImplementedError("TODO: the method beside the peer; harness.table of the ratios")


if __name__ == "__main__":
    main()
