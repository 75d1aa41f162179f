"""The layout-preserving editor of a file, picked by its name: YAML or JSON."""

from __future__ import annotations

from oracle_guard.parsing import strict_input
from oracle_guard.parsing.json_edit import JsonEditor
from oracle_guard.parsing.text_edit import Editor


def editor_for(path: str, data: bytes) -> Editor:
    """A YAML editor for ``.yaml``/``.yml``, a JSON one otherwise (as the hooks read them)."""
    text = strict_input.decode_text(data)
    if path.endswith((".yaml", ".yml")):
        # deferred: PyYAML is imported only when a YAML file is edited
        from oracle_guard.parsing.yaml_edit import YamlEditor

        return YamlEditor(path, text)
    return JsonEditor(path, text)
