package dev.transferengine.nativeaccess;

import org.jspecify.annotations.Nullable;

/**
 * Whether this code may call native functions at all. The JDK lets code in the class path call restricted methods
 * only when it runs with {@code --enable-native-access=ALL-UNNAMED} (or the {@code Enable-Native-Access} manifest
 * entry of an executable jar); without it a future JDK refuses the call, so the native transports treat it as
 * unavailable and say which flag is missing.
 */
public final class NativeAccess {

    /** The JVM flag that grants native access to code on the class path. */
    public static final String ENABLE_FLAG = "--enable-native-access=ALL-UNNAMED";

    private NativeAccess() {}

    /** True when this module may call restricted methods. Any thread; does not allocate. */
    public static boolean isEnabled() {
        return NativeAccess.class.getModule().isNativeAccessEnabled();
    }

    /** The manifest entry of an executable jar that grants native access to its class path. */
    public static final String MANIFEST_ENTRY = "Enable-Native-Access: ALL-UNNAMED";

    /**
     * The exact flag that grants the engine native access where it runs now: {@link #ENABLE_FLAG} on the class
     * path, {@code --enable-native-access=<module>} when the engine is a named module. Any thread.
     */
    public static String enableFlag() {
        final Module module = NativeAccess.class.getModule();
        return module.isNamed() ? "--enable-native-access=" + module.getName() : ENABLE_FLAG;
    }

    /** Null when native access is enabled, otherwise why not and how to enable it. Any thread. */
    public static @Nullable String unavailabilityCause() {
        if (isEnabled()) {
            return null;
        }
        final Module module = NativeAccess.class.getModule();
        // the manifest entry only names ALL-UNNAMED: a named module needs the flag
        return "native access is not enabled for "
                + (module.isNamed() ? "module " + module.getName() : "the class path") + "; start the JVM with "
                + enableFlag()
                + (module.isNamed() ? "" : " (or add '" + MANIFEST_ENTRY + "' to the executable jar's manifest)");
    }
}
