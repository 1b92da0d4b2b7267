/**
 * The transfer engine: the API ({@code dev.transferengine}), the transport SPI for transport authors
 * ({@code dev.transferengine.spi}) and the Reactor facade ({@code dev.transferengine.reactive}). Core, the
 * transports, native access and CUDA are internal: the transports and CUDA device memory are found through
 * {@link java.util.ServiceLoader}.
 *
 * <p>The native transports and CUDA call restricted methods: on the module path run with
 * {@code --enable-native-access=dev.transferengine}, on the class path with {@code --enable-native-access=ALL-UNNAMED}.
 */
// Agrona, Reactor and JCuda have no module descriptor and are automatic modules: javac warns about each
// requires of one, which is the only way to use them from a named module.
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.transferengine {
    requires transitive org.jspecify; // the API's nullness annotations
    requires transitive reactor.core; // the reactive facade returns Flux and Mono
    requires org.agrona;
    requires org.jctools.core;
    requires org.slf4j;
    requires static jcuda; // optional: CUDA support only when JCuda is present

    exports dev.transferengine;
    exports dev.transferengine.exceptions;
    exports dev.transferengine.spi;
    exports dev.transferengine.reactive;

    uses dev.transferengine.spi.Transport;
    uses dev.transferengine.spi.DeviceMemory;

    provides dev.transferengine.spi.Transport with
            dev.transferengine.transport.tcp.TcpTransport,
            dev.transferengine.transport.fabric.FabricTransport;
    provides dev.transferengine.spi.DeviceMemory with
            dev.transferengine.cuda.CudaDeviceMemory;
}
