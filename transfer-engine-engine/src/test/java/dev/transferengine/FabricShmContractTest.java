package dev.transferengine;

/**
 * The transport contract on libfabric provider shm with up to 4 NICs per group. A write or read the target would
 * refuse (stale key, out of bounds, access) is refused before posting from the keys the target publishes
 * (FabricShmKeys), with the {@code RemoteAccessException} every transport gives: libfabric's shm never answers a
 * refused command and sticks the initiator's endpoint after it (issue 21, item 4). The freed-arena case runs here
 * too: the crash it met on libfabric 2.1 (an engine closed before its receiver read its first post) is fixed in
 * {@code FabricDomain.awaitLocalTargets} (FabricClosedPeerTest).
 */
class FabricShmContractTest extends FabricContract {

    @Override
    protected String provider() {
        return "shm";
    }
}
