package dev.transferengine.cuda;

import dev.transferengine.UvmChange;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.EngineClosedException;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

import org.junit.jupiter.api.Test;

import static dev.transferengine.cuda.HostSlotPages.gpuStore;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Drives the polling and callback duty cycles by hand: no threads, no sleeps. */
class UvmPollerTest {

    private final HostSlotPages pages = new HostSlotPages();
    private final UvmSlotTable table = new UvmSlotTable(pages, 2048);
    private final UvmChangeQueue queue = new UvmChangeQueue(4096);
    private final UvmPoller poller = new UvmPoller(table, queue, OptionalInt.empty());
    private final UvmDispatcher dispatcher = new UvmDispatcher(table, queue, OptionalInt.empty());

    @Test
    void handOldAndNewValueOfEachChangeToTheListener() {
        final List<UvmChange> changes = new ArrayList<>();
        final UvmWatcher watcher = table.allocate((o, n) -> changes.add(new UvmChange(o, n)));

        assertThat(poller.doWork()).isZero();
        gpuStore(watcher.devicePointer(), 7);
        assertThat(poller.doWork()).isEqualTo(1);
        assertThat(poller.doWork()).isZero();
        gpuStore(watcher.devicePointer(), 9);
        poller.doWork();
        dispatcher.dispatch(10);

        assertThat(changes).containsExactly(new UvmChange(0, 7), new UvmChange(7, 9));
        assertThat(watcher.value()).isEqualTo(9);
    }

    @Test
    void spanSkippedValuesWhenStoresOutrunThePolling() {
        final List<UvmChange> changes = new ArrayList<>();
        final UvmWatcher watcher = table.allocate((o, n) -> changes.add(new UvmChange(o, n)));

        gpuStore(watcher.devicePointer(), 1);
        poller.doWork();
        gpuStore(watcher.devicePointer(), 2);
        gpuStore(watcher.devicePointer(), 3);
        gpuStore(watcher.devicePointer(), 4);
        poller.doWork();
        dispatcher.dispatch(10);

        assertThat(changes).containsExactly(new UvmChange(0, 1), new UvmChange(1, 4));
    }

    @Test
    void keepChangesInTheSlotWhileTheQueueIsFullAndDeliverThemCoalescedLater() {
        final UvmChangeQueue small = new UvmChangeQueue(16);
        final UvmPoller smallPoller = new UvmPoller(table, small, OptionalInt.empty());
        final UvmDispatcher smallDispatcher = new UvmDispatcher(table, small, OptionalInt.empty());
        final long[] last = new long[100];
        final List<UvmWatcher> watchers = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            final int index = i;
            watchers.add(table.allocate((o, n) -> {
                assertThat(o).isEqualTo(last[index]);
                last[index] = n;
                return true;
            }));
        }
        for (int round = 1; round <= 3; round++) {
            for (final UvmWatcher watcher : watchers) {
                gpuStore(watcher.devicePointer(), round * 10L);
            }
            smallPoller.doWork();
        }
        while (smallPoller.doWork() + smallDispatcher.dispatch(8) > 0) {
            // alternate until nothing is queued or changed
        }

        assertThat(last).containsOnly(30L);
    }

    @Test
    void releaseTheSlotAndResetItToZeroWhenTheListenerReturnsFalse() {
        final UvmWatcher watcher = table.allocate((o, n) -> false);
        gpuStore(watcher.devicePointer(), 5);
        poller.doWork();
        dispatcher.dispatch(10);

        assertThat(watcher.isOpen()).isFalse();
        assertThat(watcher.value()).isZero();
        assertThat(table.size()).isZero();
        assertThat(table.allocate((o, n) -> true).devicePointer()).isEqualTo(watcher.devicePointer());
    }

    @Test
    void releaseTheWatcherAndCountTheErrorWhenTheListenerThrows() {
        final UvmWatcher watcher = table.allocate((o, n) -> {
            throw new IllegalStateException("listener bug");
        });
        gpuStore(watcher.devicePointer(), 5);
        poller.doWork();
        dispatcher.dispatch(10);

        assertThat(watcher.isOpen()).isFalse();
        assertThat(dispatcher.listenerErrors()).isEqualTo(1);
    }

    @Test
    void dropQueuedChangesOfAClosedWatcherEvenWhenItsSlotWasReused() {
        final List<String> calls = new ArrayList<>();
        final UvmWatcher first = table.allocate((o, n) -> calls.add("first " + o + "->" + n));
        gpuStore(first.devicePointer(), 5);
        poller.doWork();
        first.close();
        final UvmWatcher second = table.allocate((o, n) -> calls.add("second " + o + "->" + n));
        dispatcher.dispatch(10);
        assertThat(calls).isEmpty();

        gpuStore(second.devicePointer(), 7);
        poller.doWork();
        dispatcher.dispatch(10);

        assertThat(second.devicePointer()).isEqualTo(first.devicePointer());
        assertThat(calls).containsExactly("second 0->7");
    }

    @Test
    void allocateOnePageFor512WatchersAndTheNextOnlyWhenNeeded() {
        assertThat(table.pageCount()).isZero();
        final List<UvmWatcher> watchers = new ArrayList<>();
        for (int i = 0; i < SlotPage.SLOTS; i++) {
            watchers.add(table.allocate((o, n) -> true));
        }
        assertThat(table.pageCount()).isEqualTo(1);
        assertThat(watchers.getLast().devicePointer() - watchers.getFirst().devicePointer())
                .isEqualTo(SlotPage.BYTES - Long.BYTES);

        table.allocate((o, n) -> true);
        assertThat(table.pageCount()).isEqualTo(2);
    }

    @Test
    void refuseMoreWatchersThanConfigured() {
        final UvmSlotTable tiny = new UvmSlotTable(pages, 2);
        tiny.allocate((o, n) -> true);
        tiny.allocate((o, n) -> true);

        assertThatThrownBy(() -> tiny.allocate((o, n) -> true))
                .isInstanceOf(BackPressureException.class)
                .hasMessageContaining("all 2 UVM watcher slots are in use");
    }

    @Test
    void freeEveryPageAndRefuseNewWatchersOnceClosed() {
        final UvmWatcher watcher = table.allocate((o, n) -> true);
        table.close();

        assertThat(watcher.isOpen()).isFalse();
        assertThat(pages.freed.get()).isEqualTo(pages.allocated.get()).isEqualTo(1);
        assertThatThrownBy(() -> table.allocate((o, n) -> true)).isInstanceOf(EngineClosedException.class);
    }
}
