"""The viewer in headless Chromium (Debian's ``chromium`` with its ``chromedriver``, driven
by Selenium): the tree expands, selecting arrays shows previews of the right size, sliders
move through a 3-D array. No browser is a failure, not a skip: ``make test`` installs one.

With ``ZARRKIT_SCREENSHOT=1`` the test saves the viewer as ``docs/viewer.png``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

import zarrkit as zk
from zarrkit.server import BackgroundServer
from zarrkit.server.preview import PLOT_SIZE

SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "viewer.png"
WAIT = 30  # seconds: a bound for a slow, shared machine, not a timing under test


def find(*candidates: str) -> str | None:
    """The first of ``candidates`` (paths or command names) that exists."""
    for candidate in candidates:
        found = shutil.which(candidate) or (candidate if os.path.isfile(candidate) else None)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    binary = find("/usr/bin/chromium", "chromium", "chromium-browser")
    driver_path = find("/usr/bin/chromedriver", "chromedriver")
    if binary is None or driver_path is None:
        pytest.fail("no Chromium and chromedriver found: `make test` installs them (its "
                    "`browser` target runs apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--window-size=1280,860", "--hide-scrollbars"):
        options.add_argument(argument)
    # Both paths are given, so Selenium Manager never runs (it would download a driver).
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("viewer") / "demo.zarr"
    root = zk.open_group(path, mode="w", zarr_format=3)
    root.attrs.update({"title": "zarrkit viewer demo", "instrument": "simulated"})
    y, x = np.mgrid[0:240, 0:360]
    waves = np.sin(x / 23.0) * np.cos(y / 17.0) + 0.4 * np.sin((x + y) / 41.0)
    root.create_array("images/waves", shape=waves.shape, chunks=(64, 64), dtype="f4",
                      attributes={"units": "mV"}, dimension_names=["y", "x"])[:] = waves
    volume = np.arange(4 * 30 * 50, dtype="u2").reshape(4, 30, 50)
    root.create_array("images/volume", shape=volume.shape, chunks=(1, 30, 50), dtype="u2",
                      dimension_names=["z", "y", "x"])[:] = volume
    t = np.linspace(0, 8 * np.pi, 5000)
    root.create_array("signal", shape=t.shape, chunks=(1000,), dtype="f8")[:] = (
        np.sin(t) * np.exp(-t / 20))
    with BackgroundServer(path) as server:
        yield server.url


def item(driver: WebDriver, path: str) -> WebElement:
    """The tree item of ``path``, once it is shown."""
    return WebDriverWait(driver, WAIT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, f'li[data-path="{path}"]') or False)[0]


def preview_size(driver: WebDriver, path: str, loaded: str = "") -> tuple[int, int]:
    """The natural size of the preview image once the preview of the array at ``path``
    (at the held indices ``loaded``) is shown."""
    WebDriverWait(driver, WAIT).until(lambda d: d.execute_script(
        "const i = document.getElementById('preview');"
        "return i && i.dataset.path === arguments[0] && i.dataset.loaded === arguments[1]"
        " && i.naturalWidth > 0;", path, loaded))
    width, height = driver.execute_script(
        "const i = document.getElementById('preview'); return [i.naturalWidth, i.naturalHeight];")
    return int(width), int(height)


def test_tree_expands_and_previews_appear(browser: WebDriver, served: str) -> None:
    browser.get(served)
    images = item(browser, "images")
    assert not browser.find_elements(By.CSS_SELECTOR, 'li[data-path="images/waves"]')
    images.find_element(By.CSS_SELECTOR, ".toggle").click()

    item(browser, "images/volume").find_element(By.CSS_SELECTOR, ".label").click()
    assert preview_size(browser, "images/volume", "0") == (50, 30)
    slider = browser.find_element(By.CSS_SELECTOR, '#sliders input[data-axis="0"]')
    assert slider.get_attribute("max") == "3"
    browser.execute_script(
        "arguments[0].value = 2; arguments[0].dispatchEvent(new Event('input'));", slider)
    assert preview_size(browser, "images/volume", "2") == (50, 30)
    assert browser.find_element(By.ID, "preview-max").text == str(3 * 1500 - 1)

    item(browser, "signal").find_element(By.CSS_SELECTOR, ".label").click()
    assert preview_size(browser, "signal") == PLOT_SIZE

    item(browser, "images/waves").find_element(By.CSS_SELECTOR, ".label").click()
    assert preview_size(browser, "images/waves") == (360, 240)
    assert browser.find_element(By.ID, "colorbar").get_attribute("naturalWidth") == "256"
    assert float(browser.find_element(By.ID, "preview-min").text) < 0
    attributes = browser.find_element(By.ID, "attributes").text
    assert '"units": "mV"' in attributes
    if os.environ.get("ZARRKIT_SCREENSHOT"):
        SCREENSHOT.parent.mkdir(exist_ok=True)
        browser.save_screenshot(str(SCREENSHOT))
