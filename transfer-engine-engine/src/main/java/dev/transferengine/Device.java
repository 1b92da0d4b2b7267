package dev.transferengine;

/** Where a memory region lives: host memory or the memory of one CUDA device. */
public sealed interface Device {

    /** Host memory, addressed through a {@link java.lang.foreign.MemorySegment}. */
    static Device host() {
        return Host.INSTANCE;
    }

    /** Memory of the CUDA device with this ordinal. */
    static Device cuda(final int ordinal) {
        return new Cuda(ordinal);
    }

    /** Host memory. */
    enum Host implements Device {
        INSTANCE;

        @Override
        public String toString() {
            return "host";
        }
    }

    /** Device memory of one CUDA device. */
    record Cuda(int ordinal) implements Device {
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
