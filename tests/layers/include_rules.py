"""The layering of docs/design.md ("Layers"), checked on the #include lines of the source tree.

    python3 tests/layers/include_rules.py [--root DIR]    # exit 1, naming each file:line, on a violation

A folder may include what is below it, never what is above or beside it where the design keeps two
apart: core and sweeps know nothing of gRPC, SQLite or the coordinator; the command line and the
dashboard each build on the client library and not on each other, nor on the coordinator's store,
rules or server; SQL stays in coordinator/store; LibTorch stays in the model core. ctest runs it as
layers.IncludesPointDown (tests/CMakeLists.txt).
"""
import argparse
import pathlib
import re
import sys

# (folder or file prefix, include prefixes it must not use, why)
RULES = [
    ("core/", ["coordinator/", "sweeps/", "worker/", "proto/", "grpc", "sqlite3.h"],
     "core knows nothing of sweeps, the wire, the coordinator or the worker"),
    ("sweeps/", ["coordinator/", "worker/", "proto/", "grpc", "sqlite3.h", "torch/"],
     "sweeps know nothing of the wire, the coordinator or LibTorch"),
    ("proto/", ["coordinator/", "worker/", "sqlite3.h", "torch/"],
     "the wire contract (and its converters of records and fit reports) is below its users"),
    ("coordinator/store/", ["coordinator/domain/", "coordinator/server/", "coordinator/client/", "coordinator/cli/",
                            "coordinator/dashboard/", "grpc", "torch/"],
     "the store is below the coordinator's rules and knows no transport"),
    ("coordinator/domain/", ["coordinator/server/", "coordinator/client/", "coordinator/cli/",
                             "coordinator/dashboard/", "sqlite3.h", "grpc", "torch/"],
     "the rules call typed tables (no SQL) and know no transport"),
    ("coordinator/server/", ["coordinator/client/", "coordinator/cli/", "coordinator/dashboard/", "sqlite3.h",
                             "torch/"],
     "the services translate; SQL stays in the store"),
    ("coordinator/client/", ["coordinator/cli/", "coordinator/dashboard/", "coordinator/store/",
                             "coordinator/domain/", "coordinator/server/", "sqlite3.h", "torch/"],
     "the client library is shared by the command line and the dashboard"),
    ("coordinator/cli/", ["coordinator/dashboard/", "coordinator/store/", "coordinator/domain/",
                          "coordinator/server/", "sqlite3.h", "torch/"],
     "the command line talks to a coordinator over gRPC only, and not through the dashboard"),
    ("coordinator/dashboard/", ["coordinator/cli/", "coordinator/store/", "coordinator/domain/",
                                "coordinator/server/", "sqlite3.h", "torch/"],
     "the dashboard talks to a coordinator over gRPC only, and not through the command line"),
    ("coordinator/rung_main.cc", ["coordinator/store/", "coordinator/domain/", "coordinator/server/", "torch/"],
     "rung is a client"),
    ("worker/agent/", ["coordinator/", "sqlite3.h", "torch/"],
     "the agent speaks to the coordinator over gRPC and runs rung-train as a child"),
]

# LibTorch only here (the torch-free rule).
TORCH_ALLOWED = ("core/model/", "core/train/", "core/diagnostics/attention_diagnostics",
                 "core/diagnostics/head_failure_modes", "core/hf/hf_import", "core/hf/hf_export",
                 "core/hf/rotary_permutation", "worker/train_main.cc", "tools/rung-model/", "bench/", "tests/")

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def violations(root):
    found = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".h", ".cc", ".cpp", ".hpp") or not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        if relative.startswith(("build", "third_party/", ".git/")):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            included = match.group(1)
            for prefix, forbidden, why in RULES:
                if relative.startswith(prefix) and any(included.startswith(f) for f in forbidden):
                    found.append(f"{relative}:{number}: includes {included}: {why}")
            if included.startswith("torch/") and not relative.startswith(TORCH_ALLOWED):
                found.append(f"{relative}:{number}: includes {included}: LibTorch stays in the model core")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[2]))
    found = violations(pathlib.Path(parser.parse_args().root))
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) against the layering (docs/design.md, \"Layers\")", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
