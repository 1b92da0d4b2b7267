package dev.transferengine;

import dev.transferengine.exceptions.InvalidConfigException;

import java.util.OptionalInt;

/**
 * One DomainGroup: 1 to 4 NICs driven by one worker thread, optionally pinned to a CPU and serving one GPU.
 *
 * @param nics       number of NICs (domains), 1..4
 * @param workerCpu  CPU to pin the worker to, if any
 * @param cudaDevice the GPU whose memory this group registers, if any
 */
public record GroupSpec(int nics, OptionalInt workerCpu, OptionalInt cudaDevice) {

    /**
     * Checks the NIC count and that a given CPU or GPU index is not negative.
     *
     * @throws InvalidConfigException naming the first setting out of range
     */
    public GroupSpec {
        if (nics < 1 || nics > 4) {
            throw new InvalidConfigException("nics", nics, "must be 1..4 (a group has 1 to 4 NICs)");
        }
        if (workerCpu.isPresent() && workerCpu.getAsInt() < 0) {
            throw new InvalidConfigException("workerCpu", workerCpu.getAsInt(), "must be >= 0");
        }
        if (cudaDevice.isPresent() && cudaDevice.getAsInt() < 0) {
            throw new InvalidConfigException("cudaDevice", cudaDevice.getAsInt(), "must be >= 0");
        }
    }

    /**
     * A group of this many NICs, its worker not pinned and serving no GPU.
     *
     * @param nics number of NICs, 1..4
     * @return the group
     * @throws InvalidConfigException if {@code nics} is out of range
     */
    public static GroupSpec of(final int nics) {
        return new GroupSpec(nics, OptionalInt.empty(), OptionalInt.empty());
    }

    /**
     * This group with its worker pinned to a CPU.
     *
     * @param cpu the CPU index, as the OS numbers them (>= 0)
     * @return a new spec; this one is unchanged
     * @throws InvalidConfigException if {@code cpu} is negative
     */
    public GroupSpec withWorkerCpu(final int cpu) {
        return new GroupSpec(nics, OptionalInt.of(cpu), cudaDevice);
    }

    /**
     * This group serving one GPU: it registers that device's memory.
     *
     * @param device the CUDA device ordinal (>= 0)
     * @return a new spec; this one is unchanged
     * @throws InvalidConfigException if {@code device} is negative
     */
    public GroupSpec withCudaDevice(final int device) {
        return new GroupSpec(nics, workerCpu, OptionalInt.of(device));
    }
}
