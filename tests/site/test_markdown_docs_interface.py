"""What the root conftest.py uses of pytest-markdown-docs and pytest beyond their documented interfaces is there.

`conftest.FenceItem` subclasses the plugin's item and runs a fence itself (see its docstring for why); these
checks fail, naming the installed versions and what changed, when an upgrade moves or reshapes what it relies on.
tests/site/test_fence_machinery.py runs pages through conftest.py and checks the behaviour itself.
"""

import dataclasses
import inspect
from importlib.metadata import version

import pytest

VERSIONS = f"pytest-markdown-docs {version('pytest-markdown-docs')}, pytest {pytest.__version__}"


def _parameters(function) -> list[str]:
    return [name for name in inspect.signature(function).parameters if name != "self"]


def test_the_plugin_item_is_built_from_a_fence_definition_and_fills_its_fixtures():
    from pytest_markdown_docs.definitions import FenceTestDefinition
    from pytest_markdown_docs.plugin import MarkdownInlinePythonItem

    assert issubclass(MarkdownInlinePythonItem, pytest.Item), VERSIONS
    parameters = _parameters(MarkdownInlinePythonItem.__init__)
    assert parameters[:3] == ["name", "parent", "test_definition"], (
        f"{VERSIONS}: MarkdownInlinePythonItem takes {parameters}; conftest.py clones items with "
        "MarkdownInlinePythonItem.from_parent(parent, name=..., test_definition=...)"
    )
    fields = {field.name for field in dataclasses.fields(FenceTestDefinition)}
    needed = {"source", "start_line", "source_path", "fixture_names", "max_retries"}
    assert needed <= fields, f"{VERSIONS}: FenceTestDefinition lost {sorted(needed - fields)}, read by FenceItem"
    setup = inspect.getsource(MarkdownInlinePythonItem.setup)
    assert "self.fixture_request" in setup, (
        f"{VERSIONS}: MarkdownInlinePythonItem.setup no longer sets `fixture_request`, "
        "which FenceItem.runtest uses for a fence's fixture: options"
    )


def test_the_plugin_collects_docstring_fences_with_a_collector_of_its_own():
    from pytest_markdown_docs import plugin

    collector = getattr(plugin, "MarkdownDocstringCodeModule", None)
    assert isinstance(collector, type) and issubclass(collector, pytest.Collector), (
        f"{VERSIONS}: pytest_markdown_docs.plugin.MarkdownDocstringCodeModule is gone; conftest.py's "
        "pytest_collect_file leaves that collector out so that only the pages' fences are collected"
    )


def test_pytest_rewrites_asserts_in_an_ast_with_the_expected_signature():
    from _pytest.assertion.rewrite import rewrite_asserts

    parameters = _parameters(rewrite_asserts)
    assert parameters[:4] == ["mod", "source", "module_path", "config"], (
        f"{VERSIONS}: _pytest.assertion.rewrite.rewrite_asserts takes {parameters}; "
        "FenceItem.runtest calls rewrite_asserts(tree, source_bytes, path, config)"
    )


def test_the_plugin_still_offers_its_globals_hook():
    from pytest_markdown_docs import hooks

    assert callable(getattr(hooks, "pytest_markdown_docs_globals", None)), (
        f"{VERSIONS}: the hook pytest_markdown_docs_globals is gone; FenceItem.runtest calls it for a fence's globals"
    )
