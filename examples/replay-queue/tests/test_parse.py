import json
import os

from src.parse import parse_header


def test_header():
    case = json.loads(os.environ.get("REPLAY_PAYLOAD") or '{"raw": "X-Trace: 00-abc"}')
    name, value = parse_header(case["raw"])
    assert name and case["raw"].endswith(value)
