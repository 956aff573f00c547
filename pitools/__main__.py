from __future__ import annotations

from pitools.cli import console_main

if __name__ == "__main__":
    console_main()
