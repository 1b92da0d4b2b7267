package dev.transferengine.exceptions;

import java.io.Serial;

/**
 * The caller cancelled the operation ({@link dev.transferengine.TransferEngine#cancel}, or a cancelled reactive
 * write): not yet posted, it was never posted; posted, its queued pieces were withdrawn, and pieces already handed
 * to the transport may still land (docs/delivery-contract.md), which the receiver fences by rekeying.
 *
 * <p>Stackless: an expected outcome, cheap to make.
 */
public final class OperationCancelledException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * A stackless cancellation.
     *
     * @param message what was cancelled, and whether it had been posted
     */
    public OperationCancelledException(final String message) {
        super(message, null, true);
    }
}
