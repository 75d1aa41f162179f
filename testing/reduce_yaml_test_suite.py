"""Regenerate cases.jsonl from a yaml-test-suite checkout (main branch):

    python -m testing.reduce_yaml_test_suite PATH/TO/yaml-test-suite > DATA/yaml-test-suite/cases.jsonl

(DATA is the public suites' data folder, testing/conformance.py; nothing of the
suite is committed here.)

Each src/*.yaml holds one or more tests; they are read the way the suite's own
bin/YAMLTestSuite.pm and bin/suite-to-data.pl read them: a subtest inherits
the name, yaml and json of the one before it, files marked ``skip`` are left
out, the visible-whitespace markers are turned back into the characters they
stand for. One line per test: id (``ID`` or ``ID-NN`` for subtests), name,
yaml, and ``fail: true`` for an error case or ``json`` (the suite's JSON text)
when the suite gives one. Nothing else of the suite is kept."""

import glob
import json
import os
import re
import sys

import yaml


def unescape(text):
    text = text.replace("␣", " ")
    text = re.sub("—*»", "\t", text)
    text = text.replace("←", "\r").replace("⇔", "\ufeff").replace("↵", "")
    if text.endswith("∎\n"):
        text = text[:-2]
    return text


def cases(root):
    for path in sorted(glob.glob(os.path.join(root, "src", "*.yaml"))):
        ident = os.path.basename(path)[: -len(".yaml")]
        with open(path, encoding="utf-8") as handle:
            tests = yaml.safe_load(handle)
        if tests[0].get("skip"):
            continue
        width = len(str(len(tests) - 1)) + 1 if len(tests) > 1 else 2
        before = {}
        for number, test in enumerate(tests):
            test = dict(test)
            for key in ("name", "yaml"):
                test[key] = test.get(key) or before.get(key)
            for key in ("tree", "json", "dump", "emit", "toke"):
                if key not in test and before.get(key) is not None:
                    test[key] = before[key]
            before = test
            case = {
                "id": f"{ident}-{number:0{width}d}" if len(tests) > 1 else ident,
                "name": test["name"],
                "yaml": unescape(test["yaml"]),
            }
            if "fail" in test:
                case["fail"] = True
            elif test.get("json") is not None:
                case["json"] = unescape(test["json"])
            yield case


if __name__ == "__main__":
    for case in cases(sys.argv[1]):
        print(json.dumps(case, ensure_ascii=False))
