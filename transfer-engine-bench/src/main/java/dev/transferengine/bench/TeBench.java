package dev.transferengine.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code te-bench}: the transfer engine's benchmark. {@code write} measures against a {@code serve} peer in another
 * JVM; {@code jmh} runs the JMH suites packed in the same jar.
 */
@Command(
        name = "te-bench",
        mixinStandardHelpOptions = true,
        version = "te-bench 0.1",
        subcommands = {WriteCommand.class, ServeCommand.class, MoeCommand.class, JmhCommand.class, ReportCommand.class},
        description = "Benchmarks the transfer engine on loopback.")
public final class TeBench implements Runnable {

    /** Runs a subcommand and exits with its status. */
    public static void main(final String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line, for callers that run te-bench in-process (tests). */
    public static CommandLine commandLine() {
        return new CommandLine(new TeBench());
    }

    @Override
    public void run() {
        CommandLine.usage(this, System.err);
    }
}
