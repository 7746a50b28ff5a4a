"""Embedded default: offline, CPU, a few minutes; prints a results table and saves a figure."""

from __future__ import annotations

from paperplug.harness import demo_parser, single_thread
from paperplug_chunking.embedded import load_data


def main(argv: list[str] | None = None) -> int:
    args = demo_parser("chunking", __doc__).parse_args(argv)
    single_thread()
    load_data(args.seed)
    raise NotImplementedError("TODO: run the method, print harness.table(...), save_figure(...)")


if __name__ == "__main__":
    raise SystemExit(main())
