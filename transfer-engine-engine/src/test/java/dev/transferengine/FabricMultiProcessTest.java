package dev.transferengine;

import dev.transferengine.transport.fabric.FabricTestAccess;

import java.util.List;

import org.junit.jupiter.api.BeforeAll;

/** Two JVM processes on libfabric's tcp provider. */
class FabricMultiProcessTest extends MultiProcessContract {

    @BeforeAll
    static void needsTheProvider() {
        FabricTestAccess.assumeAvailable("tcp");
    }

    @Override
    protected String transport() {
        return "fabric";
    }

    @Override
    protected List<String> options() {
        return List.of("fabric.provider=tcp");
    }
}
