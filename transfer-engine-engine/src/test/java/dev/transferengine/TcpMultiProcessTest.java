package dev.transferengine;

import dev.transferengine.test.MultiProcessContract;

/** Two JVM processes on the tcp transport. */
class TcpMultiProcessTest extends MultiProcessContract {

    @Override
    protected String transport() {
        return "tcp";
    }
}
