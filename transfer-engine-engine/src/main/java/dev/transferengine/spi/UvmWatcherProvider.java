package dev.transferengine.spi;

import dev.transferengine.IdleStrategyKind;
import dev.transferengine.exceptions.DeviceUnavailableException;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

import org.jspecify.annotations.Nullable;

/**
 * Makes the UVM watcher services behind {@link dev.transferengine.TransferEngine#allocUvmWatcher}: slots in memory a
 * GPU kernel writes and the host polls. Registered in
 * {@code META-INF/services/dev.transferengine.spi.UvmWatcherProvider}; the CUDA one is named {@code cuda}. The engine
 * opens one service on first use and drives its callbacks from the engine's callback thread.
 */
public interface UvmWatcherProvider {

    /** The provider the engine uses unless the engine option {@value #OPTION} names another. */
    String DEFAULT = "cuda";

    /** Engine option naming the provider. */
    String OPTION = "uvm.provider";

    /**
     * The provider's name, matched against the {@value #OPTION} option.
     *
     * @return the name, e.g. {@code cuda}
     */
    String name();

    /**
     * Whether watchers can be used here. Must not throw: a driver that fails to load is a cause, not an error.
     *
     * @return null when watchers can be used; otherwise why not (no driver, no device, library missing, ...)
     */
    @Nullable String unavailabilityCause();

    /**
     * Opens a watcher service on {@code device} whose listeners run only when its owner calls
     * {@link UvmWatcherService#dispatch(int)}. Blocks for the driver calls; the polling thread starts with the first
     * watcher.
     *
     * @param device the device ordinal
     * @param pollIdle how the polling thread waits when no slot changed
     * @param pollCpu the CPU to pin the polling thread to, if any (best effort)
     * @return the service; close it to stop its thread and free its memory
     *
     * @throws DeviceUnavailableException if the device cannot be used, with the reason
     */
    UvmWatcherService open(int device, IdleStrategyKind pollIdle, OptionalInt pollCpu);

    /**
     * The provider named {@code name}, available here. Loads the providers through {@link ServiceLoader} on each call;
     * call it at setup.
     *
     * @param name the provider's name, normally {@link #DEFAULT} or the {@value #OPTION} option
     * @return the provider
     *
     * @throws DeviceUnavailableException naming the reason: no such provider on the class path, or the provider is
     *                                    unavailable (with its cause)
     */
    static UvmWatcherProvider require(final String name) {
        final List<String> found = new ArrayList<>();
        try {
            for (final UvmWatcherProvider provider :
                    ServiceLoader.load(UvmWatcherProvider.class, UvmWatcherProvider.class.getClassLoader())) {
                if (!provider.name().equals(name)) {
                    found.add(provider.name());
                    continue;
                }
                final String cause = provider.unavailabilityCause();
                if (cause != null) {
                    throw new DeviceUnavailableException("UVM watchers '" + name + "' are unavailable: " + cause);
                }
                return provider;
            }
        } catch (final ServiceConfigurationError e) {
            throw new DeviceUnavailableException("UVM watcher providers could not be loaded: " + e.getMessage(), e);
        }
        throw new DeviceUnavailableException("no UVM watcher provider '" + name + "' on the class path (found " + found
                + "); add org.jcuda:jcuda for CUDA");
    }
}
