package dev.transferengine;

/**
 * A one-sided read (pull): bytes of a peer's registered region are copied into one of our registered regions, and
 * the peer's application is not involved. Immutable and reusable, like a {@link WriteRequest}, and split over the
 * NICs by the same rules (a {@link SingleRead} into shards, a {@link PagedRead} into page ranges, a
 * {@link ScatterRead} by its {@link GroupRouting}).
 *
 * <p>A read carries no imm: the peer is not told that its memory was read. To tell it (for example that a KV page
 * may now be reused), follow the read, once it completed, with an {@link ImmWrite} or a write carrying an imm. The
 * peer's region must allow reads ({@link RegionAccess#allowsRemoteRead()}); the request completes once every byte is
 * in our region.
 */
public sealed interface ReadRequest extends TransferRequest permits SingleRead, PagedRead, ScatterRead {}
