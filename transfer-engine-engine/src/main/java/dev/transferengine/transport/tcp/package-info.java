/**
 * The pure-Java tcp transport: each NIC is a listening socket with its own connections, driven by non-blocking
 * NIO from its group's worker. {@link dev.transferengine.transport.tcp.TcpFrame} documents the wire format.
 */
@NullMarked
package dev.transferengine.transport.tcp;

import org.jspecify.annotations.NullMarked;
