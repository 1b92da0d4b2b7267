package dev.transferengine.cuda;

import dev.transferengine.IdleStrategyKind;
import dev.transferengine.spi.UvmWatcherProvider;
import dev.transferengine.spi.UvmWatcherService;

import java.util.OptionalInt;

import org.jspecify.annotations.Nullable;

/**
 * The {@code cuda} {@link UvmWatcherProvider}: slots in pinned, device-mapped pages. Loads without JCuda on the class
 * path and then reports why it is unavailable.
 */
public final class CudaUvmWatcherProvider implements UvmWatcherProvider {

    /** For {@link java.util.ServiceLoader}. */
    public CudaUvmWatcherProvider() {}

    @Override
    public String name() {
        return DEFAULT;
    }

    @Override
    public @Nullable String unavailabilityCause() {
        return Cuda.unavailabilityCause();
    }

    @Override
    public UvmWatcherService open(final int device, final IdleStrategyKind pollIdle, final OptionalInt pollCpu) {
        UvmWatchersConfig config =
                UvmWatchersConfig.defaults().withoutCallbackThread().withPollIdle(pollIdle);
        if (pollCpu.isPresent()) {
            config = config.withPollCpu(pollCpu.getAsInt());
        }
        return UvmWatchers.open(device, config);
    }
}
