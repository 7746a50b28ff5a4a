"""Embedded default: offline, CPU, a few minutes; prints a results table."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    raise NotImplementedError("TODO")


if __name__ == "__main__":
    raise SystemExit(main())
