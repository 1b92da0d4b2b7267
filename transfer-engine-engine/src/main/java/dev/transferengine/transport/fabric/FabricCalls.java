package dev.transferengine.transport.fabric;

import dev.transferengine.nativeaccess.Errno;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One downcall handle per call shape, linked once and called through a function pointer read from the library's
 * exports or from an ops table. Control calls capture errno (passed as the segment after the function pointer);
 * the non-blocking data-path calls ({@code fi_cq_read}, {@code fi_writemsg}, {@code fi_tsendmsg},
 * {@code fi_trecvmsg}) are linked {@link Linker.Option#critical(boolean) critical}, which skips the thread-state
 * transition. None of these handles allocate when called with {@code invokeExact}.
 */
@SuppressWarnings("restricted") // the fabric binding's linking helper: every handle here is linked once, below
final class FabricCalls {

    private static final Linker LINKER = Linker.nativeLinker();

    /** {@code int f(void*)}: fi_close. */
    private static final MethodHandle INT_P = control(FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code int f(void*, void*, void*)}: fi_fabric, cm getname. */
    private static final MethodHandle INT_PPP = control(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    /** {@code int f(void*, void*, void*, void*)}: fi_domain, fi_av_open, fi_cq_open, fi_endpoint. */
    private static final MethodHandle INT_PPPP =
            control(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    /** {@code int f(void*, void*, uint64_t)}: fi_ep_bind. */
    private static final MethodHandle INT_PPL = control(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
    /** {@code int f(void*, int, void*)}: fi_control (fi_enable). */
    private static final MethodHandle INT_PIP = control(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    /** {@code int f(void*, void*, uint64_t, void*)}: fi_mr_regattr. */
    private static final MethodHandle INT_PPLP =
            control(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    /** {@code int f(void*, void*, size_t, uint64_t)}: fi_av_remove. */
    private static final MethodHandle INT_PPLL =
            control(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG));
    /** {@code int f(void*, void*, size_t, void*, uint64_t, void*)}: fi_av_insert. */
    private static final MethodHandle INT_PPLPLP =
            control(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS));
    /** {@code int f(void*, int, int, void*, size_t)}: fi_setopt. */
    private static final MethodHandle INT_PIIPL =
            control(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG));
    /** {@code int f(uint32_t, char*, char*, uint64_t, fi_info*, fi_info**)}: fi_getinfo. */
    private static final MethodHandle INT_IPPLPP =
            control(FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS));
    /** {@code ssize_t f(void*, void*)}: fi_cancel. */
    private static final MethodHandle LONG_PP =
            LINKER.downcallHandle(FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS));
    /** {@code ssize_t f(void*, void*, uint64_t)}: fi_cq_readerr. */
    private static final MethodHandle LONG_PPL =
            LINKER.downcallHandle(FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG));
    /** {@code ssize_t f(void*, void*, size_t)} critical: fi_cq_read, fi_writemsg, fi_tsendmsg, fi_trecvmsg. */
    private static final MethodHandle LONG_PPL_CRITICAL = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG), Linker.Option.critical(false));
    /** {@code ssize_t f(void*, void*, size_t, fi_addr_t*)} critical: fi_cq_readfrom. */
    private static final MethodHandle LONG_PPLP_CRITICAL = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS), Linker.Option.critical(false));
    /** {@code const char *f(void*, int, void*, char*, size_t)}: fi_cq_strerror. */
    private static final MethodHandle PTR_PIPPL =
            LINKER.downcallHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
    /** {@code void *f(void*)}: fi_dupinfo, strdup. */
    private static final MethodHandle PTR_P = LINKER.downcallHandle(FunctionDescriptor.of(ADDRESS, ADDRESS));
    /** {@code void f(void*)}: fi_freeinfo. */
    private static final MethodHandle VOID_P = LINKER.downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));
    /** {@code uint32_t f(void)}: fi_version. */
    private static final MethodHandle INT_VOID = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT));
    /** {@code const char *f(int)}: fi_strerror. */
    private static final MethodHandle PTR_I = LINKER.downcallHandle(FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private FabricCalls() {}

    private static MethodHandle control(final FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(descriptor, Errno.CAPTURE);
    }

    static int intP(final MemorySegment fn, final MemorySegment errno, final MemorySegment a) {
        try {
            return (int) INT_P.invokeExact(fn, errno, a);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static int intPPP(
            final MemorySegment fn,
            final MemorySegment errno,
            final MemorySegment a,
            final MemorySegment b,
            final MemorySegment c) {
        try {
            return (int) INT_PPP.invokeExact(fn, errno, a, b, c);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static int intPPPP(
            final MemorySegment fn,
            final MemorySegment errno,
            final MemorySegment a,
            final MemorySegment b,
            final MemorySegment c,
            final MemorySegment d) {
        try {
            return (int) INT_PPPP.invokeExact(fn, errno, a, b, c, d);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static int intPPL(
            final MemorySegment fn,
            final MemorySegment errno,
            final MemorySegment a,
            final MemorySegment b,
            final long c) {
        try {
            return (int) INT_PPL.invokeExact(fn, errno, a, b, c);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static int intPIP(
            final MemorySegment fn,
            final MemorySegment errno,
            final MemorySegment a,
            final int b,
            final MemorySegment c) {
        try {
            return (int) INT_PIP.invokeExact(fn, errno, a, b, c);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static int intPPLP(
            final MemorySegment fn,
            final MemorySegment errno,
            final MemorySegment a,
            final MemorySegment b,
            final long c,
            final MemorySegment d) {
        try {
            return (int) INT_PPLP.invokeExact(fn, errno, a, b, c, d);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static int intPPLL(
            final MemorySegment fn,
            final MemorySegment errno,
            final MemorySegment a,
            final MemorySegment b,
            final long c,
            final long d) {
        try {
            return (int) INT_PPLL.invokeExact(fn, errno, a, b, c, d);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    @SuppressWarnings("checkstyle:ParameterNumber") // one parameter per argument of the C function, plus fn and errno
    static int intPPLPLP(
            final MemorySegment fn,
            final MemorySegment errno,
            final MemorySegment a,
            final MemorySegment b,
            final long c,
            final MemorySegment d,
            final long e,
            final MemorySegment f) {
        try {
            return (int) INT_PPLPLP.invokeExact(fn, errno, a, b, c, d, e, f);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static int intPIIPL(
            final MemorySegment fn,
            final MemorySegment errno,
            final MemorySegment a,
            final int b,
            final int c,
            final MemorySegment d,
            final long e) {
        try {
            return (int) INT_PIIPL.invokeExact(fn, errno, a, b, c, d, e);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    @SuppressWarnings("checkstyle:ParameterNumber") // one parameter per argument of the C function, plus fn and errno
    static int intIPPLPP(
            final MemorySegment fn,
            final MemorySegment errno,
            final int a,
            final MemorySegment b,
            final MemorySegment c,
            final long d,
            final MemorySegment e,
            final MemorySegment f) {
        try {
            return (int) INT_IPPLPP.invokeExact(fn, errno, a, b, c, d, e, f);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static long longPP(final MemorySegment fn, final MemorySegment a, final MemorySegment b) {
        try {
            return (long) LONG_PP.invokeExact(fn, a, b);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static long longPPL(final MemorySegment fn, final MemorySegment a, final MemorySegment b, final long c) {
        try {
            return (long) LONG_PPL.invokeExact(fn, a, b, c);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    /** A non-blocking data-path call: never use it for anything that can block or call back into Java. */
    static long longPPLCritical(final MemorySegment fn, final MemorySegment a, final MemorySegment b, final long c) {
        try {
            return (long) LONG_PPL_CRITICAL.invokeExact(fn, a, b, c);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static MemorySegment ptrPIPPL(
            final MemorySegment fn,
            final MemorySegment a,
            final int b,
            final MemorySegment c,
            final MemorySegment d,
            final long e) {
        try {
            return (MemorySegment) PTR_PIPPL.invokeExact(fn, a, b, c, d, e);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static MemorySegment ptrP(final MemorySegment fn, final MemorySegment a) {
        try {
            return (MemorySegment) PTR_P.invokeExact(fn, a);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static void voidP(final MemorySegment fn, final MemorySegment a) {
        try {
            VOID_P.invokeExact(fn, a);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static int intVoid(final MemorySegment fn) {
        try {
            return (int) INT_VOID.invokeExact(fn);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static MemorySegment ptrI(final MemorySegment fn, final int a) {
        try {
            return (MemorySegment) PTR_I.invokeExact(fn, a);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    static long longPPLPCritical(
            final MemorySegment fn, final MemorySegment a, final MemorySegment b, final long c, final MemorySegment d) {
        try {
            return (long) LONG_PPLP_CRITICAL.invokeExact(fn, a, b, c, d);
        } catch (final Throwable t) {
            throw unexpected(t);
        }
    }

    private static RuntimeException unexpected(final Throwable t) {
        if (t instanceof RuntimeException e) {
            throw e;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException("native call failed unexpectedly", t);
    }
}
