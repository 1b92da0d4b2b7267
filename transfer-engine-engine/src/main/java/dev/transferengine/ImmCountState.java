package dev.transferengine;

/**
 * The state of an imm expectation when it was replaced or removed.
 *
 * @param count    imms counted and not yet consumed
 * @param expected the armed count, or 0 for a plain (polled or credited) counter
 */
public record ImmCountState(long count, int expected) {}
