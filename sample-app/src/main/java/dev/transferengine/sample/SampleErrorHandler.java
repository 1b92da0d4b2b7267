package dev.transferengine.sample;

import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.exceptions.MalformedDescriptorException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.reactive.function.client.WebClientResponseException;

/**
 * Turns failures into JSON with a status that says whose fault it was: the caller's (400, 409), a peer's (502, 504)
 * or this node's (500).
 */
@RestControllerAdvice
class SampleErrorHandler {

    private static final Logger LOG = LoggerFactory.getLogger(SampleErrorHandler.class);

    @ExceptionHandler({IllegalArgumentException.class, MalformedDescriptorException.class})
    ResponseEntity<ErrorBody> badRequest(final RuntimeException error) {
        return respond(HttpStatus.BAD_REQUEST, error);
    }

    @ExceptionHandler(BusyException.class)
    ResponseEntity<ErrorBody> busy(final BusyException error) {
        return respond(HttpStatus.CONFLICT, error);
    }

    /** A peer failed; {@link ImmAbandonedException} is prefill telling decode that its transfer failed there. */
    @ExceptionHandler({
        PeerUnreachableException.class,
        ImmAbandonedException.class,
        WebClientRequestException.class,
        WebClientResponseException.class
    })
    ResponseEntity<ErrorBody> peerFailed(final RuntimeException error) {
        return respond(HttpStatus.BAD_GATEWAY, error);
    }

    @ExceptionHandler(TransferTimeoutException.class)
    ResponseEntity<ErrorBody> timedOut(final TransferTimeoutException error) {
        return respond(HttpStatus.GATEWAY_TIMEOUT, error);
    }

    @ExceptionHandler(TransferEngineException.class)
    ResponseEntity<ErrorBody> engineFailed(final TransferEngineException error) {
        return respond(HttpStatus.INTERNAL_SERVER_ERROR, error);
    }

    private static ResponseEntity<ErrorBody> respond(final HttpStatus status, final RuntimeException error) {
        LOG.warn("{}: {}", status.value(), error.toString());
        return ResponseEntity.status(status).body(ErrorBody.of(error));
    }
}
