/**
 * The Reactor facade over the transfer engine ({@code dev.transferengine.reactive}): cold {@code Mono}s and
 * {@code Flux}es over {@link dev.transferengine.TransferEngine}. On the module path or the class path it also marks the
 * engine's worker and callback threads as Reactor {@code NonBlocking}, so Reactor refuses {@code block()} on them.
 */
// Reactor has no module descriptor and is an automatic module: javac warns about each requires of one.
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.transferengine.reactive {
    requires transitive dev.transferengine;
    requires transitive reactor.core; // the facade returns Flux and Mono

    exports dev.transferengine.reactive;

    provides dev.transferengine.spi.EngineThreadFactory with
            dev.transferengine.reactive.internal.NonBlockingEngineThreads;
}
