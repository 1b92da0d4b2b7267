package dev.transferengine;

import dev.transferengine.exceptions.MalformedDescriptorException;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RegionDescriptorTest {

    private static RegionDescriptor sample(final int nics) {
        final RegionDescriptor.Nic[] entries = new RegionDescriptor.Nic[nics];
        for (int i = 0; i < nics; i++) {
            entries[i] = new RegionDescriptor.Nic(
                    NetworkAddress.of("tcp", new byte[] {4, 127, 0, 0, 1, 0, (byte) i}), 0x1234_5678_9ABC_DEF0L + i);
        }
        return new RegionDescriptor(0x7F00_0000_1000L, 1 << 20, List.of(entries));
    }

    @Test
    void roundTripsThroughBytesAndText() {
        for (int nics = 1; nics <= 4; nics++) {
            final RegionDescriptor desc = sample(nics);
            assertThat(RegionDescriptor.fromBytes(desc.toBytes())).isEqualTo(desc);
            assertThat(RegionDescriptor.parse(desc.toText())).isEqualTo(desc);
        }
    }

    @Test
    void theAccessRoundTripsAndDefaultsToReadWrite() {
        assertThat(sample(1).access()).isEqualTo(RegionAccess.READ_WRITE);
        for (final RegionAccess access : RegionAccess.values()) {
            final RegionDescriptor desc =
                    new RegionDescriptor(4096, 8192, sample(2).nics(), access);
            assertThat(RegionDescriptor.parse(desc.toText())).isEqualTo(desc);
            assertThat(desc.toString()).contains("access=" + access);
        }
        assertThat(RegionAccess.READ_ONLY.allowsRemoteRead()).isTrue();
        assertThat(RegionAccess.READ_ONLY.allowsRemoteWrite()).isFalse();
        assertThat(RegionAccess.WRITE_ONLY.allowsRemoteRead()).isFalse();
        assertThat(RegionAccess.WRITE_ONLY.allowsRemoteWrite()).isTrue();
    }

    @Test
    void versionOneBytesOfEarlierReleasesStillParseAsReadWrite() {
        final RegionDescriptor desc = sample(2);
        final byte[] current = desc.toBytes();
        // version 1: the same encoding without the access byte at offset 17
        final byte[] versionOne = new byte[current.length - 1];
        System.arraycopy(current, 0, versionOne, 0, 17);
        System.arraycopy(current, 18, versionOne, 17, current.length - 18);
        versionOne[0] = 1;

        assertThat(RegionDescriptor.fromBytes(versionOne)).isEqualTo(desc);
    }

    @Test
    void anUnknownVersionOrAccessCodeIsRefusedByName() {
        final byte[] bytes = sample(1).toBytes();
        bytes[17] = 3;
        assertThatThrownBy(() -> RegionDescriptor.fromBytes(bytes))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("access code 3");
        bytes[17] = 0;
        bytes[0] = 3;
        assertThatThrownBy(() -> RegionDescriptor.fromBytes(bytes))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("version 3");
    }

    @Test
    void toStringShowsReadableAddressesAndNoRemoteKey() {
        final RegionDescriptor desc = sample(2);

        assertThat(desc.toString())
                .contains(
                        "0x7f0000001000",
                        "length=1048576",
                        desc.nic(1).address().describe(),
                        "rkey redacted")
                .doesNotContainIgnoringCase("123456789abcdef")
                .doesNotContain(Long.toString(0x1234_5678_9ABC_DEF0L));
        assertThat(desc.nic(0).toString())
                .startsWith("tcp://")
                .isEqualTo(desc.nic(0).address().describe() + " (rkey redacted)");
    }

    @Test
    void needsOneToFourNics() {
        assertThatThrownBy(() -> new RegionDescriptor(0, 1, List.of())).isInstanceOf(IllegalArgumentException.class);
        final byte[] bytes = sample(1).toBytes();
        bytes[18] = 5; // after version, address, length and access
        assertThatThrownBy(() -> RegionDescriptor.fromBytes(bytes))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("NIC count");
    }

    @Test
    void truncatedOrPaddedBytesAreRefused() {
        final byte[] bytes = sample(2).toBytes();
        assertThatThrownBy(() -> RegionDescriptor.fromBytes(Arrays.copyOf(bytes, bytes.length - 3)))
                .isInstanceOf(MalformedDescriptorException.class);
        assertThatThrownBy(() -> RegionDescriptor.fromBytes(Arrays.copyOf(bytes, bytes.length + 1)))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("trailing");
        assertThatThrownBy(() -> RegionDescriptor.parse("%%%")).isInstanceOf(MalformedDescriptorException.class);
    }

    @Test
    void corruptedBytesOnlyEverFailAsMalformedDescriptor() {
        final byte[] good = sample(3).toBytes();
        final SplittableRandom random = new SplittableRandom(11);
        for (int i = 0; i < 20_000; i++) {
            final byte[] bytes = good.clone();
            for (int flips = random.nextInt(1, 4); flips > 0; flips--) {
                bytes[random.nextInt(bytes.length)] = (byte) random.nextInt();
            }
            try {
                RegionDescriptor.fromBytes(Arrays.copyOf(bytes, random.nextInt(bytes.length + 1)));
            } catch (final MalformedDescriptorException expected) {
                // the only allowed failure
            }
        }
    }
}
