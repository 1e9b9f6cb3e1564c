"""The project's documentation site: what builds it, where its pages are, in which languages.

A change to a documented feature usually means a doc page too, and maintainers say where
those pages live: the site generator's configuration (`docs/astro.config.mjs`, `mkdocs.yml`),
the folder of pages and its home page, the navigation file a new page must be added to, and
the translated copies that have to follow. This module finds them from the listing alone;
`scan_workspace` records them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["DocsSite", "docs_site"]

# A site generator's configuration file, the generator's name, and where it keeps its pages
# relative to the configuration's folder ("" for that folder itself).
_GENERATORS: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = (
    (re.compile(r"astro\.config\.[cm]?[jt]s"), "Astro", ("src/content/docs", "src/pages")),
    (re.compile(r"mkdocs\.ya?ml"), "MkDocs", ("docs",)),
    (re.compile(r"docusaurus\.config\.[cm]?[jt]s"), "Docusaurus", ("docs",)),
    (re.compile(r"\.vitepress/config\.[cm]?[jt]s"), "VitePress", ("",)),
    (re.compile(r"book\.toml"), "mdBook", ("src",)),
    (re.compile(r"(?:docs|doc)/(?:source/)?conf\.py"), "Sphinx", ("",)),
    (re.compile(r"source\.config\.ts"), "Fumadocs", ("content/docs",)),
    (re.compile(r"(?:docs|mint)\.json"), "Mintlify", ("",)),
)
_CONFIG_NAMES = frozenset(
    {"mkdocs.yml", "mkdocs.yaml", "book.toml", "conf.py", "docs.json", "mint.json"}
)
_CONFIG_ENDINGS = ("book.toml", "conf.py", "mint.json")
_NAVIGATION = re.compile(
    r"(?:navigation|nav|sidebars?|_sidebar|SUMMARY|toc|_toc)\.(?:ya?ml|[cm]?[jt]s|json|md)"
)
_HOMES = ("index.md", "index.mdx", "README.md", "index.rst")
_MAX_CONFIG_DEPTH = 3
# Locale folders are recognised only among the common language codes, and only two or more
# at once: a lone `ai/` or `go/` folder is a topic, not a translation.
_LOCALES = frozenset(
    {
        "ar", "bn", "ca", "cs", "da", "de", "el", "en", "es", "fa", "fi", "fr", "he", "hi",
        "hu", "id", "it", "ja", "ko", "ms", "nl", "no", "pl", "pt", "ro", "ru", "sv", "th",
        "tr", "uk", "ur", "vi", "zh", "zh-cn", "zh-tw", "zh-hans", "zh-hant", "pt-br", "es-419",
    }
)  # fmt: skip
_MAX_TRANSLATIONS = 6
# Without a generator's configuration, a folder of this name full of pages is the site.
_PLAIN_PAGE_FOLDERS = ("docs", "doc", "content/docs", "website/docs")
_MIN_PLAIN_PAGES = 10
_MIGRATIONS = re.compile(r"(?:\d+[-_])?(?:migrat|upgrad)\w*(?:[-_][\w-]*)?", re.IGNORECASE)
_MAX_MIGRATIONS = 2


@dataclass(frozen=True, slots=True)
class DocsSite:
    """A documentation site: its generator's `config` file (and the `generator`'s name) when
    there is one, the `pages` folder, its `home` page, its `navigation` file and the folders of
    its `translations`, and its migration guides (`migrations`: pages or folders)."""

    pages: str
    config: str | None = None
    generator: str | None = None
    home: str | None = None
    navigation: str | None = None
    translations: tuple[str, ...] = ()
    migrations: tuple[str, ...] = ()


def docs_site(paths: list[str]) -> DocsSite | None:
    """The shallowest documentation site in `paths`, or None when there is none.

    A site is found by its generator's configuration, or, without one, by a navigation file
    in a `docs/` folder with pages next to it.
    """
    # Configuration and navigation files are few and shallow: find them first, and look at
    # where the pages are only when there is one.
    found = [
        path
        for path in paths
        # The cheap test first, inline: most paths of a big tree name neither config nor docs.
        if ("config" in path or "doc" in path or path.endswith(_CONFIG_ENDINGS))
        and path.count("/") <= _MAX_CONFIG_DEPTH
        and _may_configure_a_site(path)
    ]
    folders = _folders_with_pages(paths) if found else set()
    candidates = [
        site
        for path in found
        if (site := _site_from_config(path, folders) or _site_from_navigation(path, folders))
    ]
    if not candidates:
        pages = Counter(
            folder
            for path in paths
            if "doc" in path and path.endswith((".md", ".mdx"))
            for folder in _PLAIN_PAGE_FOLDERS
            if path.startswith(folder + "/")
        )
        candidates = [
            DocsSite(folder) for folder in _PLAIN_PAGE_FOLDERS if pages[folder] >= _MIN_PLAIN_PAGES
        ]
    if not candidates:
        return None
    best = min(
        candidates, key=lambda site: (site.config is None, site.pages.count("/"), site.pages)
    )
    return _with_details(best, paths)


def _may_configure_a_site(path: str) -> bool:
    name = path.rpartition("/")[2]
    if "config" in name or name in _CONFIG_NAMES:
        return True
    return "/doc" in "/" + path and _NAVIGATION.fullmatch(name) is not None


def _folders_with_pages(paths: list[str]) -> set[str]:
    """Every folder that holds a markdown page, directly or deeper."""
    found: set[str] = set()
    for path in paths:
        if path.endswith((".md", ".mdx", ".rst")):
            folder = path.rpartition("/")[0]
            while folder and folder not in found:
                found.add(folder)
                folder = folder.rpartition("/")[0]
    return found


def _site_from_config(path: str, folders: set[str]) -> DocsSite | None:
    for pattern, generator, page_folders in _GENERATORS:
        match = pattern.search(path)
        if match is None or match.end() != len(path):
            continue
        start = match.start()
        if start and path[start - 1] != "/":
            continue
        base = path[: max(start - 1, 0)]
        for relative in page_folders:
            pages = _joined(base, relative)
            # A configuration at the top whose pages are the whole tree says ".".
            if pages in folders or (not pages and folders):
                return DocsSite(pages or ".", config=path, generator=generator)
    return None


def _site_from_navigation(path: str, folders: set[str]) -> DocsSite | None:
    folder, _, name = path.rpartition("/")
    if folder.rpartition("/")[2] not in ("docs", "doc") or _NAVIGATION.fullmatch(name) is None:
        return None
    return DocsSite(folder, navigation=path) if folder in folders else None


def _joined(base: str, relative: str) -> str:
    return "/".join(part for part in (base, relative) if part)


def _with_details(site: DocsSite, paths: list[str]) -> DocsSite:
    prefix = "" if site.pages == "." else site.pages + "/"
    inside = [path[len(prefix) :] for path in paths if path.startswith(prefix)]
    home = next((prefix + name for name in _HOMES if name in inside), None)
    navigation = site.navigation
    if navigation is None:
        config_folder = site.config.rpartition("/")[0] if site.config else None
        navigation = next(
            (
                path
                for path in paths
                if _NAVIGATION.fullmatch(path.rpartition("/")[2]) is not None
                and path.rpartition("/")[0] in (site.pages, config_folder)
            ),
            None,
        )
    subfolders = {relative.split("/", 1)[0] for relative in inside if "/" in relative}
    locales = sorted(name for name in subfolders if name.lower() in _LOCALES)
    translations = tuple(prefix + locale for locale in locales) if len(locales) >= 2 else ()
    # Migration guides: a page or a folder of them at the top of the pages.
    entries = {relative.split("/", 1)[0] for relative in inside}
    migrations = tuple(
        prefix + name
        for name in sorted(entries)
        if _MIGRATIONS.fullmatch(name.rpartition(".")[0] if "." in name else name)
    )
    return DocsSite(
        site.pages,
        config=site.config,
        generator=site.generator,
        home=home,
        navigation=navigation,
        translations=translations[:_MAX_TRANSLATIONS],
        migrations=migrations[:_MAX_MIGRATIONS],
    )
