package dev.transferengine.nativeaccess;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * A shared library opened on demand. {@link #load(String)} never throws: a library that is missing, or that cannot
 * be opened because native access is disabled, yields an instance whose {@link #unavailabilityCause()} says why,
 * so a transport can back off with that reason instead of failing with {@link UnsatisfiedLinkError}.
 * The library stays loaded for the life of the JVM.
 */
public final class NativeLibrary {

    private final String name;
    private final @Nullable SymbolLookup lookup;
    private final @Nullable String cause;

    private NativeLibrary(final String name, final @Nullable SymbolLookup lookup, final @Nullable String cause) {
        this.name = name;
        this.lookup = lookup;
        this.cause = cause;
    }

    /**
     * Opens {@code nameOrPath} through the dynamic loader ({@code dlopen} search rules: a bare name such as
     * {@code libfabric.so.1} follows {@code LD_LIBRARY_PATH} and the loader cache; a path is used as is).
     * Blocks on the loader; any thread.
     */
    @SuppressWarnings("restricted")
    public static NativeLibrary load(final String nameOrPath) {
        final String denied = NativeAccess.unavailabilityCause();
        if (denied != null) {
            return new NativeLibrary(nameOrPath, null, denied);
        }
        try {
            return new NativeLibrary(nameOrPath, SymbolLookup.libraryLookup(nameOrPath, Arena.global()), null);
        } catch (final IllegalArgumentException | IllegalCallerException e) {
            return new NativeLibrary(nameOrPath, null, "cannot load " + nameOrPath + ": " + e.getMessage());
        }
    }

    /** The name or path it was loaded from. */
    public String name() {
        return name;
    }

    public boolean isAvailable() {
        return lookup != null;
    }

    /** Null when loaded, otherwise why it is not. */
    public @Nullable String unavailabilityCause() {
        return cause;
    }

    /** The address of an exported symbol, if the library is loaded and exports it. */
    public Optional<MemorySegment> find(final String symbol) {
        return lookup == null ? Optional.empty() : lookup.find(symbol);
    }
}
