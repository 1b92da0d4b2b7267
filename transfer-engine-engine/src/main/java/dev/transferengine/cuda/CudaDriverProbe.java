package dev.transferengine.cuda;

import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuInit;

/** The first JCuda touch, kept out of {@link Cuda} so that class loads without JCuda on the class path. */
final class CudaDriverProbe {

    private CudaDriverProbe() {}

    /** Initialises the driver and counts devices; loads the JCuda natives (may throw {@link LinkageError}). */
    static int deviceCount() {
        CudaCalls.check(cuInit(0), "cuInit");
        final int[] count = new int[1];
        CudaCalls.check(cuDeviceGetCount(count), "cuDeviceGetCount");
        return count[0];
    }
}
