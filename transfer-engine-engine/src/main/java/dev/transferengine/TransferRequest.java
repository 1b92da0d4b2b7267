package dev.transferengine;

/**
 * A one-sided request, immutable and reusable: a {@link WriteRequest} pushes bytes into a peer's region, a
 * {@link ReadRequest} pulls bytes from a peer's region into one of ours. Both are submitted the same way
 * ({@link TransferEngine#submit(TransferRequest, TransferListener)} and its siblings), follow the same routing and
 * sharding rules, and complete the same way.
 */
public sealed interface TransferRequest permits WriteRequest, ReadRequest {}
