package dev.transferengine.bench.jmh;

import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.DeviceMemory;

/** The GPU benchmarks' first step: fail at set-up, naming what is missing, on a machine without a usable GPU. */
final class Gpus {

    private Gpus() {}

    /**
     * Returns the engine's {@code cuda} device memory, able to serve device 0.
     *
     * @throws DeviceUnavailableException naming {@code benchmark}, what it needs and why this machine does not have it
     */
    static DeviceMemory require(final String benchmark) {
        try {
            return DeviceMemory.require(DeviceMemory.DEFAULT, 0);
        } catch (final DeviceUnavailableException e) {
            throw new DeviceUnavailableException(
                    benchmark + " needs a CUDA GPU (device 0) with its driver (libcuda.so.1) and JCuda with its"
                            + " linux-x86_64 natives on the class path (te-bench.jar carries JCuda); here: "
                            + e.getMessage(),
                    e);
        }
    }
}
