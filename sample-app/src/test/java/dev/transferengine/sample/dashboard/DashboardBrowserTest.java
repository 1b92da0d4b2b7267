package dev.transferengine.sample.dashboard;

import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The dashboard at {@code /} in headless Chromium: it shows both engines of the demo, its numbers move, and it
 * saves a screenshot to {@code target/screenshots/dashboard.png} (docs/images/dashboard.png is a copy of one).
 * Needs Debian's {@code chromium} and {@code chromium-driver}; other paths through {@code -Dchromium.binary} and
 * {@code -Dchromium.driver}.
 */
class DashboardBrowserTest {

    private static final Path CHROMIUM = Path.of(System.getProperty("chromium.binary", "/usr/bin/chromium"));
    private static final Path DRIVER = Path.of(System.getProperty("chromium.driver", "/usr/bin/chromedriver"));
    private static final Path SCREENSHOT = Path.of("target", "screenshots", "dashboard.png");

    @Test
    void showsBothEnginesOfTheDemoWithLiveNumbers() throws IOException {
        assumeTrue(
                Files.isExecutable(CHROMIUM) && Files.isExecutable(DRIVER),
                "needs headless Chromium and its driver at " + CHROMIUM + " and " + DRIVER
                        + " (Debian: apt-get install chromium chromium-driver; .ci/run installs them)");
        try (SampleNode demo = SampleNode.start(Role.DEMO, "sample.demo.interval=100ms", "sample.demo.tokens=256")) {
            final WebDriver browser = chromium();
            try {
                browser.get(demo.url() + "/");
                // the page is redrawn on every snapshot: an element found a moment ago may be gone
                final ConditionFactory page =
                        await().atMost(Duration.ofMinutes(2)).ignoreExceptions();

                final long received = page.until(() -> number(browser, "decodeEngine", "imms"), imms -> imms > 0);
                page.until(() -> number(browser, "decodeEngine", "imms"), imms -> imms > received);
                final double written = page.until(() -> megabytes(browser, "transferEngine", "bytesOut"), mb -> mb > 0);
                page.until(() -> megabytes(browser, "transferEngine", "bytesOut"), mb -> mb > written);
                // a chart line with half a minute of rates makes the screenshot worth looking at
                page.until(() -> points(browser, "decodeEngine", "in"), points -> points >= 60);

                // each read retried as a whole: a redraw between finding an element and reading it makes it stale
                assertThat(page.until(
                                () -> browser.findElements(By.cssSelector(".engine")).stream()
                                        .map(card -> card.getDomAttribute("data-engine"))
                                        .toList(),
                                Objects::nonNull))
                        .containsExactly("transferEngine", "decodeEngine");
                assertThat(page.until(() -> browser.findElement(By.id("status")).getText(), Objects::nonNull))
                        .startsWith("live");
                assertThat(page.until(
                                () -> browser.findElement(By.cssSelector("#latencies tbody"))
                                        .getText(),
                                Objects::nonNull))
                        .contains("sample.kv.layer.write");
                Files.createDirectories(SCREENSHOT.getParent());
                Files.write(SCREENSHOT, ((ChromeDriver) browser).getScreenshotAs(OutputType.BYTES));
            } finally {
                browser.quit();
            }
        }
    }

    private static WebDriver chromium() {
        final ChromeOptions options = new ChromeOptions()
                .setBinary(CHROMIUM.toFile())
                .addArguments(
                        "--headless=new",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--disable-dev-shm-usage",
                        "--hide-scrollbars",
                        "--window-size=1300,1150");
        final ChromeDriverService driver = new ChromeDriverService.Builder()
                .usingDriverExecutable(DRIVER.toFile())
                .usingAnyFreePort()
                .build();
        return new ChromeDriver(driver, options);
    }

    /** The value of a cell {@code data-metric} of the engine's NIC 0.0, as the page shows it. */
    private static String cell(final WebDriver page, final String engine, final String metric) {
        return page.findElement(By.cssSelector(
                        ".engine[data-engine='" + engine + "'] tr[data-nic='0.0'] td[data-metric='" + metric + "']"))
                .getText();
    }

    private static long number(final WebDriver page, final String engine, final String metric) {
        return Long.parseLong(cell(page, engine, metric));
    }

    private static double megabytes(final WebDriver page, final String engine, final String metric) {
        return Double.parseDouble(cell(page, engine, metric));
    }

    private static int points(final WebDriver page, final String engine, final String field) {
        final String attribute = page.findElement(By.cssSelector(
                        ".engine[data-engine='" + engine + "'] polyline[data-nic='0.0'][data-field='" + field + "']"))
                .getDomAttribute("points");
        final List<String> points = List.of(
                Objects.requireNonNull(attribute, "the polyline has points").split(" "));
        return points.size();
    }
}
