package dev.transferengine.autoconfigure.observation;

import dev.transferengine.reactive.TransferDescription;

import io.micrometer.observation.Observation;

/**
 * The context of one transfer's observation: what the transfer is and, once it ended, how. Written by the
 * subscribing thread and then by the engine's callback thread, each before handing on (Reactor's signals order them).
 */
public final class TransferObservationContext extends Observation.Context {

    private final TransferDescription transfer;
    private String outcome = "unknown";

    TransferObservationContext(final TransferDescription transfer) {
        this.transfer = transfer;
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
