package dev.transferengine.transport.fabric;

/** Lets tests in other packages (the contract suite) skip when a provider cannot run here. */
public final class FabricTestAccess {

    private FabricTestAccess() {}

    /** Skips the calling test unless {@code provider} can run here, naming why not. */
    public static void assumeAvailable(final String provider) {
        FabricFixture.assumeAvailable(provider);
    }

    /**
     * Why {@code provider} cannot register device memory with FI_HMEM here ({@code fabric.hmem=true}), or null when it
     * can.
     */
    public static @org.jspecify.annotations.Nullable String hmemUnavailabilityCause(final String provider) {
        return new FabricTransport()
                .unavailabilityCause(
                        FabricFixture.config(provider, 1, java.util.Map.of(FabricTransport.HMEM_OPTION, "true")));
    }

    /** The API version ({@code major.minor}) of the libfabric this run loads, e.g. {@code 1.17}; 0.0 if none. */
    public static String libraryVersion() {
        final String library = FabricFixture.library();
        return library == null
                ? "0.0"
                : FabricLibrary.versionText(FabricLibrary.open(library).version());
    }

    /**
     * The {@code fabric.library} option that engines of the contract suites use in this run (the system's library,
     * or the one {@code TE_FABRIC_LIBRARY} names in the run for another libfabric version); none for the default.
     */
    public static java.util.List<String> libraryOptions() {
        return FabricFixture.libraryOptions();
    }

    /**
     * Sets {@link #libraryOptions()} on {@code builder}, for an engine of this process.
     *
     * @return {@code builder}
     */
    public static dev.transferengine.TransferEngineBuilder withLibrary(
            final dev.transferengine.TransferEngineBuilder builder) {
        for (final String option : libraryOptions()) {
            final String[] keyAndValue = option.split("=", 2);
            builder.option(keyAndValue[0], keyAndValue[1]);
        }
        return builder;
    }

    /**
     * {@code builder} for a fabric engine of this process on {@code provider}, bound to loopback, with
     * {@link #libraryOptions()}.
     *
     * @return {@code builder}
     */
    public static dev.transferengine.TransferEngineBuilder onLoopback(
            final dev.transferengine.TransferEngineBuilder builder, final String provider) {
        return withLibrary(
                builder.transport("fabric").option("fabric.provider", provider).bindAddress("127.0.0.1"));
    }
}
