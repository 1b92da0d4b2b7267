package dev.transferengine.transport.fabric;

/** Lets tests in other packages (the contract suite) skip when a provider cannot run here. */
public final class FabricTestAccess {

    private FabricTestAccess() {
    }

    /** Skips the calling test unless {@code provider} can run here, naming why not. */
    public static void assumeAvailable(final String provider) {
        FabricFixture.assumeAvailable(provider);
    }
}
