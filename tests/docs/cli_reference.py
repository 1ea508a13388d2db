"""The command reference of docs/cli.md, from the programs' own --help.

    python3 tests/docs/cli_reference.py --bin build/bin            # exit 1 if docs/cli.md is out of date
    python3 tests/docs/cli_reference.py --bin build/bin --update   # write it

Every program rung installs (rung, rung-train, rung-data, rung-coordinator, rung-worker) and each of
their subcommands, found in the subcommand lists of the parent's --help, has its --help output in
the part of docs/cli.md between the BEGIN GENERATED and END GENERATED lines. The programs run from
PATH, so usage lines say `rung`, not a path (a program's --help names no default of the machine it runs
on: the reference is the same on every machine). ctest runs the check (tests/CMakeLists.txt); a new option or subcommand fails it until
the reference is written again.
"""
import argparse
import os
import re
import subprocess
import sys

PROGRAMS = ["rung", "rung-train", "rung-data", "rung-coordinator", "rung-worker"]
BEGIN = "<!-- BEGIN GENERATED: tests/docs/cli_reference.py writes this part; do not edit by hand -->"
END = "<!-- END GENERATED -->"


def help_text(bin_dir, command):
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), COLUMNS="120")
    run = subprocess.run(command + ["--help"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=60)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} --help exited {run.returncode}:\n{run.stdout}")
    return run.stdout.rstrip() + "\n"


def subcommands(text):
    """The subcommands a --help lists, when its usage line ends in SUBCOMMAND: the names under
    "Subcommands:" or under section headings of its own (rung lists its commands by section)."""
    names, listing, after_usage = [], False, False
    for line in text.splitlines():
        heading = line.endswith(":") and line[:1].isalpha()
        if line.startswith("Usage:"):
            after_usage = line.rstrip().endswith("SUBCOMMAND")
        elif after_usage and heading:
            listing = line not in ("Options:", "Positionals:")
        elif listing and re.match(r"^  [a-z][a-z0-9-]*( |$)", line):
            names.append(line.split()[0])
        elif listing and line and not line.startswith(" "):
            listing = False
    return names


def reference(bin_dir):
    parts = []

    def walk(command):
        text = help_text(bin_dir, command)
        parts.append(f"### `{' '.join(command)}`\n\n```text\n{text}```\n")
        for name in subcommands(text):
            walk(command + [name])

    for program in PROGRAMS:
        walk([program])
    return "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the folder of the built programs, e.g. build/bin")
    parser.add_argument("--doc", default=os.path.join(os.path.dirname(__file__), "..", "..", "docs", "cli.md"))
    parser.add_argument("--update", action="store_true", help="write the reference into --doc")
    args = parser.parse_args()
    bin_dir = os.path.abspath(args.bin)
    with open(args.doc, encoding="utf-8") as handle:
        doc = handle.read()
    if BEGIN not in doc or END not in doc:
        sys.exit(f"{args.doc}: no '{BEGIN}' ... '{END}' part to hold the reference")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    wanted = head + BEGIN + "\n\n" + reference(bin_dir) + "\n" + END + tail
    if wanted == doc:
        print(f"{args.doc}: the command reference is current")
        return
    if args.update:
        with open(args.doc, "w", encoding="utf-8") as handle:
            handle.write(wanted)
        print(f"{args.doc}: the command reference written again")
        return
    sys.exit(f"{args.doc}: the command reference is out of date (a command's --help changed): run "
             f"python3 tests/docs/cli_reference.py --bin {args.bin} --update")


if __name__ == "__main__":
    main()
