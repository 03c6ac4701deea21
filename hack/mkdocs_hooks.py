"""The documentation site's mkdocs hooks (``hooks:`` in mkdocs.yml).

``docs/contributing/index.md`` is CONTRIBUTING.md, which GitHub shows at the repository's root:
the page holds one snippet line (``--8<-- "CONTRIBUTING.md"``), and this hook puts the file there
with its root-relative links (``docs/spec/format.md``) made relative to the page
(``../spec/format.md``), so that strict mode checks them like every other link. (pymdownx.snippets
would include the file only after this hook runs, with the links unchanged.)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

CONTRIBUTING_PAGE = "contributing/index.md"
SNIPPET = '--8<-- "CONTRIBUTING.md"'
_ROOT_LINK = re.compile(r"\]\(docs/")


def on_page_markdown(markdown: str, page: Any, config: Any, **_: Any) -> str:
    """The contributing page's Markdown: CONTRIBUTING.md, links made page-relative."""
    if page.file.src_uri != CONTRIBUTING_PAGE or SNIPPET not in markdown:
        return markdown
    root = Path(config.config_file_path).parent
    text = (root / "CONTRIBUTING.md").read_text(encoding="utf-8")
    return markdown.replace(SNIPPET, _ROOT_LINK.sub("](../", text))
