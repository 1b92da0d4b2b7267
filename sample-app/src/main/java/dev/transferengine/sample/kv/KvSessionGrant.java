package dev.transferengine.sample.kv;

/**
 * Decode's answer to {@link KvSessionRequest}: the session and the pages it reserved. Prefill's page {@code k} of
 * layer {@code l} goes to decode's page {@code pageTable[k]} of the same layer.
 *
 * @param id        the session
 * @param pageTable decode page per transferred page, the same in every layer
 * @param region    the page pool's descriptor (text form) to write this session with: after an abandoned session
 *                  decode re-keys the pool, so writes with an older descriptor are refused
 */
@SuppressWarnings("ArrayRecordComponent") // a JSON message, never compared or hashed
public record KvSessionGrant(String id, int[] pageTable, String region) {}
