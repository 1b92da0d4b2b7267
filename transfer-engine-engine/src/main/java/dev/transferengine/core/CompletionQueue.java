package dev.transferengine.core;

import dev.transferengine.exceptions.TransferEngineException;

import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * What the NICs of a group reported during a poll, queued by their {@link dev.transferengine.spi.DomainListener}s
 * and drained by the group right after, so the engine's bookkeeping runs in its own duty cycle rather than deep
 * inside a transport's I/O callback, and a bug in it is an engine error, not a lost connection. Parallel arrays
 * that grow only when a poll reports more than ever before: queuing allocates nothing in the steady state. Worker
 * thread only.
 */
final class CompletionQueue {

    static final byte COMPLETE = 1;
    static final byte FAILED = 2;
    static final byte RECEIVE = 3;
    /** Imms landed, as many as the event's count; the value is their reservation. */
    static final byte IMM = 4;
    /** A receive buffer came back unused from {@link dev.transferengine.spi.Domain#withdrawReceive}. */
    static final byte RECEIVE_WITHDRAWN = 5;

    private byte[] kinds;
    private int[] nics;
    private long[] tokens;
    private long[] values;
    private @Nullable TransferEngineException[] errors;
    /** How many pieces completed or failed, or imms landed, in one event: a run of pages reported at once. */
    private int[] counts;

    private int head;
    private int size;

    CompletionQueue(final int initialCapacity) {
        kinds = new byte[initialCapacity];
        nics = new int[initialCapacity];
        tokens = new long[initialCapacity];
        values = new long[initialCapacity];
        errors = new TransferEngineException[initialCapacity];
        counts = new int[initialCapacity];
    }

    void add(
            final byte kind,
            final int nic,
            final long token,
            final long value,
            final @Nullable TransferEngineException error) {
        add(kind, nic, token, value, error, 1);
    }

    /** Queues an event that stands for {@code count} completed or failed pieces, or landed imms (not receives). */
    void add(
            final byte kind,
            final int nic,
            final long token,
            final long value,
            final @Nullable TransferEngineException error,
            final int count) {
        if (size == kinds.length) {
            grow();
        }
        kinds[size] = kind;
        nics[size] = nic;
        tokens[size] = token;
        values[size] = value;
        errors[size] = error;
        counts[size] = count;
        size++;
    }

    /** The index of the next event to handle, or -1 when all were taken (the queue is then empty again). */
    int take() {
        if (head == size) {
            head = 0;
            size = 0;
            return -1;
        }
        return head++;
    }

    byte kind(final int i) {
        return kinds[i];
    }

    int nic(final int i) {
        return nics[i];
    }

    long token(final int i) {
        return tokens[i];
    }

    long value(final int i) {
        return values[i];
    }

    /** How many pieces or imms event {@code i} stands for, at least 1. */
    int count(final int i) {
        return counts[i];
    }

    /** The error of event {@code i}, which the queue forgets so it keeps no failure alive. */
    @Nullable TransferEngineException takeError(final int i) {
        final TransferEngineException error = errors[i];
        errors[i] = null;
        return error;
    }

    private void grow() {
        final int capacity = kinds.length * 2;
        kinds = Arrays.copyOf(kinds, capacity);
        nics = Arrays.copyOf(nics, capacity);
        tokens = Arrays.copyOf(tokens, capacity);
        values = Arrays.copyOf(values, capacity);
        errors = Arrays.copyOf(errors, capacity);
        counts = Arrays.copyOf(counts, capacity);
    }
}
