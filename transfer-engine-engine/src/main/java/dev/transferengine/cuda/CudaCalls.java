package dev.transferengine.cuda;

import dev.transferengine.exceptions.DeviceUnavailableException;

import jcuda.driver.CUresult;

/** Turns CUDA driver result codes into {@link DeviceUnavailableException}s that name the call and the error. */
final class CudaCalls {

    private CudaCalls() {}

    /** Throws unless {@code result} is {@code CUDA_SUCCESS}. */
    static void check(final int result, final String call) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw failure(result, call);
        }
    }

    static DeviceUnavailableException failure(final int result, final String call) {
        return new DeviceUnavailableException(call + " failed: " + CUresult.stringFor(result) + " (" + result + ")");
    }
}
