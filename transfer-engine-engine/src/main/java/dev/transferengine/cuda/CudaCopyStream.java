package dev.transferengine.cuda;

import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.spi.DeviceCopyStream;

import java.lang.foreign.MemorySegment;

import jcuda.driver.CUevent;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;

import static jcuda.driver.CUevent_flags.CU_EVENT_DISABLE_TIMING;
import static jcuda.driver.CUstream_flags.CU_STREAM_NON_BLOCKING;
import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventQuery;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

/**
 * Asynchronous copies on one CUDA stream, each followed by an event; completion is an event query, so the caller
 * never blocks. Events are reused round-robin: ticket {@code t} uses event {@code t % capacity}.
 */
final class CudaCopyStream implements DeviceCopyStream {

    private final CudaDevice device;
    private final CUstream stream = new CUstream();
    private final CUevent[] events;
    private long issued;
    private long completed;
    private boolean closed;
    /** What the close's synchronize answered: every copy issued had finished by then, or one had failed. */
    private int resultAtClose = CUresult.CUDA_SUCCESS;

    CudaCopyStream(final CudaDevice device, final int capacity) {
        this.device = device;
        device.makeCurrent();
        CudaCalls.check(cuStreamCreate(stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        this.events = new CUevent[capacity];
        for (int i = 0; i < capacity; i++) {
            events[i] = new CUevent();
            final int result = cuEventCreate(events[i], CU_EVENT_DISABLE_TIMING);
            if (result != CUresult.CUDA_SUCCESS) {
                for (int j = 0; j < i; j++) {
                    cuEventDestroy(events[j]);
                }
                cuStreamDestroy(stream);
                throw CudaCalls.failure(result, "cuEventCreate");
            }
        }
    }

    @Override
    public int capacity() {
        return events.length;
    }

    @Override
    public synchronized long copyToHost(final long deviceAddress, final MemorySegment host, final long length) {
        ensureOpen();
        if (isFull()) {
            return BUSY;
        }
        device.makeCurrent();
        CudaCalls.check(
                cuMemcpyDtoHAsync(new RawPointer(host.address()), RawDevicePointer.at(deviceAddress), length, stream),
                "cuMemcpyDtoHAsync(" + length + ")");
        return record();
    }

    @Override
    public synchronized long copyToDevice(final MemorySegment host, final long deviceAddress, final long length) {
        ensureOpen();
        if (isFull()) {
            return BUSY;
        }
        device.makeCurrent();
        CudaCalls.check(
                cuMemcpyHtoDAsync(RawDevicePointer.at(deviceAddress), new RawPointer(host.address()), length, stream),
                "cuMemcpyHtoDAsync(" + length + ")");
        return record();
    }

    @Override
    public synchronized boolean isDone(final long ticket) {
        if (closed) { // the close waited for every copy: a late caller (an answer held on it) learns how they ended
            CudaCalls.check(resultAtClose, "cuStreamSynchronize (at close)");
            return true;
        }
        while (completed < ticket) {
            final int result = cuEventQuery(events[(int) ((completed + 1) % events.length)]);
            if (result == CUresult.CUDA_ERROR_NOT_READY) {
                return false;
            }
            CudaCalls.check(result, "cuEventQuery (copy " + (completed + 1) + ")");
            completed++;
        }
        return true;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        device.makeCurrent();
        resultAtClose = cuStreamSynchronize(stream);
        for (final CUevent event : events) {
            cuEventDestroy(event);
        }
        CudaCalls.check(cuStreamDestroy(stream), "cuStreamDestroy");
    }

    /** A destroyed stream or event handed to the driver crashes the process; a late call gets an exception instead. */
    private void ensureOpen() {
        if (closed) {
            throw new EngineClosedException("the copy stream of " + device + " is closed");
        }
    }

    private boolean isFull() {
        return issued - completed >= events.length && !isDone(issued - events.length + 1);
    }

    private long record() {
        final long ticket = issued + 1;
        CudaCalls.check(cuEventRecord(events[(int) (ticket % events.length)], stream), "cuEventRecord");
        issued = ticket;
        return ticket;
    }
}
