/**
 * The libfabric transport, bound with the Foreign Function and Memory API and no native code of our own: exported
 * functions through symbol lookup, everything else through function pointers read from libfabric's ops tables.
 * Providers: tcp (tcp;ofi_rxm) and shm run on any Linux host; efa and verbs need their hardware.
 */
@NullMarked
package dev.transferengine.transport.fabric;

import org.jspecify.annotations.NullMarked;
