"""MkDocs hook: the reference pages' tables, written from the code at build time.

A line of a page that is exactly ``<!-- generated: NAME -->`` (indented, in a
list item: each line of the Markdown is indented alike) becomes NAME's Markdown: the checks from the registry, the finding codes from the code table,
the command line from the parser, the contract from its JSON Schema, the limits
from their defaults, the Performance page's tables from the benchmark runs
recorded under benchmarks/results/. Nothing here is kept in step by hand.
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^([ \t]*)<!-- generated: ([a-z-]+) -->$", re.M)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return expand(markdown, page.file.src_path)


def expand(markdown: str, src_path: str) -> str:
    """``markdown`` (the page ``src_path``, relative to docs/) with its markers replaced."""

    def one(match: re.Match) -> str:
        indent, name = match.groups()
        if name not in GENERATORS:
            raise ValueError(f"{src_path}: no generator named {name!r}")
        text = GENERATORS[name](posixpath.dirname(src_path))
        return "\n".join(indent + line if line else line for line in text.split("\n"))

    return MARKER.sub(one, markdown)


def prose(text: str) -> str:
    """The code's plain text as Markdown that renders it as written: one line,
    and no character Markdown would read as markup."""
    text = " ".join(str(text).split())
    return re.sub(r"([\\`*_\[\]])", r"\\\1", text).replace("<", "&lt;")


def cell(text: str) -> str:
    """Text for one table cell."""
    return prose(text).replace("|", "\\|")


def code_span(text: str) -> str:
    return f"``{text}``" if "`" in text else f"`{text}`"


# -- checks and codes --------------------------------------------------------------------


def link(here: str, page: str) -> str:
    """``page`` (relative to docs/) as a link from a page in the folder ``here``."""
    return posixpath.relpath(page, here or ".")


def checks(here: str) -> str:
    from oracle_guard.checks.registry import CHECKS

    codes_page = link(here, "reference/codes.md")
    rows = ["| check | question | contract section | codes |", "|---|---|---|---|"]
    for check in CHECKS:
        codes = ", ".join(f"[`{doc.code}`]({codes_page}#{doc.code})" for doc in check.codes)
        rows.append(f"| `{check.id}` | {cell(check.question)} | `{check.section}` | {codes} |")
    return "\n".join(rows) + "\n"


def check_all_but_write_set(here: str) -> str:
    """The command an owner without an authority runs before committing an oracle edit
    (how-to/edit-the-oracle.md): every check but write-set, which denies it."""
    from oracle_guard.checks.registry import HOOKS

    return f"`oracle-guard check --only {','.join(h for h in HOOKS if h != 'write-set')}`"


def codes(here: str) -> str:
    from oracle_guard.checks.codes import CODES
    from oracle_guard.checks.registry import HOOKS

    order = [*HOOKS, "pre-receive", "score"]
    by_hook: Dict[str, List[str]] = {}
    for code, info in CODES.items():
        by_hook.setdefault(info.hook, []).append(code)
    unknown = set(by_hook) - set(order)
    if unknown:
        raise ValueError(f"codes of a hook the generator does not know: {sorted(unknown)}")
    out = ["| code | hook | meaning |", "|---|---|---|"]
    for hook in order:
        for code in by_hook.get(hook, []):
            out.append(f"| [`{code}`](#{code}) | `{hook}` | {cell(CODES[code].meaning)} |")
    out.append("")
    for hook in order:
        for code in by_hook.get(hook, []):
            info = CODES[code]
            out += [f"### `{code}`", "", f"**Hook:** `{hook}`", ""]
            out += [f"**Means:** {prose(info.meaning)}.", "", f"**Fix:** {prose(info.fix)}.", ""]
            if info.example:
                out += ["As printed:", "", "```text", info.example, "```", ""]
    return "\n".join(out)


# -- the command line ----------------------------------------------------------------------


def cli(here: str) -> str:
    from oracle_guard.cli import COMMANDS, build_parser

    parser = build_parser()
    commands = subcommands(parser)
    shared = shared_options(commands)
    out = ["## `oracle-guard`", "", *usage(parser), *option_table(parser, {})]
    out += ["Options that several commands take, the same way in each:", ""]
    out += ["| argument | what it does | taken by |", "|---|---|---|"]
    for row, names in shared.values():
        taken_by = ", ".join(f"[`{n}`](#oracle-guard-{n.replace(' ', '-')})" for n in names)
        out.append(f"{row} {taken_by} |")
    out.append("")
    lines = summaries(parser)
    for name in COMMANDS:
        out += command_section(f"oracle-guard {name}", commands[name], "##", shared, lines[name])
    return "\n".join(out)


def subcommands(parser: argparse.ArgumentParser) -> Dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def summaries(parser: argparse.ArgumentParser) -> Dict[str, str]:
    """Each subcommand's one line, as ``--help`` lists it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {choice.dest: choice.help or "" for choice in action._choices_actions}
    return {}


def usage(parser: argparse.ArgumentParser) -> List[str]:
    # a fixed width: the page must not depend on the terminal that built it
    formatter = argparse.HelpFormatter(parser.prog, width=88)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return ["```text", formatter.format_help().strip(), "```", ""]


def documented_options(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.help != argparse.SUPPRESS:
            yield action


def option_row(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()
    if action.option_strings:
        metavar = ""
        if action.nargs != 0:
            metavar = " " + formatter._format_args(action, action.dest.upper())
        names = ", ".join(code_span(o + metavar) for o in action.option_strings)
    else:
        names = code_span(formatter._format_args(action, action.dest))
    help_text = formatter._expand_help(action) if action.help else ""
    return f"| {names} | {cell(help_text)} |"


def shared_options(commands: Dict[str, argparse.ArgumentParser]) -> Dict[str, Any]:
    """The rows (an option and its help) that three commands or more print alike."""
    seen: Dict[str, Any] = {}

    def visit(name: str, parser: argparse.ArgumentParser) -> None:
        for action in documented_options(parser):
            if action.option_strings:
                row = option_row(parser, action)
                seen.setdefault(row, (row, []))[1].append(name)
        for sub_name, sub in subcommands(parser).items():
            visit(f"{name} {sub_name}", sub)

    for name, parser in commands.items():
        visit(name, parser)
    return {row: entry for row, entry in seen.items() if len(entry[1]) >= 3}


def command_section(
    title: str, parser: argparse.ArgumentParser, level: str, shared: Dict[str, Any], summary: str
) -> List[str]:
    out = [f"{level} `{title}`", ""]
    if summary:
        out += [sentence(summary), ""]
    if parser.description:
        out += [" ".join(parser.description.split()), ""]
    out += usage(parser)
    out += option_table(parser, shared)
    common = [
        row.split(" | ")[0].lstrip("| ")
        for row in (option_row(parser, a) for a in documented_options(parser))
        if row in shared
    ]
    if common:
        out += ["It also takes the shared options " + ", ".join(common) + ".", ""]
    lines = summaries(parser)
    for name, sub in subcommands(parser).items():
        out += command_section(f"{title} {name}", sub, level + "#", shared, lines.get(name, ""))
    return out


def option_table(parser: argparse.ArgumentParser, shared: Dict[str, Any]) -> List[str]:
    rows = [option_row(parser, a) for a in documented_options(parser)]
    rows = [row for row in rows if row not in shared]
    if not rows:
        return []
    return ["| argument | what it does |", "|---|---|", *rows, ""]


# -- the contract ----------------------------------------------------------------------------


def schema(name: str) -> Dict[str, Any]:
    data = json.loads((ROOT / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def check_sections(here: str) -> str:
    """Each check's section of the contract page's complete example, from its
    sample (checks/sample.py), in the registry's order: the lines end with a newline,
    and the marker's own line break follows, so the last is dropped."""
    from oracle_guard.checks.registry import CHECKS

    return "".join(check.sample().example for check in CHECKS).rstrip("\n")


def contract_schema(here: str) -> str:
    document = schema("contract")
    required = set(document.get("required", []))
    out = []
    for key, node in document["properties"].items():
        out += [f"### `{key}`", ""]
        out += [f"**Type:** {type_of(node, document)}" + (" (required)" if key in required else "")]
        out += [""]
        if "description" in node:
            out += [sentence(node["description"]), ""]
        rows = list(nested_rows(resolve(node, document), document, key))
        if rows:
            out += ["| key | type | description |", "|---|---|---|", *rows, ""]
    return "\n".join(out)


def resolve(node: Dict[str, Any], document: Dict[str, Any]) -> Dict[str, Any]:
    while "$ref" in node and node["$ref"].startswith("#/$defs/"):
        node = document["$defs"][node["$ref"][len("#/$defs/") :]]
    return node


def type_of(node: Dict[str, Any], document: Dict[str, Any]) -> str:
    node = resolve(node, document)
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    for combinator in ("oneOf", "anyOf"):
        if combinator in node:
            return " or ".join(type_of(option, document) for option in node[combinator])
    kind = node.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        return f"list of {type_of(node.get('items', {}), document)}"
    return str(kind)


def nested_rows(node: Dict[str, Any], document: Dict[str, Any], path: str) -> Iterator[str]:
    """A row per key below ``path``: an object's keys, a list's items' keys."""
    if node.get("type") == "array":
        node, path = resolve(node.get("items", {}), document), path + "[]"
    required = set(node.get("required", []))
    for key, child in node.get("properties", {}).items():
        kind = type_of(child, document) + (" (required)" if key in required else "")
        description = child.get("description") or resolve(child, document).get("description", "")
        yield f"| `{path}.{key}` | {cell(kind)} | {cell(description)} |"
        yield from nested_rows(resolve(child, document), document, f"{path}.{key}")


def sentence(text: str) -> str:
    text = prose(text)
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def limits(here: str) -> str:
    from oracle_guard.contract import LIMITS

    described = schema("contract")["properties"]["limits"]["properties"]
    if set(described) != set(LIMITS):
        raise ValueError("the contract schema's limits and contract.LIMITS name different keys")
    rows = ["| key | default | what it caps |", "|---|---|---|"]
    for key, default in LIMITS.items():
        description = re.sub(r"\s*\(default [^)]*\)", "", described[key].get("description", ""))
        rows.append(
            f"| `limits.{key}` | {default:,} bytes ({mib(default)}) | {cell(description)} |"
        )
    return "\n".join(rows) + "\n"


def mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


# -- recorded benchmark runs -------------------------------------------------------------

RESULTS = ROOT / "benchmarks" / "results"


def recorded(name: str) -> Dict[str, Any]:
    """A recorded run; one with no rows fails the build (a table never shows empty)."""
    doc = json.loads((RESULTS / name).read_text(encoding="utf-8"))
    if not doc.get("rows"):
        raise ValueError(f"benchmarks/results/{name} records no rows")
    return doc


def median(values: List[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def millis(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def goal_row(row: Dict[str, Any]) -> str:
    ours, theirs = median(row["ours"]), median(row["theirs"])
    ratio = ours / theirs
    ratios = [a / b for a, b in zip(row["ours"], row["theirs"])]
    memory_ok = row["memory_goal"] is None or row["memory_mib"] <= row["memory_goal"]
    met = ratio <= row["goal"] and memory_ok
    ours_text = millis(ours)
    goal = f"<= {row['goal']:g}x"
    if row["memory_goal"] is not None:
        ours_text += f", {row['memory_mib']:.1f} MiB"
        goal += f" and <= {row['memory_goal']:g} MiB"
    verdict = "met" if met else "**missed**"
    return (
        f"| {cell(row['job'])} | {ours_text} | {cell(row['reference'])}: {millis(theirs)} "
        f"| {ratio:.3f}x ({min(ratios):.3f} to {max(ratios):.3f}) | {goal}: {verdict} |"
    )


def load(doc: Dict[str, Any]) -> str:
    before, after = doc["load_average"]["before"], doc["load_average"]["after"]
    return f"load average {before[0]:g} when it started, {after[0]:g} when it ended"


def benchmark_goals(here: str) -> str:
    doc = recorded("goals.json")
    lines = [
        f"Measured on {doc['date']} on the development machine ({doc['machine']}, "
        f"{doc['cores']} cores, Python {doc['python']}, git {doc['git']}, oracle-guard "
        f"{doc['oracle_guard']}), {doc['runs']} interleaved runs each"
        + (" with every size 1/10 (`--quick`)" if doc["quick"] else "")
        + f", in {doc['seconds']:,.0f} s, {load(doc)} (other work shared the cores).",
        "The medians, the ratio of the medians and, in brackets, the range of the ratios run "
        "by run; recorded in `benchmarks/results/goals.json` "
        "(`bench_goals.py --json FILE`), which this table is built from.",
        "",
        "| job | oracle-guard | reference | ratio | goal |",
        "|---|---|---|---|---|",
    ]
    lines += [goal_row(row) for row in doc["rows"]]
    return "\n".join(lines) + "\n"


def benchmark_pack_readers(here: str) -> str:
    doc = recorded("pack_readers.json")
    lines = [
        f"{cell(doc['measured'])}",
        "",
        "| reader | ratio | max RSS |",
        "|---|---|---|",
    ]
    for row in doc["rows"]:
        ratio = f"{row['ratio']:g}x" + (f", {cell(row['note'])}" if row.get("note") else "")
        lines.append(f"| {cell(row['reader'])} | {ratio} | {row['max_rss_mib']:,} MiB |")
    return "\n".join(lines) + "\n"


GENERATORS: Dict[str, Callable[[str], str]] = {
    "checks": checks,
    "check-all-but-write-set": check_all_but_write_set,
    "codes": codes,
    "cli": cli,
    "check-sections": check_sections,
    "contract-schema": contract_schema,
    "limits": limits,
    "benchmark-goals": benchmark_goals,
    "benchmark-pack-readers": benchmark_pack_readers,
}
