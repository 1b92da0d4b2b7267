/**
 * The transfer engine: the API ({@code dev.transferengine}, its exceptions in {@code dev.transferengine.exceptions})
 * and the SPI for transport authors ({@code dev.transferengine.spi}). Core, the transports, native access and CUDA are
 * internal: the transports, CUDA device memory and the CUDA UVM watchers are found through
 * {@link java.util.ServiceLoader}. The Reactor facade is the module {@code dev.transferengine.reactive}.
 *
 * <p>The native transports and CUDA call restricted methods: on the module path run with
 * {@code --enable-native-access=dev.transferengine}, on the class path with {@code --enable-native-access=ALL-UNNAMED}.
 */
// Agrona and JCuda have no module descriptor and are automatic modules: javac warns about each
// requires of one, which is the only way to use them from a named module.
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.transferengine {
    requires transitive org.jspecify; // the API's nullness annotations
    requires org.agrona;
    requires org.jctools.core;
    requires org.slf4j;
    requires static jcuda; // optional: CUDA support only when JCuda is present

    exports dev.transferengine;
    exports dev.transferengine.exceptions;
    exports dev.transferengine.spi;

    uses dev.transferengine.spi.Transport;
    uses dev.transferengine.spi.DeviceMemory;
    uses dev.transferengine.spi.UvmWatcherProvider;
    uses dev.transferengine.spi.EngineThreadFactory;

    provides dev.transferengine.spi.Transport with
            dev.transferengine.transport.tcp.TcpTransport,
            dev.transferengine.transport.fabric.FabricTransport;
    provides dev.transferengine.spi.DeviceMemory with
            dev.transferengine.cuda.CudaDeviceMemory;
    provides dev.transferengine.spi.UvmWatcherProvider with
            dev.transferengine.cuda.CudaUvmWatcherProvider;
}
