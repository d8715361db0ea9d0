"""The web page in a real browser: Debian's Chromium, headless, driven by selenium through
chromedriver. A question asked on the page streams its steps, shows the answer and its
evidence bars, and a click on a bar seeks the video. `make test` installs the browser when it
can (root and apt-get); elsewhere this test skips and says why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from live_server import live
from memory_stores import late_question, offline_models, scripted_store

from videomem.config import load_agent
from videomem.server.app import create_app

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1150",
]


@pytest.fixture
def browser(tmp_path, monkeypatch):
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        pytest.skip("needs Debian's chromium and chromium-driver (`make test` installs them as root with apt-get)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")  # never let Selenium Manager reach for the network
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.mark.slow
def test_the_page_answers_shows_evidence_and_seeks_the_video(tmp_path_factory, tmp_path, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    store_dir, corpus = scripted_store(tmp_path_factory.getbasetemp())
    q, event = late_question(corpus)
    wait = WebDriverWait(browser, 180)
    with live(create_app(store_dir, offline_models(), load_agent())) as base:
        browser.get(base + "/")
        wait.until(lambda b: b.execute_script("return document.getElementById('player').readyState >= 1"))
        assert browser.execute_script("return document.getElementById('player').duration") == pytest.approx(720, abs=1)
        assert "1 video(s), 72 clips" in browser.find_element(By.ID, "store-summary").text

        browser.find_element(By.ID, "question").send_keys(q.question)
        browser.find_element(By.ID, "choices").send_keys("\n".join(q.choices))
        browser.find_element(By.ID, "ask-button").click()
        wait.until(ready.visibility_of_element_located((By.ID, "answer")))
        assert browser.find_element(By.ID, "answer-text").text == f"{q.answer}. {q.answer_text}"
        steps = [li.find_element(By.CLASS_NAME, "tool").text for li in browser.find_elements(By.CSS_SELECTOR, "#steps li")]
        assert steps[0] == "video.retrieval" and steps[-1] == "answer"

        bars = browser.find_elements(By.CLASS_NAME, "evidence-bar")
        items = browser.find_elements(By.CLASS_NAME, "evidence-item")
        spans = {item.find_element(By.CLASS_NAME, "seek").text for item in items}
        assert bars and len(bars) == len(spans)  # one bar per time range of the evidence
        starts = [float(bar.get_attribute("data-t")) for bar in bars]
        assert any(event.t_start - 10 <= t < event.t_end for t in starts)
        thumbs = browser.find_elements(By.CSS_SELECTOR, ".thumbs img")
        assert thumbs
        wait.until(lambda b: b.execute_script(
            "return [...document.querySelectorAll('.thumbs img')].every(i => i.complete && i.naturalWidth > 0)"
        ))

        target = next(n for n, t in enumerate(starts) if event.t_start - 10 <= t < event.t_end)  # the event's bar
        assert browser.execute_script("return document.getElementById('player').currentTime") < starts[target] - 5
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", bars[target])
        bars[target].click()
        wait.until(lambda b: abs(b.execute_script("return document.getElementById('player').currentTime") - starts[target]) < 0.5)
        wait.until(lambda b: b.execute_script("return !document.getElementById('player').seeking"))
        browser.execute_script("window.scrollTo(0, 0)")
        screenshot = tmp_path / "page.png"
        assert browser.save_screenshot(str(screenshot)) and screenshot.stat().st_size > 10_000
        shutil.copyfile(screenshot, tmp_path_factory.getbasetemp() / "server-page.png")
