"""The documentation site: `mkdocs build --strict` (no broken reference, every exported object
resolved by mkdocstrings) in under 2 minutes, every exported object documented, and the pages
as a person sees them in headless Chromium: no console error, every image loaded, every
internal link resolving, the search finding "Banzhaf" on FIxLIP's page. Screenshots of the home
page and one package page are saved under site/ for a person to look at."""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib
import inspect
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from paperplug.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = load_manifest(ROOT / "plugins.toml")
sys.path.insert(0, str(ROOT / ".ci" / "docs"))
import build  # noqa: E402


@pytest.fixture(scope="module")
def site():
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "docs" / "build.py")], capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert seconds < 120, f"the site took {seconds:.0f} s to build"
    return ROOT / "site"


def _documented(obj: object) -> bool:
    doc = obj.__doc__ if isinstance(obj, type) or callable(obj) else "constant"
    if not doc or not doc.strip():
        return False
    auto = isinstance(obj, type) and doc.startswith(f"{obj.__name__}(")  # a dataclass's default
    return not auto


def public_api(slug: str) -> dict[str, object]:
    """A package's public names as the package states them (the independent reference, not
    the doc builder's own list): its `__all__`, and the names its `__dir__` lists beside it
    (those of an optional extra, left out of `__all__`), each with its object."""
    package = importlib.import_module(MANIFEST[slug]["import"])
    names = set(package.__all__) | {n for n in dir(package) if not n.startswith("_")}
    return {name: getattr(package, name) for name in sorted(names)}


def docstring_coverage() -> tuple[int, list[str]]:
    """(objects in every package's `__all__`, those without a docstring of their own)."""
    total, missing = 0, []
    for slug in sorted(MANIFEST):
        for name, obj in public_api(slug).items():
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            total += 1
            if not _documented(obj):
                missing.append(f"{MANIFEST[slug]['import']}.{name}")
    return total, missing


def api_missing(slug: str, page: str) -> list[str]:
    """The names of `__all__` that the package's page documents nowhere (no mkdocstrings
    heading `id="<package>.<module>.<name>"`)."""
    package = re.escape(MANIFEST[slug]["import"])
    return [
        name
        for name in public_api(slug)
        if not re.search(rf'id="{package}(?:\.\w+)*\.{re.escape(name)}"', page)
    ]


def test_every_exported_object_has_a_docstring():
    total, missing = docstring_coverage()
    assert total > 400
    assert missing == [], f"{len(missing)} of {total} undocumented: {missing}"


def test_the_pages_are_checked_against_all_and_the_builder_documents_all_of_it():
    """An empty page misses every name of `__all__` (the check cannot pass vacuously, as one
    against the builder's own list did when that list was empty), and the builder's list is
    each package's public API."""
    for slug in MANIFEST:
        names = set(public_api(slug))
        assert set(importlib.import_module(MANIFEST[slug]["import"]).__all__), slug
        assert set(api_missing(slug, "")) == names
        assert {name for name, _ in build.exports(slug, MANIFEST)} == names, slug


def test_every_package_has_a_page_with_its_api(site):
    for slug, table in MANIFEST.items():
        page = (site / "packages" / slug / "index.html").read_text()
        assert table["dist"] in page
        assert api_missing(slug, page) == [], slug  # mkdocstrings resolved each name


def core_api_missing(page: str) -> list[str]:
    """What a plugin author needs that the core's API page documents nowhere: each name of
    `paperplug.__all__`, and each public function and class of the hook specs, the checks,
    the testing plugin, the battery, the state store and the door (as those modules define
    them)."""
    import paperplug

    wanted = [f"paperplug.{name}" for name in paperplug.__all__]
    for module in ("hookspecs", "checks", "testing", "battery", "state", "door"):
        mod = importlib.import_module(f"paperplug.{module}")
        wanted += [
            f"paperplug.{module}.{name}"
            for name, obj in vars(mod).items()
            if not name.startswith("_")
            and (inspect.isfunction(obj) or inspect.isclass(obj))
            and obj.__module__ == mod.__name__
        ]
    ids = set(re.findall(r'id="(paperplug[.\w]*)"', page))
    return [w for w in wanted if w not in ids]


def test_the_core_has_an_api_reference_page(site):
    """issue 48: paperplug.load, register_component, the roles and their results, Guard and
    composition, paperplug.checks, paperplug.testing and the hook specs on one page."""
    assert len(core_api_missing("")) > 80  # the check cannot pass on an empty page
    page = (site / "api" / "core" / "index.html").read_text()
    assert core_api_missing(page) == []
    home = (site / "index.html").read_text()
    assert 'href="api/core/"' in home  # in the navigation


def test_a_code_span_s_escaped_pipe_in_a_table_loses_its_backslash():
    row = '| kind | `difference(kind="locally_biased" \\| "standard")` and `a \\| b` |'
    assert build.table_code_pipes(row) == (
        '| kind | `difference(kind="locally_biased" | "standard")` and `a | b` |'
    )
    prose = "outside a table `a \\| b` stays as written"
    assert build.table_code_pipes(prose) == prose


@contextlib.contextmanager
def served(folder: Path):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        options=options, service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver")
    )
    try:
        yield driver
    finally:
        driver.quit()


def _visit(driver, url: str) -> dict:
    driver.get(url)
    for _ in range(100):
        if driver.execute_script("return document.readyState") == "complete":
            break
        time.sleep(0.05)
    images = driver.execute_script(
        "return [...document.images].map(i => [i.src, i.complete && i.naturalWidth > 0])"
    )
    links = driver.execute_script(
        "return [...document.querySelectorAll('a[href]')].map(a => a.href)"
    )
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    return {"images": images, "links": links, "errors": errors}


def test_the_site_in_a_real_browser(site, browser):
    pages = ["", "benchmarks/", "api/core/", *(f"packages/{slug}/" for slug in sorted(MANIFEST))]
    with served(site) as base:
        checked, broken = set(), []
        for page in pages:
            seen = _visit(browser, base + page)
            assert seen["errors"] == [], (page, seen["errors"])
            assert all(ok for _, ok in seen["images"]), (
                page,
                [s for s, ok in seen["images"] if not ok],
            )
            for link in seen["links"]:
                target = urllib.parse.urldefrag(link)[0]
                if not target.startswith(base) or target in checked:
                    continue
                checked.add(target)
                try:
                    urllib.request.urlopen(target, timeout=10)
                except OSError as exc:
                    broken.append((page, target, str(exc)))
            # a table's code as a reader sees it: no escaping backslash before a pipe
            cells = browser.execute_script(
                "return [...document.querySelectorAll('td code, th code')].map(c => c.innerText)"
            )
            assert not [c for c in cells if "\\|" in c], (page, [c for c in cells if "\\|" in c])
            if page == "packages/rdx/":
                assert any('kind="locally_biased" | "standard"' in c for c in cells), cells
            if page == "":
                browser.save_screenshot(str(site / "screenshot-home.png"))
            if page == "packages/fixlip/":
                browser.save_screenshot(str(site / "screenshot-fixlip.png"))
        assert broken == []
        assert len(checked) >= len(MANIFEST) + 4  # every page, the guides, the benchmarks
        # the search box: "Banzhaf" finds FIxLIP's page
        from selenium.webdriver.common.by import By

        browser.get(base)
        browser.find_element(By.CSS_SELECTOR, "label.md-search__icon, .md-search__input").click()
        box = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
        box.send_keys("Banzhaf")
        hits = []
        for _ in range(100):
            hits = [
                a.get_attribute("href")
                for a in browser.find_elements(By.CSS_SELECTOR, ".md-search-result__link")
            ]
            if hits:
                break
            time.sleep(0.1)
        assert any("/packages/fixlip/" in h for h in hits), hits
    assert (site / "screenshot-home.png").stat().st_size > 10_000
    assert (site / "screenshot-fixlip.png").stat().st_size > 10_000
