package dev.transferengine.sample.kv;

/**
 * Decode's answer to {@link KvSessionRequest}: the session and the pages it reserved. Prefill's page {@code k} of
 * layer {@code l} goes to decode's page {@code pageTable[k]} of the same layer.
 *
 * @param id        the session
 * @param pageTable decode page per transferred page, the same in every layer
 */
@SuppressWarnings("ArrayRecordComponent") // a JSON message, never compared or hashed
public record KvSessionGrant(String id, int[] pageTable) {
}
