package dev.transferengine;

/** Two JVM processes on the tcp transport. */
class TcpMultiProcessTest extends MultiProcessContract {

    @Override
    protected String transport() {
        return "tcp";
    }
}
