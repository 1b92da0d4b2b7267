package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.MalformedDescriptorException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Domain-level behaviour on the providers that run anywhere (tcp;ofi_rxm and shm), with one and two NICs. */
class FabricDomainTest {

    private static final int REGION = 1 << 20;

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        fixture.close();
        arena.close();
    }

    static Stream<Arguments> providersAndNics() {
        return Stream.of(
                Arguments.of("tcp", 1), Arguments.of("tcp", 2), Arguments.of("shm", 1), Arguments.of("shm", 2));
    }

    private MemorySegment pattern(final long size, final int seed) {
        final MemorySegment segment = arena.allocate(size, 4096);
        for (long i = 0; i < size; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        return segment;
    }

    /** Two engines' worth of NICs: initiator NIC k talks to target NIC k. */
    private final class Pair {
        final RecordingDomainListener initiatorEvents = new RecordingDomainListener();
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final List<Domain> initiators = new ArrayList<>();
        final List<Domain> targets = new ArrayList<>();
        final long[] peers;

        Pair(final String provider, final int nics) {
            FabricFixture.assumeAvailable(provider);
            for (int nic = 0; nic < nics; nic++) {
                initiators.add(
                        fixture.open(FabricFixture.config(provider, nics, java.util.Map.of()), nic, initiatorEvents));
                targets.add(fixture.open(FabricFixture.config(provider, nics, java.util.Map.of()), nic, targetEvents));
            }
            peers = new long[nics];
            for (int nic = 0; nic < nics; nic++) {
                peers[nic] = initiators.get(nic).resolve(targets.get(nic).address());
            }
        }

        long[] register(final List<Domain> domains, final MemorySegment segment) {
            final long[] keys = new long[domains.size()];
            for (int nic = 0; nic < keys.length; nic++) {
                keys[nic] = domains.get(nic).register(segment, Device.host());
            }
            return keys;
        }
    }

    @ParameterizedTest(name = "{0} with {1} NIC(s)")
    @MethodSource("providersAndNics")
    void writesWithImmShardedOverTheNicsPlaceEveryByteAndDeliverOneImmPerShard(final String provider, final int nics) {
        final Pair pair = new Pair(provider, nics);
        final MemorySegment src = pattern(REGION, 7);
        final MemorySegment dst = arena.allocate(REGION, 4096);
        final long[] srcKeys = pair.register(pair.initiators, src);
        final long[] dstKeys = pair.register(pair.targets, dst);
        final long shard = REGION / nics;

        for (int nic = 0; nic < nics; nic++) {
            pair.initiators
                    .get(nic)
                    .write(new WriteDescriptor()
                            .token(nic)
                            .source(src, nic * shard, srcKeys[nic], shard)
                            .target(pair.peers[nic], dst.address(), nic * shard, dstKeys[nic])
                            .imm(true, 0x1000 + nic));
        }
        fixture.pollUntil(() -> pair.initiatorEvents.completed.size() + pair.initiatorEvents.failed.size() == nics
                && pair.targetEvents.imms.size() == nics);

        assertThat(pair.initiatorEvents.failed).isEmpty();
        assertThat(pair.initiatorEvents.completed.values()).containsOnly(shard);
        final List<Integer> expected = new ArrayList<>();
        for (int nic = 0; nic < nics; nic++) {
            expected.add(0x1000 + nic);
        }
        assertThat(pair.targetEvents.imms).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(dst.mismatch(src)).isEqualTo(-1);
        assertThat(pair.initiators).allSatisfy(domain -> assertThat(((FabricDomain) domain).outstanding())
                .as("operation slots still held")
                .isZero());
    }

    @ParameterizedTest(name = "{0} with {1} NIC(s)")
    @MethodSource("providersAndNics")
    void writesWithoutImmCompleteAndRaiseNoImm(final String provider, final int nics) {
        final Pair pair = new Pair(provider, nics);
        final MemorySegment src = pattern(REGION, 3);
        final MemorySegment dst = arena.allocate(REGION, 4096);
        final long[] srcKeys = pair.register(pair.initiators, src);
        final long[] dstKeys = pair.register(pair.targets, dst);

        for (int nic = 0; nic < nics; nic++) {
            pair.initiators
                    .get(nic)
                    .write(new WriteDescriptor()
                            .token(10 + nic)
                            .source(src, 4096L * nic, srcKeys[nic], 4096)
                            .target(pair.peers[nic], dst.address(), 65536L + 4096L * nic, dstKeys[nic]));
        }
        fixture.pollUntil(() -> pair.initiatorEvents.completed.size() + pair.initiatorEvents.failed.size() == nics);

        assertThat(pair.initiatorEvents.failed).isEmpty();
        assertThat(dst.asSlice(65536, 4096L * nics).mismatch(src.asSlice(0, 4096L * nics)))
                .isEqualTo(-1);
        fixture.pollAll();
        assertThat(pair.targetEvents.imms).isEmpty();
    }

    @ParameterizedTest(name = "{0} with {1} NIC(s)")
    @MethodSource("providersAndNics")
    void immOnlyWritesDeliverTheImmAndTouchNoMemory(final String provider, final int nics) {
        final Pair pair = new Pair(provider, nics);
        final MemorySegment src = pattern(4096, 1);
        final MemorySegment dst = arena.allocate(4096, 4096);
        final long[] srcKeys = pair.register(pair.initiators, src);
        final long[] dstKeys = pair.register(pair.targets, dst);

        for (int nic = 0; nic < nics; nic++) {
            pair.initiators
                    .get(nic)
                    .write(new WriteDescriptor()
                            .token(20 + nic)
                            .source(src, 0, srcKeys[nic], 0)
                            .target(pair.peers[nic], dst.address(), 0, dstKeys[nic])
                            .imm(true, -7 - nic));
        }
        fixture.pollUntil(() -> pair.initiatorEvents.completed.size() + pair.initiatorEvents.failed.size() == nics
                && pair.targetEvents.imms.size() == nics);

        assertThat(pair.initiatorEvents.failed).isEmpty();
        assertThat(pair.initiatorEvents.completed.values()).containsOnly(0L);
        assertThat(pair.targetEvents.imms).hasSize(nics).allMatch(imm -> imm <= -7);
        assertThat(dst.mismatch(arena.allocate(4096))).isEqualTo(-1);
    }

    @ParameterizedTest(name = "{0} with {1} NIC(s)")
    @MethodSource("providersAndNics")
    void sendsArriveInPostedReceiveBuffers(final String provider, final int nics) {
        final Pair pair = new Pair(provider, nics);
        final MemorySegment[] buffers = new MemorySegment[nics];
        for (int nic = 0; nic < nics; nic++) {
            buffers[nic] = arena.allocate(256, 64);
            pair.targets.get(nic).postReceive(100 + nic, buffers[nic]);
        }
        for (int nic = 0; nic < nics; nic++) {
            final MemorySegment message = arena.allocateFrom("hello over nic " + nic);
            pair.initiators.get(nic).send(200 + nic, pair.peers[nic], message);
        }
        fixture.pollUntil(() -> pair.targetEvents.receives.size() == nics
                && pair.initiatorEvents.completed.size() + pair.initiatorEvents.failed.size() == nics);

        assertThat(pair.initiatorEvents.failed).isEmpty();
        for (int nic = 0; nic < nics; nic++) {
            final String text = "hello over nic " + nic;
            assertThat(pair.targetEvents.receives).containsEntry(100L + nic, text.length() + 1);
            assertThat(buffers[nic].getString(0)).isEqualTo(text);
        }
    }

    /**
     * A write the target refuses must never be reported done, nor touch the target, nor hurt the target's other
     * peers. How libfabric 1.17 reports it varies: tcp;ofi_rxm drops the connection, which cancels the write
     * (reported as {@link RemoteAccessException}) or, when the connection is already gone, leaves it outstanding;
     * shm neither completes nor fails it ("error processing command"). Writes left outstanding end by the engine's
     * operation timeout.
     */
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("refusedWrites")
    void writesTheTargetRefusesAreNeverReportedDoneAndLeaveTheTargetUntouched(
            final String provider, final String kind) {
        final Pair pair = new Pair(provider, 1);
        final MemorySegment src = pattern(8192, 5);
        final MemorySegment dst = arena.allocate(8192, 4096);
        final long srcKey = pair.register(pair.initiators, src)[0];
        final long dstKey = pair.register(pair.targets, dst)[0];
        final boolean badKey = kind.equals("unknown key");

        pair.initiators
                .get(0)
                .write(new WriteDescriptor()
                        .token(1)
                        .source(src, 0, srcKey, badKey ? 4096 : 8192)
                        .target(
                                pair.peers[0],
                                dst.address(),
                                badKey ? 0 : 4096,
                                badKey ? dstKey ^ 0x5A5A_5A5AL : dstKey)
                        .imm(true, 1));
        for (int i = 0; i < 5000 && !pair.initiatorEvents.ended(1); i++) {
            fixture.pollAll();
        }

        assertThat(pair.initiatorEvents.completed).doesNotContainKey(1L);
        if (pair.initiatorEvents.failed.containsKey(1L)) {
            assertThat(pair.initiatorEvents.failed.get(1L))
                    .isInstanceOf(RemoteAccessException.class)
                    .hasMessageContaining(provider);
        }
        assertThat(pair.targetEvents.imms).isEmpty();
        assertThat(dst.mismatch(arena.allocate(8192))).isEqualTo(-1);

        final RecordingDomainListener otherEvents = new RecordingDomainListener();
        final Domain other = fixture.open(provider, 0, otherEvents);
        final long otherKey = other.register(src, Device.host());
        other.write(new WriteDescriptor()
                .token(2)
                .source(src, 0, otherKey, 4096)
                .target(other.resolve(pair.targets.get(0).address()), dst.address(), 0, dstKey)
                .imm(true, 2));
        fixture.pollUntil(() -> otherEvents.ended(2) && pair.targetEvents.imms.contains(2));
        assertThat(otherEvents.completed).containsKey(2L);
        assertThat(dst.asSlice(0, 4096).mismatch(src.asSlice(0, 4096))).isEqualTo(-1);
        assertThat(pair.targets.get(0).failure()).isNull();
        assertThat(pair.initiators.get(0).failure()).isNull();
    }

    static Stream<Arguments> refusedWrites() {
        return Stream.of(
                Arguments.of("tcp", "unknown key"),
                Arguments.of("tcp", "out of bounds"),
                Arguments.of("shm", "unknown key"),
                Arguments.of("shm", "out of bounds"));
    }

    @Test
    void aWriteWithAnUnknownKeyOnTcpIsReportedAsRemoteAccess() {
        final Pair pair = new Pair("tcp", 1);
        final MemorySegment src = pattern(4096, 5);
        final long srcKey = pair.register(pair.initiators, src)[0];
        final MemorySegment dst = arena.allocate(4096, 4096);
        final long dstKey = pair.register(pair.targets, dst)[0];

        pair.initiators
                .get(0)
                .write(new WriteDescriptor()
                        .token(1)
                        .source(src, 0, srcKey, 4096)
                        .target(pair.peers[0], dst.address(), 0, dstKey + 1));
        fixture.pollUntil(() -> pair.initiatorEvents.ended(1));

        assertThat(pair.initiatorEvents.failed.get(1L))
                .isInstanceOf(RemoteAccessException.class)
                .hasMessageContaining("tcp;ofi_rxm")
                .hasMessageContaining("key");
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void resolvingKnowsEachPeerOnceAndListsIt(final String provider) {
        final Pair pair = new Pair(provider, 1);
        final Domain initiator = pair.initiators.get(0);
        final NetworkAddress target = pair.targets.get(0).address();

        assertThat(initiator.resolve(NetworkAddress.parse(target.toString()))).isEqualTo(pair.peers[0]);
        assertThat(initiator.peers()).singleElement().satisfies(peer -> {
            assertThat(peer.address()).isEqualTo(target);
            assertThat(peer.unreachable()).isFalse();
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void addressesOfAnotherProviderOrTransportAreRefused(final String provider) {
        final Pair pair = new Pair(provider, 1);
        final Domain initiator = pair.initiators.get(0);
        final String other = provider.equals("tcp") ? "shm" : "tcp;ofi_rxm";

        assertThatThrownBy(() -> initiator.resolve(FabricAddress.of(other, new byte[] {1, 2, 3, 4})))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining(other);
        assertThatThrownBy(() -> initiator.resolve(NetworkAddress.of("tcp", new byte[] {127, 0, 0, 1, 0, 80})))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("transport 'tcp'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void heapSegmentsCannotBeRegistered(final String provider) {
        final Pair pair = new Pair(provider, 1);
        assertThatThrownBy(() -> pair.initiators.get(0).register(MemorySegment.ofArray(new byte[64]), Device.host()))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("native memory");
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void closingFailsQueuedOperationsAndRefusesNewOnes(final String provider) {
        final Pair pair = new Pair(provider, 1);
        final MemorySegment src = pattern(4096, 4);
        final long srcKey = pair.register(pair.initiators, src)[0];
        final long dstKey = pair.register(pair.targets, arena.allocate(4096, 4096))[0];
        final Domain initiator = pair.initiators.get(0);

        initiator.write(
                new WriteDescriptor().token(5).source(src, 0, srcKey, 4096).target(pair.peers[0], 0, 0, dstKey));
        initiator.close();
        initiator.write(
                new WriteDescriptor().token(6).source(src, 0, srcKey, 4096).target(pair.peers[0], 0, 0, dstKey));

        assertThat(pair.initiatorEvents.failed.get(5L)).isInstanceOf(EngineClosedException.class);
        assertThat(pair.initiatorEvents.failed.get(6L)).isInstanceOf(EngineClosedException.class);
    }
}
