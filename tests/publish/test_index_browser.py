"""The published pages read in a real browser (issue 32, point 5): the Debian Chromium, headless, driven by
Playwright, scripts disabled, every request logged. What a reader sees: the labels of §7.3, the constant line
first in each table, the stack's mention on each community line, each line's link to its report and each
assertion's link to its proof, and the draft's banner; nothing loaded from elsewhere, no script at all.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_run import run_corpus
from index_community import CLOSE, frozen_checkout, write_community
from playwright.sync_api import Browser, Page, sync_playwright

from generator.publish.wording import AI_ACT, BROUILLON_TEXTE, CALIBRATION, STACK_DECLAREE

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
WIDTH = 1280


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The conformité index published at the close, and a draft of it: kind -> OUT/conformite/."""
    tmp = tmp_path_factory.mktemp("pages")
    (salt, anchor) = frozen_checkout(tmp / "checkout", ("conformite",))["conformite"]
    c = write_community(tmp / "checkout", "conformite", tmp / "service")
    out = {}
    for kind, extra in (("publie", []), ("brouillon", ["--brouillon"])):
        ran = run_corpus("index", "--track", "conformite", "--submissions", str(c.submissions), "--registrations",
                         str(c.registrations), "--out", str(tmp / kind), "--season-close", CLOSE, "--salt-file",
                         str(salt), "--anchor", str(anchor), "--root", str(tmp / "checkout"), *extra)
        assert ran.returncode == 0, ran.stderr
        out[kind] = tmp / kind / "conformite"
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert Path(CHROMIUM).exists(), "chromium is not installed: make setup installs the Debian package"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


def _open(browser: Browser, path: Path, requested: list[str]) -> Page:
    context = browser.new_context(java_script_enabled=False, viewport={"width": WIDTH, "height": 900})
    page = context.new_page()
    page.on("request", lambda request: requested.append(request.url))
    page.goto(path.as_uri())
    return page


def test_a_reader_sees_the_index_as_the_spec_publishes_it(browser: Browser, pages: dict[str, Path]) -> None:
    requested: list[str] = []
    page = _open(browser, pages["publie"] / "index.html", requested)
    assert page.locator("script").count() == 0 and page.locator("link[rel=stylesheet]").count() == 0
    text = page.inner_text("body")
    assert AI_ACT in text and page.locator("#ai-act").is_visible()
    assert f"Runs de référence : {CALIBRATION}" in text
    assert BROUILLON_TEXTE not in text
    for table in ("reference", "communaute"):
        rows = page.locator(f"#{table} tbody tr")
        first = rows.first.inner_text()
        assert "meilleure réponse constante" in first and "4/10" in first and "sans objet" in first
        box = page.locator(f"#{table} table").bounding_box()
        assert box is not None and box["width"] <= WIDTH  # readable without scrolling sideways
    community = page.locator("#communaute tbody tr.participant")
    assert community.count() == 6
    for n in range(6):
        assert STACK_DECLAREE in community.nth(n).inner_text()  # on every line, as a reader sees it
    links = page.get_by_role("link", name="lien vers les preuves")
    assert links.count() == 7
    page.locator("#communaute tr", has_text="Agent Surconfiant").get_by_role("link").click()
    assert page.url.endswith("/rapports/agent-surconfiant.html")
    assert all(url.startswith("file://") for url in requested), requested


def test_a_reader_sees_the_report_with_each_assertion_linked_to_its_proof(browser: Browser,
                                                                          pages: dict[str, Path]) -> None:
    requested: list[str] = []
    page = _open(browser, pages["publie"] / "rapports" / "agent-surconfiant.html", requested)
    text = page.inner_text("body")
    assert AI_ACT in text and "Rapport individuel : Agent Surconfiant" in text
    unsupported = page.locator("#assertions-non-etayees tbody tr")
    assert unsupported.count() == 1 and "valeur ne correspondant pas" in unsupported.first.inner_text()
    assert page.locator("#score tbody tr").first.inner_text().startswith("meilleure réponse constante")
    rows = page.locator("section.tache tbody tr")
    assert rows.count() > 20
    for n in range(rows.count()):
        link = rows.nth(n).get_by_role("link")
        href = link.first.get_attribute("href") or ""
        assert link.first.inner_text().startswith("lien vers les preuves")
        assert href.startswith("https://trust.arkforge.tech/v1/proof/prf_"), href
    assert page.get_by_text("Récit de l'agent").count() == 10
    assert all(url.startswith("file://") for url in requested), requested


def test_a_reader_sees_the_draft_banner_on_every_page(browser: Browser, pages: dict[str, Path]) -> None:
    for name in ("index.html", "rapports/agent-honnete-1.html", "rapports/run-de-reference-orfeo.html"):
        page = _open(browser, pages["brouillon"] / name, [])
        banner = page.locator("#brouillon")
        assert banner.is_visible() and banner.inner_text() == BROUILLON_TEXTE, name
        assert page.locator("#brouillon").bounding_box() is not None
        assert (page.locator("#brouillon").bounding_box() or {"y": 1e9})["y"] < 100  # at the top, seen first
