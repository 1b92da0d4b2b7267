package dev.transferengine.core;

import dev.transferengine.EngineConfig;
import dev.transferengine.TransferEngine;

/** Entry point from the API's builder into the core. */
public final class Engines {

    private Engines() {
    }

    public static TransferEngine open(final EngineConfig config) {
        throw new UnsupportedOperationException("core not written yet");
    }
}
