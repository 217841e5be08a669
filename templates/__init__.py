"""Files `gitmem init` writes into a new workspace (shipped as gitmem._templates).

A regular package rather than a namespace one so `importlib.resources.files("gitmem._templates")`
resolves in an editable install as well as from a wheel. Names cannot start with a dot (setuptools'
package-data globs skip dotfiles), so `gitignore`, `gitmem.toml` and `gitkeep` are renamed on write.
"""
