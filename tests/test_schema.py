"""`ccfair schema` (the experiment file's JSON Schema) and the generated docs tables."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest
from ccfair import (
    _core,  # noqa: F401  a missing extension must fail the suite, not skip it
    schema,
)
from ccfair.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    s = schema.json_schema()
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


def test_cli_prints_the_schema(capsys):
    assert main(["schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(schema.json_schema()))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_validates(validator, path):
    errors = [e.message for e in validator.iter_errors(tomllib.loads(path.read_text()))]
    assert not errors, errors


def _preset_experiments() -> list[tuple[str, dict]]:
    from ccfair.presets import s0, s1, s3

    out = []
    points = s0.grid(list(s0.SCENARIOS), ["10Mbit", "50Mbit"], [50, 100], [0.5, 2.0], list(s0.QDISCS), 1)
    out += [(f"s0-{i}", s0.spec_dict(p)) for i, p in enumerate(points)]
    for q in s3.QDISCS:
        for n in (2, 10):
            out.append((f"s3-{q}-{n}", s3.spec_dict(q, n, 0.5, 5)))
    for queue in s1.QUEUES:
        for feedback in s1.FEEDBACKS:
            out.append((f"s1-{queue}-{feedback}", s1.build_spec(queue, feedback=feedback, duration_s=10).raw))
    return out


def test_every_preset_experiment_validates(validator):
    exps = _preset_experiments()
    assert len(exps) > 20
    for name, exp in exps:
        errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(json.loads(json.dumps(exp)))]
        assert not errors, (name, errors[:3])


@pytest.mark.parametrize(
    ("flow", "bad"),
    [
        ({"cca": "nosuch", "rtt": "20ms"}, "cca"),
        ({"cca": {"name": "cubic", "beta": 1.5}, "rtt": "20ms"}, "cca"),
        ({"cca": {"name": "cubic", "bta": 0.5}, "rtt": "20ms"}, "cca"),
        ({"cca": "cubic", "rtt": "20ms", "colour": 1}, "colour"),
    ],
)
def test_schema_rejects_unknown_names_parameters_and_keys(validator, flow, bad):
    exp = {"duration": "1s", "bottleneck": {"rate": "10Mbit"}, "flows": [flow]}
    assert list(validator.iter_errors(exp)), bad


@pytest.mark.parametrize("path", list(schema.DOCS), ids=lambda p: p.name)
def test_docs_tables_are_current(path):
    """The parameter tables of docs/ccas.md and docs/qdiscs.md are generated from the registry:
    run `python -m ccfair.schema --write-docs` after changing a declaration."""
    assert schema.generated_section(path) == schema.DOCS[path]().strip("\n")
