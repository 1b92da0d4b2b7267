package dev.transferengine.cuda;

import dev.transferengine.UvmChange;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.EngineClosedException;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import static dev.transferengine.cuda.HostSlotPages.gpuStore;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The service with its real threads, over host pages (a test thread plays the GPU). */
class UvmWatchersTest {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @Test
    void callTheListenerOnTheCallbackThreadForEachChange() {
        final List<UvmChange> changes = new CopyOnWriteArrayList<>();
        final List<String> threads = new CopyOnWriteArrayList<>();
        try (UvmWatchers watchers = new UvmWatchers(new HostSlotPages(), UvmWatchersConfig.defaults())) {
            final UvmWatcher watcher = watchers.allocate((o, n) -> {
                changes.add(new UvmChange(o, n));
                threads.add(Thread.currentThread().getName());
                return true;
            });
            gpuStore(watcher.devicePointer(), 1);
            await().atMost(PATIENCE).until(() -> changes.size() == 1);
            gpuStore(watcher.devicePointer(), 2);
            await().atMost(PATIENCE).until(() -> changes.size() == 2);

            assertThat(changes).containsExactly(new UvmChange(0, 1), new UvmChange(1, 2));
            assertThat(threads).containsOnly("te-uvm-callback");
        }
    }

    @Test
    void deliverAnUnbrokenChainEndingAtTheLastValueWhenStoresOutrunThePolling() {
        final List<UvmChange> changes = new CopyOnWriteArrayList<>();
        try (UvmWatchers watchers = new UvmWatchers(new HostSlotPages(), UvmWatchersConfig.defaults())) {
            final UvmWatcher watcher = watchers.allocate((o, n) -> changes.add(new UvmChange(o, n)));
            for (long v = 1; v <= 200_000; v++) {
                gpuStore(watcher.devicePointer(), v);
            }
            await().atMost(PATIENCE)
                    .until(() -> !changes.isEmpty() && changes.getLast().newValue() == 200_000);
        }

        long previous = 0;
        for (final UvmChange change : changes) {
            assertThat(change.oldValue()).isEqualTo(previous);
            assertThat(change.newValue()).isGreaterThan(change.oldValue());
            previous = change.newValue();
        }
    }

    @Test
    void leaveDispatchToTheCallerWithoutAnOwnCallbackThread() {
        final List<UvmChange> changes = new CopyOnWriteArrayList<>();
        try (UvmWatchers watchers = new UvmWatchers(
                new HostSlotPages(), UvmWatchersConfig.defaults().withoutCallbackThread())) {
            final UvmWatcher watcher = watchers.allocate((o, n) -> changes.add(new UvmChange(o, n)));
            gpuStore(watcher.devicePointer(), 3);
            await().atMost(PATIENCE).until(() -> watchers.dispatch(16) > 0);

            assertThat(changes).containsExactly(new UvmChange(0, 3));
            assertThat(watchers.deliveredCount()).isEqualTo(1);
        }
    }

    @Test
    void aSlotAStaleWriterKeptStoringIntoAfterItsCloseStartsAtZeroForTheNextWatcher() {
        final List<UvmChange> changes = new CopyOnWriteArrayList<>();
        try (UvmWatchers watchers = new UvmWatchers(new HostSlotPages(), UvmWatchersConfig.defaults())) {
            final UvmWatcher first = watchers.allocate((o, n) -> true);
            first.close();
            gpuStore(first.devicePointer(), 41); // the careless owner's kernel still stores after the close
            final UvmWatcher next = watchers.allocate((o, n) -> changes.add(new UvmChange(o, n)));

            assertThat(next.devicePointer()).isEqualTo(first.devicePointer());
            assertThat(next.value()).isZero();
            gpuStore(next.devicePointer(), 7);
            await().atMost(PATIENCE).until(() -> !changes.isEmpty());
        }

        assertThat(changes).containsExactly(new UvmChange(0, 7));
    }

    @Test
    void freePagesOnCloseAndRefuseNewWatchersAfterwards() {
        final HostSlotPages pages = new HostSlotPages();
        final UvmWatchers watchers = new UvmWatchers(pages, UvmWatchersConfig.defaults());
        final UvmWatcher watcher = watchers.allocate((o, n) -> true);
        watchers.close();
        watchers.close();

        assertThat(watcher.isOpen()).isFalse();
        assertThat(pages.freed.get()).isEqualTo(1);
        assertThatThrownBy(() -> watchers.allocate((o, n) -> true)).isInstanceOf(EngineClosedException.class);
    }
}
