package dev.transferengine.bench;

import dev.transferengine.MemoryRegion;
import dev.transferengine.TransferEngine;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.util.Set;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code te-bench serve}: the passive side. Registers one region, prints its {@link PeerLine} on stdout, answers
 * hellos and imm pings (the pong posted by the worker that counts the ping, or by a thread of its own: {@code --echo}),
 * and serves until its standard input closes (or it is killed). With {@code --huge-pages} a
 * {@value #HUGE_PAGES_PREFIX} line before the peer line says how many bytes of the region huge pages back.
 */
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        description = "Serve as the write target; prints 'te-peer <address> <descriptor>' and runs until stdin closes.")
public final class ServeCommand implements Callable<Integer> {

    /** The line {@code te-huge-pages <bytes>}: the bytes of the target region that huge pages back after its fill. */
    static final String HUGE_PAGES_PREFIX = "te-huge-pages";

    private static final Set<String> ECHOES = Set.of("worker", "thread");

    @Mixin
    EngineOptions engineOptions;

    @Option(
            names = "--region",
            defaultValue = "64MiB",
            converter = SizeConverter.class,
            description = "size of the registered target region (default ${DEFAULT-VALUE})")
    long region;

    @Option(
            names = "--huge-pages",
            description = "back the host region with transparent huge pages where the kernel gives them (madvise"
                    + " MADV_HUGEPAGE, 2 MiB aligned); prints '" + HUGE_PAGES_PREFIX + " <bytes backed>' first")
    boolean hugePages;

    @Option(
            names = "--echo",
            defaultValue = "${env:TE_BENCH_ECHO:-worker}",
            description = "who posts the pong of an imm ping: worker (the engine's worker that counts the ping, an"
                    + " ImmTrigger) or thread (a thread of serve's own polls the ping counter and submits it); default"
                    + " $TE_BENCH_ECHO or worker")
    String echo;

    @Spec
    CommandSpec spec;

    private final InputStream stdin;

    /** Serves until {@link System#in} closes. */
    public ServeCommand() {
        this(System.in);
    }

    ServeCommand(final InputStream stdin) {
        this.stdin = stdin;
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (!ECHOES.contains(echo)) {
            throw new ParameterException(spec.commandLine(), "--echo must be worker or thread, not '" + echo + "'");
        }
        try (Arena arena = Arena.ofShared();
                RegionMemory memory =
                        RegionMemory.allocate(arena, engineOptions.device(), region, (byte) 0, hugePages);
                TransferEngine engine = engineOptions.open()) {
            if (hugePages) {
                System.out.println(HUGE_PAGES_PREFIX + " " + memory.hugePageBytes());
            }
            final MemoryRegion target = engine.register(memory.segment(), memory.device());
            try (ServerSession _ = new ServerSession(
                    engine, target, IdleStrategies.of(engineOptions.idleStrategy()), "worker".equals(echo))) {
                System.out.println(new PeerLine(engine.mainAddress(), target.descriptor()).format());
                System.out.flush();
                drain(stdin);
            }
        }
        return 0;
    }

    /** Blocks until end of input: the parent closing our stdin is the stop signal. */
    private static void drain(final InputStream in) throws IOException {
        in.transferTo(OutputStream.nullOutputStream());
    }
}
