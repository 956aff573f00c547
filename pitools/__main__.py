from __future__ import annotations

from pitools.cli import main

if __name__ == "__main__":
    main()
