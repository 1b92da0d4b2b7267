package dev.transferengine;

import java.util.OptionalInt;

/**
 * One DomainGroup: 1 to 4 NICs driven by one worker thread, optionally pinned to a CPU and serving one GPU.
 *
 * @param nics       number of NICs (domains), 1..4
 * @param workerCpu  CPU to pin the worker to, if any
 * @param cudaDevice the GPU whose memory this group registers, if any
 */
public record GroupSpec(int nics, OptionalInt workerCpu, OptionalInt cudaDevice) {

    public GroupSpec {
        if (nics < 1 || nics > 4) {
            throw new IllegalArgumentException("a group has 1 to 4 NICs, not " + nics);
        }
    }

    public static GroupSpec of(final int nics) {
        return new GroupSpec(nics, OptionalInt.empty(), OptionalInt.empty());
    }

    public GroupSpec withWorkerCpu(final int cpu) {
        return new GroupSpec(nics, OptionalInt.of(cpu), cudaDevice);
    }

    public GroupSpec withCudaDevice(final int device) {
        return new GroupSpec(nics, workerCpu, OptionalInt.of(device));
    }
}
