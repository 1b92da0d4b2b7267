package dev.transferengine.cuda;

import dev.transferengine.exceptions.DeviceUnavailableException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Whether CUDA can be used in this JVM, and if not, why. Probed once, lazily, on first use; the probe never throws
 * and never lets an {@link UnsatisfiedLinkError} escape: a machine without {@code libcuda.so.1}, without JCuda on the
 * class path or without native access simply reports the reason.
 *
 * <p>Set {@code -Dtransferengine.cuda.disabled=true} to turn CUDA off.
 */
final class Cuda {

    /** System property that turns CUDA off. */
    public static final String DISABLED_PROPERTY = "transferengine.cuda.disabled";

    private static final @Nullable String UNAVAILABILITY_CAUSE;
    private static final int DEVICE_COUNT;

    static {
        String cause = null;
        int count = 0;
        try {
            cause = environmentProblem();
            if (cause == null) {
                count = CudaDriverProbe.deviceCount();
                if (count == 0) {
                    cause = "the NVIDIA driver reports no CUDA device";
                }
            }
        } catch (final DeviceUnavailableException e) {
            cause = e.getMessage();
        } catch (final LinkageError e) {
            cause = "the JCuda natives could not be loaded: " + e;
        }
        UNAVAILABILITY_CAUSE = cause;
        DEVICE_COUNT = cause == null ? count : 0;
    }

    private Cuda() {}

    /** True when at least one CUDA device can be used. Any thread; the first call probes (up to ~0.5 s). */
    public static boolean isAvailable() {
        return UNAVAILABILITY_CAUSE == null;
    }

    /** Why CUDA cannot be used, or null when it can. */
    public static @Nullable String unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /** Number of usable CUDA devices; 0 when unavailable. */
    public static int deviceCount() {
        return DEVICE_COUNT;
    }

    /**
     * Throws unless CUDA can be used.
     *
     * @throws DeviceUnavailableException naming the reason
     */
    public static void ensureAvailability() {
        if (UNAVAILABILITY_CAUSE != null) {
            throw new DeviceUnavailableException("CUDA is unavailable: " + UNAVAILABILITY_CAUSE);
        }
    }

    /**
     * A downcall to {@code symbol} of the driver library, for what JCuda does not bind (or binds with per-call
     * objects). Needs CUDA to be available.
     *
     * @param missing why the driver may lack it, e.g. {@code " (needs a CUDA 11.7+ driver)"}; empty if nothing to add
     * @throws DeviceUnavailableException if CUDA is unavailable or the driver lacks {@code symbol}
     */
    @SuppressWarnings("restricted")
    static MethodHandle driverFunction(final String symbol, final String missing, final FunctionDescriptor descriptor) {
        ensureAvailability();
        return Linker.nativeLinker()
                .downcallHandle(
                        SymbolLookup.libraryLookup(CudaDmaBuf.LIBRARY, Arena.global())
                                .find(symbol)
                                .orElseThrow(() -> new DeviceUnavailableException(
                                        CudaDmaBuf.LIBRARY + " lacks " + symbol + missing)),
                        descriptor);
    }

    /**
     * Throws unless device {@code ordinal} can be used.
     *
     * @throws DeviceUnavailableException naming the reason
     */
    public static void ensureDevice(final int ordinal) {
        ensureAvailability();
        if (ordinal < 0 || ordinal >= DEVICE_COUNT) {
            throw new DeviceUnavailableException("no CUDA device " + ordinal + ": this machine has " + DEVICE_COUNT);
        }
    }

    private static @Nullable String environmentProblem() {
        if (Boolean.getBoolean(DISABLED_PROPERTY)) {
            return "disabled by -D" + DISABLED_PROPERTY + "=true";
        }
        final String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        final String arch = System.getProperty("os.arch", "");
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            return "only linux-x86_64 is supported (the JCuda natives on the class path), this is " + os + "-" + arch;
        }
        final Module module = Cuda.class.getModule();
        if (!module.isNativeAccessEnabled()) {
            return "native access is disabled; run with --enable-native-access="
                    + (module.isNamed() ? module.getName() : "ALL-UNNAMED");
        }
        if (!jcudaPresent()) {
            return "JCuda (org.jcuda:jcuda and its linux-x86_64 natives) is not on the class path";
        }
        return driverLibraryProblem();
    }

    private static boolean jcudaPresent() {
        try {
            Class.forName("jcuda.driver.JCudaDriver", false, Cuda.class.getClassLoader());
            return true;
        } catch (final ClassNotFoundException e) {
            return false;
        }
    }

    // Opening libcuda.so.1 ourselves first turns a missing driver into a plain reason instead of a JCuda link error.
    @SuppressWarnings("restricted")
    private static @Nullable String driverLibraryProblem() {
        try {
            SymbolLookup.libraryLookup(CudaDmaBuf.LIBRARY, Arena.global());
            return null;
        } catch (final IllegalArgumentException e) {
            return CudaDmaBuf.LIBRARY + " cannot be loaded (no NVIDIA driver on this machine): " + e.getMessage();
        }
    }
}
