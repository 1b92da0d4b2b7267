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
        try (SampleNode demo = SampleNode.start(
                Role.DEMO, "sample.demo.interval=100ms", "sample.demo.tokens=256", "sample.dashboard.interval=200ms")) {
            // the server samples from start-up on: a page opened later starts with that history
            await().atMost(Duration.ofMinutes(2))
                    .until(() -> DashboardControllerTest.history(demo).size() >= 40);
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
                // the charts started with the server's history, not empty
                assertThat(page.until(
                                () -> browser.findElement(By.tagName("body")).getDomAttribute("data-history"),
                                Objects::nonNull))
                        .satisfies(
                                history -> assertThat(Integer.parseInt(history)).isGreaterThanOrEqualTo(40));
                // a chart line with half a minute of rates makes the screenshot worth looking at
                page.until(() -> points(browser, "decodeEngine", "in"), points -> points >= 60);
                // the legend draws 'in' as the chart does: dashed the same way (both read in one retried step)
                final List<String> dashes = page.until(
                        () -> List.of(
                                dash(browser, "decodeEngine", "polyline[data-nic='0.0'][data-field='in']"),
                                dash(browser, "decodeEngine", ".legend [data-nic='0.0'][data-field='in'] line")),
                        both -> !both.getFirst().isEmpty());
                assertThat(dashes.getLast()).isEqualTo(dashes.getFirst());
                // prefill receives no imms: no imm chart, a line saying so; decode has one
                assertThat(browser.findElements(
                                By.cssSelector(".engine[data-engine='transferEngine'] polyline[data-field='imm']")))
                        .isEmpty();
                assertThat(browser.findElements(
                                By.cssSelector(".engine[data-engine='transferEngine'] [data-chart='imm-none']")))
                        .hasSize(1);
                page.until(() -> points(browser, "decodeEngine", "imm"), points -> points > 0);
                // decode's peer table says that states are decode's own connections (prefill only writes to it)
                assertThat(page.until(
                                () -> browser.findElement(By.cssSelector(".engine[data-engine='decodeEngine']"))
                                        .getText(),
                                Objects::nonNull))
                        .contains("Peers of decodeEngine", "state of this engine's connection to it");

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
                        .contains("KV: one layer's paged write")
                        .doesNotContain("sample.kv.layer.write");
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

    /** The {@code stroke-dasharray} of an element of the engine's card, empty when it has none. */
    private static String dash(final WebDriver page, final String engine, final String selector) {
        return Objects.requireNonNullElse(
                page.findElement(By.cssSelector(".engine[data-engine='" + engine + "'] " + selector))
                        .getDomAttribute("stroke-dasharray"),
                "");
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
