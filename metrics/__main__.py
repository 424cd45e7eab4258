"""The installed metrics from a shell (``evaluate-text-metrics`` or ``python -m evaluate_text_metrics``).

    evaluate-text-metrics list                       # every metric
    evaluate-text-metrics path sacrebleu             # its folder, for evaluate.load
    evaluate-text-metrics space sacrebleu chrf -o spaces/ [--slug NAME]
                                                     # Hugging Face Space folders, ready to upload
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import names, path
from .hub import write_space


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="evaluate-text-metrics", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="print every metric's name")
    path_command = commands.add_parser("path", help="print a metric's folder")
    path_command.add_argument("name")
    space = commands.add_parser("space", help="write Hugging Face Space folders for metrics (nothing is uploaded)")
    space.add_argument("names", nargs="+", metavar="name")
    space.add_argument("-o", "--output", required=True, help="folder to write <slug>/ folders into")
    space.add_argument("--slug", help="the Space's name, for one metric (default: the metric's name)")
    arguments = parser.parse_args(argv)
    try:
        if arguments.command == "list":
            print("\n".join(names()))
        elif arguments.command == "path":
            print(path(arguments.name))
        else:
            if arguments.slug is not None and len(arguments.names) != 1:
                parser.error("--slug names the Space of one metric")
            for name in arguments.names:
                print(write_space(name, arguments.output, arguments.slug))
    except ValueError as error:
        print(f"evaluate-text-metrics: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
