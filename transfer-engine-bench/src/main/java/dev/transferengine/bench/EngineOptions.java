package dev.transferengine.bench;

import dev.transferengine.GroupSpec;
import dev.transferengine.IdleStrategyKind;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import picocli.CommandLine.Option;

/** The engine options shared by {@code write} and {@code serve}; a spawned peer gets the same ones. */
public final class EngineOptions {

    @Option(names = "--transport", defaultValue = "tcp", description = "tcp (default) or fabric")
    String transport;

    @Option(names = "--nics", defaultValue = "1", description = "NICs in the group, 1..4 (default ${DEFAULT-VALUE})")
    int nics;

    @Option(names = "--provider", description = "libfabric provider for --transport fabric: shm or tcp")
    String provider;

    @Option(names = "--idle", defaultValue = "backoff", description = "worker idle strategy: spin, backoff or yield (default ${DEFAULT-VALUE})")
    String idle;

    @Option(names = "--option", description = "engine option KEY=VALUE, repeatable (e.g. tcp.socketBufferBytes=0)")
    List<String> options = new ArrayList<>();

    @Option(names = "--worker-cpu", description = "CPU to pin this process's worker to (the spawned peer is not pinned)")
    Integer workerCpu;

    /** The idle strategy named by {@code --idle}. */
    IdleStrategyKind idleStrategy() {
        return IdleStrategyKind.valueOf(idle.toUpperCase(Locale.ROOT));
    }

    /** Builds and starts the engine these options describe. Blocks while the NICs open. */
    TransferEngine open() {
        GroupSpec group = GroupSpec.of(nics);
        if (workerCpu != null) {
            group = group.withWorkerCpu(workerCpu);
        }
        final TransferEngineBuilder builder = TransferEngine.builder()
            .transport(transport)
            .group(group)
            .idleStrategy(idleStrategy())
            .operationTimeout(Duration.ofSeconds(30))
            .drainTimeout(Duration.ofSeconds(2))
            .submitQueueCapacity(8192);
        if (provider != null) {
            builder.option("fabric.provider", provider);
        }
        for (final String option : options) {
            final int equals = option.indexOf('=');
            if (equals <= 0) {
                throw new IllegalArgumentException("--option wants KEY=VALUE, not '" + option + "'");
            }
            builder.option(option.substring(0, equals), option.substring(equals + 1));
        }
        return builder.build();
    }

    /** The command-line form of these options for a spawned peer (without the worker CPU). */
    List<String> peerArgs() {
        final List<String> args = new ArrayList<>(List.of("--transport", transport, "--nics", Integer.toString(nics),
            "--idle", idle));
        if (provider != null) {
            args.add("--provider");
            args.add(provider);
        }
        for (final String option : options) {
            args.add("--option");
            args.add(option);
        }
        return args;
    }
}
