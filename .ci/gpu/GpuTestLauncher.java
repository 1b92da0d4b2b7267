import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import java.io.PrintWriter;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;

/**
 * Runs the JUnit tests of the given packages or classes (a name whose last part starts with a capital letter) and
 * prints one line per test; exit code 1 on any failure.
 */
public final class GpuTestLauncher {

    private GpuTestLauncher() {
    }

    public static void main(final String[] packages) {
        final LauncherDiscoveryRequestBuilder builder = LauncherDiscoveryRequestBuilder.request();
        for (final String name : packages) {
            final String last = name.substring(name.lastIndexOf('.') + 1);
            builder.selectors(
                    !last.isEmpty() && Character.isUpperCase(last.charAt(0)) ? selectClass(name) : selectPackage(name));
        }
        final LauncherDiscoveryRequest request = builder.build();
        final SummaryGeneratingListener summary = new SummaryGeneratingListener();
        final TestExecutionListener lines = new TestExecutionListener() {
            @Override
            public void executionSkipped(final TestIdentifier test, final String reason) {
                System.out.println("SKIPPED " + test.getDisplayName() + ": " + reason);
            }

            @Override
            public void executionFinished(final TestIdentifier test, final TestExecutionResult result) {
                if (test.isTest() || result.getStatus() != TestExecutionResult.Status.SUCCESSFUL) {
                    System.out.println(result.getStatus() + " " + test.getLegacyReportingName()
                        + result.getThrowable().map(t -> " -- " + t).orElse(""));
                }
            }
        };
        LauncherFactory.create().execute(request, summary, lines);
        final PrintWriter out = new PrintWriter(System.out, true);
        summary.getSummary().printTo(out);
        summary.getSummary().printFailuresTo(out, 30);
        System.exit(summary.getSummary().getTotalFailureCount() == 0 ? 0 : 1);
    }
}
