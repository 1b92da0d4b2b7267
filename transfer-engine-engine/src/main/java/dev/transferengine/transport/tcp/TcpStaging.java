package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.EngineClosedException;
import dev.transferengine.spi.DeviceCopyStream;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.StagingBuffer;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.agrona.collections.Int2ObjectHashMap;

/**
 * Device memory on the tcp transport, staged through pinned host memory. A device region is registered with a
 * pinned mirror of its size: incoming payloads land in the mirror and are copied to the device before they are
 * reported and acknowledged; outgoing payloads are copied from the device into the mirror before they are sent.
 * Copies run asynchronously on one stream per device and are polled from the worker, so the worker never blocks
 * and the copies of one request overlap the network traffic of others. Mirrors are freed when the domain closes.
 * Worker thread only.
 */
final class TcpStaging {

    /** The device side of a registered region. */
    record Mirror(DeviceCopyStream stream, long deviceAddress, StagingBuffer host) {
    }

    /** A write whose payload is being copied off the device; posted once the copy finished. */
    private static final class StagedSend {
        final TcpPeer peer;
        final TcpOp op;
        final Mirror mirror;
        long ticket = DeviceCopyStream.BUSY;

        StagedSend(final TcpPeer peer, final TcpOp op, final Mirror mirror) {
            this.peer = peer;
            this.op = op;
            this.mirror = mirror;
        }
    }

    private final String provider;
    private final Int2ObjectHashMap<DeviceCopyStream> streams = new Int2ObjectHashMap<>();
    private final List<StagingBuffer> mirrors = new ArrayList<>();
    private final ArrayDeque<StagedSend> sends = new ArrayDeque<>();

    /** @param provider the {@link DeviceMemory} to use, by name */
    TcpStaging(final String provider) {
        this.provider = provider;
    }

    /**
     * Memory for a device region: its mirror, which is where payloads are placed and sent from. Blocks for the
     * pinned allocation (a driver call), as registration may.
     *
     * @throws dev.transferengine.DeviceUnavailableException if the device memory provider cannot serve the device
     */
    TcpMemory register(final MemorySegment segment, final Device.Cuda device) {
        final DeviceMemory memory = DeviceMemory.require(provider, device.ordinal());
        DeviceCopyStream stream = streams.get(device.ordinal());
        if (stream == null) {
            stream = memory.openCopyStream(device.ordinal());
            streams.put(device.ordinal(), stream);
        }
        final StagingBuffer host = memory.allocateStaging(device.ordinal(), segment.byteSize());
        mirrors.add(host);
        return new TcpMemory(host.segment(), new Mirror(stream, segment.address(), host));
    }

    /** Copies {@code op}'s payload off the device into the mirror; the op is posted to {@code peer} once it is there. */
    void stageOut(final TcpPeer peer, final TcpOp op, final Mirror mirror) {
        final StagedSend send = new StagedSend(peer, op, mirror);
        send.ticket = mirror.stream().copyToHost(mirror.deviceAddress() + op.sourceOffset,
            op.source.asSlice(op.sourceOffset, op.length), op.length);
        sends.addLast(send);
    }

    /**
     * Enqueues the copy of {@code [at, at + length)} of {@code memory}'s mirror to the device.
     *
     * @return the copy's ticket, or {@link DeviceCopyStream#BUSY} to retry later
     */
    static long copyIn(final Mirror mirror, final long at, final long length) {
        return mirror.stream().copyToDevice(mirror.host().segment().asSlice(at, length), mirror.deviceAddress() + at,
            length);
    }

    /** Posts the staged writes whose copies finished, in order. Returns the work done. */
    int poll(final TcpDomain domain) {
        int work = 0;
        StagedSend send;
        while ((send = sends.peekFirst()) != null) {
            if (send.ticket == DeviceCopyStream.BUSY) {
                final TcpOp op = send.op;
                send.ticket = send.mirror.stream().copyToHost(send.mirror.deviceAddress() + op.sourceOffset,
                    op.source.asSlice(op.sourceOffset, op.length), op.length);
                if (send.ticket == DeviceCopyStream.BUSY) {
                    break;
                }
            }
            if (!send.mirror.stream().isDone(send.ticket)) {
                break;
            }
            sends.pollFirst();
            domain.postStaged(send.peer, send.op);
            work++;
        }
        return work;
    }

    /** Fails the staged writes, waits for the copies and frees the streams and mirrors. Blocks. */
    void close(final TcpDomain domain, final DomainListener listener) {
        StagedSend send;
        while ((send = sends.pollFirst()) != null) {
            final long token = send.op.token;
            domain.release(send.op);
            listener.onWriteFailed(token, new EngineClosedException("domain closed before the device copy finished"));
        }
        for (final DeviceCopyStream stream : streams.values()) {
            stream.close();
        }
        streams.clear();
        for (final StagingBuffer mirror : mirrors) {
            mirror.close();
        }
        mirrors.clear();
    }
}
