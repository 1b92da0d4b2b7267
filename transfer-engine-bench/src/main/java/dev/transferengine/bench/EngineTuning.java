package dev.transferengine.bench;

import dev.transferengine.IdleStrategyKind;
import dev.transferengine.TransferEngineBuilder;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import picocli.CommandLine.Option;

/**
 * The engine options every te-bench command that builds engines shares ({@code write}, {@code serve}, {@code moe}):
 * the workers' idle strategy, the engine options given as {@code KEY=VALUE}, and the timeouts te-bench builds with.
 */
public final class EngineTuning {

    @Option(
            names = "--idle",
            defaultValue = "backoff",
            description = "workers' idle strategy: spin, backoff or yield (default ${DEFAULT-VALUE})")
    String idle;

    @Option(
            names = "--option",
            description = "engine option KEY=VALUE for every engine, repeatable (e.g. tcp.socketBufferBytes=0,"
                    + " fabric.library=PATH)")
    List<String> options = new ArrayList<>();

    /**
     * The idle strategy named by {@code --idle}.
     *
     * @throws IllegalArgumentException if it is not spin, backoff or yield
     */
    IdleStrategyKind idleStrategy() {
        try {
            return IdleStrategyKind.valueOf(idle.toUpperCase(Locale.ROOT));
        } catch (final IllegalArgumentException e) {
            throw new IllegalArgumentException("--idle must be spin, backoff or yield, not '" + idle + "'", e);
        }
    }

    /**
     * Sets the idle strategy, every {@code --option} and te-bench's timeouts on {@code builder}.
     *
     * @throws IllegalArgumentException if an {@code --option} is not KEY=VALUE
     */
    TransferEngineBuilder apply(final TransferEngineBuilder builder) {
        builder.idleStrategy(idleStrategy())
                .operationTimeout(Duration.ofSeconds(30))
                .drainTimeout(Duration.ofSeconds(2));
        for (final String option : options) {
            final int equals = option.indexOf('=');
            if (equals <= 0) {
                throw new IllegalArgumentException("--option wants KEY=VALUE, not '" + option + "'");
            }
            builder.option(option.substring(0, equals), option.substring(equals + 1));
        }
        return builder;
    }

    /** The command-line form of these options, for a spawned peer. */
    List<String> args() {
        final List<String> args = new ArrayList<>(List.of("--idle", idle));
        for (final String option : options) {
            args.add("--option");
            args.add(option);
        }
        return args;
    }
}
