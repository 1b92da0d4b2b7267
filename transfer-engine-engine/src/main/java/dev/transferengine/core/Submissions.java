package dev.transferengine.core;

import org.jctools.queues.atomic.MpmcAtomicArrayQueue;

/**
 * A bounded pool of {@link Submission}s: callers take one per submit, the worker returns it once the request
 * ended. When the pool runs dry (a burst beyond its size) a new one is made; when it is full one is dropped.
 */
final class Submissions {

    private final MpmcAtomicArrayQueue<Submission> free;

    Submissions(final int capacity) {
        this.free = new MpmcAtomicArrayQueue<>(capacity);
    }

    Submission acquire() {
        final Submission submission = free.poll();
        return submission != null ? submission : new Submission();
    }

    void recycle(final Submission submission) {
        submission.clear();
        free.offer(submission);
    }
}
