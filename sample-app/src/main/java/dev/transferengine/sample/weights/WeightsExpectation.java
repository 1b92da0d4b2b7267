package dev.transferengine.sample.weights;

import java.util.Map;

/**
 * The trainer's notice of a coming push: its version and the CRC32C of each tensor.
 *
 * @param version   the push
 * @param checksums tensor name to checksum
 */
public record WeightsExpectation(long version, Map<String, Long> checksums) {}
