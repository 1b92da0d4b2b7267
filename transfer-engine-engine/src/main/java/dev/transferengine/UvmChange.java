package dev.transferengine;

/**
 * One change of a {@link UvmWatcher}'s slot, as the reactive forms deliver it.
 *
 * @param oldValue the value seen before
 * @param newValue the value seen now
 */
public record UvmChange(long oldValue, long newValue) {}
