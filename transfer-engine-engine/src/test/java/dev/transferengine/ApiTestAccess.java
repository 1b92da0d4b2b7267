package dev.transferengine;

import dev.transferengine.core.TransferCountersUpdater;

/** Hands tests of the core what the API package keeps package-private. */
public final class ApiTestAccess {

    private ApiTestAccess() {}

    /** The updater the builder gives the core, for tests that build core objects directly. */
    public static TransferCountersUpdater transferCountersUpdater() {
        return TransferCounters.UPDATER;
    }
}
