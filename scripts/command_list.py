"""Print the README's list of supported commands, from the command table.

    python scripts/command_list.py            # print the markdown block
    python scripts/command_list.py --write    # rewrite it inside README.md

A unit test checks that README.md holds exactly what this prints, so the
list cannot drift from the code.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tidelog.persistence  # noqa: F401  (registers SAVE, BGSAVE, ... beside the others)
import tidelog.replication  # noqa: F401  (registers REPLCONF, PSYNC, WAIT, ROLE ...)
from tidelog.commands.table import COMMANDS

GROUP_TITLES = [
    ("stream", "Streams"), ("string", "Strings"), ("bitmap", "Bitmaps"), ("hash", "Hashes"),
    ("list", "Lists"),
    ("set", "Sets"), ("sorted_set", "Sorted sets"), ("geo", "Geo"),
    ("hyperloglog", "HyperLogLog"), ("array", "Arrays"), ("generic", "Keys"),
    ("pubsub", "Pub/Sub"), ("transactions", "Transactions"), ("scripting", "Scripting"),
    ("connection", "Connection"),
    ("server", "Server"),
    ("cluster", "Cluster"),
]
BEGIN, END = "<!-- commands:begin -->", "<!-- commands:end -->"
README = Path(__file__).resolve().parent.parent / "README.md"


def command_list() -> str:
    titled = {group for group, _ in GROUP_TITLES}
    untitled = sorted({spec.group for spec in COMMANDS.values()} - titled)
    assert not untitled, f"command groups without a title here: {untitled}"
    lines = []
    for group, title in GROUP_TITLES:
        names = []
        for name, spec in sorted(COMMANDS.items()):
            if spec.group != group:
                continue
            if spec.subcommands:
                subs = " ".join(sorted(s.upper() for s in spec.subcommands))
                names.append(f"`{name.upper()}` ({subs})")
            else:
                names.append(f"`{name.upper()}`")
        if names:
            lines.append(f"- **{title}**: " + ", ".join(names))
    return "\n".join(lines)


def readme_with_list(text: str) -> str:
    block = f"{BEGIN}\n{command_list()}\n{END}"
    return re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda m: block, text, flags=re.S)


if __name__ == "__main__":
    if "--write" in sys.argv:
        README.write_text(readme_with_list(README.read_text()))
    else:
        print(command_list())
