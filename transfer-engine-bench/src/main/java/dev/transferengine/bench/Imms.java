package dev.transferengine.bench;

/** The imm values te-bench uses; high values so that they stay clear of an application's own. */
final class Imms {

    /** Carried by every data write (single and paged); the server counts them with a polled counter. */
    static final int DATA = 0x7E5B_0001;
    /** Client to server in the imm round trip. */
    static final int PING = 0x7E5B_0002;
    /** Server to client in the imm round trip. */
    static final int PONG = 0x7E5B_0003;

    private Imms() {}
}
