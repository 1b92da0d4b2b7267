package dev.transferengine;

import dev.transferengine.test.MultiProcessContract;
import dev.transferengine.transport.fabric.FabricTestAccess;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;

/** Two JVM processes on libfabric's tcp provider. */
class FabricMultiProcessTest extends MultiProcessContract {

    /** The libfabric provider. */
    protected String provider() {
        return "tcp";
    }

    @BeforeEach
    void needsTheProvider() {
        FabricTestAccess.assumeAvailable(provider());
    }

    @Override
    protected String transport() {
        return "fabric";
    }

    @Override
    protected List<String> options() {
        final List<String> options = new ArrayList<>(List.of("fabric.provider=" + provider()));
        options.addAll(FabricTestAccess.libraryOptions());
        return options;
    }
}
