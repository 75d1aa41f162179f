"""``--output FORMAT=PATH``: reports written to files besides the terminal's.

Each file is written whole or not at all (a temporary file in the same folder,
then a rename), so a CI reader never sees half a report; a report that cannot
be written fails the run (exit 2)."""

from __future__ import annotations

import argparse
import os
from typing import List, NamedTuple, Optional, Sequence

from oracle_guard.errors import ReportError, UsageError


class Output(NamedTuple):
    format: str
    path: str  # as given, for messages
    target: str  # absolute: where it is written


def output_spec(text: str) -> str:
    """argparse's check of one ``FORMAT=PATH``; the pair is split in resolve."""
    # deferred: 6 ms to import, only for output_spec()
    from oracle_guard.report.formats import FORMATS

    fmt, sep, path = text.partition("=")
    if not sep or not path:
        raise argparse.ArgumentTypeError(f"expected FORMAT=PATH, got {text!r}")
    if fmt not in FORMATS:
        raise argparse.ArgumentTypeError(
            f"unknown format {fmt!r} in {text!r}; choose from {', '.join(FORMATS)}"
        )
    return text


def resolve(specs: Optional[Sequence[str]], directory: str) -> List[Output]:
    """The outputs, a relative PATH read from ``-C DIR`` (as git -C reads it);
    the same format or file twice is a usage error (which report would win?)."""
    outputs: List[Output] = []
    for spec in specs or ():
        fmt, _, path = spec.partition("=")
        target = os.path.abspath(os.path.join(directory, path))
        for seen in outputs:
            if seen.format == fmt:
                raise UsageError(f"--output {fmt}= is given twice: one file a format")
            if os.path.normcase(seen.target) == os.path.normcase(target):
                raise UsageError(f"--output names {path!r} twice: one format a file")
        outputs.append(Output(fmt, path, target))
    return outputs


def write_atomically(target: str, text: str) -> None:
    """``text`` as UTF-8 at ``target``, renamed into place (mode 0666 less the umask)."""
    folder, name = os.path.split(target)
    data = text.encode("utf-8", "backslashreplace")  # a stray surrogate: shown, not fatal
    for _ in range(100):
        temp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 random names all taken
        raise FileExistsError(f"no free temporary name in {folder}")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def write(output: Output, text: str) -> None:
    try:
        write_atomically(output.target, text)
    except OSError as exc:
        # deferred: under 1 ms to import, only for write()
        from oracle_guard.report.escaping import show_path

        why = exc.strerror or type(exc).__name__
        raise ReportError(
            f"cannot write the {output.format} report to {show_path(output.path)}: {why}"
        ) from None


def write_errors(outputs: Sequence[Output], message: str) -> None:
    """A failed run: every file gets its format's error document, so none is left
    holding an earlier pass; a file that cannot be written is passed over (the
    run already fails with one line)."""
    # deferred: 5 ms to import, only for write_errors()
    from oracle_guard.report.formats import render_error_file

    for output in outputs:
        try:
            write_atomically(output.target, render_error_file(output.format, message))
        except OSError:
            pass
