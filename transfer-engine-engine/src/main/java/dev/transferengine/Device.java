package dev.transferengine;

/** Where a memory region lives: host memory or the memory of one CUDA device. */
public sealed interface Device {

    /**
     * Host memory, addressed through a {@link java.lang.foreign.MemorySegment}.
     *
     * @return the one host device; does not allocate
     */
    static Device host() {
        return Host.INSTANCE;
    }

    /**
     * Memory of one CUDA device. Whether the engine can serve it is checked when a region is registered.
     *
     * @param ordinal the CUDA device ordinal, as {@code cudaGetDevice} numbers them (>= 0)
     * @return the device
     * @throws IllegalArgumentException if {@code ordinal} is negative
     */
    static Device cuda(final int ordinal) {
        return new Cuda(ordinal);
    }

    /** Host memory. */
    enum Host implements Device {
        /** The one host device; {@link Device#host()} returns it. */
        INSTANCE;

        @Override
        public String toString() {
            return "host";
        }
    }

    /**
     * Device memory of one CUDA device.
     *
     * @param ordinal the CUDA device ordinal (>= 0)
     */
    record Cuda(int ordinal) implements Device {
        /**
         * Checks the ordinal.
         *
         * @throws IllegalArgumentException if {@code ordinal} is negative
         */
        public Cuda {
            if (ordinal < 0) {
                throw new IllegalArgumentException("CUDA device ordinal must be >= 0, was " + ordinal);
            }
        }

        @Override
        public String toString() {
            return "cuda:" + ordinal;
        }
    }
}
