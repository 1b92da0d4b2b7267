/**
 * CUDA support (JCuda, optional at run time): device memory for the transports, staging through pinned host
 * buffers, and the UVM watchers. Only what {@code core} and the {@code DeviceMemory} service loader need is public.
 */
@NullMarked
package dev.transferengine.cuda;

import org.jspecify.annotations.NullMarked;
