package dev.transferengine;

/** What an ended operation was, as a {@link CompletionObserver} sees it. */
public enum OperationKind {
    /** A {@link SingleWrite}. */
    WRITE,
    /** A {@link PagedWrite}. */
    PAGED_WRITE,
    /** A {@link ScatterWrite} to a peer group. */
    SCATTER,
    /** An {@link ImmWrite}: a zero-byte write carrying only the imm. */
    IMM,
    /** A {@link BarrierWrite} to a peer group. */
    BARRIER,
    /** A two-sided send. */
    SEND,
    /** A {@link SingleRead}. */
    READ,
    /** A {@link PagedRead}. */
    PAGED_READ,
    /** A {@link ScatterRead} from many peers. */
    SCATTER_READ
}
