package dev.transferengine;

import dev.transferengine.test.MultiProcessContract;

import java.util.List;

/** Two JVM processes on the tcp transport. */
class TcpMultiProcessTest extends MultiProcessContract {

    @Override
    protected String transport() {
        return "tcp";
    }

    /** Off loopback a NIC listens only with a cluster key; the partition case's engines share this one. */
    @Override
    protected List<String> offLoopbackOptions() {
        return List.of("tcp.clusterKey=C1NmxxmVpCUdV56RXNfOUUgeniBiKoXsISC/Bppcprs=");
    }
}
