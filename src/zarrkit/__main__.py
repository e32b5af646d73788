"""``python -m zarrkit``: the command line."""

from zarrkit.cli import main

if __name__ == "__main__":
    main(prog_name="zarrkit")
