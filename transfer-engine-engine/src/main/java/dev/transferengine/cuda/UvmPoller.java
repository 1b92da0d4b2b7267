package dev.transferengine.cuda;

import dev.transferengine.nativeaccess.CpuAffinity;

import java.util.OptionalInt;

import org.agrona.concurrent.Agent;

/**
 * The polling thread's duty cycle: reads every watched slot once and queues each change for the callback thread.
 * When the queue is full the change stays in the slot and is picked up, coalesced, on a later pass.
 */
final class UvmPoller implements Agent {

    private final UvmSlotTable table;
    private final UvmChangeQueue queue;
    private final OptionalInt cpu;

    UvmPoller(final UvmSlotTable table, final UvmChangeQueue queue, final OptionalInt cpu) {
        this.table = table;
        this.queue = queue;
        this.cpu = cpu;
    }

    @Override
    public void onStart() {
        CpuAffinity.pinCurrentThread(cpu, "UVM polling thread");
    }

    @Override
    public int doWork() {
        final WatchEntry[] entries = table.active();
        int changes = 0;
        for (final WatchEntry entry : entries) {
            final long value = entry.read();
            if (value != entry.lastSeen) {
                if (!queue.offer(entry.slot, entry.id, entry.lastSeen, value)) {
                    return changes + 1;
                }
                entry.lastSeen = value;
                changes++;
            }
        }
        return changes;
    }

    @Override
    public String roleName() {
        return "te-uvm-poll";
    }
}
