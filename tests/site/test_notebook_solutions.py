"""In a page's notebook an exercise's answer comes after an empty cell where the reader tries first."""

import json

import fence_notebooks

PAGE = """# 연습

### 문제 1. 바꿔 보기

마스크를 바꾸면 어떻게 될까요?

/// solution
가린 자리는 0이 됩니다. 남은 자리가 나눠 갖습니다.

```python
print(1)
```
///
"""


def test_the_answer_follows_an_empty_try_first_cell():
    book = json.loads(
        fence_notebooks.notebook(
            PAGE,
            page="x.md",
            site_url=None,
            repo_url=None,
            runs={},
            extensions={"pymdownx.blocks.details": {"types": [{"name": "solution", "class": "note", "title": "풀이"}]}},
        )
    )
    kinds = [(cell["cell_type"], "".join(cell["source"])) for cell in book["cells"]][1:]  # after the install cell
    assert [kind for kind, _ in kinds] == ["markdown", "code", "markdown", "code"]
    assert "마스크를 바꾸면" in kinds[0][1] and "풀이" not in kinds[0][1]
    assert kinds[1][1] == fence_notebooks.TRY_FIRST_CELL
    assert kinds[2][1].startswith("**풀이**") and "가린 자리는 0이 됩니다" in kinds[2][1]
    assert kinds[3][1] == "print(1)"
