"""gitmem: an assistant's memory as Markdown in git, with a time-travelling SQLite FTS5 index.

The package is layered the way data flows:

    parse/     Markdown text -> chunks and typed Retain facts (pure, no I/O)
    timeline/  git history -> per-commit file changes; revisions and dates -> timeline positions
    index/     the derived SQLite database: migrations, incremental indexer, working-tree overlay
    recall/    the read path: queries, ranking, views (about, opinions, why, changes, core, show)
    reflect/   the write-back bot: local llama.cpp model, bank pages, opinion arithmetic, review branch
    cli/, hookrun, mcp   the edges: click commands, git hook entry point, MCP server

Library modules never import click; the CLI is a thin layer over them.
"""

__version__ = "0.1.0"
