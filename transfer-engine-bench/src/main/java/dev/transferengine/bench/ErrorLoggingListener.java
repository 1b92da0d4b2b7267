package dev.transferengine.bench;

import dev.transferengine.TransferListener;
import dev.transferengine.exceptions.TransferEngineException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** For the bench's control messages, whose success needs no action: a failure is logged (to stderr), not lost. */
final class ErrorLoggingListener implements TransferListener {

    private static final Logger LOG = LoggerFactory.getLogger(ErrorLoggingListener.class);

    private final String what;

    ErrorLoggingListener(final String what) {
        this.what = what;
    }

    @Override
    public void onDone() {
        // nothing to do: the peer acts on the message
    }

    @Override
    public void onError(final TransferEngineException error) {
        LOG.warn("{} failed: {}", what, error.toString());
    }
}
