package dev.transferengine.autoconfigure.observation;

import dev.transferengine.reactive.TransferDescription;

import io.micrometer.observation.Observation;

/**
 * The context of one transfer's observation: what the transfer is and, once it ended, how. Written by the
 * subscribing thread and then by the engine's callback thread, each before handing on (Reactor's signals order them).
 */
public final class TransferObservationContext extends Observation.Context {

    private final String engine;
    private final TransferDescription transfer;
    private String outcome = "unknown";

    TransferObservationContext(final String engine, final TransferDescription transfer) {
        this.engine = engine;
        this.transfer = transfer;
    }

    /**
     * The engine whose facade made the transfer.
     *
     * @return its bean name, or {@code unnamed} for an observer that was not given one
     */
    public String engine() {
        return engine;
    }

    /**
     * The transfer observed.
     *
     * @return its kind, transport, routing and peer
     */
    public TransferDescription transfer() {
        return transfer;
    }

    /**
     * How it ended: {@code success}, {@code failure}, {@code timeout} (operation or imm timeout) or {@code cancelled}
     * (the subscriber left; a write already posted still ends inside the engine); {@code unknown} while it runs.
     *
     * @return the outcome, one of the names above
     */
    public String outcome() {
        return outcome;
    }

    void outcome(final String value) {
        this.outcome = value;
    }
}
