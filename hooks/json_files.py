"""The one reader of the JSON files the site build reads: the fence record, the stepper's trace, the results files.

`read` parses a file strictly (no NaN or Infinity, no number a float cannot hold, no merge-conflict marker) and
validates it against ``schemas/<name>.schema.json`` with jsonschema. A bad file stops the build with one line
(`FileError`) naming the file, the entry, what was expected, what was found and the command that re-creates it:
``results/corpus/counts.json: pairs: expected a whole number >= 0, found str '5318'; re-create it with `...```.
"""

import functools
import json
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn

import jsonschema
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
CONFLICT_MARKERS = ("<<<<<<< ", "=======", ">>>>>>> ", "||||||| ")
MAX_DIGITS = 300  # the longest integer a file may hold: longer ones do not fit a float (Python refuses past 4,300)


class FileError(ValueError):
    """A file the build reads is missing, not strict JSON, or not what its schema describes (one line)."""


def fail(name: str, entry: str, expected: str, found: str, command: str, them: str = "it") -> NoReturn:
    """Stop with the one line that names the file, the entry, what was expected and found, and the command."""
    raise FileError(f"{name}: {entry}: expected {expected}, found {found}; re-create {them} with `{command}`")


def describe(value: object) -> str:
    """A value as the line shows what was found: its kind, and the value itself when it is short."""
    if isinstance(value, dict):
        return f"an object with keys {sorted(value)[:6]}" + (" ..." if len(value) > 6 else "")
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "null" if value is None else f"{type(value).__name__} {value!r}"[:80]


def entry(path: Iterable[str | int]) -> str:
    """A place in a document as the line names it: ``models[4].bleu``, ``pages["topic/page.md"][1].runs``."""
    text = ""
    for key in path:
        if isinstance(key, int):
            text += f"[{key}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            text += f".{key}" if text else key
        else:
            text += f"[{json.dumps(key, ensure_ascii=False)}]"
    return text or "(the file)"


@functools.cache
def validator(schema: str) -> jsonschema.protocols.Validator:
    """The validator of ``schemas/<schema>.schema.json`` (itself checked against its metaschema), which finds every
    other schema in ``schemas/`` under its ``$id`` (a schema refers to another's definitions by file name)."""
    documents = {path.name: json.loads(path.read_text(encoding="utf-8")) for path in SCHEMAS.glob("*.schema.json")}
    registry = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in documents.values())
    document = documents[f"{schema}.schema.json"]
    kind = jsonschema.validators.validator_for(document)
    kind.check_schema(document)
    # a whole number is written as one: 3, not 3.0 (JSON Schema's "integer" would take 3.0, a list index would not)
    whole = kind.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)
    )
    return jsonschema.validators.extend(kind, type_checker=whole)(document, registry=registry)


TYPES = {
    "number": "a number",
    "integer": "a whole number",
    "string": "a string",
    "array": "a list",
    "object": "an object",
}


def expected(error: ValidationError) -> str:
    """What the schema expected where `error` is, in words: the (sub)schema's title, else words for its keyword."""
    title = error.schema.get("title") if isinstance(error.schema, dict) else None
    if title and error.validator != "required":
        return title
    value = error.validator_value
    text = json.dumps(value, ensure_ascii=False)  # a const as JSON; an enum's values are the list's, unbracketed
    return {
        "type": TYPES.get(value, text) if isinstance(value, str) else text,
        "minimum": f"a number >= {value}",
        "minItems": f"a list of at least {value}",
        "maxItems": f"a list of at most {value}",
        "minLength": "a non-empty string",
        "const": text,
        "enum": f"one of {text[1:-1]}",
    }.get(error.validator, f"what the schema says ({error.message})")


def read(path: Path, schema: str, command: str, name: str | None = None) -> Any:
    """The JSON document at `path`, parsed strictly and valid against ``schemas/<schema>.schema.json``; else
    `FileError`, one line naming the file (`name`, default `path`), the entry, what was expected and found, and the
    `command` that re-creates it."""
    name = name or str(path)
    bad = functools.partial(fail, name, "(the file)", command=command)
    if path.is_dir():
        bad("a file", "a folder")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        bad("a file", "none")
    except UnicodeDecodeError as error:
        bad("UTF-8 text", f"bytes that are not UTF-8 at byte {error.start}")
    except OSError as error:
        bad("a readable file", error.strerror or type(error).__name__)
    conflict = next((n for n, line in enumerate(text.splitlines(), 1) if line.startswith(CONFLICT_MARKERS)), None)
    if conflict is not None:
        bad("a complete JSON document", f"a merge-conflict marker at line {conflict}")

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_DIGITS:
            bad(f"numbers of at most {MAX_DIGITS} digits", f"an integer of {len(digits.lstrip('-')):,} digits")
        return int(digits)

    def real(digits: str) -> float:
        if not math.isfinite(number := float(digits)):
            bad("numbers a float can hold", digits[:40])
        return number

    strict = "strict JSON (no NaN or Infinity)"
    try:
        document = json.loads(text, parse_constant=functools.partial(bad, strict), parse_int=integer, parse_float=real)
    except json.JSONDecodeError as error:
        found = "an empty file" if not text.strip() else f"{error.msg} at line {error.lineno} column {error.colno}"
        bad("a complete JSON document", found + " (truncated or malformed?)")
    checker = validator(schema)
    error = best_match(checker.iter_errors(document))
    if error is not None and error.validator == "required":  # say what the missing entry should have been
        missing = next(key for key in error.validator_value if key not in error.instance)
        below = best_match(checker.evolve(schema=error.schema.get("properties", {}).get(missing, {})).iter_errors(None))
        fail(name, entry([*error.absolute_path, missing]), expected(below) if below else "an entry", "none", command)
    if error is not None:
        fail(name, entry(error.absolute_path), expected(error), describe(error.instance), command)
    return document
