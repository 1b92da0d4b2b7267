package dev.transferengine.sample;

import dev.transferengine.exceptions.PeerUnreachableException;

import org.jspecify.annotations.Nullable;

/**
 * The JSON body of a failed request.
 *
 * @param error   the exception's simple class name, e.g. {@code PeerUnreachableException}
 * @param message what went wrong
 * @param peer    the NetworkAddress (text form) of the peer that failed, if a peer did
 */
public record ErrorBody(
        String error, String message, @Nullable String peer) {

    /**
     * The body that describes {@code error}.
     *
     * @param error the failure
     * @return its body
     */
    public static ErrorBody of(final Throwable error) {
        final String peer = error instanceof PeerUnreachableException unreachable
                ? unreachable.peer().toString()
                : null;
        return new ErrorBody(error.getClass().getSimpleName(), String.valueOf(error.getMessage()), peer);
    }
}
